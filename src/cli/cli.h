/* cli.h - shared state of the ollama-audit command line: parsed options,
 * the stores to audit, exit-code bookkeeping and output helpers. */
#ifndef OA_CLI_H
#define OA_CLI_H

#include "ollama_audit/finding.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/scan.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit status bits, fsck style; ORed across stores (docs/ollama-audit.1). */
enum {
	OA_EXIT_OK = 0,
	OA_EXIT_WARNINGS = 1,
	OA_EXIT_ERRORS = 4,
	OA_EXIT_OPERATIONAL = 8,
	OA_EXIT_USAGE = 16,
	OA_EXIT_INTERRUPTED = 32,
};

enum oa_out_format { OUT_TABLE, OUT_JSON, OUT_NDJSON, OUT_CSV, OUT_TAGS, OUT_PROMETHEUS };

/* list/du --sort: the command's own order by default (list newest first,
 * du by UNIQUE); names ascending, everything else largest or newest first. */
enum cli_sort { SORT_DEFAULT, SORT_NAME, SORT_SIZE, SORT_UNIQUE, SORT_MODIFIED, SORT_LAST_USED };

typedef struct cli {
	const char *cmd;
	char **stores;
	size_t n_stores;
	enum oa_out_format format;
	const char *format_name; /* as given to --format */
	bool format_set;
	enum oa_units units;
	int fail_on;        /* oa_severity */
	bool color;
	bool progress;
	bool tensors;
	bool quiet;
	enum cli_sort sort; /* list, du --sort */
	bool no_header;     /* list, du --no-header */
	bool all;           /* verify --all */
	bool changed;       /* verify --changed */
	bool quick;         /* verify --quick */
	int jobs;
	double max_duration;
	const char *cache_path;
	/* du / prune / rm / restore (docs/disk-space.md) */
	bool apply;         /* --apply: remove instead of a dry run */
	bool yes;           /* --yes: no confirmation prompt */
	const char *plan_path;   /* --plan FILE */
	const char *quarantine;  /* --quarantine DIR */
	unsigned what;      /* --what: junk category mask (0 = the default set) */
	long long min_age;  /* --min-age in seconds; -1 = not given */
	bool force;         /* --force: past corrupt manifests and running servers */
	bool predict_server; /* prune --predict-server */
	/* every store on the machine (docs/multi-store.md; cli_multi.h) */
	bool all_users;     /* --all-users: the stores come from discovery (plus any --store) */
	bool duplicates;    /* du --duplicates: digests in several stores */
	bool hardlink;      /* dedupe --hardlink: hard links, same owner only */
	const char *output; /* --output FILE: stdout goes to FILE, atomically (temp + rename) */
	const char *platform; /* --platform OS/ARCH: which child of a manifest list a tag uses */
	/* history (docs/history.md) */
	const char **logs;  /* --log FILE (repeatable; "-" is standard input) */
	size_t n_logs;
	const char *since, *until; /* --since / --until: a time or a duration ago */
	const char *root;   /* --root DIR: another machine's file system (its journal) */
	double unused_for;  /* --unused-for: seconds; < 0 when not given */
	char **args;        /* positional arguments after the command */
	size_t n_args;
	int exit_code;
	size_t stores_read; /* stores opened and scanned: 0 means nothing could be read */
} cli;

/* Open and scan every selected store; each failure is reported and ORs 8. */
typedef struct opened_store {
	oa_store s;
	bool ok;
} opened_store;
opened_store *cli_open_stores(cli *c, size_t *n, int header_mode);
/* A store just opened: says what it lacks (no manifests/, no blobs/), then
 * scans it and counts it read. */
void cli_scan_opened(cli *c, opened_store *o, int header_mode);
void cli_close_stores(opened_store *v, size_t n);
/* The model name of the store closest to a MODEL that named nothing, when
 * it is close enough to be a typo; NULL otherwise. */
const char *cli_suggest_model(const oa_store *s, const char *query);
/* Report a MODEL argument oa_store_resolve() did not resolve (not found, or
 * an ambiguous ID prefix), with a suggestion when there is one. */
void cli_model_unresolved(cli *c, const oa_store *s, const char *query, long idx);
/* oa_store_resolve() for a MODEL argument; a name that several models match
 * only case-insensitively is reported ("ambiguous: ...") and ORs 16. */
long cli_resolve_model(cli *c, const oa_store *s, const char *query);

void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An error machine output must carry (cli_machine.c): said on stderr, an
 * {"type":"error"} record with ndjson, and in the json document's "errors".
 * code is a short kebab-case word (docs/schema.md); path may be NULL. The
 * exit status is the caller's. */
