/*
 * shared.h - the other stores that reach this store's blob files
 * (docs/multi-store.md, "Stores that share blobs").
 *
 * A file in blobs/ may be needed by a store other than the one it sits in:
 *  - their blobs/ is one directory (a symlink either way, a bind mount):
 *    the same device and inode once followed;
 *  - a tag under the other store's manifests/ or manifests-v2/ is a symlink
 *    into this store's blobs/.
 * The stores looked at are the ones discovery finds (discover.h, the same
 * candidates as `stores` and --all-users), the ones named with
 * oa_peers_name (the command line's --store) and, when this store's blobs/
 * is a symlink, the store holding the directory it leads to and every store
 * whose blobs/ is a symlink on the way, wherever they are: found by
 * following the link one component at a time as the kernel does (never by
 * its text), up to the kernel's limit of symlinks. Each peer is opened (not
 * scanned) so its own reference set can be read; a peer whose tags link into
 * this store's blobs/ gets that directory as one more bound, so its reference
 * set reads those links instead of calling them "out of the store".
 */
#ifndef OLLAMA_AUDIT_SHARED_H
#define OLLAMA_AUDIT_SHARED_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct oa_peer {
	oa_store s;          /* opened, not scanned: root_fd, blobs_fd, bounds */
	char *how;           /* why it counts, e.g. "its blobs/ is a symlink to this store's blobs/" */
	bool links_here;     /* its blobs/ is a symlink to this store's blobs/ (it owns them) */
} oa_peer;

typedef struct oa_peers {
	oa_peer *v;
	size_t n;
	char *unfound;       /* this store's blobs/ is a symlink and the store owning the directory it
	                      * leads to, or one on the way, cannot be found or opened: why (NULL: found) */
} oa_peers;

/* The stores named on the command line, looked at besides discovery's
 * (copied; NULL, 0 forgets them). */
OA_EXPORT void oa_peers_name(char *const *paths, size_t n);

/* Every other store that reaches s's blob files. */
OA_EXPORT void oa_peers_find(const oa_store *s, oa_peers *out);
OA_EXPORT void oa_peers_free(oa_peers *p);

/* Whether s's blobs/ is a symlink whose owner (or a store on the way)
 * cannot be found: oa_peers_find's unfound, without discovery. why says
 * which and why. */
OA_EXPORT bool oa_peers_unfound(const oa_store *s, char *why, size_t whylen);

#endif
