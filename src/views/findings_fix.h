/* findings_fix.h - what check's one-screen answer says about a model or the
 * store: the worst severity among its findings, their codes, and the
 * command that fixes them (library-internal). */
#ifndef OA_VIEWS_FINDINGS_FIX_H
#define OA_VIEWS_FINDINGS_FIX_H

#include "base/util.h"
#include "ollama_audit/audit_totals.h"
#include "ollama_audit/store.h"

#include <stdbool.h>

/* The worst severity among the selected findings (selected[i]: finding i
 * counts) of the model named model (NULL: the store-wide ones), -1 when
 * there is none; their codes, each once, are added to codes (", "). */
int oa_findings_worst(const oa_store *s, const bool *selected, const char *model, oa_buf *codes);
/* The command that fixes a model's findings (codes, worst as above): a
 * manifest that cannot be used goes (rm), a blob that is missing or bad
 * comes again (pull); below error, a pointer to `show`. */
char *oa_findings_model_fix(const char *name, const char *codes, int worst);
/* The same for the store-wide findings: prune for junk, else check's json. */
char *oa_findings_store_fix(const char *codes);

/* What the selected findings make of a run under --fail-on (fail_on: the
 * lowest severity that fails it; an error always does): a part that could
 * not be read, an error, a warning (or info) at or above fail_on. */
enum { OA_FAILS_UNREADABLE = 1, OA_FAILS_ERRORS = 2, OA_FAILS_WARNINGS = 4 };
/* Counts the selected findings by severity into sum; returns OA_FAILS_* bits. */
unsigned oa_findings_tally(const oa_store *s, const bool *selected, int fail_on, oa_audit_summary *sum);

#endif
