/* main.c - ollama-audit: option parsing and command dispatch. The work is
 * done by the library; each cmd_*.c only chooses what to print. */
#include "cli.h"
#include "cli_multi.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/manifest_list.h"
#include "base/util.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: ollama-audit [--store DIR]... COMMAND [OPTIONS] [ARGS]\n"
	"\n"
	"Audit an Ollama model store offline: no server, no network. Read-only, except\n"
	"prune --apply, rm --apply, dedupe --apply and restore, which change a store.\n"
	"\n"
	"Commands:\n"
	"  list [PREFIX]      the models, as `ollama list` shows them, plus format and runner\n"
	"  show MODEL         one model in full: manifest, config, layers, weight headers\n"
	"  check [MODEL...]   structure pass: every reference, size, name, header (fast)\n"
	"  verify [MODEL...]  content pass: sha256 of every referenced blob\n"
	"  du                 disk usage: per model unique/shared bytes, junk, reclaimable\n"
	"  prune              remove junk (orphans, partials, temps): a dry run unless --apply\n"
	"  rm MODEL...        remove models offline, keeping every blob another manifest may use\n"
	"  restore DIR        put back what prune/rm --quarantine DIR moved away\n"
	"  stores             every store on this machine: owner, size, models, how it was found\n"
	"  dedupe             replace blobs duplicated across stores by reflinks (dry run)\n"
	"  history [MODEL...] every model load the server logs recorded: when, runner, result\n"
	"\n"
	"Options (any command):\n"
	"  --store DIR        the store (repeatable); default $OLLAMA_MODELS, else ~/.ollama/models\n"
	"  --format FMT       table (default), json, ndjson, csv (restore: table only);\n"
	"                     list also takes tags; check, verify, du and stores also\n"
	"                     prometheus; any other is refused (exit 16)\n"
	"  --all-users        every store on the machine (see `stores`), plus any --store\n"
	"  --output FILE      write standard output to FILE atomically (temp file + rename)\n"
	"  --platform OS/ARCH which child of a manifest list a tag uses (default: this\n"
	"                     machine; darwin/arm64 prefers the MLX child)\n"
	"  --units U          si (default, like ollama list), iec, bytes\n"
	"  --fail-on SEV      lowest severity that sets the exit status: error (default), warning\n"
	"  --color WHEN       auto (default), always, never; NO_COLOR disables colour\n"
	"  -q, --quiet        list, du: the model names only, one per line\n"
	"  -h, --help         this help; `ollama-audit COMMAND --help` for a command\n"
	"  --version          print the version\n"
	"\n"
	"Exit status (bits, ORed across stores): 0 ok, 1 warnings (with --fail-on warning),\n"
	"4 integrity errors, 8 operational error, 16 usage error, 32 interrupted.\n"
	"Declining a [y/N] prompt is not an interruption: nothing done, exit 0.\n";

