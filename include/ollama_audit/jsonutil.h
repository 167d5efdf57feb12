/* jsonutil.h - jansson helpers that make lookups behave like Go's encoding/json. */
#ifndef OLLAMA_AUDIT_JSONUTIL_H
#define OLLAMA_AUDIT_JSONUTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* A struct field as Go's encoding/json fills it: keys match the field name
 * ASCII case-insensitively, and the last matching key in the document wins. */
json_t *oa_json_get_fold(json_t *obj, const char *key);

#endif
