/*
 * show_report.h - the documents of `show MODEL` (docs/schema.md,
 * ollama-audit.show): one model in full, with what can run it here.
 */
#ifndef OLLAMA_AUDIT_SHOW_REPORT_H
#define OLLAMA_AUDIT_SHOW_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/runhere.h"
#include "ollama_audit/store.h"
#include "ollama_audit/verify_cache.h"

#include <jansson.h>
#include <stdbool.h>

/* What verify last found about layer i's blob as it is now (vc may be NULL:
 * unverified); *e gets the entry when verified or failed. */
OA_EXPORT enum oa_verify_state oa_layer_verify_state(const oa_store *s, const oa_model *m, size_t i, oa_verify_cache *vc,
                                           oa_verify_cache_entry *e);
/* The first weight layer whose blob failed verify as it is now, or -1. */
OA_EXPORT long oa_weights_failed_verify(const oa_store *s, const oa_model *m, oa_verify_cache *vc, oa_verify_cache_entry *e);
/* What can run the model on this machine: engine, fit, sizes, memory, and
 * the weight blobs that failed verify; null for a model no engine runs. */
OA_EXPORT json_t *oa_runhere_view(const oa_machine *mc, const oa_store *s, const oa_model *m, oa_verify_cache *vc);
/* The json document: oa_report_model_detail plus "schema", "store",
 * "runs_here", and "verify" on each weight layer. */
OA_EXPORT json_t *oa_show_view(const oa_store *s, const oa_model *m, bool tensors, const oa_machine *mc,
                     oa_verify_cache *vc);
/* ndjson from that document: the model (without its layers and findings),
 * then one record per layer (config first) and per finding. */
OA_EXPORT json_t *oa_show_view_records(const oa_store *s, json_t *doc, const char *host);

#endif
