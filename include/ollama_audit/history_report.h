/*
 * history_report.h - the document of `history` (docs/schema.md,
 * ollama-audit.history/3): per store the log sources read, the loads found
 * (oa_load, history.h) and per model its last load.
 */
#ifndef OLLAMA_AUDIT_HISTORY_REPORT_H
#define OLLAMA_AUDIT_HISTORY_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/history.h"
#include "ollama_audit/store.h"

#include <jansson.h>

/* What the loads say about one model (or one name not in the store). A
 * load of a blob several tags share counts for each of them. */
typedef struct oa_history_model {
	char *label;             /* the tag, or oa_history_load_label() when not in the store */
	char id[13];             /* the model's ID prefix, "-" when not in the store */
	const oa_load *last;     /* its newest load */
	size_t loads, failed;
	unsigned runners;        /* bit per enum oa_log_runner */
} oa_history_model;

/* Per model of the loads v (newest first), in the order first seen. */
OA_EXPORT size_t oa_history_models(const oa_store *s, const oa_load *const *v, size_t n, oa_history_model **out);
OA_EXPORT void oa_history_models_free(oa_history_model *m, size_t n);

/* The model a load ran, as a reader names it (escaped for a terminal). */
OA_EXPORT char *oa_history_load_label(const oa_store *s, const oa_load *e);
/* The ID prefix of the load's model, "-" when it is not in the store. */
OA_EXPORT const char *oa_history_load_id(const oa_store *s, const oa_load *e, char id[13]);
/* "llamacpp,mlx" ("-": none). */
OA_EXPORT void oa_history_runners_text(unsigned mask, char *buf, size_t len);

/* A store's entry: the store, "sources", "logs_from", "logs_to",
 * "warnings", "loads" (v) and "models". */
OA_EXPORT json_t *oa_history_store_json(const oa_store *s, const oa_history *h, char *const *sources,
                              size_t n_sources, const oa_load *const *v, size_t n);
/* Its ndjson records: "load" and "model" per entry, then "sources" (the
 * entry without the two lists). */
OA_EXPORT json_t *oa_history_records(const oa_store *s, json_t *store_entry, const char *host);

#endif