static const char *cmd_help_text(const char *cmd)
{
	if (strcmp(cmd, "list") == 0)
		return "usage: ollama-audit list [PREFIX] [-q] [--format table|json|ndjson|csv|tags] [--units si|iec|bytes]\n"
		       "                        [--unused-for DURATION] [--sort KEY] [--no-header]\n"
		       "\n"
		       "List the models of the store newest first, with the NAME, ID, SIZE and MODIFIED\n"
		       "columns of `ollama list` (same values, same rounding) plus FORMAT, RUNNER, ARCH,\n"
		       "PARAMS and QUANT. PREFIX filters names case-insensitively, as `ollama list` does.\n"
		       "--format tags prints the JSON of Ollama's /api/tags. Problems found on the way\n"
		       "(broken manifests, bad names, missing configs) go to stderr; the rest is listed.\n"
		       "When the server's logs are found (see history), a LAST USED column is added;\n"
		       "--unused-for DURATION lists only the models not loaded within it.\n"
		       "-q, --quiet prints the names only, one per line (like docker images -q).\n"
		       "--sort name|size|unique|modified|last-used (default modified, newest first;\n"
		       "last-used puts models the logs never saw last); --no-header drops the heading.\n"
		       "On a terminal narrower than the table (COLUMNS, else its size) NAME is cut\n"
		       "with an ellipsis; piped or with --output, names are always whole.\n";
	if (strcmp(cmd, "show") == 0)
		return "usage: ollama-audit show MODEL [--tensors] [--format table|json|ndjson|csv]\n"
		       "\n"
		       "Show one model in full: name, ID, paths, config fields, every layer (media type,\n"
		       "digest, declared size, name/from, whether the blob exists and its size on disk),\n"
		       "and a header summary of each weight layer (GGUF or safetensors). MODEL is a name\n"
		       "as Ollama resolves it (defaults for host, namespace and tag; blanks trimmed;\n"
		       ":local dropped; m:tag:cloud is the m:tag-cloud stub) or an ID prefix of at\n"
		       "least 6 hex digits. An exact-case match wins; a name several models match\n"
		       "only case-insensitively is refused as ambiguous. --tensors lists every tensor.\n"
		       "The last paragraph says whether this machine (or --root DIR) can run it, on which\n"
		       "engine, and whether its weights fit the memory (docs/history.md).\n";
	if (strcmp(cmd, "check") == 0)
		return "usage: ollama-audit check [MODEL...] [--format table|json|ndjson|csv|prometheus]\n"
		       "                         [--fail-on error|warning]\n"
		       "\n"
		       "The structure pass: presence and size of every referenced blob, names, every\n"
		       "manifest and config, every weight header parsed and cross-checked against the\n"
		       "config, and store-wide findings (orphans, partial downloads, temp files, what\n"
		       "blocks the server's start-up prune). Reads headers only, never whole blobs.\n";
	if (strcmp(cmd, "verify") == 0)
		return "usage: ollama-audit verify [MODEL...] [--all] [--jobs N] [--changed] [--quick]\n"
		       "                          [--max-duration SECONDS] [--cache FILE]\n"
		       "                          [--format table|json|ndjson|csv|prometheus]\n"
		       "\n"
		       "The content pass: sha256 of every blob the selected models reference (--all adds\n"
		       "unreferenced blobs), compared with the blob's name. Parallel (--jobs, default the\n"
		       "online cores), largest blobs first. A cache of good results lives outside the store\n"
		       "($XDG_CACHE_HOME/ollama-audit/verify-cache.json): --changed rehashes only blobs whose\n"
		       "stat changed since their last good verification; --quick re-reads every blob but\n"
		       "checks it with XXH3-128 against the cached fingerprint. --max-duration stops after\n"
		       "a time budget; the next --changed run continues where it stopped. A bad blob\n"
		       "that several models share is reported under every one of them.\n";
	if (strcmp(cmd, "du") == 0)
		return "usage: ollama-audit du [-q] [--format table|json|ndjson|csv|prometheus] [--units si|iec|bytes]\n"
		       "                       [--unused-for DURATION] [--sort KEY] [--no-header]\n"
		       "                       [--all-users --duplicates]\n"
		       "\n"
		       "Disk usage per model, sorted by UNIQUE: bytes only this model uses (what removing\n"
		       "it frees), SHARED with other models, ON DISK (allocated, st_blocks) and APPARENT\n"
		       "(st_size). Hard links count once (device+inode); tags that are the same manifest\n"
		       "are one row. The footer gives the store totals: referenced bytes, junk by category\n"
		       "(orphans, manifest-blobs, partials, temps, legacy, foreign, empty-dirs), what\n"
		       "`prune` would reclaim now, and everything under blobs/. json/csv give raw bytes.\n"
		       "With the server's logs (see history) a LAST USED column is added; --unused-for\n"
		       "DURATION shows only the models the logs show no load of within it.\n"
		       "-q, --quiet prints the names only, one per line, in the table's order (every\n"
		       "tag of a row: removing them all frees its UNIQUE bytes). --sort name|size|unique|\n"
		       "modified|last-used (default unique; size is ON DISK) orders the rows, and\n"
		       "--no-header drops the store and column headings. NAME is cut with an ellipsis\n"
		       "on a terminal narrower than the table, as in list.\n";
	if (strcmp(cmd, "prune") == 0)
		return "usage: ollama-audit prune [--what LIST] [--min-age DURATION] [--plan FILE]\n"
		       "                         [--format table|json|ndjson|csv]\n"
		       "                         [--apply [--yes] [--quarantine DIR] [--force]]\n"
		       "       ollama-audit prune --predict-server [--format table|json]\n"
		       "\n"
		       "Remove junk from the store. Without --apply this is a dry run: it prints exactly\n"
		       "what would be removed and the bytes freed (allocated), and --plan FILE saves that\n"
		       "plan. --apply removes (asking [y/N] on a terminal; without one it needs --yes);\n"
		       "--apply --plan FILE removes exactly the entries of that plan and nothing else.\n"
		       "Every entry is re-checked just before removal (same device, inode, size, mtime;\n"
		       "no manifest references it) and skipped if anything changed. Symlinks are removed\n"
		       "as links, never followed.\n"
		       "\n"
		       "  --what LIST        orphans,partials,temps (default: what the server's start-up\n"
		       "                     prune deletes), legacy, foreign, manifest-blobs, empty-dirs, all\n"
		       "  --min-age D        skip files younger than D (default 1h; 90s, 30m, 1.5h, 2d, 0)\n"
		       "  --quarantine DIR   move instead of delete (same filesystem); `restore DIR` undoes\n"
		       "  --force            go on although a manifest cannot be parsed or an Ollama\n"
		       "                     server/runner uses the store (both refuse by default, exit 8)\n"
		       "  --predict-server   print what the server's own start-up prune would delete\n"
		       "\n"
		       "Exit: 0 done, 8 refused or failed, 16 usage (or --apply without --yes and no\n"
		       "terminal), 32 interrupted. Declining the prompt exits 0: nothing done.\n";
	if (strcmp(cmd, "rm") == 0)
		return "usage: ollama-audit rm MODEL... [--plan FILE] [--format table|json|ndjson|csv]\n"
		       "                        [--apply [--yes] [--quarantine DIR]\n"
		       "                        [--force] [--min-age DURATION]]\n"
		       "       ollama-audit rm [MODEL...] --unused-for DURATION [--plan FILE]\n"
		       "\n"
		       "The offline `ollama rm`. A dry run unless --apply: prints the manifests, the\n"
		       "directories they leave empty and the blobs no other manifest (parseable or not)\n"
		       "can reference, with the exact bytes freed. --apply removes the manifests first,\n"
		       "then the empty directories, then the blobs, so a crash never leaves a manifest\n"
		       "pointing at a removed blob. Same confirmation, --plan, --quarantine and safety\n"
		       "rules as prune; --min-age applies to blobs only when given.\n"
		       "--unused-for DURATION (a dry run only) plans the models (named, or all) that the\n"
		       "server's logs show no load of within it, and says how far back the logs go.\n";
	if (strcmp(cmd, "restore") == 0)
		return "usage: ollama-audit restore DIR [--store STORE]   (a table only)\n"
		       "\n"
		       "Put back everything `prune --quarantine DIR` or `rm --quarantine DIR` moved into\n"
		       "DIR, newest first, into the store named in DIR/index.json (or --store). A file\n"
		       "that exists again with other content is never overwritten: it stays in DIR and\n"
		       "the exit status is 4.\n";
	if (strcmp(cmd, "stores") == 0)
		return "usage: ollama-audit stores [--all] [--store DIR]... [--format table|json|ndjson|csv|prometheus]\n"
		       "\n"
		       "Every Ollama store on this machine, with its owner, size on disk, model count and\n"
		       "how it was found: $OLLAMA_MODELS, OLLAMA_MODELS in the systemd unit ollama.service\n"
		       "and its ollama.service.d/*.conf drop-ins (and the EnvironmentFile= they name),\n"
		       "/etc/default/ollama-style files, <home>/.ollama/models of every account in the\n"
		       "password database, /usr/share/ollama/.ollama/models, /var/lib/ollama, /root/.ollama.\n"
		       "A store reached by several paths (symlinks, bind mounts) is listed once. Then the\n"
		       "totals per user and the blobs duplicated across stores. --all also lists the\n"
		       "places that hold no store. Stores we may not read are listed and set exit bit 8.\n"
		       "--all-users on list, check, verify, du, prune and dedupe audits every store found.\n";
	if (strcmp(cmd, "dedupe") == 0)
		return "usage: ollama-audit dedupe [--all-users | --store A --store B...] [--hardlink]\n"
		       "                          [--apply [--yes] [--force]] [--format table|json|ndjson|csv]\n"
		       "\n"
		       "Replace blobs that several stores hold as separate copies. A dry run unless\n"
		       "--apply. By default reflinks (FICLONE: copy-on-write, separate inodes, safe\n"
		       "across users) where the filesystem supports them (btrfs, XFS, bcachefs, ...);\n"
		       "--hardlink uses hard links, only between stores and files of the same owner.\n"
		       "The dry run tests each target filesystem first and promises no reflink it\n"
		       "cannot make (then it says what --hardlink would free); copies nothing in their\n"
		       "store references are junk for `prune`, never deduplicated. An --apply that does\n"
		       "none of what was planned exits 8.\n"
		       "Before each replacement both files are re-checked against the scan and hashed\n"
		       "(sha256 = their name); the clone or link goes in under a temporary name and is\n"
		       "renamed over the duplicate. Stores an Ollama server uses are left alone unless\n"
		       "--force. --apply asks [y/N] on a terminal; without one it needs --yes.\n";
	if (strcmp(cmd, "history") == 0)
		return "usage: ollama-audit history [MODEL...] [--log FILE]... [--root DIR] [--since WHEN]\n"
		       "                           [--until WHEN] [--format table|json|ndjson|csv]\n"
		       "\n"
		       "Every model load an Ollama server recorded in its logs, newest first: the time,\n"
		       "the model (a blob path matched by its digest, from any machine's paths; an MLX\n"
		       "model by its name), its ID, the runner (llamacpp, ollama, mlx), the result (ok,\n"
		       "failed with the server's reason, unknown), memory figures when logged and the\n"
		       "server version. Then per model: last loaded, loads, runners seen. The logs are\n"
		       "server.log and its rotated server-N.log beside the store (<store>/../logs) or\n"
		       "in its owner's ~/.ollama/logs, and ollama.service in the systemd journal (of\n"
		       "--root DIR for a disk from another machine); --log FILE (repeatable, - for\n"
		       "standard input) reads only the files given: journalctl text exports, docker\n"
		       "logs (-t) output or plain server output.\n"
		       "WHEN is an RFC 3339 time, a date (YYYY-MM-DD, UTC) or a duration ago (90d, 12h).\n"
		       "Lines that cannot be read are reported as FILE:LINE warnings on stderr.\n";
	return NULL;
}

