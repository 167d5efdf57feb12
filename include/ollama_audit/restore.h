/*
 * restore.h - undo prune/rm --quarantine DIR (docs/disk-space.md).
 */
#ifndef OLLAMA_AUDIT_RESTORE_H
#define OLLAMA_AUDIT_RESTORE_H

#include <stddef.h>
#include <stdio.h>

typedef struct oa_restore_result {
	size_t restored, already, conflicts, missing, failed;
} oa_restore_result;

/* Put every quarantined entry of DIR back into its store (the one the index
 * names, or `store` if not NULL), newest first, never overwriting a file
 * that differs. 0 when it ran, -1 when it could not start. */
int oa_quarantine_restore(const char *dir, const char *store, FILE *log, oa_restore_result *r,
                          char *err, size_t errlen);

#endif
