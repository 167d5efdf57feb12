/* options.c - the options of the command line, parsed by group: how the
 * output looks, what is read, verify's budget and the space commands'
 * actions. Which command takes which is in the command table. */
#include "options.h"
#include "usage.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/server_prune.h"
#include "ollama_audit/manifest_list.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_STORE = 256, OPT_FORMAT, OPT_UNITS, OPT_FAIL_ON, OPT_COLOR, OPT_VERSION, OPT_TENSORS,
       OPT_JOBS, OPT_ALL, OPT_CHANGED, OPT_QUICK, OPT_MAX_DURATION, OPT_CACHE, OPT_PROGRESS,
       OPT_NO_PROGRESS, OPT_APPLY, OPT_YES, OPT_PLAN, OPT_QUARANTINE, OPT_WHAT, OPT_MIN_AGE,
       OPT_FORCE, OPT_PREDICT_SERVER, OPT_ALL_USERS, OPT_DUPLICATES, OPT_HARDLINK, OPT_OUTPUT,
       OPT_PLATFORM, OPT_LOG, OPT_SINCE, OPT_UNTIL, OPT_ROOT, OPT_UNUSED_FOR, OPT_SORT, OPT_NO_HEADER,
       OPT_SERVER_VERSION, OPT_WIDE, OPT_WITH_SHADOW, OPT_CHILD, OPT_LAST, OPT_OP, OPT_EMPTY,
       OPT_OLDER_THAN, OPT_NO_LOCK, OPT_FROM, OPT_VERIFY, OPT_FILTER, OPT_LIMIT };

static const struct option long_opts[] = {
	{ "store", required_argument, NULL, OPT_STORE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "units", required_argument, NULL, OPT_UNITS },
	{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "tensors", no_argument, NULL, OPT_TENSORS },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "changed", no_argument, NULL, OPT_CHANGED },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "max-duration", required_argument, NULL, OPT_MAX_DURATION },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "apply", no_argument, NULL, OPT_APPLY },
	{ "yes", no_argument, NULL, OPT_YES },
	{ "plan", required_argument, NULL, OPT_PLAN },
	{ "quarantine", required_argument, NULL, OPT_QUARANTINE },
	{ "what", required_argument, NULL, OPT_WHAT },
	{ "min-age", required_argument, NULL, OPT_MIN_AGE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "predict-server", no_argument, NULL, OPT_PREDICT_SERVER },
	{ "server-version", required_argument, NULL, OPT_SERVER_VERSION },
	{ "all-users", no_argument, NULL, OPT_ALL_USERS },
	{ "duplicates", no_argument, NULL, OPT_DUPLICATES },
	{ "hardlink", no_argument, NULL, OPT_HARDLINK },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "platform", required_argument, NULL, OPT_PLATFORM },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "unused-for", required_argument, NULL, OPT_UNUSED_FOR },
	{ "with-shadow", no_argument, NULL, OPT_WITH_SHADOW },
	{ "child", required_argument, NULL, OPT_CHILD },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "no-header", no_argument, NULL, OPT_NO_HEADER },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "last", no_argument, NULL, OPT_LAST },
	{ "op", required_argument, NULL, OPT_OP },
	{ "empty", no_argument, NULL, OPT_EMPTY },
	{ "older-than", required_argument, NULL, OPT_OLDER_THAN },
	{ "no-lock", no_argument, NULL, OPT_NO_LOCK },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ NULL, 0, NULL, 0 },
};

bool cli_option_takes_value(const char *name)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o->has_arg == required_argument;
	return false;
}

/* A group's answer for an option that is not one of its own. */
enum { NOT_MINE = -2 };

/* The --store and --log lists outlive every early return of main(); free
 * them at exit so leak checkers see a clean process whatever path it took. */
static char **store_list;
static const char **log_list;
static oa_model_filter *filter_list;
static char *selection_text;

static void free_lists(void)
{
	free(store_list);
	free(log_list);
	free(filter_list);
	free(selection_text);
}

const char *cli_scan_command(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			return i + 1 < argc ? argv[i + 1] : NULL;
		if (a[0] != '-' || a[1] == '\0')
			return a;
		if (strcmp(a, "-o") == 0) {
			i++; /* -o FILE */
			continue;
		}
		if (a[1] != '-' || strchr(a, '='))
			continue; /* -h, -q, -oFILE, --name=value */
		size_t n = strlen(a + 2);
		const struct option *hit = NULL;
		int hits = 0;
		for (const struct option *o = long_opts; o->name; o++)
			if (strncmp(o->name, a + 2, n) == 0) {
				if (strlen(o->name) == n) {
					hit = o;
					hits = 1;
					break;
				}
				hit = o;
				hits++;
			}
		if (hits == 1 && hit->has_arg == required_argument)
			i++;
	}
	return NULL;
}

