/*
 * dedupe.h - replace duplicate blobs across stores by reflinks or hard links
 * (docs/multi-store.md, "dedupe").
 *
 * Plan: for every digest with several distinct inodes on one filesystem, the
 * first copy (store order) is kept and every other copy is replaced by
 *   - a reflink of it (FICLONE: copy-on-write, a separate inode with the
 *     replaced file's owner, mode and times; safe across users), or
 *   - with OA_DEDUPE_HARDLINK, a hard link to it, only when both stores and
 *     both files have the same owner: a hard link across users would let
 *     one user change the other's model. Across owners the action is refused.
 * Copies on other filesystems can only be shared by a common store: listed,
 * never acted on.
 *
 * Apply, per action: re-stat both files against the scan (same device,
 * inode, size, mtime), sha256 both and compare with the digest, clone or
 * link into a temporary name in the target's blobs/, re-check that neither
 * file changed, then rename over the duplicate (atomic: readers see the old
 * or the new file, never a missing blob). A crash leaves at most a
 * `.oa-dedupe.*` temporary in blobs/ (foreign; safe to delete).
 */
#ifndef OLLAMA_AUDIT_DEDUPE_H
#define OLLAMA_AUDIT_DEDUPE_H

#include "ollama_audit/dupes.h"
#include "ollama_audit/store.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum oa_dedupe_how { OA_DEDUPE_REFLINK, OA_DEDUPE_HARDLINK } oa_dedupe_how;
const char *oa_dedupe_how_name(oa_dedupe_how h); /* "reflink", "hardlink" */

typedef enum oa_dedupe_status {
	OA_DD_PLANNED,        /* would be done (dry run) */
	OA_DD_DONE,           /* done */
	OA_DD_REFUSED_OWNER,  /* --hardlink between different owners: never */
	OA_DD_OTHER_FS,       /* the copies are on different filesystems */
	OA_DD_UNSUPPORTED,    /* the filesystem cannot reflink */
	OA_DD_CHANGED,        /* a file changed since the scan: skipped */
	OA_DD_MISMATCH,       /* a copy does not hash to its digest: skipped */
	OA_DD_SERVER,         /* an Ollama server uses one of the stores: skipped */
	OA_DD_FAILED,         /* an error (err) */
	OA_DD_NOT_DONE,       /* interrupted before it was tried */
	OA_DD_STATUS_COUNT
} oa_dedupe_status;
/* "planned", "done", "refused-owner", "other-filesystem", "reflink-unsupported",
 * "changed", "digest-mismatch", "server-running", "failed", "not-done" */
const char *oa_dedupe_status_name(oa_dedupe_status s);

typedef struct oa_dedupe_action {
	char hex[65];
	size_t src_store, dst_store;  /* keep src, replace dst */
	oa_blob *src, *dst;           /* borrowed from the stores */
	oa_dedupe_how how;
	uint64_t bytes;               /* allocated bytes replacing dst frees */
	oa_dedupe_status status;
	int err;
	char note[200];
} oa_dedupe_action;

typedef struct oa_dedupe_plan {
	oa_dedupe_action *v;
	size_t n;
	uint64_t bytes;               /* sum of bytes of PLANNED (or DONE) actions */
	/* files whose sha256 matched during this apply: (dev, ino, size, mtime) */
	struct oa_dd_verified { dev_t dev; ino_t ino; off_t size; int64_t mtime; } *verified;
	size_t n_verified;
} oa_dedupe_plan;

void oa_dedupe_plan_build(oa_store *const *stores, size_t n, const oa_dupes *d, oa_dedupe_how how,
                          oa_dedupe_plan *out);
/* Carry out one PLANNED action (see above). Sets status, err and note;
 * returns 0 when done, -1 otherwise. */
int oa_dedupe_apply(oa_dedupe_plan *p, oa_store *const *stores, oa_dedupe_action *a,
                    volatile sig_atomic_t *interrupt);
void oa_dedupe_plan_free(oa_dedupe_plan *p);

#endif
