/*
 * trash.h - a quarantine (prune/rm --quarantine DIR) as a trash: the
 * operations it holds (one per apply into it) and emptying it for good
 * (docs/disk-space.md, "Operations"). Putting back is restore.h.
 */
#ifndef OLLAMA_AUDIT_TRASH_H
#define OLLAMA_AUDIT_TRASH_H

#include "ollama_audit/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One operation of a quarantine: one prune or rm --apply into it. */
typedef struct oa_quarantine_op {
	char id[40];                    /* time then a counter: 20261202-095245-3; "legacy" for
	                                 * what an index older than quarantine/4 holds */
	int64_t unix_time;              /* when it began */
	char time[40];                  /* the same, RFC 3339 */
	char command[16];               /* prune, rm */
	char child[16];                 /* rm --child: the runner of the child removed, else "" */
	char **models;                  /* rm: the models whose manifests it removed */
	size_t n_models;
	size_t planned_entries;         /* what its plan listed */
	uint64_t planned_bytes;
	size_t entries;                 /* entries it moved into DIR (empty dirs it removed: not),
	                                 * as DIR has them: an apply killed before it moved
	                                 * anything has none */
	uint64_t disk_bytes;            /* their allocated bytes */
	size_t held, restored, deleted; /* of those: in DIR, put back, emptied */
	uint64_t held_bytes;
	char **models_held;             /* of models: those whose manifests DIR still holds */
	size_t n_models_held;
	const char *state;              /* held, partial, restored, deleted, nothing */
} oa_quarantine_op;

typedef struct oa_quarantine_ops {
	char *store;                    /* the store it came from, as the index names it */
	char *schema;                   /* the index's schema */
	oa_quarantine_op *v;            /* oldest first */
	size_t n;
	size_t held_entries;            /* entries DIR holds, all operations */
	uint64_t held_bytes;
} oa_quarantine_ops;

/* The operations of quarantine DIR (read only, no lock). 0, or -1 with err. */
OA_EXPORT int oa_quarantine_ops_read(const char *dir, oa_quarantine_ops *ops, char *err, size_t errlen);
OA_EXPORT void oa_quarantine_ops_free(oa_quarantine_ops *ops);

typedef struct oa_empty_opts {
	double older_than;              /* seconds: only operations at least this old; 0: all */
	double now;                     /* unix time to measure age from */
	bool apply;                     /* false: a dry run, nothing deleted */
	bool no_lock;                   /* go on where the filesystem cannot lock DIR (apply.h) */
	FILE *log;                      /* one line per entry, or NULL */
} oa_empty_opts;

typedef struct oa_empty_result {
	size_t operations, entries, failed;
	bool unlocked;                  /* no_lock: DIR could not be locked */
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
