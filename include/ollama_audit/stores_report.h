/*
 * stores_report.h - `stores` (docs/multi-store.md): the json document and
 * ndjson records (docs/schema.md, ollama-audit.stores) of its rows and
 * totals (stores.h).
 */
#ifndef OLLAMA_AUDIT_STORES_REPORT_H
#define OLLAMA_AUDIT_STORES_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/stores.h"

#include <jansson.h>

OA_EXPORT json_t *oa_stores_view_row(const oa_stores_row *r);
/* The json document. */
OA_EXPORT json_t *oa_stores_view_document(const char *host, const oa_stores_row *rows, size_t n,
                                const oa_stores_totals *t, const oa_stores_dupes *d);
/* ndjson: a "store" record per row, a "user" record per owner, then the
 * "total" and "duplicates" records. */
OA_EXPORT json_t *oa_stores_view_records(const char *host, const oa_stores_row *rows, size_t n,
                               const oa_stores_totals *t, const oa_stores_dupes *d);

#endif
