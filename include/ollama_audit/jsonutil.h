/* jsonutil.h - jansson helpers that make lookups behave like Go's encoding/json. */
#ifndef OLLAMA_AUDIT_JSONUTIL_H
#define OLLAMA_AUDIT_JSONUTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Go matches struct field names case-insensitively, preferring an exact match. */
json_t *oa_json_get_fold(json_t *obj, const char *key);

#endif
