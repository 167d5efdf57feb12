/*
 * metrics.h - one store's space figures, computed once (docs/architecture.md):
 * one walk of blobs/ (oa_usage_blobs), du's rows over it, one reclaim plan
 * (what prune frees now) and the entries and bytes of blobs/ by state. du,
 * stores and the Prometheus text (prometheus.h) all draw from this one
 * result, so they never walk the store twice nor disagree.
 */
#ifndef OLLAMA_AUDIT_METRICS_H
#define OLLAMA_AUDIT_METRICS_H

#include "ollama_audit/export.h"

#include "ollama_audit/du.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/restore.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>

/* The state of an entry of blobs/, as the metrics count it. */
enum oa_blob_state {
	OA_BLOB_STATE_REFERENCED,
	OA_BLOB_STATE_ORPHANED,
	OA_BLOB_STATE_PARTIAL,
	OA_BLOB_STATE_TEMP,
	OA_BLOB_STATE_FOREIGN, /* foreign files, other directories, legacy sha256: names */
	OA_BLOB_STATE_COUNT
};
OA_EXPORT enum oa_blob_state oa_blob_state_of(const oa_blob *b);
/* "referenced", "orphaned", "partial", "temp", "foreign". */
OA_EXPORT const char *oa_blob_state_name(enum oa_blob_state st);

typedef struct oa_store_metrics {
	oa_usage usage;     /* the walk of blobs/: usage.allocated and .apparent are `du -s blobs` */
	oa_du_store du;     /* du's rows (every row, in du's order), junk and reclaimable; its
	                       quarantine fields are the caller's (du --quarantine) */
	/* blobs/ by state: scanned entries, and allocated and apparent bytes with
	 * every inode counted once, under the first top-level entry (in name
	 * order) it lies under, a referenced one first; blobs/ itself counts as
	 * referenced. The bytes sum to usage.allocated and usage.apparent. */
	uint64_t blobs[OA_BLOB_STATE_COUNT];
	uint64_t blobs_bytes[OA_BLOB_STATE_COUNT];
	uint64_t blobs_apparent[OA_BLOB_STATE_COUNT];
} oa_store_metrics;

/* A scanned store's metrics; now: Unix seconds, the time junk ages are
 * measured against. The store is read, never written (du and the reclaim
 * plan need it non-const). Free with oa_store_metrics_free. */
OA_EXPORT void oa_store_metrics_compute(oa_store *s, double now, oa_store_metrics *out);
OA_EXPORT void oa_store_metrics_free(oa_store_metrics *m);
/* du --quarantine DIR: when q (oa_quarantine_held_read of dir) holds files
 * of s, sets m->du's quarantine fields from it and returns true. */
OA_EXPORT bool oa_store_metrics_quarantine(oa_store_metrics *m, const oa_store *s, const char *dir,
                                           const oa_quarantine_held *q);

#endif
