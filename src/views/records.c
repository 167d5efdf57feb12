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

json_t *oa_error_json(const char *code, const char *message, const char *path)
{
	return json_pack("{s:s,s:o,s:o}", "code", code, "message", oa_json_str(message), "path",
	                 oa_json_str(path));
}

json_t *oa_error_record(const char *host, json_t *error)
{
	return oa_record("error", NULL, host, NULL, error);
}

json_t *oa_view_with_status(json_t *doc, const char *schema, json_t *errors)
{
	if (!doc) {
		doc = json_object();
		json_object_set_new(doc, "schema", schema ? json_string(schema) : json_null());
	}
	size_t n = errors ? json_array_size(errors) : 0;
	json_object_set_new(doc, "status", json_string(n ? "error" : "ok"));
	json_object_set_new(doc, "errors", errors ? json_incref(errors) : json_array());
	return doc;
}
