/* jsonutil.c - see jsonutil.h. */
#include "ollama_audit/jsonutil.h"
#include "ollama_audit/util.h"

#include <stdlib.h>
#include <string.h>

#include <strings.h>

json_t *oa_json_get_fold(json_t *obj, const char *key)
{
	/* Go's decoder assigns every key that matches the field name (exact or
	 * ASCII case-insensitive) in document order, so the last one wins:
	 * {"Layers":A,"layers":B} decodes as B, {"layers":B,"Layers":A} as A.
	 * jansson iterates in insertion order, and a repeated key keeps its
	 * first position with its last value, as Go would use it. */
	if (!json_is_object(obj))
		return NULL;
	json_t *found = NULL;
	const char *k;
	json_t *val;
	json_object_foreach(obj, k, val) {
		if (strcasecmp(k, key) == 0)
			found = val;
	}
	return found;
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
