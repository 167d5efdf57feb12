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
 * candidates as `stores` and --all-users), the ones a peer index names
 * (the command line's --store) and, when this store's blobs/
 * is a symlink, the store holding the directory it leads to and every store
 * whose blobs/ is a symlink on the way, wherever they are: found by
 * following the link one component at a time as the kernel does (never by
 * its text), up to the kernel's limit of symlinks. Each peer is opened (not
 * scanned) so its own reference set can be read; a peer whose tags link into
 * this store's blobs/ gets that directory as one more bound, so its reference
 * set reads those links instead of calling them "out of the store".
 *
 * The audit of many stores looks at each of them once, not once per store
 * audited: a peer index (oa_peer_index) is made for the set, lent to each
 * store when it is opened (oa_open_options.peers, oa_store.peer_index), and
 * looked at the first time a store asks for its peers (each store
 * discovery finds opened once, its blobs/ identified and its tags walked
 * once); then the peers of any store are found from it without walking the
 * others again. A deletion looks again, at the moment it starts
 * (oa_peers_find_now).
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

/* The stores one audit looks at for the peers of each of its stores:
 * discovery's and `named` (the command line's --store; copied). Nothing is
 * read until the first oa_peers_find. It may be lent to stores used on
 * several threads (the first look is done once, under a lock); free it
 * after them. */
typedef struct oa_peer_index oa_peer_index;
OA_EXPORT oa_peer_index *oa_peer_index_new(char *const *named, size_t n_named);
OA_EXPORT void oa_peer_index_free(oa_peer_index *x);

/* Every other store that reaches s's blob files, among x's stores as they
 * were when x was first asked (x NULL: discovery's, looked at now). */
OA_EXPORT void oa_peers_find(oa_peer_index *x, const oa_store *s, oa_peers *out);
/* The same, x's stores looked at again now (x NULL: discovery's): what a
 * deletion checks against. */
OA_EXPORT void oa_peers_find_now(const oa_peer_index *x, const oa_store *s, oa_peers *out);
OA_EXPORT void oa_peers_free(oa_peers *p);

/* Whether s's blobs/ is a symlink whose owner (or a store on the way)
 * cannot be found: oa_peers_find's unfound, without discovery. why says
 * which and why. */
OA_EXPORT bool oa_peers_unfound(const oa_store *s, char *why, size_t whylen);

#endif
