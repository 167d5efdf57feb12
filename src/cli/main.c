/* main.c - ollama-audit: option parsing and command dispatch. The work is
 * done by the library; each cmd_*.c only chooses what to print. */
#include "cli.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/util.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: ollama-audit [--store DIR]... COMMAND [OPTIONS] [ARGS]\n"
	"\n"
	"Audit an Ollama model store offline: no server, no network, nothing written.\n"
	"\n"
	"Commands:\n"
	"  list [PREFIX]      the models, as `ollama list` shows them, plus format and runner\n"
	"  show MODEL         one model in full: manifest, config, layers, weight headers\n"
	"  check [MODEL...]   structure pass: every reference, size, name, header (fast)\n"
	"  verify [MODEL...]  content pass: sha256 of every referenced blob\n"
	"\n"
	"Options (any command):\n"
	"  --store DIR        the store (repeatable); default $OLLAMA_MODELS, else ~/.ollama/models\n"
	"  --format FMT       table (default), json, ndjson, csv; list also takes tags\n"
	"  --units U          si (default, like ollama list), iec, bytes\n"
	"  --fail-on SEV      lowest severity that sets the exit status: error (default), warning\n"
	"  --color WHEN       auto (default), always, never; NO_COLOR disables colour\n"
	"  -h, --help         this help; `ollama-audit COMMAND --help` for a command\n"
	"  --version          print the version\n"
	"\n"
	"Exit status (bits, ORed across stores): 0 ok, 1 warnings (with --fail-on warning),\n"
	"4 integrity errors, 8 operational error, 16 usage error, 32 interrupted.\n";

static const char *cmd_help_text(const char *cmd)
{
	if (strcmp(cmd, "list") == 0)
		return "usage: ollama-audit list [PREFIX] [--format table|json|ndjson|csv|tags] [--units si|iec|bytes]\n"
		       "\n"
		       "List the models of the store newest first, with the NAME, ID, SIZE and MODIFIED\n"
		       "columns of `ollama list` (same values, same rounding) plus FORMAT, RUNNER, ARCH,\n"
		       "PARAMS and QUANT. PREFIX filters names case-insensitively, as `ollama list` does.\n"
		       "--format tags prints the JSON of Ollama's /api/tags. Problems found on the way\n"
		       "(broken manifests, bad names, missing configs) go to stderr; the rest is listed.\n";
	if (strcmp(cmd, "show") == 0)
		return "usage: ollama-audit show MODEL [--tensors] [--format table|json]\n"
		       "\n"
		       "Show one model in full: name, ID, paths, config fields, every layer (media type,\n"
		       "digest, declared size, name/from, whether the blob exists and its size on disk),\n"
		       "and a header summary of each weight layer (GGUF or safetensors). MODEL is a name\n"
		       "as Ollama resolves it (defaults for host, namespace and tag; case-insensitive) or\n"
		       "an ID prefix of at least 6 hex digits. --tensors lists every tensor.\n";
	if (strcmp(cmd, "check") == 0)
		return "usage: ollama-audit check [MODEL...] [--format table|json|ndjson] [--fail-on error|warning]\n"
		       "\n"
		       "The structure pass: presence and size of every referenced blob, names, every\n"
		       "manifest and config, every weight header parsed and cross-checked against the\n"
		       "config, and store-wide findings (orphans, partial downloads, temp files, what\n"
		       "blocks the server's start-up prune). Reads headers only, never whole blobs.\n";
	if (strcmp(cmd, "verify") == 0)
		return "usage: ollama-audit verify [MODEL...] [--all] [--jobs N] [--changed] [--quick]\n"
		       "                          [--max-duration SECONDS] [--cache FILE] [--format table|json|ndjson]\n"
		       "\n"
		       "The content pass: sha256 of every blob the selected models reference (--all adds\n"
		       "unreferenced blobs), compared with the blob's name. Parallel (--jobs, default the\n"
		       "online cores), largest blobs first. A cache of good results lives outside the store\n"
		       "($XDG_CACHE_HOME/ollama-audit/verify-cache.json): --changed rehashes only blobs whose\n"
		       "stat changed since their last good verification; --quick re-reads every blob but\n"
		       "checks it with XXH3-128 against the cached fingerprint. --max-duration stops after\n"
		       "a time budget; the next --changed run continues where it stopped.\n";
	return NULL;
}

/* The commands. To add one: write cmd_NAME() and its help, add a row. */
typedef struct command {
	const char *name;
	int (*run)(cli *c);
} command;

static const command commands[] = {
	{ "list", cmd_list },
	{ "show", cmd_show },
	{ "check", cmd_check },
	{ "verify", cmd_verify },
	{ NULL, NULL },
};

