/* select.h - which models, findings and loads a command reports, from its
 * arguments and options (library-internal): MODEL arguments (check,
 * verify, history), list's PREFIX, --unused-for and --sort, history's
 * --since/--until. */
#ifndef OA_AUDIT_SELECT_H
#define OA_AUDIT_SELECT_H

#include "ollama_audit/history.h"
#include "ollama_audit/log_usage.h"
#include "ollama_audit/store.h"
#include "audit/model_filter.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MODEL arguments as check and verify take them (none: every model). */
typedef struct oa_model_args {
	char *const *v;
	size_t n;
} oa_model_args;

/* The models check and verify count (docs/schema.md): the selected models
 * list shows (every tag and list row, a broken manifest too), never a
 * legacy anchor, whether or not they have anything to hash. */
size_t oa_args_count(const oa_store *s, const oa_model_args *a);
/* Per model of s (calloc'd, n_models + 1): is it one an argument resolves to
 * (all of them without arguments)? */
bool *oa_args_models(const oa_store *s, const oa_model_args *a);
/* Per finding of s (calloc'd): with arguments only those models' findings
 * count; without, all. */
bool *oa_args_findings(const oa_store *s, const oa_model_args *a);

/* list's and du's --sort: the command's own order by default. */
enum oa_list_sort {
	OA_LIST_SORT_DEFAULT, OA_LIST_SORT_NAME, OA_LIST_SORT_SIZE, OA_LIST_SORT_UNIQUE,
	OA_LIST_SORT_MODIFIED, OA_LIST_SORT_LAST_USED, OA_LIST_SORT_UNSERVABLE
};
/* What `list` shows of a store. */
typedef struct oa_list_query {
	const char *prefix;            /* list PREFIX (case-insensitive), or NULL */
	const oa_log_usage *usage;     /* the store's logs, or NULL */
	bool unused_only;              /* --unused-for: only models unused since cutoff_ns */
	int64_t cutoff_ns;
	enum oa_list_sort sort;
	bool reverse;                  /* --sort KEY:asc|desc against KEY's own direction */
	const oa_model_filter *filters; /* --filter: each must hold (model_filter.h) */
	size_t n_filters;
	int64_t now_ns;                /* the time the filters' ages are taken at */
	size_t limit;                  /* --limit N: the first N in order; 0: all */
} oa_list_query;
/* Is model idx listed (never a legacy anchor a manifests-v2 tag shadows)? */
bool oa_list_selected(const oa_list_query *q, const oa_store *s, size_t idx);
/* The listed models in q's order (the store's own, newest first, by
 * default; reversed by q->reverse), the first q->limit of them when it is
 * set, *n of them (calloc'd). */
size_t *oa_list_order(const oa_list_query *q, oa_store *s, size_t *n);
/* The newest load (ns) of any of the models, INT64_MIN when the logs have
 * none: --sort last-used puts those last. */
int64_t oa_usage_newest(const oa_log_usage *u, const size_t *models, size_t n);

/* One row to order: sorted by num (largest first; INT64_MIN, "unknown",
 * last), then name (ascending, case folded first), then idx: stable. */
typedef struct oa_sort_key {
	int64_t num;
	const char *name;
	size_t idx;
} oa_sort_key;
void oa_sort_keys(oa_sort_key *v, size_t n);

/* history's --since/--until, parsed (oa_when_parse). */
typedef struct oa_load_window {
	bool has_since, has_until;
	int64_t since, until;
} oa_load_window;
/* An RFC 3339 time, a date (UTC midnight) or a duration before now_ns;
 * -1 when s is none of them. */
int oa_when_parse(const char *s, int64_t now_ns, int64_t *out);
/* The loads of h (matched to s) in the window and of a model the arguments
 * select, newest first, into v (h->n entries); returns how many. */
size_t oa_history_pick(const oa_history *h, const oa_store *s, const oa_load_window *w,
                       const oa_model_args *a, const oa_load **v);

/* Does finding f affect the list of models (list's "problems"): a manifest,
 * name or config that cannot be read, a missing child, a hidden name, an
 * unreadable part outside blobs/? */
bool oa_finding_is_listing(const oa_finding *f);

#endif
