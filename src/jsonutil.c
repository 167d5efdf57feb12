/* jsonutil.c - see jsonutil.h. */
#include "ollama_audit/jsonutil.h"

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
