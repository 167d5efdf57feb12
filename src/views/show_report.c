/* show_report.c - the json and ndjson documents of `show`. */
#include "ollama_audit/show_report.h"
#include "ollama_audit/report.h"
#include "base/jsonutil.h"

json_t *oa_runhere_view(const oa_machine *mc, const oa_model *m)
{
	oa_runhere r;
	oa_runhere_model(mc, m, &r);
	if (!r.engine)
		return json_null();
	json_t *o = json_pack("{s:s,s:b,s:s,s:I,s:I}", "engine", r.engine, "can_run", r.can_run, "fit",
	                      oa_fit_name(r.fit), "weights_bytes", (json_int_t)r.weights, "reserve_bytes",
	                      (json_int_t)r.reserve);
	json_object_set_new(o, "mlx_runtime", *mc->mlx_lib ? oa_json_str(mc->mlx_lib) : json_null());
	json_object_set_new(o, "memory_total", mc->mem_known ? json_integer((json_int_t)mc->mem_total) : json_null());
	json_object_set_new(o, "memory_available",
	                    mc->mem_known ? json_integer((json_int_t)mc->mem_available) : json_null());
	return o;
}

json_t *oa_show_view(const oa_store *s, const oa_model *m, bool tensors, const oa_machine *mc)
{
	json_t *o = oa_report_model_detail(s, m, tensors);
	json_object_set_new(o, "schema", json_string(OA_SCHEMA_SHOW));
	json_object_set_new(o, "store", oa_report_store(s));
	json_object_set_new(o, "runs_here", oa_runhere_view(mc, m));
	return o;
}

json_t *oa_show_view_records(const oa_store *s, json_t *doc, const char *host)
{
	json_t *out = json_array();
	json_t *rec = json_pack("{s:s,s:s,s:o}", "type", "model", "host", host, "store", oa_json_str(s->root));
	json_object_update(rec, doc);
	const char *parts[] = { "config_layer", "layer_list", "findings" };
	for (size_t k = 0; k < 3; k++)
		json_object_del(rec, parts[k]);
	json_object_set_new(rec, "store", oa_json_str(s->root)); /* the root, as in every record */
	json_array_append_new(out, rec);
	json_t *name = json_object_get(doc, "name");
	json_t *items = json_array();
	json_t *cfg = json_object_get(doc, "config_layer");
	if (cfg)
		json_array_append(items, cfg);
	json_array_extend(items, json_object_get(doc, "layer_list"));
	size_t n_layers = json_array_size(items);
	json_array_extend(items, json_object_get(doc, "findings"));
	for (size_t i = 0; i < json_array_size(items); i++) {
		rec = json_pack("{s:s,s:s,s:o,s:O}", "type", i < n_layers ? "layer" : "finding", "host", host,
		                "store", oa_json_str(s->root), "model", name);
		json_object_update(rec, json_array_get(items, i));
		json_array_append_new(out, rec);
	}
	json_decref(items);
	return out;
}
