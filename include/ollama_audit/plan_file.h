/*
 * plan_file.h - a plan as JSON, and --plan FILE (docs/schema.md, "plan").
 */
#ifndef OLLAMA_AUDIT_PLAN_FILE_H
#define OLLAMA_AUDIT_PLAN_FILE_H

#include "ollama_audit/export.h"
#include "ollama_audit/prune.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

OA_EXPORT json_t *oa_plan_to_json(const oa_plan *p);
/* Write the plan atomically (FILE.tmp, rename). 0, or -1 with err. */
OA_EXPORT int oa_plan_write(const oa_plan *p, const char *file, char *err, size_t errlen);
/* Read and validate a plan file. 0, or -1 with err. */
OA_EXPORT int oa_plan_read(const char *file, oa_plan *p, char *err, size_t errlen);
/* --apply --plan FILE: the plan FILE holds if it was made by `command` for
 * store s, with min_age (when >= 0) in place of the one it saved. 0, else
 * one of these with err (p then holds nothing): the file cannot be read as
 * a plan (oa_plan_read), it was made for another store, by another command. */
enum { OA_PLAN_UNREADABLE = -1, OA_PLAN_OTHER_STORE = -2, OA_PLAN_OTHER_COMMAND = -3 };
OA_EXPORT int oa_plan_read_for(const char *file, const oa_store *s, const char *command, int64_t min_age,
                               oa_plan *p, char *err, size_t errlen);

#endif
