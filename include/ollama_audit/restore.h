/*
 * restore.h - undo prune/rm --quarantine DIR (docs/disk-space.md).
 */
#ifndef OLLAMA_AUDIT_RESTORE_H
#define OLLAMA_AUDIT_RESTORE_H

#include "ollama_audit/export.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct oa_restore_opts {
	const char *store;              /* NULL: the store the index names */
	FILE *log;                      /* one line per entry, or NULL */
	volatile sig_atomic_t *stop;    /* set by a signal handler: stop after this entry */
	/* Which operations (applies into DIR) go back; every one when none is
	 * set. At most one of them. */
	bool last;                      /* the newest that still holds entries */
	const char *op;                 /* this operation id */
	const char *model;              /* those that removed this model's manifest */
	bool no_lock;                   /* go on where the filesystem cannot lock (apply.h) */
} oa_restore_opts;

typedef struct oa_restore_result {
	size_t restored, already, conflicts, missing, failed;
	bool interrupted;               /* stopped by *stop: run it again to finish */
	bool unlocked;                  /* no_lock: the store or DIR could not be locked */
	size_t operations;              /* the operations chosen */
	char first_op[40];              /* the id of one of them (the newest) */
} oa_restore_result;

/* Put the quarantined entries of DIR (those of the operations o chooses)
 * back into its store, manifests first,
 * then the rest newest first, never overwriting a file that differs. It
 * holds the store's lock (prune, rm and dedupe --apply wait for it) and the
 * quarantine's. Run again after an
 * interruption, it finishes the job. 0 when it ran, -1 when it could not
 * start. */
OA_EXPORT int oa_quarantine_restore(const char *dir, const oa_restore_opts *o, oa_restore_result *r, char *err,
                          size_t errlen);

/* What a quarantine DIR holds now (report): its entries in state "moved"
 * (still in DIR, not restored), their allocated bytes, and the store they
 * came from (device and inode of its root, as the index records them).
 * Reads DIR/index.json and the journal it names; 0, or -1 with err. */
typedef struct oa_quarantine_held {
	uint64_t store_dev, store_ino;
	size_t entries;
	uint64_t disk_bytes;
} oa_quarantine_held;
OA_EXPORT int oa_quarantine_held_read(const char *dir, oa_quarantine_held *q, char *err, size_t errlen);

#endif
