/* cli.h - shared state of the ollama-audit command line: parsed options,
 * the stores to audit, exit codes and output formats. Types only: each
 * function is declared in the header of the file that defines it, so the
 * files of src/cli/ include each other without a cycle
 * (tests/layout/test_layering.py). */
#ifndef OA_CLI_H
#define OA_CLI_H

#include "ollama_audit/humanize.h"
#include "ollama_audit/scan.h"
#include "audit/model_filter.h"

#include <stdbool.h>
#include <stddef.h>

/* Exit status bits, fsck style; ORed across stores (docs/ollama-audit.1). */
enum {
	OA_EXIT_OK = 0,
	OA_EXIT_WARNINGS = 1,
	OA_EXIT_ERRORS = 4,
	OA_EXIT_OPERATIONAL = 8,
	OA_EXIT_USAGE = 16,
	OA_EXIT_INTERRUPTED = 32,
};

enum oa_out_format { OUT_TABLE, OUT_JSON, OUT_NDJSON, OUT_CSV, OUT_TAGS, OUT_PROMETHEUS, OUT_HTML, OUT_FORMATS };

struct cli;
/* A command's renderer for one --format, its slot in the command table
 * (commands.c): writes the view the command built, of the command's own
 * type (cli_render, output.h). */
typedef void (*cli_renderer)(struct cli *c, const void *view);

/* list/du --sort: the command's own order by default (list newest first,
 * du by UNIQUE); names ascending, everything else largest or newest first. */
enum cli_sort { SORT_DEFAULT, SORT_NAME, SORT_SIZE, SORT_UNIQUE, SORT_MODIFIED, SORT_LAST_USED, SORT_UNSERVABLE };

typedef struct cli {
	const char *cmd;
	char **stores;
	size_t n_stores;
	enum oa_out_format format;
	const cli_renderer *render; /* the command's slots, one per format (commands.c) */
	const char *format_name; /* as given to --format */
	bool format_set;
	enum oa_units units;
	int fail_on;        /* oa_severity */
	bool fail_on_set;   /* --fail-on given: list's exit status then grades its findings */
	bool color;
	bool progress;
	bool tensors;
	bool quiet;
	enum cli_sort sort; /* list, du, rm --sort */
	bool sort_reverse;  /* --sort KEY:asc|desc against KEY's own direction */
	oa_model_filter *filters; /* list, du, rm --filter (repeatable): each must hold */
	size_t n_filters;
	char *selection;    /* --unused-for and --filter as given, for the line du ends with */
	size_t limit;       /* list, du, rm --limit N; 0: all */
	bool verbose;       /* -v, --verbose: list prints each problem, not their count; prune
	                     * and rm list every file of a plan */
	bool no_header;     /* list, du --no-header */
	bool wide;          /* --wide: every column of a table, nothing cut */
	bool all;           /* verify --all, restore --all */
	bool changed;       /* verify --changed */
	bool quick;         /* verify --quick */
	int jobs;
	double max_duration;
	const char *cache_path;
	/* du / prune / rm / restore (docs/disk-space.md) */
	bool apply;         /* --apply: remove instead of a dry run */
	bool yes;           /* --yes: no confirmation prompt */
	bool with_shadow;   /* rm --with-shadow: remove the tags' compatibility shadows too */
	const char *child;  /* rm --child RUNNER: remove that child of a list only */
	const char *plan_path;   /* --plan FILE */
	const char *quarantine;  /* --quarantine DIR */
	bool last;          /* restore --last: the newest operation that holds entries */
	const char *op;     /* restore --op ID */
	bool empty;         /* restore --empty: delete what the quarantine holds */
	double older_than;  /* restore --empty --older-than: seconds; < 0 when not given */
	unsigned what;      /* --what: junk category mask (0 = the default set) */
	long long min_age;  /* --min-age in seconds; -1 = not given */
	bool force;         /* --force: past corrupt manifests and running servers */
	bool no_lock;       /* --no-lock: go on where the filesystem cannot lock */
	bool predict_server; /* prune --predict-server */
	const char *server_version; /* --server-version V, or NULL: the newest the layout implies */
	int server_era;     /* enum oa_server_era of it (0: from the layout) */
	/* every store on the machine (docs/multi-store.md; cli_multi.h) */
	bool all_users;     /* --all-users: the stores come from discovery (plus any --store) */
	bool no_tag_facts;  /* the command reads no reference set: scan without tag facts */
	bool drop_tag_facts; /* the audit frees them once it read them (nothing after it does) */
	bool duplicates;    /* du --duplicates: digests in several stores */
	bool hardlink;      /* dedupe --hardlink: hard links, same owner only */
	const char *from;   /* import --from STORE, repair --from FILE|DIR|STORE */
	bool verify;        /* import --verify: hash the bundle in a dry run; repair --verify: hash now */
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
	struct oa_audit *audit; /* the run's audit (cli_audit.h), made on first use */
} cli;

/* A store cli_open_stores() opened (open_stores.h); ok: it could be scanned. */
typedef struct opened_store {
	oa_store s;
	bool ok;
} opened_store;

#endif
