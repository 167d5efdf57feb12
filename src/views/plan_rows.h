/* plan_rows.h - a prune or rm plan as a person reads it: a row per model
 * (NAME, FREES, LAST USED, PULLED), a row per kind of junk (an interrupted
 * pull is one row with its part count), a line per reason something is
 * kept. prune_text.h draws the heading and the total around them, or with
 * -v every file instead. Library-internal; nothing here decides what a
 * plan holds. */
#ifndef OA_VIEWS_PLAN_ROWS_H
#define OA_VIEWS_PLAN_ROWS_H

#include "views/table.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/store.h"

#include <stdint.h>
#include <stdio.h>

/* Where the model rows' LAST USED and PULLED come from. */
typedef struct oa_plan_models {
	const oa_store *s;       /* the store the plan's models are in */
	const oa_last_used *lu;  /* what its logs say, or NULL: LAST USED "-" */
	int64_t now_ns;          /* ages are taken at */
} oa_plan_models;

/* The rows of plan p (junk, may be NULL, adds a download's progress): the
 * models by what they free, largest first, then the kinds of junk in the
 * plan's order, then what is kept, a line per kind and reason. */
void oa_plan_rows_text(const oa_text_style *st, FILE *out, const oa_plan *p, const oa_junk_list *junk,
                       const oa_plan_models *m);

#endif
