/*
 * list_report.h - the documents of `list` (docs/schema.md,
 * ollama-audit.list): a store's models and listing problems, the combined
 * total, the ndjson records, and Ollama's /api/tags shape. Which models are
 * listed and in what order is the caller's choice (a prefix, --sort).
 */
#ifndef OLLAMA_AUDIT_LIST_REPORT_H
#define OLLAMA_AUDIT_LIST_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/last_used.h"
#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Combined totals over the stores listed: models shown, Ollama's SIZE
 * summed (declared bytes, as ollama list adds them), and the allocated bytes
 * of the distinct blob files the listed models use, store by store. */
typedef struct oa_list_total {
	size_t stores, models;
	uint64_t size, disk;
} oa_list_total;
/* Add a store; selected[i]: model i of s is listed. */
OA_EXPORT void oa_list_total_add(oa_list_total *t, const oa_store *s, const bool *selected);

/* The models listed (indexes into s->models, in order) and the findings
 * that affect the listing, of one store. */
typedef struct oa_list_store {
	const oa_store *s;
	const size_t *models;
	size_t n_models;
	const oa_finding *const *problems;
	size_t n_problems;
	const oa_last_used *lu; /* may be NULL: no "last_used" */
} oa_list_store;

/* One model: oa_report_model plus "last_used" when there are logs. */
OA_EXPORT json_t *oa_list_view_model(const oa_store *s, size_t idx, const oa_last_used *lu);
/* One store: oa_report_store's fields, "models", "problems" and, when
 * there are logs, "log_sources". */
OA_EXPORT json_t *oa_list_view_store(const oa_list_store *ls);
/* The json document: the stores' views (an array, stolen) and the total. */
OA_EXPORT json_t *oa_list_view_document(json_t *stores, const oa_list_total *t);
/* The same document's bytes as oa_json_dump_line writes them, written as
 * each model's view is made (one model's JSON held at a time, not the
 * store's), and left open: without its closing brace nor newline, so that
 * the caller may add members (a run's "status" and "errors"). */
OA_EXPORT void oa_list_view_document_write(FILE *out, const oa_list_store *v, size_t n, const oa_list_total *t);
/* ndjson: a "model" record per model, then a "problem" record per problem. */
OA_EXPORT json_t *oa_list_view_records(const oa_list_store *ls, const char *host);
/* Record i of those, i < n_models + n_problems: one at a time, so that a
 * writer holds one record, not the store's (oa_list_view_records). */
OA_EXPORT json_t *oa_list_view_record(const oa_list_store *ls, size_t i, const char *host);
/* ndjson: the closing "total" record. */
OA_EXPORT json_t *oa_list_view_total_record(const oa_list_total *t, const char *host);
/* /api/tags: {"models":[...]} of these models, newest first as the server
 * sorts (equal times keep their order). Reorders v. */
OA_EXPORT json_t *oa_list_view_tags(const oa_model **v, size_t n);

#endif
