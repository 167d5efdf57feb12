/* jsonutil.c - see jsonutil.h. */
#include "ollama_audit/jsonutil.h"

#include <strings.h>

json_t *oa_json_get_fold(json_t *obj, const char *key)
{
	if (!json_is_object(obj))
		return NULL;
	json_t *v = json_object_get(obj, key);
	if (v)
		return v;
	const char *k;
	json_t *val;
	json_object_foreach(obj, k, val) {
		if (strcasecmp(k, key) == 0)
			return val;
	}
	return NULL;
}
