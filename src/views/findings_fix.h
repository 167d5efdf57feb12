/* findings_fix.h - what check's one-screen answer says about a model or the
 * store: the worst severity among its findings and their codes (each
 * finding carries its own fix, oa_finding.fix) (library-internal). */
#ifndef OA_VIEWS_FINDINGS_FIX_H
#define OA_VIEWS_FINDINGS_FIX_H

#include "base/util.h"
#include "ollama_audit/audit_totals.h"
#include "ollama_audit/store.h"

#include <stdbool.h>

/* The selected findings by model name, so that a store's answer finds a
 * model's findings by a search instead of a pass over every finding for
 * every model (10,000 tags with a finding each made that 10^8 string
 * compares). v: the findings that name a model, by name, then in finding
 * order; first[j]: model j is the first of its display name (a legacy
 * anchor shares its v2 tag's; the answer shows one row for both). */
typedef struct oa_findings_entry {
	const char *model;
	size_t i;
} oa_findings_entry;
typedef struct oa_findings_index {
	const oa_store *s;
	oa_findings_entry *v;
	size_t n;
	bool *first;
} oa_findings_index;
/* selected NULL: every finding. */
void oa_findings_index_build(oa_findings_index *ix, const oa_store *s, const bool *selected);
void oa_findings_index_free(oa_findings_index *ix);
/* model's findings: ix->v[*lo .. *hi). */
void oa_findings_index_range(const oa_findings_index *ix, const char *model, size_t *lo, size_t *hi);

/* What the selected findings make of a run under --fail-on (fail_on: the
 * lowest severity that fails it; an error always does): a part that could
 * not be read, an error, a warning (or info) at or above fail_on. */
enum { OA_FAILS_UNREADABLE = 1, OA_FAILS_ERRORS = 2, OA_FAILS_WARNINGS = 4 };
/* Counts the selected findings by severity into sum; returns OA_FAILS_* bits. */
unsigned oa_findings_tally(const oa_store *s, const bool *selected, int fail_on, oa_audit_summary *sum);

#endif
