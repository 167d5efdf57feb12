/*
 * report.h - machine-readable views of an audit: our own versioned schema
 * (docs/schema.md) and Ollama's /api/tags shape. Data only; the CLI decides
 * where it goes.
 */
#ifndef OLLAMA_AUDIT_REPORT_H
#define OLLAMA_AUDIT_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdio.h>


/* Each json document's schema name and version (docs/schema.md lists the
 * renames behind each version). */
#define OA_SCHEMA_LIST "ollama-audit.list/2"
#define OA_SCHEMA_SHOW "ollama-audit.show/3"
#define OA_SCHEMA_CHECK "ollama-audit.check/2"
#define OA_SCHEMA_VERIFY "ollama-audit.verify/2"
#define OA_SCHEMA_DU "ollama-audit.du/3"
#define OA_SCHEMA_PRUNE "ollama-audit.prune/4"
#define OA_SCHEMA_RM "ollama-audit.rm/5"
#define OA_SCHEMA_STORES "ollama-audit.stores/2"
#define OA_SCHEMA_DUPLICATES "ollama-audit.duplicates/2"
#define OA_SCHEMA_DEDUPE "ollama-audit.dedupe/2"
#define OA_SCHEMA_HISTORY "ollama-audit.history/3"
#define OA_SCHEMA_EXPORT "ollama-audit.export/1"
#define OA_SCHEMA_IMPORT "ollama-audit.import/1"
#define OA_SCHEMA_REPAIR "ollama-audit.repair/1"

/* The schema of a command's json document ("list", "du", ...), or NULL. */
OA_EXPORT const char *oa_report_schema(const char *command);

/* One model in our schema (every field, raw bytes, ISO-8601 times). */
OA_EXPORT json_t *oa_report_model(const oa_store *s, const oa_model *m);
/* One model as an entry of /api/tags "models". */
OA_EXPORT json_t *oa_report_tags_model(const oa_model *m);
OA_EXPORT json_t *oa_report_finding(const oa_finding *f);
/* The store's identity: input, root, owner ("user"), how it was found. */
OA_EXPORT json_t *oa_report_store(const oa_store *s);
/* The user name of the store root's owner, looked up by oa_store_scan (NULL before). */
OA_EXPORT const char *oa_report_owner(const oa_store *s);
/* "found_by": [{"source", "detail", "path"}], every way a store was reached. */
struct oa_found_by;
OA_EXPORT json_t *oa_report_found_by(const struct oa_found_by *f, size_t n);
/* An ndjson record of a store (records.h) with its owner after "store". */
OA_EXPORT json_t *oa_store_record(const char *type, const char *schema, const char *host, const oa_store *s,
                        json_t *fields);
/* A full per-model view for `show`: layers, config, headers, findings. */
OA_EXPORT json_t *oa_report_model_detail(const oa_store *s, const oa_model *m, bool tensors);

/* Dump compactly the way Go's encoding/json does (escapes <, >, &, U+2028/9). */
OA_EXPORT void oa_json_dump_go(json_t *v, FILE *out);
/* Dump for people and programs: compact, one value, with a newline. */
OA_EXPORT void oa_json_dump_line(json_t *v, FILE *out);
/* Each element of an array of records with oa_json_dump_line (ndjson). */
OA_EXPORT void oa_json_dump_lines(json_t *records, FILE *out);
/* The members of object obj as oa_json_dump_line writes them, without its
 * braces nor newline: for a document written a piece at a time. Returns
 * whether there were any (a caller separates the next with a comma). */
OA_EXPORT bool oa_json_dump_members(json_t *obj, FILE *out);

#endif
