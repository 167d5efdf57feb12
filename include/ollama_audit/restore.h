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
	const char *model;              /* this model only, matched as rm matches names */
	bool no_lock;                   /* go on where the filesystem cannot lock (apply.h) */
} oa_restore_opts;

typedef struct oa_restore_result {
	size_t restored, already, conflicts, missing, failed;
	bool interrupted;               /* stopped by *stop: run it again to finish */
	bool unlocked;                  /* no_lock: the store or DIR could not be locked */
	size_t operations;              /* the operations chosen (MODEL: those holding its manifests) */
	char first_op[40];              /* the id of one of them (the newest) */
	char model[512];                /* MODEL as the quarantine records it, else "" */
	/* what the operations chosen still hold afterwards (MODEL: the rest of
	 * them, restorable later): entries, their allocated bytes, the models
	 * whose manifests they hold and the first of their names */
	size_t rest_entries, rest_models;
	uint64_t rest_bytes;
	char rest_names[256];
} oa_restore_result;

/* oa_quarantine_restore's answer when MODEL names several models that
 * differ only in case (a usage error: err names them). */
#define OA_RESTORE_AMBIGUOUS (-2)

/* Put the quarantined entries of DIR back into its store: those of the
 * operations o chooses, or with o->model that model only (its manifests,
 * and the blobs they reach that the store does not have; the rest of its
 * operation stays in DIR). Manifests first, then the rest newest first;
 * nothing that differs is ever replaced, and a blob a manifest DIR keeps
 * holding needs is linked back, its file left in DIR for that manifest.
 * It holds the store's lock (prune, rm and dedupe --apply wait for it) and
 * the quarantine's. Run again after an interruption, it finishes the job.
 * 0 when it ran, -1 when it could not start, OA_RESTORE_AMBIGUOUS. */
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
