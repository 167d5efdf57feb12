/* show_report.c - the json and ndjson documents of `show`. */
#include "ollama_audit/show_report.h"
#include "ollama_audit/report.h"
#include "ollama_audit/humanize.h"
#include "base/jsonutil.h"
#include "base/util.h"

#include <stdlib.h>
#include <time.h>

enum oa_verify_state oa_layer_verify_state(const oa_store *s, const oa_model *m, size_t i, oa_verify_cache *vc,
                                           oa_verify_cache_entry *e)
{
	const oa_layer *l = &m->m.layers[i];
	if (!vc || !l->digest_valid)
		return OA_VSTATE_UNVERIFIED;
	/* digest_valid: 64 hex digits, safe in a path. */
	char *path = oa_xasprintf("%s/blobs/sha256-%s", s->root, l->hex);
	oa_file_stamp now;
	bool there = oa_file_stamp_of(path, &now) == 0;
	free(path);
	return there ? oa_verify_cache_judge(vc, l->hex, &now, e) : OA_VSTATE_UNVERIFIED;
}

long oa_weights_failed_verify(const oa_store *s, const oa_model *m, oa_verify_cache *vc, oa_verify_cache_entry *e)
{
	for (size_t i = 0; vc && m->manifest_ok && i < m->m.n_layers; i++)
		if (oa_runhere_weight_layer(m, i) && oa_layer_verify_state(s, m, i, vc, e) == OA_VSTATE_FAILED)
			return (long)i;
	return -1;
}

static json_t *verified_at_json(double t)
{
	char buf[64];
	oa_iso8601((time_t)t, (long)((t - (double)(time_t)t) * 1e9), buf, sizeof buf);
	return json_string(buf);
}

/* {"state", "verified_at", "failed"}: what verify last found about this blob. */
static json_t *layer_verify_json(const oa_store *s, const oa_model *m, size_t i, oa_verify_cache *vc)
{
	oa_verify_cache_entry e;
	enum oa_verify_state st = oa_layer_verify_state(s, m, i, vc, &e);
	json_t *o = json_pack("{s:s}", "state", oa_verify_state_name(st));
	json_object_set_new(o, "verified_at", st != OA_VSTATE_UNVERIFIED ? verified_at_json(e.verified_at) : json_null());
	json_object_set_new(o, "failed", st == OA_VSTATE_FAILED ? json_string(e.failed) : json_null());
	return o;
}

json_t *oa_runhere_view(const oa_machine *mc, const oa_store *s, const oa_model *m, oa_verify_cache *vc)
{
	oa_runhere r;
	oa_runhere_model(mc, m, &r);
	if (!r.engine)
		return json_null();
	/* Weights verify found corrupt stop a load whatever the engine. */
	json_t *bad = json_array();
	for (size_t i = 0; vc && i < m->m.n_layers; i++)
		if (oa_runhere_weight_layer(m, i) && oa_layer_verify_state(s, m, i, vc, NULL) == OA_VSTATE_FAILED)
			json_array_append_new(bad, json_string(m->m.layers[i].digest));
	json_t *o = json_pack("{s:s,s:b,s:s,s:I,s:I}", "engine", r.engine, "can_run",
	                      r.can_run && !json_array_size(bad), "fit", oa_fit_name(r.fit), "weights_bytes",
	                      (json_int_t)r.weights, "reserve_bytes", (json_int_t)r.reserve);
	json_object_set_new(o, "mlx_runtime", *mc->mlx_lib ? oa_json_str(mc->mlx_lib) : json_null());
	json_object_set_new(o, "memory_total", mc->mem_known ? json_integer((json_int_t)mc->mem_total) : json_null());
	json_object_set_new(o, "memory_available",
	                    mc->mem_known ? json_integer((json_int_t)mc->mem_available) : json_null());
	json_object_set_new(o, "failed_verify", bad);
	return o;
}

json_t *oa_show_view(const oa_store *s, const oa_model *m, bool tensors, const oa_machine *mc,
                     oa_verify_cache *vc)
{
	json_t *o = oa_report_model_detail(s, m, tensors);
	json_object_set_new(o, "schema", json_string(OA_SCHEMA_SHOW));
	json_object_set_new(o, "store", oa_report_store(s));
	json_object_set_new(o, "runs_here", oa_runhere_view(mc, s, m, vc));
	json_t *layers = json_object_get(o, "layer_list");
	for (size_t i = 0; m->manifest_ok && i < m->m.n_layers && i < json_array_size(layers); i++)
		if (oa_runhere_weight_layer(m, i))
			json_object_set_new(json_array_get(layers, i), "verify", layer_verify_json(s, m, i, vc));
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
