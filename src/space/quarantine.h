/* quarantine.h - a quarantine directory: DIR/index.json and DIR/files/
 * (docs/disk-space.md). Private to src/space/: apply.c moves into it,
 * restore.c moves out of it. */
#ifndef OLLAMA_AUDIT_SPACE_QUARANTINE_H
#define OLLAMA_AUDIT_SPACE_QUARANTINE_H

#include "ollama_audit/store.h"
#include "base/util.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* /4: index.json plus the journal it names (entries appended, one JSON
 * line each), every entry tagged with the operation (one apply) that moved
 * it, listed in "operations". /3 (no operations: its entries become one
 * "legacy" operation), /2 and /1 (no journal; /1 says "size") are still
 * read. */
#define OA_QUARANTINE_SCHEMA "ollama-audit.quarantine/4"
#define OA_QUARANTINE_SCHEMA_3 "ollama-audit.quarantine/3"
#define OA_QUARANTINE_SCHEMA_2 "ollama-audit.quarantine/2"
#define OA_QUARANTINE_SCHEMA_1 "ollama-audit.quarantine/1"
/* The operation of the entries an index older than /4 holds. */
#define OA_QUARANTINE_LEGACY_OP "legacy"

/* How long an apply or restore waits for another one holding the store
 * or the quarantine before it gives up. */
#define OA_LOCK_WAIT_MS 60000u

/* The quarantine: DIR/index.json, its journal and DIR/files/. While it is
 * open, DIR is locked (flock) against other applies and restores. */
typedef struct quarantine {
	int fd, files_fd, journal_fd;
	const char *dir;    /* as given, for messages */
	json_t *index;
	json_t *entries;    /* index.json's and the journal's, merged */
	json_t *operations; /* the same for the operations */
	bool unlocked;      /* DIR could not be locked and no_lock said to go on */
	char op[40];        /* this apply's operation id, once begun */
	size_t next_id;
	oa_buf pending;     /* journal lines not yet written */
} quarantine;

/* Open (creating it 0700 if missing) the quarantine DIR for the store s: on
 * the store's filesystem, outside it, private to this user, and holding
 * files of this store only; locked (apply_lock: no_lock goes on where the
 * filesystem cannot lock, q->unlocked then). 0, or -1 with err (nothing
 * left behind). */
int quarantine_open(const oa_store *s, const char *dir, bool no_lock, quarantine *q, char *err, size_t errlen);
void quarantine_close(quarantine *q);
/* Start this apply's operation: an id (time, then a counter: unique in
 * DIR, sortable), its time, the command, the models it removes (rm; a JSON
 * array, taken over) and what it plans (entries, allocated bytes); queued
 * for the journal. Every entry added after it belongs to it. */
void quarantine_begin_op(quarantine *q, const char *command, const char *child, json_t *models, size_t entries,
                         uint64_t bytes);
/* The name inside DIR/files/ that entry x's "stored" gives ("files/<name>",
 * one component, not . or ..), or NULL. */
const char *quarantine_stored_name(json_t *x);
/* Whether DIR holds entry x's file: state "moved" (a restore killed after
 * putting the file back leaves that; the next restore puts it right), or
 * "planned" or "failed" with its file in DIR/files (files_fd; -1: not
 * looked at): a move the journal did not record yet, or the link a failed
 * rm --child rename left. */
bool quarantine_entry_held(int files_fd, json_t *x);
/* What entries (an index's) still holds in DIR (quarantine_entry_held) and
 * their allocated bytes. */
void quarantine_held(int files_fd, json_t *entries, size_t *n, uint64_t *bytes);
/* Record x (a plan entry's JSON, taken over) as planned: it gets an id, a
 * stored name, the command and the operation; queued for the journal.
 * Returns x. */
json_t *quarantine_add(quarantine *q, json_t *x, const char *path, const char *command);
/* A new state of an added entry ("moved", "removed-dir", "skipped",
 * "failed"), queued for the journal. */
void quarantine_set_state(quarantine *q, json_t *x, const char *state);
/* Append what is queued to the journal and sync it. 0, or -1 with err. */
int quarantine_flush(quarantine *q, char *err, size_t errlen);
/* At the end of an apply: flush, then fold the journal into index.json
 * (one write per apply, so index.json alone lists every entry once the
 * apply is done). 0, or -1 with err. */
int quarantine_commit(quarantine *q, char *err, size_t errlen);
/* Write index (entries merged) as DIR/index.json with a fresh journal
 * name, then drop the old journal. 0, or -1 with err. */
int quarantine_compact(int qfd, const char *dir, json_t *index, char *err, size_t errlen);
/* Lock fd (the store's root or a quarantine DIR, named `what`) against
 * other applies and restores, waiting up to OA_LOCK_WAIT_MS. 0 locked; 1
 * not locked because the filesystem cannot lock it and no_lock says the
 * caller knows nothing else writes it; -1 with err: another holder kept it
 * (busy), or the filesystem cannot lock it (flock's error, ENOLCK on NFS
 * without its lock service, and how to go on: --no-lock). Never unlocked
 * without no_lock. */
int apply_lock(int fd, const char *what, bool no_lock, char *err, size_t errlen);

/* fd (DIR, DIR/files or the index, `what` names it after dir) is ours and
 * not writable by group or others. 0, or -1 with err. */
int quarantine_check_private(int fd, const char *dir, const char *what, char *err, size_t errlen);
/* DIR/index.json of a quarantine (any schema) with its journal replayed, or NULL: *exists false
 * when there is none, else err says why it is unusable. */
json_t *quarantine_load_index(int qfd, const char *dir, char *err, size_t errlen, bool *exists);
/* The same of the directory dir, to count or list what it holds only:
 * whoever owns it, a missing index is an error too. *files_fd gets
 * DIR/files (never through a symlink), or -1. */
json_t *quarantine_peek_index(const char *dir, int *files_fd, char *err, size_t errlen);
/* The operation of entry x: its "op", or the legacy one. */
const char *quarantine_entry_op(json_t *x);

#endif