void cli_fail(cli *c, const char *code, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Around the command: json and csv are held back until the end, which adds
 * "status" and "errors" to the json document and keeps a csv empty when no
 * store could be read. */
void cli_capture_begin(cli *c);
void cli_capture_end(cli *c);
/* A format this mode of a command does not produce: says so, exit 16. */
int cli_refuse_format(const cli *c, const char *what, const char *formats);
/* Ask a yes/no question on stderr and read the answer from stdin. Only
 * "y" or "yes" (any case, blanks around allowed) is yes; anything else, end
 * of input or a standard input that is not a terminal is no. */
bool cli_confirm(const char *question);
/* Fold a store's findings into the exit code under --fail-on. `listing` limits
 * to what affects the list of models. */
void cli_account_findings(cli *c, const oa_store *s, bool listing);
bool cli_finding_is_listing(const oa_finding *f);
void cli_print_finding(cli *c, FILE *out, const oa_finding *f);
void csv_field(FILE *out, const char *s, bool last);

/* Human tables (table.c). Columns are padded by display width (wcwidth in
 * the user's LC_CTYPE, UTF-8 tables when it cannot tell). On a terminal
 * (stdout a tty: COLUMNS if set, else the terminal's size) narrower than a
 * table, the NAME column is cut with an ellipsis; piped, never. */
size_t cli_text_width(const char *s);
void cli_put_cell(FILE *out, const char *s, size_t width, bool right);
char *cli_fit(const char *s, size_t width); /* s cut to width columns, ending in U+2026 */
size_t cli_term_width(void);                /* 0: no limit (not a terminal) */
/* The NAME column's width, given its widest cell and the columns the rest
 * of a row takes. */
size_t cli_name_width(size_t name_width, size_t rest);

/* One row to order: sorted by num (largest first; INT64_MIN, "unknown",
 * last), then name (ascending, case folded first), then idx: stable. */
typedef struct cli_sort_key {
	int64_t num;
	const char *name;
	size_t idx;
} cli_sort_key;
void cli_sort_keys(cli_sort_key *v, size_t n);
/* The newest load (ns) of any of the models in the server's logs, or
 * INT64_MIN when none is there: --sort last-used puts those last. */
int64_t cli_last_used_ns(cli *c, const oa_store *s, const size_t *models, size_t n);
/* -q (list, du): one name per line. */
void cli_print_name(const char *name);

int cmd_list(cli *c);
int cmd_show(cli *c);
int cmd_check(cli *c);
int cmd_verify(cli *c);
int cmd_du(cli *c);
int cmd_prune(cli *c);
/* The option rules prune and rm share (--apply/--plan on one store,
 * --quarantine only with --apply); says what is wrong and returns false. */
bool cli_apply_options_ok(const cli *c);
int cmd_rm(cli *c);
int cmd_restore(cli *c);
int cmd_history(cli *c);

/* What the server's logs say about each model of a store (cmd_history.c),
 * read once per store on first use. */
typedef struct cli_usage {
	bool have_logs;     /* some log source was found */
	bool logs_known;    /* logs_from/logs_to are set */
	int64_t logs_from, logs_to;
	bool *loaded;       /* per model: a load of it is in the logs */
	int64_t *last_ns;   /* per model: its newest load */
} cli_usage;
const cli_usage *cli_usage_of(cli *c, const oa_store *s);
/* The same, as the list and du views take it (reads the logs on first use). */
static inline oa_last_used cli_last_used(cli *c, const oa_store *s)
{
	const cli_usage *u = cli_usage_of(c, s);
	return (oa_last_used){ u->have_logs, u->loaded, u->last_ns };
}
/* --unused-for: model idx has no load within it (never, as far as the logs go). */
bool cli_model_unused(const cli *c, const oa_store *s, size_t idx);
/* LAST USED of some models (the newest load of any) as list and du show it:
 * an age, "never" (not in the logs), "-" (no logs). */
char *cli_last_used_text(const cli *c, const oa_store *s, const size_t *models, size_t n, int64_t now_ns);
/* Before filtering on --unused-for: false (reported, exit 8) without logs;
 * otherwise says on stderr how far back the logs go. */
bool cli_unused_for_ready(cli *c, const oa_store *s);
void cli_usage_release(void);
/* check: load-failed and runner-changed findings from the server's logs. */
void cli_log_findings(cli *c, oa_store *s);

/* What can run here (cli_runhere.c): a paragraph for show (NULL for a model
 * no engine runs), the machine its JSON describes, and check's
 * no-runtime-for-model findings. */
char *cli_runhere_text(const cli *c, const oa_model *m);
struct oa_machine;
const struct oa_machine *cli_runhere_machine(const cli *c); /* for oa_runhere_view() */
void cli_runhere_findings(const cli *c, oa_store *s);

/* prune and rm (cmd_prune.c): print a plan, write it with --plan, and with
 * --apply check the refusals, confirm and apply it. `junk` (may be NULL)
 * adds download progress to the listing; `removing` lists the manifests an
 * rm plan removes (their own corruption does not block it). */
struct oa_plan;
struct oa_junk_list;
void cli_run_plan(cli *c, oa_store *s, struct oa_plan *p, const struct oa_junk_list *junk,
                  bool from_file, bool first, bool last);

#endif
