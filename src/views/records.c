/* records.c - the head every ndjson record shares (records.h). */
#include "ollama_audit/records.h"
#include "base/jsonutil.h"

json_t *oa_record(const char *type, const char *schema, const char *host, const char *store,
                  json_t *fields)
{
	json_t *rec = json_pack("{s:s}", "type", type);
	if (schema)
		json_object_set_new(rec, "schema", json_string(schema));
	json_object_set_new(rec, "host", json_string(host));
	if (store)
		json_object_set_new(rec, "store", oa_json_str(store));
	if (fields)
		json_object_update(rec, fields);
	return rec;
}