/* The commands. To add one: write cmd_NAME() and its help, add a row with
 * the options it takes besides the ones every command takes (COMMON) and
 * the formats it produces. An option a command does not take, or a format
 * it does not produce, is a usage error, never ignored. */
typedef struct command {
	const char *name;
	int (*run)(cli *c);
	const char *options; /* long option names, space-separated */
	const char *formats; /* --format values, space-separated, table first */
} command;

#define COMMON "store format units fail-on color help version output "
#define READS "platform log root " /* a store's models, and the logs for LAST USED */
#define DATA "table json ndjson csv" /* every command that reports data */

static const command commands[] = {
	{ "list", cmd_list, COMMON READS "all-users unused-for quiet sort no-header", DATA " tags" },
	{ "show", cmd_show, COMMON READS "all-users tensors", DATA },
	{ "check", cmd_check, COMMON READS "all-users", DATA " prometheus" },
	{ "verify", cmd_verify, COMMON "platform all-users all changed quick jobs max-duration cache "
	                        "progress no-progress", DATA " prometheus" },
	{ "du", cmd_du, COMMON READS "all-users duplicates unused-for quiet sort no-header", DATA " prometheus" },
	{ "prune", cmd_prune, COMMON "platform all-users apply yes plan quarantine what min-age force "
	                      "predict-server", DATA },
	{ "rm", cmd_rm, COMMON READS "apply yes plan quarantine min-age force unused-for", DATA },
	{ "restore", cmd_restore, COMMON, "table" },
	{ "stores", cmd_stores, COMMON "platform all-users all", DATA " prometheus" },
	{ "dedupe", cmd_dedupe, COMMON "platform all-users apply yes force hardlink", DATA },
	{ "history", cmd_history, COMMON READS "all-users since until unused-for", DATA },
	{ NULL, NULL, NULL, NULL },
};

