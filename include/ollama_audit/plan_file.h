/*
 * plan_file.h - a plan as JSON, and --plan FILE (docs/schema.md, "plan").
 */
#ifndef OLLAMA_AUDIT_PLAN_FILE_H
#define OLLAMA_AUDIT_PLAN_FILE_H

#include "ollama_audit/export.h"
#include "ollama_audit/prune.h"

#include <jansson.h>
#include <stddef.h>

OA_EXPORT json_t *oa_plan_to_json(const oa_plan *p);
/* Write the plan atomically (FILE.tmp, rename). 0, or -1 with err. */
OA_EXPORT int oa_plan_write(const oa_plan *p, const char *file, char *err, size_t errlen);
/* Read and validate a plan file. 0, or -1 with err. */
OA_EXPORT int oa_plan_read(const char *file, oa_plan *p, char *err, size_t errlen);

#endif