static const command *find_command(const char *name)
{
	for (const command *k = commands; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

static const char *cmd_help(const char *name)
{
	return find_command(name) ? cmd_help_text(name) : NULL;
}

void cli_err(const char *fmt, ...)
{
	va_list ap;
	fputs("ollama-audit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ollama-audit: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ollama-audit --help'.\n");
	return OA_EXIT_USAGE;
}

opened_store *cli_open_stores(cli *c, size_t *n, int header_mode)
{
	const char *how = "--store";
	char *def = NULL;
	size_t count = c->n_stores ? c->n_stores : 1;
	opened_store *v = oa_xcalloc(count, sizeof *v);
	for (size_t i = 0; i < count; i++) {
		const char *path;
		if (c->n_stores) {
			path = c->stores[i];
		} else {
			def = oa_store_default_path(&how);
			path = def;
		}
		char err[512];
		if (oa_store_open(&v[i].s, path, how, err, sizeof err) < 0) {
			cli_err("%s (store from %s)", err, how);
			c->exit_code |= OA_EXIT_OPERATIONAL;
			oa_store_close(&v[i].s);
			continue;
		}
		if (!v[i].s.has_manifests)
			cli_err("%s: no manifests/ directory: no models", v[i].s.root);
		if (!v[i].s.has_blobs)
			cli_err("%s: no blobs/ directory: every referenced blob is missing", v[i].s.root);
		oa_store_set_header_mode(&v[i].s, header_mode);
		oa_store_scan(&v[i].s);
		v[i].ok = true;
	}
	free(def);
	*n = count;
	return v;
}

void cli_close_stores(opened_store *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].ok)
			oa_store_close(&v[i].s);
	free(v);
}

bool cli_finding_is_listing(const oa_finding *f)
{
	static const char *codes[] = { "invalid-manifest", "invalid-name", "invalid-config",
	                               "missing-config", "unreadable", "manifest-list",
	                               "hidden-from-list" };
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (strcmp(f->code, codes[i]) == 0)
			return !(strcmp(f->code, "unreadable") == 0 && f->path &&
			         oa_str_has_prefix(f->path, "blobs/") && !f->model);
	return false;
}

void cli_account_findings(cli *c, const oa_store *s, bool listing)
{
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (listing && !cli_finding_is_listing(f))
			continue;
		if ((int)f->severity < c->fail_on)
			continue;
		if (strcmp(f->code, "unreadable") == 0)
			c->exit_code |= OA_EXIT_OPERATIONAL;
		else if (f->severity == OA_SEV_ERROR)
			c->exit_code |= OA_EXIT_ERRORS;
		else if (f->severity == OA_SEV_WARNING)
			c->exit_code |= OA_EXIT_WARNINGS;
	}
}

void cli_print_finding(cli *c, FILE *out, const oa_finding *f)
{
	const char *on = "", *off = "";
	if (c->color) {
		on = f->severity == OA_SEV_ERROR ? "\033[31m" : f->severity == OA_SEV_WARNING ? "\033[33m" : "\033[2m";
		off = "\033[0m";
	}
	fprintf(out, "%s%s%s %s: ", on, oa_severity_name(f->severity), off, f->code);
	if (f->path)
		fprintf(out, "%s: ", f->path);
	fprintf(out, "%s\n", f->message);
}

void csv_field(FILE *out, const char *s, bool last)
{
	if (!s)
		s = "";
	if (strpbrk(s, ",\"\r\n")) {
		fputc('"', out);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', out);
			fputc(*s, out);
		}
		fputc('"', out);
	} else {
		fputs(s, out);
	}
	fputc(last ? '\n' : ',', out);
}