/* Whether the space-separated list holds the word. */
static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

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

int cli_refuse_format(const cli *c, const char *what, const char *formats)
{
	oa_buf b;
	oa_buf_init(&b);
	for (const char *p = formats; *p; p++)
		if (*p == ' ')
			oa_buf_adds(&b, ", ");
		else
			oa_buf_addc(&b, *p);
	char *list = oa_buf_take(&b);
	cli_err("%s: --format %s is not a format of %s (it takes: %s); see ollama-audit %s --help", c->cmd,
	        c->format_name, what, list, c->cmd);
	free(list);
	return OA_EXIT_USAGE;
}

/* The command the arguments name, known before the options are parsed, so
 * that a usage error can point to its --help. */
static const char *hint_cmd;

static void usage_hint(void)
{
	if (hint_cmd)
		fprintf(stderr, "Try 'ollama-audit %s --help'.\n", hint_cmd);
	else
		fprintf(stderr, "Try 'ollama-audit --help'.\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ollama-audit: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage_hint();
	return OA_EXIT_USAGE;
}

/* The command closest to a mistyped one, or NULL when none is close. */
static const char *suggest_command(const char *typed)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (const command *k = commands; k->name; k++) {
		size_t d = oa_edit_distance(typed, k->name);
		if (d < best_d) {
			best_d = d;
			best = k->name;
		}
	}
	return oa_edit_close(best_d, strlen(typed)) ? best : NULL;
}

