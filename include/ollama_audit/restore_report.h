/*
 * restore_report.h - the JSON of `restore DIR` without a selector: the
 * operations of a quarantine (docs/schema.md, ollama-audit.restore-list/1).
 */
#ifndef OLLAMA_AUDIT_RESTORE_REPORT_H
#define OLLAMA_AUDIT_RESTORE_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/trash.h"

#include <jansson.h>

#define OA_RESTORE_LIST_SCHEMA "ollama-audit.restore-list/1"

/* {"schema", "quarantine", "store", "index_schema", "operations": [...],
 * "held_entries", "held_bytes"}: the operations oldest first. */
OA_EXPORT json_t *oa_quarantine_ops_report(const char *dir, const oa_quarantine_ops *ops);
/* Its ndjson records, each with the host: an "operation" per operation,
 * then the "summary" (the document without "operations"). */
OA_EXPORT json_t *oa_quarantine_ops_records(json_t *report, const char *host);

#endif