static int parse_format(cli *c, const char *arg)
{
	static const char *const names[] = { [OUT_TABLE] = "table", [OUT_JSON] = "json",
	                                     [OUT_NDJSON] = "ndjson", [OUT_CSV] = "csv",
	                                     [OUT_TAGS] = "tags", [OUT_PROMETHEUS] = "prometheus",
	                                     [OUT_HTML] = "html" };
	c->format_set = true;
	c->format_name = arg;
	for (int k = OUT_TABLE; k <= OUT_HTML; k++)
		if (strcmp(arg, names[k]) == 0) {
			c->format = (enum oa_out_format)k;
			return CLI_GO_ON;
		}
	return cli_usage_error("unknown --format '%s' (table, json, ndjson, csv, tags, prometheus, html)", arg);
}

static int parse_units(cli *c, const char *arg)
{
	if (strcmp(arg, "si") == 0) c->units = OA_UNITS_SI;
	else if (strcmp(arg, "iec") == 0) c->units = OA_UNITS_IEC;
	else if (strcmp(arg, "bytes") == 0) c->units = OA_UNITS_BYTES;
	else return cli_usage_error("unknown --units '%s' (si, iec, bytes)", arg);
	return CLI_GO_ON;
}

/* --sort KEY[:asc|:desc]: names ascend by themselves, every other key
 * descends (largest, newest first); the other direction is the reverse. */
static int parse_sort(cli *c, const char *arg)
{
	static const char *const keys[] = { [SORT_NAME] = "name", [SORT_SIZE] = "size",
	                                    [SORT_UNIQUE] = "unique", [SORT_MODIFIED] = "modified",
	                                    [SORT_LAST_USED] = "last-used", [SORT_UNSERVABLE] = "unservable" };
	size_t n = strcspn(arg, ":");
	const char *dir = arg[n] ? arg + n + 1 : NULL;
	c->sort = SORT_DEFAULT;
	for (int k = SORT_NAME; k <= SORT_UNSERVABLE; k++)
		if (strlen(keys[k]) == n && strncmp(arg, keys[k], n) == 0)
			c->sort = (enum cli_sort)k;
	if (c->sort == SORT_DEFAULT)
		return cli_usage_error("unknown --sort '%.*s' (name, size, unique, modified, last-used, unservable; "
		                       "KEY:asc or KEY:desc for a direction)", (int)n, arg);
	if (dir && strcmp(dir, "asc") && strcmp(dir, "desc"))
		return cli_usage_error("--sort %s: '%s' is not a direction (asc, desc)", arg, dir);
	c->sort_reverse = dir && (strcmp(dir, "asc") == 0) != (c->sort == SORT_NAME);
	return CLI_GO_ON;
}

/* The selection as rm's options spell it, for the line du ends with:
 * each --filter quoted for a POSIX shell. */
static void selection_add(cli *c, const char *option, const char *value, bool quote)
{
	oa_buf b;
	oa_buf_init(&b);
	if (c->selection)
		oa_buf_printf(&b, "%s ", c->selection);
	oa_buf_printf(&b, "%s %s", option, quote ? "'" : "");
	for (const char *p = value; *p; p++)
		if (*p == '\'' && quote)
			oa_buf_adds(&b, "'\\''");
		else
			oa_buf_printf(&b, "%c", *p);
	oa_buf_adds(&b, quote ? "'" : "");
	free(c->selection);
	c->selection = selection_text = oa_buf_take(&b);
}

static int parse_filter(cli *c, const char *arg)
{
	oa_model_filter f;
	char err[256];
	if (oa_model_filter_parse(arg, &f, err, sizeof err) < 0)
		return cli_usage_error("--filter: %s", err);
	c->filters = filter_list = oa_xreallocarray(c->filters, c->n_filters + 1, sizeof *c->filters);
	c->filters[c->n_filters++] = f;
	selection_add(c, "--filter", arg, true);
	return CLI_GO_ON;
}

static int parse_limit(cli *c, const char *arg)
{
	char *end;
	long long n = strtoll(arg, &end, 10);
	if (*end || end == arg || *arg == '-' || *arg == '+' || n < 1 || n > 1000000000)
		return cli_usage_error("--limit takes a number of models from 1 up, not '%s'", arg);
	c->limit = (size_t)n;
	return CLI_GO_ON;
}

