/*
 * show_report.h - the documents of `show MODEL` (docs/schema.md,
 * ollama-audit.show): one model in full, with what can run it here.
 */
#ifndef OLLAMA_AUDIT_SHOW_REPORT_H
#define OLLAMA_AUDIT_SHOW_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/runhere.h"
#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdbool.h>

/* What can run the model on this machine: engine, fit, sizes, memory; null
 * for a model no engine runs. */
OA_EXPORT json_t *oa_runhere_view(const oa_machine *mc, const oa_model *m);
/* The json document: oa_report_model_detail plus "schema", "store" and
 * "runs_here". */
OA_EXPORT json_t *oa_show_view(const oa_store *s, const oa_model *m, bool tensors, const oa_machine *mc);
/* ndjson from that document: the model (without its layers and findings),
 * then one record per layer (config first) and per finding. */
OA_EXPORT json_t *oa_show_view_records(const oa_store *s, json_t *doc, const char *host);

#endif
