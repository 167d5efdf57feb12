/* jsonutil.h - jansson helpers that make lookups behave like Go's encoding/json. */
#ifndef OLLAMA_AUDIT_JSONUTIL_H
#define OLLAMA_AUDIT_JSONUTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* A struct field as Go's encoding/json fills it: keys match the field name
 * ASCII case-insensitively, and the last matching key in the document wins. */
json_t *oa_json_get_fold(json_t *obj, const char *key);

/* A JSON string for bytes from disk: as is when valid UTF-8, else with the
 * offending bytes escaped as \\xNN; NULL gives JSON null. Never NULL. */
json_t *oa_json_str(const char *s);

#endif
