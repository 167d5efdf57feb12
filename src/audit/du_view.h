/* du_view.h - the rows a du view shows of a store (--sort, --unused-for),
 * measured once (metrics.h) (library-internal). */
#ifndef OA_AUDIT_DU_VIEW_H
#define OA_AUDIT_DU_VIEW_H

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
} oa_du_view;
/* now: Unix seconds (junk ages); qdir and held: --quarantine's, or NULL. */
void oa_du_view_make(oa_store *s, double now, const oa_du_select *sel, const char *qdir,
                     const oa_quarantine_held *held, oa_du_view *out);
void oa_du_view_free(oa_du_view *v);

#endif
