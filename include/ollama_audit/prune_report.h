/*
 * prune_report.h - the JSON of `prune --predict-server` (docs/schema.md,
 * ollama-audit.predict-server/1): one store's prediction.
 */
#ifndef OLLAMA_AUDIT_PRUNE_REPORT_H
#define OLLAMA_AUDIT_PRUNE_REPORT_H

#include "ollama_audit/server_prune.h"

#include <jansson.h>

#define OA_PREDICT_SERVER_SCHEMA "ollama-audit.predict-server/2"

/* The store's report object plus the prediction's fields. */
json_t *oa_report_server_prune(const oa_store *s, const oa_server_prune *p);

#endif