/* What the output looks like, and the options every command takes. */
static int output_option(cli *c, cli_request *r, int opt, const char *arg)
{
	switch (opt) {
	case OPT_FORMAT: return parse_format(c, arg);
	case OPT_UNITS: return parse_units(c, arg);
	case OPT_FAIL_ON: {
		int sev = oa_severity_parse(arg);
		if (sev < OA_SEV_WARNING)
			return cli_usage_error("unknown --fail-on '%s' (error, warning)", arg);
		c->fail_on = sev;
		c->fail_on_set = true;
		return CLI_GO_ON;
	}
	case OPT_COLOR:
		if (strcmp(arg, "auto") && strcmp(arg, "always") && strcmp(arg, "never"))
			return cli_usage_error("unknown --color '%s' (auto, always, never)", arg);
		r->color = arg;
		return CLI_GO_ON;
	case 'h': r->help = true; return CLI_GO_ON;
	case OPT_VERSION:
		printf("ollama-audit %s\n", OA_VERSION);
		return 0;
	case OPT_OUTPUT: c->output = arg; return CLI_GO_ON;
	case OPT_TENSORS: c->tensors = true; return CLI_GO_ON;
	case OPT_PROGRESS: r->progress = 1; return CLI_GO_ON;
	case OPT_NO_PROGRESS: r->progress = 0; return CLI_GO_ON;
	case 'q': c->quiet = true; return CLI_GO_ON;
	case 'v': c->verbose = true; return CLI_GO_ON;
	case OPT_SORT: return parse_sort(c, arg);
	case OPT_FILTER: return parse_filter(c, arg);
	case OPT_LIMIT: return parse_limit(c, arg);
	case OPT_NO_HEADER: c->no_header = true; return CLI_GO_ON;
	case OPT_WIDE: c->wide = true; return CLI_GO_ON;
	}
	return NOT_MINE;
}

/* What is read: the stores, the platform a tag resolves for, the logs. */
static int source_option(cli *c, int opt, const char *arg)
{
	switch (opt) {
	case OPT_STORE:
		c->stores = oa_xreallocarray(c->stores, c->n_stores + 1, sizeof *c->stores);
		c->stores[c->n_stores++] = optarg;
		store_list = c->stores;
		return CLI_GO_ON;
	case OPT_ALL_USERS: c->all_users = true; return CLI_GO_ON;
	case OPT_PLATFORM:
		if (!oa_platform_valid(arg)) {
			cli_err("--platform: expected OS/ARCH as Go names them (darwin/arm64, linux/amd64, ...), not '%s'",
			        arg);
			return OA_EXIT_USAGE;
		}
		c->platform = arg;
		return CLI_GO_ON;
	case OPT_LOG:
		c->logs = oa_xreallocarray(c->logs, c->n_logs + 1, sizeof *c->logs);
		c->logs[c->n_logs++] = arg;
		log_list = c->logs;
		return CLI_GO_ON;
	case OPT_SINCE: c->since = arg; return CLI_GO_ON;
	case OPT_UNTIL: c->until = arg; return CLI_GO_ON;
	case OPT_ROOT: c->root = arg; return CLI_GO_ON;
	case OPT_UNUSED_FOR: {
		double d;
		if (oa_parse_duration(arg, &d) < 0)
			return cli_usage_error("--unused-for takes a duration: %s; not '%s'", OA_DURATION_GRAMMAR, arg);
		c->unused_for = d;
		selection_add(c, "--unused-for", arg, false);
		return CLI_GO_ON;
	}
	}
	return NOT_MINE;
}

/* verify: what to hash, how many at once, for how long, the cache. */
static int verify_option(cli *c, int opt, const char *arg)
{
	switch (opt) {
	case OPT_JOBS: {
		char *end;
		long j = strtol(arg, &end, 10);
		if (*end || j < 1 || j > 1024)
			return cli_usage_error("--jobs takes a number from 1 to 1024, not '%s'", arg);
		c->jobs = (int)j;
		return CLI_GO_ON;
	}
	case OPT_ALL: c->all = true; return CLI_GO_ON;
	case OPT_CHANGED: c->changed = true; return CLI_GO_ON;
	case OPT_QUICK: c->quick = true; return CLI_GO_ON;
	case OPT_MAX_DURATION: {
		double d;
		if (oa_parse_duration(arg, &d) < 0 || d <= 0)
			return cli_usage_error("--max-duration takes a time budget above 0: %s; not '%s'",
			                       OA_DURATION_GRAMMAR, arg);
		c->max_duration = d;
		return CLI_GO_ON;
	}
	case OPT_CACHE: c->cache_path = arg; return CLI_GO_ON;
	}
	return NOT_MINE;
}

