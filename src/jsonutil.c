/* jsonutil.c - see jsonutil.h. */
#include "ollama_audit/jsonutil.h"
#include "ollama_audit/util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <strings.h>

/*
 * Go's decoder walks an object's keys in document order and assigns every
 * key that equals a field name ignoring ASCII case, so several spellings of
 * one field ("layers", "Layers") each take effect in turn. What "take
 * effect" means depends on the field's Go type:
 *   - string, number, bool: the value replaces; null does nothing;
 *   - slice: the value replaces; null sets it to nil;
 *   - struct: an object fills the fields it names, keeping the others;
 *     null does nothing.
 * jansson iterates in insertion order; a key repeated with the same spelling
 * keeps its first position and its last value, which is the one Go would
 * end with for that spelling.
 */
/* The last key matching `key`; a null counts only when skip_null is false or
 * nothing else matched. */
static json_t *last_match(json_t *obj, const char *key, bool skip_null)
{
	if (!json_is_object(obj))
		return NULL;
	json_t *found = NULL;
	const char *k;
	json_t *val;
	json_object_foreach(obj, k, val) {
		if (strcasecmp(k, key) == 0 && (!found || !skip_null || !json_is_null(val)))
			found = val;
	}
	return found;
}

json_t *oa_json_get_fold(json_t *obj, const char *key)
{
	return last_match(obj, key, true);
}

json_t *oa_json_get_fold_slice(json_t *obj, const char *key)
{
	return last_match(obj, key, false);
}

json_t *oa_json_get_fold_struct(json_t *obj, const char *key)
{
	if (!json_is_object(obj))
		return NULL;
	json_t *merged = NULL;
	const char *k;
	json_t *val;
	json_object_foreach(obj, k, val) {
		if (strcasecmp(k, key) != 0 || json_is_null(val))
			continue;
		if (!json_is_object(val)) {
			/* a type error in Go; hand the offending value to the caller */
			json_decref(merged);
			return json_incref(val);
		}
		if (!merged)
			merged = json_object();
		json_object_update(merged, val);
	}
	return merged;
}

json_t *oa_json_str(const char *s)
{
	if (!s)
		return json_null();
	json_t *v = json_string(s);
	if (v)
		return v;
	/* Not UTF-8 (names and paths on disk need not be): escape the bytes. */
	char *e = oa_escape(s, strlen(s));
	v = json_string(e);
	free(e);
	return v ? v : json_null();
}
