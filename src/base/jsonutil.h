/* jsonutil.h - jansson helpers that make lookups behave like Go's encoding/json. */
#ifndef OLLAMA_AUDIT_JSONUTIL_H
#define OLLAMA_AUDIT_JSONUTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Struct fields as Go's encoding/json fills them (see jsonutil.c): keys match
 * the field name ignoring ASCII case, in document order.
 * oa_json_get_fold: a scalar field; the last non-null match (a null only when
 * every match is null). Borrowed reference, or NULL when absent.
 * oa_json_get_fold_slice: a slice field; the last match, null included.
 * oa_json_get_fold_struct: a struct field; the objects merged in order. A NEW
 * reference (json_decref it), the offending value when one is not an object,
 * or NULL when absent or only null. */
json_t *oa_json_get_fold(json_t *obj, const char *key);
/* Whether key k names the ASCII field name as Go's decoder matches them. */
bool oa_json_key_is(const char *k, const char *name);
json_t *oa_json_get_fold_slice(json_t *obj, const char *key);
json_t *oa_json_get_fold_struct(json_t *obj, const char *key);

/* json_loadb() for a document the Ollama server decodes with Go's
 * encoding/json: a number jansson cannot hold (an integer beyond int64, a
 * real beyond double) is legal JSON that Go only rejects in a field that
 * holds it, and skips in an unknown field. Such numbers are loaded as
 * strings of their text, so an unknown field is ignored whatever its value
 * and a known numeric field still fails its type check. */
json_t *oa_json_loadb_go(const uint8_t *bytes, size_t len, size_t flags, json_error_t *err);

/* A JSON string for bytes from disk: as is when valid UTF-8, else with the
 * offending bytes escaped as \\xNN; NULL gives JSON null. Never NULL. */
json_t *oa_json_str(const char *s);

/* An integer member: a non-negative one for _u64. false when absent or not so. */
bool oa_json_get_u64(json_t *o, const char *k, uint64_t *out);
bool oa_json_get_i64(json_t *o, const char *k, int64_t *out);

/* Write v (indented, in order, one trailing newline) to dirfd/name
 * atomically, mode 0644 (oa_outfile_write_at). 0, or -1 with err. */
int oa_json_write_at(int dirfd, const char *name, json_t *v, char *err, size_t errlen);

#endif
