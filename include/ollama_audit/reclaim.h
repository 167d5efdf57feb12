/*
 * reclaim.h - what `prune` can free from a store now. du's "reclaimable",
 * prune's plan and the Prometheus reclaimable_bytes all come from this one
 * chain (reference set -> junk -> plan), so they always agree.
 */
#ifndef OLLAMA_AUDIT_RECLAIM_H
#define OLLAMA_AUDIT_RECLAIM_H

#include "ollama_audit/export.h"

#include "ollama_audit/junk.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct oa_reclaim {
	oa_junk_list junk; /* every piece of junk found */
	oa_plan plan;      /* the prune of the chosen categories, older than min_age */
	bool incomplete;   /* the reference set is incomplete: every complete blob is kept */
	char why[512];     /* the first reason, when incomplete */
} oa_reclaim;

/* Plan the prune of `what` (OA_JUNK_* mask) for entries older than min_age
 * seconds, at time now (Unix seconds). Free with oa_reclaim_free. */
OA_EXPORT void oa_reclaim_plan(oa_store *s, unsigned what, int64_t min_age, double now, oa_reclaim *out);
OA_EXPORT void oa_reclaim_free(oa_reclaim *r);

#endif