opened_store *cli_open_stores(cli *c, size_t *n, int header_mode)
{
	if (c->all_users)
		return cli_open_discovered(c, n, header_mode);
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
			cli_fail(c, "store-unreadable", path, "%s (store from %s)", err, how);
			if (!c->n_stores && !c->all_users)
				fprintf(stderr, "  name one with --store DIR, or run `ollama-audit stores` to find "
				                "the stores on this machine\n");
			c->exit_code |= OA_EXIT_OPERATIONAL;
			cli_multi_failed(c, path, how);
			oa_store_close(&v[i].s);
			continue;
		}
		/* The same store reached by two paths (a symlink, a bind mount) is
		 * audited once, so nothing is counted twice. */
		bool again = false;
		for (size_t k = 0; k < i && !again; k++)
			if (v[k].ok && v[k].s.root_st.st_dev == v[i].s.root_st.st_dev &&
			    v[k].s.root_st.st_ino == v[i].s.root_st.st_ino) {
				cli_err("%s is the same store as %s: audited once", v[i].s.root, v[k].s.root);
				again = true;
			}
		if (again) {
			oa_store_close(&v[i].s);
			continue;
		}
		if (!v[i].s.has_manifests && !v[i].s.has_manifests_v2)
			cli_err("%s: no manifests/ directory: no models", v[i].s.root);
		if (!v[i].s.has_blobs)
			cli_err("%s: no blobs/ directory: every referenced blob is missing", v[i].s.root);
		oa_store_set_header_mode(&v[i].s, header_mode);
		v[i].s.platform = c->platform;
		oa_store_scan(&v[i].s);
		v[i].ok = true;
		c->stores_read++;
	}
	free(def);
	*n = count;
	return v;
}

