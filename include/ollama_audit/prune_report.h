/*
 * prune_report.h - the JSON of `prune --predict-server` (docs/schema.md,
 * ollama-audit.predict-server/1): one store's prediction; and a prune or rm
 * plan as the prune/rm documents show it (ollama-audit.prune/4, rm/5).
 */
#ifndef OLLAMA_AUDIT_PRUNE_REPORT_H
#define OLLAMA_AUDIT_PRUNE_REPORT_H

#include "ollama_audit/export.h"
#include "ollama_audit/apply.h"

#include "ollama_audit/log_usage.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/server_prune.h"

#include <jansson.h>

#define OA_PREDICT_SERVER_SCHEMA "ollama-audit.predict-server/2"

/* The version whose server --predict-server predicts: the option's when
 * given, else the one the store's logs last announced (u, may be NULL; a
 * development build's 0.0.0, or one that is no version, says nothing),
 * else NULL: the store's layout decides. *chosen_by: "option", "logs" or
 * "layout". */
OA_EXPORT const char *oa_predict_server_version(const char *option, const oa_log_usage *u, const char **chosen_by);

/* The store's report object plus the prediction's fields. */
OA_EXPORT json_t *oa_report_server_prune(const oa_store *s, const oa_server_prune *p);

/* A store's entry of the prune/rm document: the plan (oa_plan_to_json),
 * "dry_run", and with --apply what it did (r; NULL when nothing ran), or
 * "not_applied": why --apply did nothing ("declined" at the prompt,
 * "refused": see "errors"; not_applied NULL otherwise). */
OA_EXPORT json_t *oa_plan_report(const oa_plan *p, bool dry_run, const oa_apply_result *r, const char *not_applied);
/* Its ndjson records, each with the host: an "entry" per entry (state
 * planned or kept), then the "summary": the plan report without the two
 * lists. */
OA_EXPORT json_t *oa_plan_records(json_t *report, const char *host);

#endif
