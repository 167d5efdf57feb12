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
 * Apply, per action: open both files (never through a symlink, never a
 * FIFO or device) and check they are the files the scan saw (device, inode,
 * size, mtime; the duplicate's ctime too); make the clone or link under a
 * temporary name in the target's blobs/ and then hash what will actually
 * replace the duplicate: the clone itself (a reflink: a separate inode
 * only we and the duplicate's owner can write, so its content is final)
 * or, for a hard link, the kept inode after linking. Hash the duplicate
 * too (a copy that is not its digest is left alone), re-check that nothing
 * changed (ctime included), fsync the clone and rename it over the
 * duplicate (atomic: readers see the old or the new file, never a missing
 * blob). A kept copy that does not hash to its digest is replaced, for
 * this and later actions, by the next copy in store order that does; a
 * clone that does not hash to its digest (the kept copy changed while it
 * was cloned) is never installed: digest-mismatch. A crash or a signal
 * leaves at most a `.oa-dedupe.*` temporary in blobs/ (foreign; safe to
 * delete).
 *
 * Copies whose extents are already all shared (an earlier reflink) are not
 * planned again (see oa_dupe_copy.shared_with).
 *
 * Testing aid: OA_TEST_REFLINK=yes|no is oa_dedupe_plan_probe's answer for
 * every filesystem (golden outputs must not depend on the machine's /tmp).
 *
 * Testing aid: OA_TEST_DEDUPE_PAUSE=DIR makes apply stop at fixed points
 * (DIR/open-<action index> before opening the files, DIR/clone-<index>
 * before cloning, DIR/rename-<index> before the rename) until the test
 * removes the file (which holds the pid) or a signal comes.
 */
#ifndef OLLAMA_AUDIT_DEDUPE_H
#define OLLAMA_AUDIT_DEDUPE_H

#include "ollama_audit/export.h"

#include "ollama_audit/dupes.h"
#include "ollama_audit/store.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum oa_dedupe_how { OA_DEDUPE_REFLINK, OA_DEDUPE_HARDLINK } oa_dedupe_how;
OA_EXPORT const char *oa_dedupe_how_name(oa_dedupe_how h); /* "reflink", "hardlink" */

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
	OA_DD_JUNK,           /* no manifest of its store reaches the duplicate: `prune` removes it */
	OA_DD_STATUS_COUNT
} oa_dedupe_status;
/* "planned", "done", "refused-owner", "other-filesystem", "reflink-unsupported",
 * "changed", "digest-mismatch", "server-running", "failed", "not-done", "junk" */
OA_EXPORT const char *oa_dedupe_status_name(oa_dedupe_status s);

typedef struct oa_dedupe_action {
	oa_digest_hex hex;
	size_t src_store, dst_store;  /* keep src, replace dst */
	oa_blob *src, *dst;           /* borrowed from the stores */
	oa_dedupe_how how;
	const oa_dupe *group;         /* the digest's copies (borrowed: keep the oa_dupes until apply is over) */
	bool keeper_bad;              /* the planned kept copy does not hash to its digest */
	uint64_t bytes;               /* allocated bytes replacing dst frees */
	oa_dedupe_status status;
	int err;
	char note[512];
} oa_dedupe_action;

typedef struct oa_dedupe_plan {
	oa_dedupe_action *v;
	size_t n;
	uint64_t bytes;               /* sum of bytes of PLANNED (or DONE) actions */
	/* Apply state. Files whose sha256 matched, by (dev, ino, size, mtime,
	 * ctime): used only to choose a kept copy, never instead of hashing the
	 * clone or the linked inode that replaces a duplicate. */
	struct oa_dd_verified { dev_t dev; ino_t ino; off_t size; int64_t mtime, ctime; } *verified;
	size_t n_verified;
	/* kept copies found corrupt, and the copy each was replaced by (NULL:
	 * none found, or not looked for yet: searched) */
	struct oa_dd_subst { const oa_blob *bad; size_t store; oa_blob *good; bool searched; } *subst;
	size_t n_subst;
	/* Stores an Ollama server or runner uses (guard.h): their actions are
	 * refused (OA_DD_SERVER) unless `force`. Asked once per store index. */
	bool force;
	/* oa_dedupe_apply_all: go on where the filesystem cannot lock a store
	 * (apply.h: --no-lock); unlocked says one was not locked. */
	bool no_lock, unlocked;
	signed char *busy;            /* per store: 0 not asked, 1 in use, -1 free or cannot tell */
	size_t n_busy;
} oa_dedupe_plan;

OA_EXPORT void oa_dedupe_plan_build(oa_store *const *stores, const oa_dupes *d, oa_dedupe_how how,
                          oa_dedupe_plan *out);
/* Before promising reflinks: ask each target filesystem whether it can
 * (oa_reflink_probe; nothing is left in the store). A PLANNED reflink onto
 * one that cannot becomes UNSUPPORTED (its bytes leave p->bytes); one that
 * cannot be tested stays PLANNED with a note. Hard-link plans are as built. */
/* may_write_scratch false (a read-only listing such as `stores`): no
 * scratch file at all, the filesystem type alone answers. */
OA_EXPORT void oa_dedupe_plan_probe(oa_dedupe_plan *p, oa_store *const *stores, bool may_write_scratch);
/* Carry out one PLANNED action (see above). Sets status, err and note;
 * returns 0 when done, -1 otherwise. An action on a store an Ollama server
 * uses is refused (OA_DD_SERVER) unless p->force. */
OA_EXPORT int oa_dedupe_apply(oa_dedupe_plan *p, oa_store *const *stores, oa_dedupe_action *a,
                    volatile sig_atomic_t *interrupt);
OA_EXPORT void oa_dedupe_plan_free(oa_dedupe_plan *p);

#endif