/* du, prune, rm, dedupe: what to remove or share, and how carefully. */
static int space_option(cli *c, int opt, const char *arg)
{
	switch (opt) {
	case OPT_APPLY: c->apply = true; return CLI_GO_ON;
	case OPT_YES: c->yes = true; return CLI_GO_ON;
	case OPT_PLAN: c->plan_path = arg; return CLI_GO_ON;
	case OPT_QUARANTINE: c->quarantine = arg; return CLI_GO_ON;
	case OPT_WHAT: {
		char err[256];
		if (oa_junk_parse_what(arg, &c->what, err, sizeof err) < 0)
			return cli_usage_error("--what: %s", err);
		return CLI_GO_ON;
	}
	case OPT_MIN_AGE: {
		double d;
		if (oa_parse_duration(arg, &d) < 0)
			return cli_usage_error("--min-age takes a duration: %s; 0 for none; not '%s'",
			                       OA_DURATION_GRAMMAR, arg);
		c->min_age = (long long)d;
		return CLI_GO_ON;
	}
	case OPT_FORCE: c->force = true; return CLI_GO_ON;
	case OPT_NO_LOCK: c->no_lock = true; return CLI_GO_ON;
	case OPT_WITH_SHADOW: c->with_shadow = true; return CLI_GO_ON;
	case OPT_CHILD:
		if (strcmp(arg, "ggml") && strcmp(arg, "llamacpp") && strcmp(arg, "mlx"))
			return cli_usage_error("--child takes the runner of a list's child: ggml, llamacpp or mlx, not '%s'", arg);
		c->child = arg;
		return CLI_GO_ON;
	case OPT_PREDICT_SERVER: c->predict_server = true; return CLI_GO_ON;
	case OPT_SERVER_VERSION: {
		int era = oa_server_era_parse(arg);
		if (era < 0)
			return cli_usage_error("--server-version takes an Ollama version such as 0.33 or 0.40.8, not '%s'", arg);
		c->server_version = arg;
		c->server_era = era;
		return CLI_GO_ON;
	}
	case OPT_LAST: c->last = true; return CLI_GO_ON;
	case OPT_OP: c->op = arg; return CLI_GO_ON;
	case OPT_EMPTY: c->empty = true; return CLI_GO_ON;
	case OPT_OLDER_THAN: {
		double d;
		if (oa_parse_duration(arg, &d) < 0)
			return cli_usage_error("--older-than takes a duration: %s; not '%s'", OA_DURATION_GRAMMAR, arg);
		c->older_than = d;
		return CLI_GO_ON;
	}
	case OPT_FROM: c->from = arg; return CLI_GO_ON;
	case OPT_VERIFY: c->verify = true; return CLI_GO_ON;
	case OPT_DUPLICATES: c->duplicates = true; return CLI_GO_ON;
	case OPT_HARDLINK: c->hardlink = true; return CLI_GO_ON;
	}
	return NOT_MINE;
}

/* What getopt_long could not parse, in our words (its own messages start
 * with argv[0]: ours say ollama-audit). */
static int bad_option(int opt, char **argv)
{
	if (opt == ':')
		return cli_usage_error("%s needs a value", argv[optind - 1]);
	if (optopt > 0 && optopt < 128)
		return cli_usage_error("unknown option '-%c'", optopt);
	if (optopt)
		return cli_usage_error("option '%s' takes no value", argv[optind - 1]);
	return cli_usage_error("unknown option '%s'", argv[optind - 1]);
}

static int parse_option(cli *c, cli_request *r, int opt, char **argv)
{
	int rc = output_option(c, r, opt, optarg);
	if (rc == NOT_MINE)
		rc = source_option(c, opt, optarg);
	if (rc == NOT_MINE)
		rc = verify_option(c, opt, optarg);
	if (rc == NOT_MINE)
		rc = space_option(c, opt, optarg);
	if (rc == NOT_MINE)
		rc = bad_option(opt, argv);
	return rc;
}

int cli_parse_options(cli *c, cli_request *r, int argc, char **argv)
{
	atexit(free_lists);
	opterr = 0;
	int opt, li;
	/* Options may come anywhere: getopt_long permutes the arguments. */
	while ((li = -1, opt = getopt_long(argc, argv, ":hqvVo:", long_opts, &li)) != -1) {
		const char *name = li >= 0 ? long_opts[li].name : opt == 'h' ? "help" : opt == 'q' ? "quiet"
		                   : opt == 'v' ? "verbose" : opt == 'V' ? "version" : opt == 'o' ? "output" : NULL;
		if (opt == 'V')
			opt = OPT_VERSION;
		if (opt == 'o')
			opt = OPT_OUTPUT;
		if (name && r->n_given < sizeof r->given / sizeof r->given[0])
			r->given[r->n_given++] = name;
		int rc = parse_option(c, r, opt, argv);
		if (rc != CLI_GO_ON)
			return rc;
	}
	return CLI_GO_ON;
}
