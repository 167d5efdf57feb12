/*
 * carry_report.h - the JSON documents of export, import and repair
 * (docs/schema.md: ollama-audit.export/1, import/1, repair/1) and their
 * ndjson records.
 */
#ifndef OLLAMA_AUDIT_CARRY_REPORT_H
#define OLLAMA_AUDIT_CARRY_REPORT_H

#include "ollama_audit/export.h"
#include "ollama_audit/bundle_write.h"
#include "ollama_audit/carry.h"
#include "ollama_audit/import.h"
#include "ollama_audit/repair.h"
#include "ollama_audit/report.h"

#include <jansson.h>

/* {"schema", "host", "store", "bundle", "kind", "models": [...], "blobs",
 * "tags", "bytes", "hashed", "trusted"}. */
OA_EXPORT json_t *oa_export_report(const oa_store *s, const oa_carry *c, const oa_export_result *r,
                                   const oa_export_opts *o, const char *host);

/* {"schema", "host", "store", "source", "applied", "refused", "corrupt",
 * "indexed", "tool", "hashed", "bytes_new", "bytes_present", "free_bytes",
 * "models": [{"name", "state", "why", "bytes_new"}], "blobs": [{"digest",
 * "size", "state", "model", "how", "size_here"}], "tags": [{"path",
 * "model", "sha256", "state"}]}. */
OA_EXPORT json_t *oa_import_report(const oa_import_result *r, const char *host);
/* Its ndjson records: a "model", "blob" and "tag" record each (with
 * "schema", "host", "store"), then the "summary" (the document without
 * the three arrays). */
OA_EXPORT json_t *oa_import_records(json_t *report);
/* {"schema", "host", "store", "applied", "verified", "searched",
 * "source_error", "operation", "blobs": [{"digest", "size", "size_here",
 * "damage", "known_by", "models", "state", "source", "source_kind", "how",
 * "note"}], "advice": [{"model", "registry", "command", "text"}]}. */
OA_EXPORT json_t *oa_repair_report(const oa_repair_result *r, const char *host);
/* Its ndjson records: a "blob" per damaged blob and an "advice" per model
 * (with "schema", "host", "store"), then the "summary". */
OA_EXPORT json_t *oa_repair_records(json_t *report);

#endif
