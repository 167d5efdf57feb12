/*
 * import_run.h - running an import (import.h says what it does and what
 * it answers): from a bundle, or from another store on this machine.
 */
#ifndef OLLAMA_AUDIT_IMPORT_RUN_H
#define OLLAMA_AUDIT_IMPORT_RUN_H

#include "ollama_audit/export.h"
#include "ollama_audit/import.h"
#include "ollama_audit/store.h"

#include <stddef.h>

/* Import the bundle src (a file, a directory, or "-": read from fd) into
 * the store at store_path (an existing empty directory becomes a store).
 * Returns 0 when it ran (r says what happened: r->refused, each model's
 * state), -1 when it could not start (err: the store cannot be opened or
 * locked, the bundle cannot be opened). Free r either way. */
OA_EXPORT int oa_import_bundle(const char *store_path, const char *src, int fd, const oa_import_opts *o,
                               oa_import_result *r, char *err, size_t errlen);

/* Import the models from[models[i]] (a scanned store) into the store at
 * store_path: what oa_carry_collect says they carry. Each new blob becomes
 * a reflink where the file system can make one, else a hard link where
 * both are on one file system and the source file has the target's owner,
 * else a copy; a reflink or a copy is owned and moded as the target's
 * blobs/. Every source blob is hashed first (a link shares its bytes), a
 * copy as it is made. */
OA_EXPORT int oa_import_store(const char *store_path, oa_store *from, const size_t *models, size_t n,
                              const oa_import_opts *o, oa_import_result *r, char *err, size_t errlen);

#endif