enum { OPT_STORE = 256, OPT_FORMAT, OPT_UNITS, OPT_FAIL_ON, OPT_COLOR, OPT_VERSION, OPT_TENSORS,
       OPT_JOBS, OPT_ALL, OPT_CHANGED, OPT_QUICK, OPT_MAX_DURATION, OPT_CACHE, OPT_PROGRESS,
       OPT_NO_PROGRESS };

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
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	cli c = { .format = OUT_TABLE, .units = OA_UNITS_SI, .fail_on = OA_SEV_ERROR };
	const char *color = "auto";
	bool help = false;
	int progress = -1;
	const char *units_env = getenv("OLLAMA_AUDIT_UNITS");
	if (units_env && *units_env) {
		if (strcmp(units_env, "iec") == 0)
			c.units = OA_UNITS_IEC;
		else if (strcmp(units_env, "bytes") == 0)
			c.units = OA_UNITS_BYTES;
	}
	char **positional = oa_xcalloc((size_t)argc + 1, sizeof *positional);
	size_t npos = 0;
	int opt;
	/* Options may come anywhere: getopt_long permutes the arguments. */
	while ((opt = getopt_long(argc, argv, "hq", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_STORE:
			c.stores = oa_xreallocarray(c.stores, c.n_stores + 1, sizeof *c.stores);
			c.stores[c.n_stores++] = optarg;
			break;
		case OPT_FORMAT:
			c.format_set = true;
			if (strcmp(optarg, "table") == 0) c.format = OUT_TABLE;
			else if (strcmp(optarg, "json") == 0) c.format = OUT_JSON;
			else if (strcmp(optarg, "ndjson") == 0) c.format = OUT_NDJSON;
			else if (strcmp(optarg, "csv") == 0) c.format = OUT_CSV;
			else if (strcmp(optarg, "tags") == 0) c.format = OUT_TAGS;
			else return usage_error("unknown --format '%s' (table, json, ndjson, csv, tags)", optarg);
			break;
		case OPT_UNITS:
			if (strcmp(optarg, "si") == 0) c.units = OA_UNITS_SI;
			else if (strcmp(optarg, "iec") == 0) c.units = OA_UNITS_IEC;
			else if (strcmp(optarg, "bytes") == 0) c.units = OA_UNITS_BYTES;
			else return usage_error("unknown --units '%s' (si, iec, bytes)", optarg);
			break;
		case OPT_FAIL_ON: {
			int sev = oa_severity_parse(optarg);
			if (sev < OA_SEV_WARNING)
				return usage_error("unknown --fail-on '%s' (error, warning)", optarg);
			c.fail_on = sev;
			break;
		}
		case OPT_COLOR:
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
				return usage_error("unknown --color '%s' (auto, always, never)", optarg);
			color = optarg;
			break;
		case 'h':
			help = true;
			break;
		case OPT_VERSION:
			printf("ollama-audit %s\n", OA_VERSION);
			return 0;
		case OPT_TENSORS: c.tensors = true; break;
		case OPT_JOBS: {
			char *end;
			long j = strtol(optarg, &end, 10);
			if (*end || j < 1 || j > 1024)
				return usage_error("--jobs takes a number from 1 to 1024, not '%s'", optarg);
			c.jobs = (int)j;
			break;
		}
		case OPT_ALL: c.all = true; break;
		case OPT_CHANGED: c.changed = true; break;
		case OPT_QUICK: c.quick = true; break;
		case OPT_MAX_DURATION: {
			char *end;
			double d = strtod(optarg, &end);
			if (*end == 'm') d *= 60, end++;
			else if (*end == 'h') d *= 3600, end++;
			else if (*end == 's') end++;
			if (*end || d <= 0)
				return usage_error("--max-duration takes seconds (or 10m, 2h), not '%s'", optarg);
			c.max_duration = d;
			break;
		}
		case OPT_CACHE: c.cache_path = optarg; break;
		case OPT_PROGRESS: progress = 1; break;
		case OPT_NO_PROGRESS: progress = 0; break;
		case 'q': c.quiet = true; break;
		default:
			fprintf(stderr, "Try 'ollama-audit --help'.\n");
			return OA_EXIT_USAGE;
		}
	}
	while (optind < argc)
		positional[npos++] = argv[optind++];
	const char *no_color = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	if (strcmp(color, "always") == 0)
		c.color = true;
	else if (strcmp(color, "auto") == 0)
		c.color = isatty(STDOUT_FILENO) && !(no_color && *no_color) &&
		          !(term && strcmp(term, "dumb") == 0);
	c.progress = progress >= 0 ? progress : isatty(STDERR_FILENO);
	if (c.format != OUT_TABLE)
		c.progress = progress == 1;

	if (npos == 0) {
		if (help) {
			fputs(usage_text, stdout);
			return 0;
		}
		fputs(usage_text, stderr);
		return OA_EXIT_USAGE;
	}
	c.cmd = positional[0];
	c.args = positional + 1;
	c.n_args = npos - 1;
	const char *h = cmd_help(c.cmd);
	if (!h && strcmp(c.cmd, "help") != 0) {
		free(positional);
		return usage_error("unknown command '%s'", c.cmd);
	}
	if (help || strcmp(c.cmd, "help") == 0) {
		if (strcmp(c.cmd, "help") == 0 && c.n_args && cmd_help(c.args[0]))
			fputs(cmd_help(c.args[0]), stdout);
		else
			fputs(h ? h : usage_text, stdout);
		free(positional);
		return 0;
	}
	int rc = find_command(c.cmd)->run(&c);
	free(positional);
	free(c.stores);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_err("write error on standard output");
		rc |= OA_EXIT_OPERATIONAL;
	}
	return rc;
}
