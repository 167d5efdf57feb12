/* import_plan.h - the models of an import's tags, what each needs, and
 * writing those that can go in. Private to src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_IMPORT_PLAN_H
#define OLLAMA_AUDIT_CARRY_IMPORT_PLAN_H

#include "carry/import_private.h"

/* The models of the tags, what each needs, and whether it can be added;
 * with o->apply, place the blobs and write the tags of the ones that can.
 * fetch (NULL for a bundle) makes the temporary of a needed blob the
 * source has but has not copied yet: 0, or -1 with m->err (the model is
 * then refused). */
typedef int (*imp_fetch_fn)(imp *m, size_t blob);
void import_plan(imp *m, imp_fetch_fn fetch);

#endif
