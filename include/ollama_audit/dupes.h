/*
 * dupes.h - the same blob in several stores (docs/multi-store.md).
 *
 * A digest present as a valid blob (sha256-<hex>) in two or more scanned
 * stores is a duplicate. Copies that are already one inode (a hard link,
 * bind mount, or a symlinked blob) cost nothing more and are reported as
 * already shared, and so are copies that share all their extents with an
 * earlier copy (an earlier reflink; shared_with). The saving is the
 * allocated bytes of every distinct inode but one; `linkable` is the part a
 * reflink or hard link could take back (regular-file copies on the same
 * filesystem; symlinked copies are left out: dedupe never touches them),
 * the rest needs a shared store.
 */
#ifndef OLLAMA_AUDIT_DUPES_H
#define OLLAMA_AUDIT_DUPES_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct oa_dupe_copy {
	size_t store;            /* index into the stores given to oa_dupes_find */
	oa_blob *blob;           /* borrowed from that store */
	dev_t dev;
	ino_t ino;
	uid_t uid;               /* owner of the blob file */
	uint64_t allocated;      /* st_blocks * 512 */
	bool symlink;            /* the blob is a symlink (to another copy, or elsewhere) */
	long same_inode_as;      /* index of an earlier copy with the same (dev, ino), or -1 */
	long shared_with;        /* index of an earlier copy whose extents hold all of this one's
	                          * data (a reflink; Linux FIEMAP), or -1: already shared */
	bool unreferenced;       /* nothing under its store's manifests/ or manifests-v2/ reaches
	                          * it (refs.h; never when that set is incomplete): junk that
	                          * `prune` removes, which dedupe leaves alone */
	const char **models;     /* display names of the models of this store that use it */
	size_t n_models;
} oa_dupe_copy;

typedef struct oa_dupe {
	oa_digest_hex hex;
	uint64_t size;           /* st_size of the blob */
	oa_dupe_copy *copies;    /* in store order */
	size_t n_copies;
	size_t n_inodes;         /* distinct (dev, ino) */
	uint64_t saving;         /* allocated bytes of every distinct inode but the largest */
	uint64_t linkable;       /* the part of saving on filesystems that hold >= 2 inodes */
	uint64_t already_shared; /* allocated bytes that same-inode copies do not cost again */
} oa_dupe;

typedef struct oa_dupes {
	oa_dupe *v;              /* sorted by saving, largest first, then digest */
	size_t n;
	uint64_t saving, linkable, already_shared;
	/* "<root>: <why>" of the first store whose references could not all be
	 * read: none of its copies is then called unreferenced. "" when none. */
	char refs_incomplete[640];
} oa_dupes;

/* Find the duplicates among n scanned stores (NULL entries are skipped). */
OA_EXPORT void oa_dupes_find(oa_store *const *stores, size_t n, oa_dupes *out);
OA_EXPORT void oa_dupes_free(oa_dupes *d);

#endif