long cli_resolve_model(cli *c, const oa_store *s, const char *query)
{
	long idx = oa_store_resolve(s, query);
	if (idx != OA_RESOLVE_AMBIGUOUS_NAME)
		return idx;
	oa_name want;
	oa_name_parse(query, &want);
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < s->n_models; i++)
		if (oa_name_equal_fold(&s->models[i].name, &want))
			oa_buf_printf(&b, "%s%s", b.len ? ", " : "", s->models[i].display);
	char *names = oa_buf_take(&b);
	cli_fail(c, "ambiguous-model", s->root, "%s: ambiguous: %s matches %s; name one in its exact case",
	         s->root, query, names);
	free(names);
	c->exit_code |= OA_EXIT_USAGE;
	return idx;
}

const char *cli_suggest_model(const oa_store *s, const char *query)
{
	/* A query without a tag is compared with the names without theirs, so
	 * `demo-llama` finds demo-llama:1b. */
	const char *slash = strrchr(query, '/');
	bool tagged = strchr(slash ? slash : query, ':') != NULL;
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (m->anchor)
			continue;
		char *cand = oa_xstrdup(m->display);
		char *last = strrchr(cand, '/');
		char *colon = strchr(last ? last : cand, ':');
		if (!tagged && colon)
			*colon = '\0';
		size_t d = oa_edit_distance(query, cand);
		free(cand);
		if (d < best_d) {
			best_d = d;
			best = m->display;
		}
	}
	return best && oa_edit_close(best_d, strlen(query)) ? best : NULL;
}

void cli_model_unresolved(cli *c, const oa_store *s, const char *query, long idx)
{
	if (idx == OA_RESOLVE_AMBIGUOUS_ID) {
		cli_fail(c, "model-not-found", s->root, "%s: model '%s' is an ambiguous ID prefix", s->root, query);
		return;
	}
	const char *near = cli_suggest_model(s, query);
	if (near)
		cli_fail(c, "model-not-found", s->root, "%s: model '%s' not found; did you mean %s?", s->root, query,
		         near);
	else
		cli_fail(c, "model-not-found", s->root, "%s: model '%s' not found", s->root, query);
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
	                               "missing-config", "unreadable", "missing-child", "nested-list",
	                               "dangling-tag", "hidden-from-list" };
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
	if (out == stderr)
		fputs("ollama-audit: ", out); /* like every other message there */
	fprintf(out, "%s%s%s %s: ", on, oa_severity_name(f->severity), off, f->code);
	if (f->path)
		fprintf(out, "%s: ", f->path);
	fprintf(out, "%s\n", f->message);
}

/* -q (list, du) prints names only: it refuses any --format but table. */
static bool cli_quiet_ok(const cli *c)
{
	if (c->quiet && c->format_set && c->format != OUT_TABLE) {
		cli_err("%s -q prints names only, one per line: it takes no --format", c->cmd);
		return false;
	}
	return true;
}

void cli_print_name(const char *name)
{
	char *e = oa_escape(name, strlen(name));
	puts(e);
	free(e);
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
       OPT_NO_PROGRESS, OPT_APPLY, OPT_YES, OPT_PLAN, OPT_QUARANTINE, OPT_WHAT, OPT_MIN_AGE,
       OPT_FORCE, OPT_PREDICT_SERVER, OPT_ALL_USERS, OPT_DUPLICATES, OPT_HARDLINK, OPT_OUTPUT,
       OPT_PLATFORM, OPT_LOG, OPT_SINCE, OPT_UNTIL, OPT_ROOT, OPT_UNUSED_FOR, OPT_SORT, OPT_NO_HEADER };

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
	{ "apply", no_argument, NULL, OPT_APPLY },
	{ "yes", no_argument, NULL, OPT_YES },
	{ "plan", required_argument, NULL, OPT_PLAN },
	{ "quarantine", required_argument, NULL, OPT_QUARANTINE },
	{ "what", required_argument, NULL, OPT_WHAT },
	{ "min-age", required_argument, NULL, OPT_MIN_AGE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "predict-server", no_argument, NULL, OPT_PREDICT_SERVER },
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
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "no-header", no_argument, NULL, OPT_NO_HEADER },
	{ NULL, 0, NULL, 0 },
};

