/*
 * refs.h - the conservative reference set: every blob digest that anything
 * under manifests/ or manifests-v2/ can reach, which every delete re-checks
 * against ("nothing referenced is ever lost").
 *
 * A digest is reached when
 *  - it appears anywhere in the bytes of a file under manifests/ or
 *    manifests-v2/, parseable or not, in any spelling Go's decoder accepts
 *    ("sha256:<hex>", "sha256-<hex>", \u-escaped characters);
 *  - it names that file itself: the sha256 of its bytes (a tag that is a copy
 *    of a manifest blob), the blob a tag symlink resolves to, a blob that is
 *    a hard link of a tag;
 *  - a manifest list reached so far names it: the list's children are read
 *    from blobs/ and what they mention is reached too, to any depth, each
 *    blob once (cycles cost nothing).
 * Nothing is followed out of the store: a symlink under manifests/ and manifests-v2/ that
 * leads elsewhere is not read, and the set is then incomplete, like one with
 * a file that could not be read. While the set is incomplete, no complete
 * blob can be proven unreferenced.
 *
 * Stores that share blob files (shared.h: one blobs/ directory, tags that
 * link into this store's blobs/) are one reference set: what any of them
 * reaches is in the set, and the set is incomplete when one of them cannot
 * be read in full. The read-only sets (oa_refset_build, oa_refset_scanned)
 * find those stores in the store's peer index (oa_store.peer_index, looked
 * at once for the set of stores audited); oa_refcache, which a deletion
 * re-checks against, looks for them again when it is made. A store with
 * blobs/ but neither manifests/ nor
 * manifests-v2/ cannot tell what its blobs are used by (they may be another
 * store's, moved to a bigger disk): its set is incomplete.
 */
#ifndef OLLAMA_AUDIT_REFS_H
#define OLLAMA_AUDIT_REFS_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A sorted set of lowercase hex digests. */
typedef struct oa_refset {
	oa_digest_hex *hex;
	size_t n, cap;
	bool incomplete;        /* something could not be read, or leads out of the store */
	char why[512];          /* the first reason, when incomplete */
	size_t files;           /* tag files read (manifests*, not blobs) */
	char **shared_store;    /* other stores reaching these blob files whose references are in */
	char **shared_how;      /* the set too (shared.h), and how each reaches them */
	size_t n_shared;
} oa_refset;

/* The set of the store as it is now. Files at the paths in `skip_paths`
 * ("manifests/...", relative to the root) are left out: `rm` plans as if
 * they were gone. Another name of the same file (a hard link, a symlink) is
 * still read. */
OA_EXPORT void oa_refset_build(const oa_store *s, const char *const *skip_paths, size_t n_skip, oa_refset *r);

/* The set as the scan found the store (oa_tag_facts, store.h), for the
 * read-only views and plans (du, check, Prometheus, prune's plan): no second
 * walk of manifests/ and manifests-v2/ when the scan read every file there
 * (else the same as oa_refset_build). Stores sharing the blob files are read
 * now, as are the children of lists. Deleting still re-checks against the
 * manifests as they are then (oa_refcache). */
OA_EXPORT void oa_refset_scanned(const oa_store *s, oa_refset *r);

/* The same set, kept current cheaply while a plan is applied (apply.c says
 * how often): each update
 * re-lists manifests/ and manifests-v2/ and re-stats every file and every manifest blob
 * reached, but re-reads only what is new or whose device, inode, size, mtime
 * or ctime changed (or whose timestamps are too recent to trust). */
typedef struct oa_refcache oa_refcache;
OA_EXPORT oa_refcache *oa_refcache_new(const oa_store *s);
OA_EXPORT void oa_refcache_update(oa_refcache *c);
/* Whether the last update reached the digest. */
OA_EXPORT bool oa_refcache_has(const oa_refcache *c, const char *hex);
/* NULL when the last update read everything, else the first reason. */
OA_EXPORT const char *oa_refcache_incomplete(const oa_refcache *c);
/* The set of the last update, without what only the files at skip_paths reach. */
OA_EXPORT void oa_refcache_refset(const oa_refcache *c, const char *const *skip_paths, size_t n_skip,
                        oa_refset *r);
/* How many files and directories the last update looked at: what the next
 * one costs. */
OA_EXPORT size_t oa_refcache_size(const oa_refcache *c);
OA_EXPORT void oa_refcache_free(oa_refcache *c);

OA_EXPORT bool oa_refset_has(const oa_refset *r, const char *hex);
OA_EXPORT void oa_refset_free(oa_refset *r);
/* Add every digest mentioned in `bytes` to r (unsorted until oa_refset_sort). */
OA_EXPORT void oa_refset_scan(oa_refset *r, const uint8_t *bytes, size_t len);
OA_EXPORT void oa_refset_sort(oa_refset *r);

#endif
