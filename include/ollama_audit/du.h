/*
 * du.h - disk usage per model and for the store (docs/disk-space.md):
 * bytes unique to a model (freed if it alone is removed) and shared with
 * others, allocated (st_blocks) and apparent (st_size) sizes, every inode
 * counted once, tags that are the same manifest collapsed into one row.
 * A symlinked blob counts as the link itself: removing the model removes the
 * link, never its target.
 */
#ifndef OLLAMA_AUDIT_DU_H
#define OLLAMA_AUDIT_DU_H

#include "ollama_audit/export.h"

#include "ollama_audit/junk.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct oa_du_row {
	size_t *models;          /* indexes into s->models: the tags of one manifest */
	size_t n_models;
	oa_digest_hex id;        /* manifest digest (ID) */
	bool manifest_ok;
	uint64_t unique, shared;  /* allocated bytes only this row uses / also used by others */
	uint64_t allocated;       /* unique + shared */
	uint64_t apparent;        /* st_size of the same files */
	uint64_t unique_apparent;
	unsigned blobs, missing;  /* distinct blob files; references to missing ones */
} oa_du_row;

/* A blob file (one inode) that several rows use: each row counts it in
 * its `shared`, the store once. */
typedef struct oa_du_shared {
	const char *blob;        /* its name under blobs/ (the store's string) */
	uint64_t allocated, apparent;
	size_t *models;          /* the first tag of each row that uses it (indexes into s->models) */
	size_t n_rows;
} oa_du_shared;

typedef struct oa_du {
	oa_du_row *rows;         /* sorted by unique bytes, then allocated, then name */
	size_t n_rows;
	oa_du_shared *shared;    /* largest first */
	size_t n_shared;
	uint64_t shared_total;   /* allocated bytes of those, each once: with the rows' unique
	                            bytes, everything some row uses */
	uint64_t referenced, referenced_apparent;  /* every inode a manifest references, once */
	uint64_t blobs_total, blobs_total_apparent; /* blobs/ itself and everything under it, inode
	                                               once, symlinks as themselves (`du -s blobs`) */
} oa_du;

/* An unparseable manifest gets a row of its own whose blobs are every
 * "sha256[:-]<hex>" its bytes mention: those then count as shared, never as
 * unique to another model. `referenced` counts parseable manifests only. */
OA_EXPORT void oa_du_compute(oa_store *s, oa_du *out);
OA_EXPORT void oa_du_free(oa_du *d);

/* One store as `du` reports it: the rows and totals above, the junk by
 * category, and what `prune` (the default categories, past the server's
 * grace period) can free now. */
typedef struct oa_du_store {
	oa_du du;
	oa_junk_list junk;
	uint64_t reclaimable;
	size_t reclaimable_entries;
	/* du --quarantine DIR, when DIR holds files of this store (the caller
	 * sets it from oa_quarantine_held_read; NULL: none known) */
	const char *quarantine;
	size_t quarantine_entries;
	uint64_t quarantine_bytes;
} oa_du_store;
/* now: Unix seconds, the time junk ages are measured against. */
OA_EXPORT void oa_du_store_compute(oa_store *s, double now, oa_du_store *out);
/* The same over a walk of blobs/ already made (oa_usage_blobs of s): the
 * totals of blobs/ come from it, not from a second walk (metrics.h). */
OA_EXPORT void oa_du_store_compute_usage(oa_store *s, const oa_usage *blobs, double now, oa_du_store *out);
OA_EXPORT void oa_du_store_free(oa_du_store *d);

/* Combined totals of several stores (--all-users, repeated --store): the
 * sum of the stores' own figures. A blob hard-linked between two stores
 * (dedupe --hardlink) counts in each; `du --duplicates` shows those. */
typedef struct oa_du_total {
	size_t stores, models;
	uint64_t referenced, referenced_apparent, reclaimable, blobs, blobs_apparent;
	uint64_t junk_count[OA_JUNK_CAT_COUNT], junk_bytes[OA_JUNK_CAT_COUNT];
} oa_du_total;
OA_EXPORT void oa_du_total_add(oa_du_total *t, const oa_du_store *d);

#endif
