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
#include "ollama_audit/report.h"

#include <jansson.h>

/* {"schema", "host", "store", "bundle", "kind", "models": [...], "blobs",
 * "tags", "bytes", "hashed", "trusted"}. */
OA_EXPORT json_t *oa_export_report(const oa_store *s, const oa_carry *c, const oa_export_result *r,
                                   const oa_export_opts *o, const char *host);

#endif
