/* du_report.c - the json and ndjson documents of `du`. */
#include "ollama_audit/du_report.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/records.h"
#include "ollama_audit/report.h"
#include "base/jsonutil.h"

static json_t *row_json(const oa_store *s, const oa_du_row *r, const oa_last_used *lu)
{
	json_t *names = json_array();
	for (size_t k = 0; k < r->n_models; k++)
		json_array_append_new(names, json_string(s->models[r->models[k]].display));
	json_t *x = json_object();
	json_object_set_new(x, "name", json_string(r->n_models ? s->models[r->models[0]].display : ""));
	json_object_set_new(x, "names", names);
	json_object_set_new(x, "id", json_stringn(r->id, 12));
	json_object_set_new(x, "digest", json_string(r->id));
	json_object_set_new(x, "manifest_ok", json_boolean(r->manifest_ok));
	json_object_set_new(x, "unique_bytes", json_integer((json_int_t)r->unique));
	json_object_set_new(x, "shared_bytes", json_integer((json_int_t)r->shared));
	json_object_set_new(x, "disk_bytes", json_integer((json_int_t)r->allocated));
	json_object_set_new(x, "apparent_bytes", json_integer((json_int_t)r->apparent));
	json_object_set_new(x, "unique_apparent_bytes", json_integer((json_int_t)r->unique_apparent));
	json_object_set_new(x, "blob_files", json_integer(r->blobs));
	json_object_set_new(x, "missing_blobs", json_integer(r->missing));
	oa_view_last_used(lu, r->models, r->n_models, x);
	return x;
}

static json_t *totals_json(const oa_du_store *d)
{
	json_t *junk = json_object();
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++)
		json_object_set_new(junk, oa_junk_cat_key((enum oa_junk_cat)k),
		                    json_pack("{s:I,s:I,s:I}", "count", (json_int_t)d->junk.count[k],
		                              "disk_bytes", (json_int_t)d->junk.allocated[k], "apparent_bytes",
		                              (json_int_t)d->junk.apparent[k]));
	json_t *t = json_object();
	json_object_set_new(t, "referenced_bytes", json_integer((json_int_t)d->du.referenced));
	json_object_set_new(t, "referenced_apparent_bytes",
	                    json_integer((json_int_t)d->du.referenced_apparent));
	json_object_set_new(t, "junk", junk);
	json_object_set_new(t, "reclaimable_bytes", json_integer((json_int_t)d->reclaimable));
	json_object_set_new(t, "reclaimable_entries", json_integer((json_int_t)d->reclaimable_entries));
	json_object_set_new(t, "blobs_bytes", json_integer((json_int_t)d->du.blobs_total));
	json_object_set_new(t, "blobs_apparent_bytes", json_integer((json_int_t)d->du.blobs_total_apparent));
	return t;
}

json_t *oa_du_view_store(const oa_store *s, const oa_du_store *d, const oa_last_used *lu)
{
	json_t *o = oa_report_store(s);
	json_t *rows = json_array();
	for (size_t i = 0; i < d->du.n_rows; i++)
		json_array_append_new(rows, row_json(s, &d->du.rows[i], lu));
	json_object_set_new(o, "models", rows);
	json_t *t = totals_json(d);
	if (s->n_metadata || s->n_stale_metadata) /* 0.40's metadata/ caches, when there are any */
		json_object_set_new(t, "metadata", json_pack("{s:I,s:I,s:I}", "caches", (json_int_t)s->n_metadata,
	                                             "stale", (json_int_t)s->n_stale_metadata, "disk_bytes",
	                                             (json_int_t)s->metadata_bytes));
	json_object_set_new(o, "totals", t);
	if (d->quarantine) /* du --quarantine DIR: what it holds of this store */
		json_object_set_new(o, "quarantine", json_pack("{s:s,s:I,s:I}", "dir", d->quarantine, "entries",
		                                               (json_int_t)d->quarantine_entries, "disk_bytes",
		                                               (json_int_t)d->quarantine_bytes));
	oa_conversion *cv;
	size_t ncv = oa_store_conversions(s, &cv);
	json_t *conv = json_array();
	for (size_t i = 0; i < ncv; i++)
		json_array_append_new(conv, json_pack("{s:s,s:I,s:I,s:I}", "name", cv[i].ggml->display,
		                                      "duplicated_bytes", (json_int_t)cv[i].duplicated,
		                                      "drop_llamacpp_frees_bytes", (json_int_t)cv[i].drop_llamacpp,
		                                      "drop_ggml_frees_bytes", (json_int_t)cv[i].drop_ggml));
	free(cv);
	if (ncv) /* tags the compatibility migration converted */
		json_object_set_new(o, "conversions", conv);
	else
		json_decref(conv);
	return o;
}

json_t *oa_du_view_total(const oa_du_total *t)
{
	json_t *junk = json_object();
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++)
		json_object_set_new(junk, oa_junk_cat_key((enum oa_junk_cat)k),
		                    json_pack("{s:I,s:I}", "count", (json_int_t)t->junk_count[k], "disk_bytes",
		                              (json_int_t)t->junk_bytes[k]));
	return json_pack("{s:I,s:I,s:I,s:I,s:o,s:I,s:I,s:I}", "stores", (json_int_t)t->stores,
	                 "model_rows", (json_int_t)t->models, "referenced_bytes",
	                 (json_int_t)t->referenced, "referenced_apparent_bytes",
	                 (json_int_t)t->referenced_apparent, "junk", junk, "reclaimable_bytes",
	                 (json_int_t)t->reclaimable, "blobs_bytes", (json_int_t)t->blobs,
	                 "blobs_apparent_bytes", (json_int_t)t->blobs_apparent);
}

json_t *oa_du_view_document(json_t *stores, const oa_du_total *t)
{
	return json_pack("{s:s,s:o,s:o}", "schema", OA_SCHEMA_DU, "stores", stores, "total",
	                 oa_du_view_total(t));
}

static json_t *record(const char *type, const char *host, const oa_store *s)
{
	return oa_store_record(type, OA_SCHEMA_DU, host, s, NULL);
}

json_t *oa_du_view_records(const oa_store *s, const oa_du_store *d, const oa_last_used *lu,
                           const char *host)
{
	json_t *out = json_array();
	json_t *o = oa_du_view_store(s, d, lu);
	json_t *rows = json_object_get(o, "models");
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *rec = record("model", host, s);
		json_object_update(rec, json_array_get(rows, i));
		json_array_append_new(out, rec);
	}
	json_object_del(o, "models");
	json_t *rec = record("summary", host, s);
	json_object_update_missing(rec, o);
	json_array_append_new(out, rec);
	json_decref(o);
	return out;
}

json_t *oa_du_view_total_record(const oa_du_total *t, const char *host)
{
	json_t *v = oa_du_view_total(t);
	json_t *rec = oa_record("total", OA_SCHEMA_DU, host, NULL, v);
	json_decref(v);
	return rec;
}
