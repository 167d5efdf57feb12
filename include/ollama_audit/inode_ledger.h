/*
 * inode_ledger.h - the names a walk meets, by the file each is a name of:
 * one ledger for every count that must take a hard-linked file once (du's
 * rows and shared blobs, the disk-usage walker, a model's blob bytes) and
 * for the set of files a symlink resolves through.
 *
 * Add uses in any order, sort once; then the uses of one file (device,
 * inode) are a run, in order of their owner, and its bytes count once.
 */
#ifndef OLLAMA_AUDIT_INODE_LEDGER_H
#define OLLAMA_AUDIT_INODE_LEDGER_H

#include "ollama_audit/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One name of a file. */
typedef struct oa_inode_use {
	dev_t dev;
	ino_t ino;
	size_t owner;           /* the caller's number for whose name it is: a du row,
	                         * the top entry of a walk it lies under (OA_USAGE_ROOT) */
	uint64_t apparent;      /* st_size */
	uint64_t allocated;     /* st_blocks * 512 */
	nlink_t nlink;
	bool is_dir;
	const void *what;       /* the caller's (du: the blob), or NULL */
} oa_inode_use;

/* All zero is an empty ledger. */
typedef struct oa_inode_ledger {
	oa_inode_use *v;
	size_t n, cap;
	bool sorted;            /* by device, inode, then owner; cleared by an add */
} oa_inode_ledger;

OA_EXPORT void oa_inode_ledger_add(oa_inode_ledger *l, oa_inode_use use);
/* A use that only names the file (a set of files). */
OA_EXPORT void oa_inode_ledger_add_file(oa_inode_ledger *l, dev_t dev, ino_t ino);
OA_EXPORT void oa_inode_ledger_sort(oa_inode_ledger *l);
/* Sort, then keep each file's first use only. */
OA_EXPORT void oa_inode_ledger_unique(oa_inode_ledger *l);
/* Whether the ledger names the file: a binary search once sorted, else a pass. */
OA_EXPORT bool oa_inode_ledger_has(const oa_inode_ledger *l, dev_t dev, ino_t ino);
/* Sorted: the end of the run of uses of the file of use i. */
OA_EXPORT size_t oa_inode_ledger_run(const oa_inode_ledger *l, size_t i);
/* Sorted: the bytes of the files named, each file once. */
OA_EXPORT void oa_inode_ledger_bytes(const oa_inode_ledger *l, uint64_t *apparent, uint64_t *allocated);
OA_EXPORT void oa_inode_ledger_free(oa_inode_ledger *l);

#endif
