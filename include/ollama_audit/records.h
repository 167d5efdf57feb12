/*
 * records.h - ndjson records (docs/schema.md): one JSON object per line,
 * each saying what it is ("type"), which document schema it belongs to and
 * the host it was made on, then the fields of the view it carries.
 */
#ifndef OLLAMA_AUDIT_RECORDS_H
#define OLLAMA_AUDIT_RECORDS_H

#include "ollama_audit/export.h"

#include <jansson.h>

/* {"type":type, "schema":schema, "host":host, "store":store, ...fields}:
 * schema and store are left out when NULL; fields (borrowed, may be NULL)
 * are copied in after them, replacing any of the same name. */
OA_EXPORT json_t *oa_record(const char *type, const char *schema, const char *host, const char *store,
                  json_t *fields);

/* An entry of a document's "errors" (docs/schema.md, "Errors and status"):
 * {"code", "message", "path" (or null)}. */
OA_EXPORT json_t *oa_error_json(const char *code, const char *message, const char *path);
/* The same as an ndjson record: {"type":"error", "host", ...error}. */
OA_EXPORT json_t *oa_error_record(const char *host, json_t *error);
/* End a json document with "status" (ok, or error when errors is not
 * empty) and "errors" (borrowed; NULL for none). doc NULL: a run that read
 * nothing still gets a document named by its schema. Returns doc. */
OA_EXPORT json_t *oa_view_with_status(json_t *doc, const char *schema, json_t *errors);

#endif
