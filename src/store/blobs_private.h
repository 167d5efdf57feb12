/* blobs_private.h - what blobs.c shares with the rest of src/store/.
 * Private to src/store/. */
#ifndef OLLAMA_AUDIT_STORE_BLOBS_PRIVATE_H
#define OLLAMA_AUDIT_STORE_BLOBS_PRIVATE_H

#include "ollama_audit/blobs.h"
#include "ollama_audit/manifest_list.h"
#include "base/pool.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The order of s->blobs (by name), for bsearch. */
int store_cmp_blob_name(const void *a, const void *b);
/* Read a file whose stat (its `mode`, through any symlink) was just taken: a
 * regular file is opened without a second look, anything else goes through
 * oa_read_file_at, which refuses it with the right errno. */
int store_read_looked_at(int dirfd, const char *name, mode_t mode, size_t max, uint8_t **out, size_t *len);
/* A blob's bytes, by the stat store_scan_blobs took. */
int store_read_blob(const oa_store *s, const oa_blob *b, size_t max, uint8_t **out, size_t *len);
/* List blobs/: every entry with its stat and class, sorted by name. */
void store_scan_blobs(oa_store *s);
/* The same on a thread of its own (when the scan may use more than one),
 * beside the walk of manifests/, which needs none of it until it resolves
 * what a tag names: s->blobs, s->n_blobs and s->blobs_listed belong to
 * that thread until store_scan_blobs_wait, which puts its findings where
 * store_scan_blobs would have (after those before the start). */
typedef struct store_blob_scan {
	oa_store *s;
	oa_task task;
	bool running, ready;
	size_t at;           /* s->findings.n at the start */
	oa_findings found;   /* the listing's own, until the wait */
} store_blob_scan;
void store_scan_blobs_start(oa_store *s, store_blob_scan *bs);
/* Wait for the listing (again: nothing). */
void store_scan_blobs_wait(store_blob_scan *bs);
/* A manifest that does not parse may still be the only thing that needs
 * some blobs: mark every blob whose digest appears in its bytes. */
void store_mark_weak_refs(oa_store *s, const uint8_t *bytes, size_t len);
/* The same for a file too large to read whole (over OA_MANIFEST_MAX). */
void store_mark_weak_refs_file(oa_store *s, int dirfd, const char *file);
/* The blob whose name is this digest, when it is a complete, present file. */
oa_blob *store_blob_by_hex(const oa_store *s, const char *hex);
/* The blob a list entry names, in the case its digest is written. */
oa_blob *store_entry_blob(const oa_store *s, const oa_list_entry *e);

#endif