/* The --store list outlives every early return of main(); free it at exit
 * so leak checkers see a clean process whatever path it took. */
static char **store_list;

/* The first argument that is not an option or an option's value: the
 * command (getopt_long finds it only after every option is parsed). */
static const char *scan_command(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			return i + 1 < argc ? argv[i + 1] : NULL;
		if (a[0] != '-' || a[1] == '\0')
			return a;
		if (a[1] != '-' || strchr(a, '='))
			continue; /* -h, -q, --name=value */
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

static const char **log_list;

static void free_store_list(void)
{
	free(store_list);
	free(log_list);
}

int main(int argc, char **argv)
{
	cli c = { .format = OUT_TABLE, .format_name = "table", .units = OA_UNITS_SI, .fail_on = OA_SEV_ERROR, .min_age = -1,
	          .unused_for = -1 };
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
	atexit(free_store_list);
	const char *named = scan_command(argc, argv);
	if (named && find_command(named))
		hint_cmd = named;
	/* getopt's own messages start with argv[0]: ours say ollama-audit. */
	opterr = 0;
	int opt, li;
	const char *given[64]; /* the long names of the options given, for the command's table */
	size_t n_given = 0;
	/* Options may come anywhere: getopt_long permutes the arguments. */
	while ((li = -1, opt = getopt_long(argc, argv, ":hq", long_opts, &li)) != -1) {
		const char *name = li >= 0 ? long_opts[li].name : opt == 'h' ? "help" : opt == 'q' ? "quiet" : NULL;
		if (name && n_given < sizeof given / sizeof given[0])
			given[n_given++] = name;
		switch (opt) {
		case OPT_STORE:
			c.stores = oa_xreallocarray(c.stores, c.n_stores + 1, sizeof *c.stores);
			c.stores[c.n_stores++] = optarg;
			store_list = c.stores;
			break;
		case OPT_FORMAT:
			c.format_set = true;
			c.format_name = optarg;
			if (strcmp(optarg, "table") == 0) c.format = OUT_TABLE;
			else if (strcmp(optarg, "json") == 0) c.format = OUT_JSON;
			else if (strcmp(optarg, "ndjson") == 0) c.format = OUT_NDJSON;
			else if (strcmp(optarg, "csv") == 0) c.format = OUT_CSV;
			else if (strcmp(optarg, "tags") == 0) c.format = OUT_TAGS;
			else if (strcmp(optarg, "prometheus") == 0) c.format = OUT_PROMETHEUS;
			else return usage_error("unknown --format '%s' (table, json, ndjson, csv, tags, prometheus)", optarg);
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
			double d;
			if (oa_parse_duration(optarg, &d) < 0 || d <= 0)
				return usage_error("--max-duration takes a time budget above 0: %s; not '%s'",
				                   OA_DURATION_GRAMMAR, optarg);
			c.max_duration = d;
			break;
		}
		case OPT_CACHE: c.cache_path = optarg; break;
		case OPT_PROGRESS: progress = 1; break;
		case OPT_NO_PROGRESS: progress = 0; break;
		case 'q': c.quiet = true; break;
		case OPT_APPLY: c.apply = true; break;
		case OPT_YES: c.yes = true; break;
		case OPT_PLAN: c.plan_path = optarg; break;
		case OPT_QUARANTINE: c.quarantine = optarg; break;
		case OPT_WHAT: {
			char err[256];
			if (oa_junk_parse_what(optarg, &c.what, err, sizeof err) < 0)
				return usage_error("--what: %s", err);
			break;
		}
		case OPT_MIN_AGE: {
			double d;
			if (oa_parse_duration(optarg, &d) < 0)
				return usage_error("--min-age takes a duration: %s; 0 for none; not '%s'",
				                   OA_DURATION_GRAMMAR, optarg);
			c.min_age = (long long)d;
			break;
		}
		case OPT_FORCE: c.force = true; break;
		case OPT_PREDICT_SERVER: c.predict_server = true; break;
		case OPT_ALL_USERS: c.all_users = true; break;
		case OPT_DUPLICATES: c.duplicates = true; break;
		case OPT_HARDLINK: c.hardlink = true; break;
		case OPT_OUTPUT: c.output = optarg; break;
		case OPT_PLATFORM:
			if (!oa_platform_valid(optarg)) {
				cli_err("--platform: expected OS/ARCH as Go names them (darwin/arm64, linux/amd64, ...), not '%s'",
				        optarg);
				return OA_EXIT_USAGE;
			}
			c.platform = optarg;
			break;
		case OPT_LOG:
			c.logs = oa_xreallocarray(c.logs, c.n_logs + 1, sizeof *c.logs);
			c.logs[c.n_logs++] = optarg;
			log_list = c.logs;
			break;
		case OPT_SINCE: c.since = optarg; break;
		case OPT_UNTIL: c.until = optarg; break;
		case OPT_ROOT: c.root = optarg; break;
		case OPT_SORT: {
			static const char *const keys[] = { [SORT_NAME] = "name", [SORT_SIZE] = "size",
			                                    [SORT_UNIQUE] = "unique", [SORT_MODIFIED] = "modified",
			                                    [SORT_LAST_USED] = "last-used" };
			c.sort = SORT_DEFAULT;
			for (int k = SORT_NAME; k <= SORT_LAST_USED; k++)
				if (strcmp(optarg, keys[k]) == 0)
					c.sort = (enum cli_sort)k;
			if (c.sort == SORT_DEFAULT)
				return usage_error("unknown --sort '%s' (name, size, unique, modified, last-used)", optarg);
			break;
		}
		case OPT_NO_HEADER: c.no_header = true; break;
		case OPT_UNUSED_FOR: {
			double d;
			if (oa_parse_duration(optarg, &d) < 0)
				return usage_error("--unused-for takes a duration: %s; not '%s'", OA_DURATION_GRAMMAR,
				                   optarg);
			c.unused_for = d;
			break;
		}
		case ':':
			return usage_error("%s needs a value", argv[optind - 1]);
		default:
			if (optopt > 0 && optopt < 128)
				return usage_error("unknown option '-%c'", optopt);
			if (optopt)
				return usage_error("option '%s' takes no value", argv[optind - 1]);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	/* getopt_long moved every non-option to the end, in order. */
	char **positional = argv + optind;
	size_t npos = (size_t)(argc - optind);
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
		const char *near = suggest_command(c.cmd);
		if (near)
			return usage_error("unknown command '%s'; did you mean %s?", c.cmd, near);
		return usage_error("unknown command '%s'", c.cmd);
	}
	if (help || strcmp(c.cmd, "help") == 0) {
		if (strcmp(c.cmd, "help") == 0 && c.n_args && cmd_help(c.args[0]))
			fputs(cmd_help(c.args[0]), stdout);
		else
			fputs(h ? h : usage_text, stdout);
		return 0;
	}
	const command *cmd = find_command(c.cmd);
	for (size_t i = 0; i < n_given; i++)
		if (!word_in(cmd->options, given[i])) {
			cli_err("--%s is not an option of %s; see ollama-audit %s --help", given[i], c.cmd, c.cmd);
			return OA_EXIT_USAGE;
		}
	if (!word_in(cmd->formats, c.format_name))
		return cli_refuse_format(&c, c.cmd, cmd->formats);
	if (!cli_quiet_ok(&c))
		return OA_EXIT_USAGE;
	int rc = cli_output_begin(&c);
	if (!rc) {
		cli_capture_begin(&c);
		rc = cmd->run(&c);
		cli_capture_end(&c);
	}
	rc = cli_output_end(&c, rc);
	cli_usage_release();
	if (rc & OA_EXIT_USAGE)
		usage_hint();
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_err("write error on standard output");
		rc |= OA_EXIT_OPERATIONAL;
	}
	return rc;
}
