/* du_view.h - the rows a du view shows of a store (--sort, --unused-for,
 * --filter, --limit), measured once (metrics.h), and what rm plans for the
 * selection (library-internal). */
#ifndef OA_AUDIT_DU_VIEW_H
#define OA_AUDIT_DU_VIEW_H

#include "audit/model_filter.h"
#include "audit/select.h"
#include "ollama_audit/du.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/log_usage.h"
#include "ollama_audit/metrics.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>

/* The order of du's rows (--sort): UNIQUE is du's own. */
enum oa_du_sort {
	OA_DU_SORT_UNIQUE,
	OA_DU_SORT_NAME,
	OA_DU_SORT_SIZE,
	OA_DU_SORT_MODIFIED,
	OA_DU_SORT_LAST_USED,  /* the newest load in the logs; never loaded last */
	OA_DU_SORT_UNSERVABLE, /* what the server refuses first, then by UNIQUE */
};

/* Which rows a view shows and in what order. */
typedef struct oa_du_select {
	enum oa_du_sort sort;
	oa_last_used lu;            /* what the logs say (LAST USED, OA_DU_SORT_LAST_USED) */
	const oa_log_usage *unused; /* --unused-for: keep the rows none of whose tags is loaded
	                               since cutoff_ns (oa_log_usage_unused); NULL: every row */
	int64_t cutoff_ns;
	bool reverse;               /* --sort KEY:asc|desc against KEY's own direction */
	const oa_model_filter *filters; /* --filter: keep the rows every tag of which passes */
	size_t n_filters;
	const oa_log_usage *usage;  /* the logs the filters on use read, or NULL */
	int64_t now_ns;             /* the time the filters' ages are taken at */
	size_t limit;               /* --limit N: the first N rows; 0: all */
	const oa_list_query *rm;    /* a selection was given: what `rm` plans for it
	                               (rm_select.h), said at the end; NULL: none */
	const char *rm_args;        /* that selection as rm's options ("--unused-for 90d") */
} oa_du_select;

/* One store as a du view shows it: measured once (metrics.h), with what
 * a quarantine (du --quarantine DIR) holds of it, and the rows sel keeps in
 * its order (sharing the metrics' model lists; the totals stay the store's). */
typedef struct oa_du_view {
	const oa_store *s;
	oa_last_used lu;     /* sel's */
	oa_store_metrics m;  /* every row, in du's order (the Prometheus text) */
	oa_du_store shown;   /* the rows shown */
	bool holds;          /* the quarantine holds files of this store */
	const char *rm_args; /* sel's rm_args when it had a selection, else NULL */
	size_t rm_models;    /* the models rm plans for it */
	uint64_t rm_frees;   /* what that plan frees */
} oa_du_view;
/* now: Unix seconds (junk ages); qdir and held: --quarantine's, or NULL. */
void oa_du_view_make(oa_store *s, double now, const oa_du_select *sel, const char *qdir,
                     const oa_quarantine_held *held, oa_du_view *out);
void oa_du_view_free(oa_du_view *v);

#endif
