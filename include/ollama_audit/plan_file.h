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

/* Why a saved plan may not be applied here (oa_plan_read_for). */
enum oa_plan_fit {
	OA_PLAN_FITS = 0,
	OA_PLAN_UNREADABLE,    /* not a plan, or a plan of an older ollama-audit */
	OA_PLAN_OTHER_COMMAND, /* a plan of the other command (prune vs rm) */
	OA_PLAN_OTHER_STORE,   /* made for another store (device and inode of its root) */
};
/* --apply --plan FILE: read the plan and check that it is a plan of this
 * command ("prune" or "rm") for the store s: the rule every caller of
 * oa_plan_apply must keep, that a plan is applied only where it was made.
 * On anything but OA_PLAN_FITS, p is empty (freed) and err says why. */
OA_EXPORT enum oa_plan_fit oa_plan_read_for(const char *file, const oa_store *s, const char *command, oa_plan *p,
                                            char *err, size_t errlen);

#endif
