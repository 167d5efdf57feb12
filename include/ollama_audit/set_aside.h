/*
 * set_aside.h - a damaged blob moved into a quarantine (prune/rm
 * --quarantine's, docs/disk-space.md) as one operation of `repair`, so that
 * `restore DIR` lists it and can put it back where nothing took its name.
 */
#ifndef OLLAMA_AUDIT_SET_ASIDE_H
#define OLLAMA_AUDIT_SET_ASIDE_H

#include "ollama_audit/export.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oa_set_aside oa_set_aside;

/* Open DIR as s's quarantine (the rules of --quarantine: on the store's
 * file system, outside it, private; its lock as oa_store_write_lock takes
 * a store's, no_lock alike) and begin one operation of `command` over the
 * models named. NULL with err when it cannot. */
OA_EXPORT oa_set_aside *oa_set_aside_begin(const oa_store *s, const char *dir, bool no_lock, const char *command,
                                           const char *const *models, size_t n_models, char *err, size_t errlen);
/* Put blobs/<name> into the quarantine, recorded first: moved (keep
 * false), or hard-linked with the name kept for the caller to rename a
 * good copy over (keep true). 0, or -1 with err. */
OA_EXPORT int oa_set_aside_blob(oa_set_aside *q, const char *name, const char *model, bool keep, char *err,
                                size_t errlen);
/* End the operation (its id into op, 40 bytes) and close the quarantine. 0, or -1 with err. */
OA_EXPORT int oa_set_aside_end(oa_set_aside *q, char *op, char *err, size_t errlen);

#endif
