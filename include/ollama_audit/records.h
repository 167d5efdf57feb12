/*
 * records.h - ndjson records (docs/schema.md): one JSON object per line,
 * each saying what it is ("type"), which document schema it belongs to and
 * the host it was made on, then the fields of the view it carries.
 */
#ifndef OLLAMA_AUDIT_RECORDS_H
#define OLLAMA_AUDIT_RECORDS_H

#include <jansson.h>

/* {"type":type, "schema":schema, "host":host, "store":store, ...fields}:
 * schema and store are left out when NULL; fields (borrowed, may be NULL)
 * are copied in after them, replacing any of the same name. */
json_t *oa_record(const char *type, const char *schema, const char *host, const char *store,
                  json_t *fields);

#endif
