/* quarantine.h - a quarantine directory: DIR/index.json and DIR/files/
 * (docs/disk-space.md). Private to src/space/: prune.c moves into it,
 * restore.c moves out of it. */
#ifndef OLLAMA_AUDIT_SPACE_QUARANTINE_H
#define OLLAMA_AUDIT_SPACE_QUARANTINE_H

#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define OA_QUARANTINE_SCHEMA "ollama-audit.quarantine/2"
#define OA_QUARANTINE_SCHEMA_1 "ollama-audit.quarantine/1" /* still restored */

/* The quarantine: DIR/index.json and DIR/files/. */
typedef struct quarantine {
	int fd, files_fd;
	json_t *index;
	json_t *entries;
	size_t next_id;
} quarantine;

/* Open (creating it 0700 if missing) the quarantine DIR for the store s: on
 * the store's filesystem, outside it, private to this user, and holding
 * files of this store only. 0, or -1 with err (nothing left behind). */
int quarantine_open(const oa_store *s, const char *dir, quarantine *q, char *err, size_t errlen);
void quarantine_close(quarantine *q);
/* Rewrite DIR/index.json atomically. 0, or -1 with err. */
int quarantine_save(quarantine *q, char *err, size_t errlen);
/* The file name inside DIR/files/ for entry `id` at `path` (malloc'ed). */
char *quarantine_stored_name(size_t id, const char *path);

/* fd (DIR, DIR/files or the index, `what` names it after dir) is ours and
 * not writable by group or others. 0, or -1 with err. */
int quarantine_check_private(int fd, const char *dir, const char *what, char *err, size_t errlen);
/* DIR/index.json of a quarantine (either schema), or NULL: *exists false
 * when there is none, else err says why it is unusable. */
json_t *quarantine_load_index(int qfd, const char *dir, char *err, size_t errlen, bool *exists);

#endif
