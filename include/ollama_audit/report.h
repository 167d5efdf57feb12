/*
 * report.h - machine-readable views of an audit: our own versioned schema
 * (docs/schema.md) and Ollama's /api/tags shape. Data only; the CLI decides
 * where it goes.
 */
#ifndef OLLAMA_AUDIT_REPORT_H
#define OLLAMA_AUDIT_REPORT_H

#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdio.h>

#define OA_SCHEMA_VERSION "1"

/* One model in our schema (every field, raw bytes, ISO-8601 times). */
json_t *oa_report_model(const oa_store *s, const oa_model *m);
/* One model as an entry of /api/tags "models". */
json_t *oa_report_tags_model(const oa_model *m);
json_t *oa_report_finding(const oa_finding *f);
/* The store's identity: input, root, how it was found. */
json_t *oa_report_store(const oa_store *s);
/* A full per-model view for `show`: layers, config, headers, findings. */
json_t *oa_report_model_detail(const oa_store *s, const oa_model *m, bool tensors);

/* Dump compactly the way Go's encoding/json does (escapes <, >, &, U+2028/9). */
void oa_json_dump_go(json_t *v, FILE *out);
/* Dump for people and programs: compact, one value, with a newline. */
void oa_json_dump_line(json_t *v, FILE *out);

#endif
