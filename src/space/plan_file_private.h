/* plan_file_private.h - what plan_file.c (a plan as JSON, --plan FILE) shares with
 * apply.c. Private to src/space/. */
#ifndef OLLAMA_AUDIT_SPACE_PLAN_FILE_PRIVATE_H
#define OLLAMA_AUDIT_SPACE_PLAN_FILE_PRIVATE_H

#include "ollama_audit/prune.h"

#include <jansson.h>

/* An entry as a plan shows it (a new object): the quarantine records each
 * entry it moves in this form too. */
json_t *plan_entry_json(const oa_plan_entry *e);

#endif
