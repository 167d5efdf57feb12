/*
 * findings_report.h - the documents of check and verify (docs/schema.md,
 * ollama-audit.check/2 and ollama-audit.verify/2): per store its identity,
 * the findings reported and the summary.
 */
#ifndef OLLAMA_AUDIT_FINDINGS_REPORT_H
#define OLLAMA_AUDIT_FINDINGS_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/audit_totals.h"
#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdbool.h>

/* One entry of the document's "stores": the store, its findings (only those
 * with selected[i] set; selected NULL: all) and its summary. */
OA_EXPORT json_t *oa_findings_store_json(const oa_store *s, const bool *selected, const oa_audit_summary *sum);
/* ndjson: {"type":"finding", "host", "store", ...the finding}. */
OA_EXPORT json_t *oa_finding_record(const oa_store *s, const oa_finding *f, const char *host);
/* ndjson: {"type":"summary", "schema", "host", "store", ...the summary}. */
OA_EXPORT json_t *oa_audit_summary_record(const oa_store *s, const char *schema, const char *host,
                                const oa_audit_summary *sum);

#endif
