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
} oa_restore_opts;

typedef struct oa_restore_result {
	size_t restored, already, conflicts, missing, failed;
	bool interrupted;               /* stopped by *stop: run it again to finish */
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

/* One operation of a quarantine: one prune or rm --apply into it. */
typedef struct oa_quarantine_op {
	char id[40];                    /* time then a counter: 20261202-095245-3; "legacy" for
	                                 * what an index older than quarantine/4 holds */
	int64_t unix_time;              /* when it began */
	char time[40];                  /* the same, RFC 3339 */
	char command[16];               /* prune, rm */
	char **models;                  /* rm: the models whose manifests it removed */
	size_t n_models;
	size_t planned_entries;         /* what its plan listed */
	uint64_t planned_bytes;
	size_t entries;                 /* entries it moved into DIR or removed (empty dirs) */
	uint64_t disk_bytes;            /* their allocated bytes */
	size_t held, restored, deleted; /* of those: in DIR (or restorable), put back, emptied */
	uint64_t held_bytes;
	const char *state;              /* held, partial, restored, deleted, nothing */
} oa_quarantine_op;

typedef struct oa_quarantine_ops {
	char *store;                    /* the store it came from, as the index names it */
	char *schema;                   /* the index's schema */
	oa_quarantine_op *v;            /* oldest first */
	size_t n;
	size_t held_entries;            /* entries in state moved, all operations */
	uint64_t held_bytes;
} oa_quarantine_ops;

/* The operations of quarantine DIR (read only, no lock). 0, or -1 with err. */
OA_EXPORT int oa_quarantine_ops_read(const char *dir, oa_quarantine_ops *ops, char *err, size_t errlen);
OA_EXPORT void oa_quarantine_ops_free(oa_quarantine_ops *ops);

typedef struct oa_empty_opts {
	double older_than;              /* seconds: only operations at least this old; 0: all */
	double now;                     /* unix time to measure age from */
	bool apply;                     /* false: a dry run, nothing deleted */
	FILE *log;                      /* one line per entry, or NULL */
} oa_empty_opts;

typedef struct oa_empty_result {
	size_t operations, entries, failed;
	uint64_t bytes;                 /* dry run: what deleting them would free; apply: what
	                                 * was freed (st_blocks of the files unlinked that had
	                                 * no other link) */
	uint64_t held_bytes;            /* what DIR still holds afterwards (or would) */
	size_t held_entries;
} oa_empty_result;

/* Delete for good the entries quarantine DIR holds (state moved) of the
 * operations at least o->older_than old: only files inside DIR/files/ that
 * the index lists, as links (a symlink is never followed; a directory is
 * removed recursively, never across a symlink), with DIR locked as an
 * apply locks it. Their state becomes "deleted"; restore skips them. A dry
 * run unless o->apply. 0, or -1 with err. */
OA_EXPORT int oa_quarantine_empty(const char *dir, const oa_empty_opts *o, oa_empty_result *r, char *err,
                                  size_t errlen);

#endif
