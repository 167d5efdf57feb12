/*
 * du_report.h - the documents of `du` (docs/schema.md, ollama-audit.du):
 * a store's rows, junk and totals, the combined total of several stores,
 * and the same as ndjson records. Data only; the CLI decides where it goes.
 */
#ifndef OLLAMA_AUDIT_DU_REPORT_H
#define OLLAMA_AUDIT_DU_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/du.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/store.h"

#include <jansson.h>

/* One store: oa_report_store's fields, "models" (a row each) and "totals".
 * lu (may be NULL) adds each row's "last_used". */
OA_EXPORT json_t *oa_du_view_store(const oa_store *s, const oa_du_store *d, const oa_last_used *lu);
/* The json document's "total", there for one store too. */
OA_EXPORT json_t *oa_du_view_total(const oa_du_total *t);
/* The json document: the stores' views (an array, stolen) and the total. */
OA_EXPORT json_t *oa_du_view_document(json_t *stores, const oa_du_total *t);
/* ndjson: a "model" record per row, then the store's "summary" (its view
 * without the models); an array of records, each naming host and store. */
OA_EXPORT json_t *oa_du_view_records(const oa_store *s, const oa_du_store *d, const oa_last_used *lu,
                           const char *host);
/* ndjson: the closing "total" record. */
OA_EXPORT json_t *oa_du_view_total_record(const oa_du_total *t, const char *host);

#endif
