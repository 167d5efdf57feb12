/* carry_report.c - the documents of export, import and repair (carry_report.h). */
#include "ollama_audit/carry_report.h"

static const char *dest_kind(enum oa_bundle_dest d)
{
	return d == OA_DEST_DIR ? "directory" : d == OA_DEST_STREAM ? "stream" : "file";
}

json_t *oa_export_report(const oa_store *s, const oa_carry *c, const oa_export_result *r, const oa_export_opts *o,
                         const char *host)
{
	json_t *models = json_array();
	for (size_t i = 0; i < c->n_models; i++) {
		const oa_carry_model *cm = &c->models[i];
		json_t *tags = json_array();
		for (size_t t = 0; t < c->n_tags; t++)
			if (c->tags[t].model == i)
				json_array_append_new(tags, json_string(c->tags[t].path));
		json_array_append_new(models, json_pack("{s:s, s:s%, s:o, s:I, s:I}", "name", cm->m->display, "id",
		                                        cm->m->m.id, (size_t)12, "tags", tags, "blobs",
		                                        (json_int_t)cm->n_blobs, "blob_bytes", (json_int_t)cm->bytes));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I}", "schema", OA_SCHEMA_EXPORT, "host",
	                 host, "store", s->root, "bundle", o->dest == OA_DEST_STREAM ? "-" : o->path, "kind",
	                 dest_kind(o->dest), "models", models, "blobs", (json_int_t)r->blobs, "tags",
	                 (json_int_t)r->tags, "bytes", (json_int_t)r->bytes, "hashed", (json_int_t)r->hashed,
	                 "trusted", (json_int_t)r->trusted);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *import_models(const oa_import_result *r)
{
	json_t *v = json_array();
	for (size_t i = 0; i < r->n_models; i++) {
		const oa_import_model *m = &r->models[i];
		json_array_append_new(v, json_pack("{s:s, s:s, s:o, s:I}", "name", m->name, "state",
		                                   oa_import_state_name(m->state), "why", str_or_null(m->why), "bytes_new",
		                                   (json_int_t)m->bytes_new));
	}
	return v;
}

static json_t *import_blobs(const oa_import_result *r)
{
	json_t *v = json_array();
	for (size_t i = 0; i < r->n_blobs; i++) {
		const oa_import_blob *b = &r->blobs[i];
		json_array_append_new(v, json_pack("{s:s+, s:I, s:s, s:o, s:o, s:o}", "digest", "sha256:", b->hex, "size",
		                                   (json_int_t)b->size, "state", oa_import_state_name(b->state), "model",
		                                   str_or_null(b->model), "how", str_or_null(b->how), "size_here",
		                                   b->state == OA_IMP_CONFLICT ? json_integer(b->size_here) : json_null()));
	}
	return v;
}

static json_t *import_tags(const oa_import_result *r)
{
	json_t *v = json_array();
	for (size_t i = 0; i < r->n_tags; i++) {
		const oa_import_tag *t = &r->tags[i];
		json_array_append_new(v, json_pack("{s:s, s:s, s:s, s:s}", "path", t->path, "model", t->model, "sha256",
		                                   t->sha256, "state", oa_import_state_name(t->state)));
	}
	return v;
}

json_t *oa_import_report(const oa_import_result *r, const char *host)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:s, s:b, s:o, s:b, s:b, s:o, s:b, s:I, s:I}", "schema", OA_SCHEMA_IMPORT,
	                      "host", host, "store", str_or_null(r->store), "source", r->source, "applied", r->applied,
	                      "refused", str_or_null(r->refused), "corrupt", r->refused && r->corrupt, "indexed",
	                      r->indexed, "tool", str_or_null(r->tool), "hashed", r->hashed, "bytes_new",
	                      (json_int_t)r->bytes_new, "bytes_present", (json_int_t)r->bytes_present);
	json_object_set_new(o, "free_bytes", r->free_known ? json_integer((json_int_t)r->free_bytes) : json_null());
	json_object_set_new(o, "models", import_models(r));
	json_object_set_new(o, "blobs", import_blobs(r));
	json_object_set_new(o, "tags", import_tags(r));
	return o;
}

/* One record per item of each array, then the summary: the document without them. */
static json_t *records(json_t *report, const char *const *arrays, const char *const *types, size_t n)
{
	json_t *out = json_array();
	for (size_t a = 0; a < n; a++) {
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(report, arrays[a]), i, x) {
			json_t *rec = json_pack("{s:s, s:O, s:O, s:O}", "type", types[a], "schema",
			                        json_object_get(report, "schema"), "host", json_object_get(report, "host"),
			                        "store", json_object_get(report, "store"));
			json_object_update_missing(rec, x);
			json_array_append_new(out, rec);
		}
	}
	json_t *sum = json_pack("{s:s}", "type", "summary");
	json_object_update_missing(sum, report);
	for (size_t a = 0; a < n; a++)
		json_object_del(sum, arrays[a]);
	json_array_append_new(out, sum);
	return out;
}

json_t *oa_import_records(json_t *report)
{
	static const char *const arrays[] = { "models", "blobs", "tags" };
	static const char *const types[] = { "model", "blob", "tag" };
	return records(report, arrays, types, 3);
}

static json_t *repair_blob(const oa_repair_blob *x)
{
	json_t *models = json_array();
	for (size_t k = 0; k < x->n_models; k++)
		json_array_append_new(models, json_string(x->models[k]));
	json_t *o = json_pack("{s:s+, s:I, s:o, s:s, s:s, s:o, s:s}", "digest", "sha256:", x->hex, "size",
	                      (json_int_t)x->size, "size_here", x->size_here >= 0 ? json_integer(x->size_here) : json_null(),
	                      "damage", oa_damage_name(x->damage), "known_by", x->known_by, "models", models, "state",
	                      oa_repair_state_name(x->state));
	json_object_set_new(o, "source", str_or_null(x->source));
	json_object_set_new(o, "source_kind", str_or_null(x->source_kind));
	json_object_set_new(o, "how", str_or_null(x->how));
	json_object_set_new(o, "note", str_or_null(x->note));
	return o;
}

json_t *oa_repair_report(const oa_repair_result *r, const char *host)
{
	json_t *blobs = json_array(), *advice = json_array();
	for (size_t i = 0; i < r->n_blobs; i++)
		json_array_append_new(blobs, repair_blob(&r->blobs[i]));
	for (size_t i = 0; i < r->n_advice; i++)
		json_array_append_new(advice, json_pack("{s:s, s:b, s:o, s:s}", "model", r->advice[i].name, "registry",
		                                        r->advice[i].registry, "command",
		                                        str_or_null(r->advice[i].command), "text", r->advice[i].text));
	json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:b, s:I, s:o, s:o}", "schema", OA_SCHEMA_REPAIR, "host", host,
	                      "store", r->store, "applied", r->applied, "verified", r->verified, "searched",
	                      (json_int_t)r->searched, "source_error", str_or_null(r->source_error), "operation",
	                      r->operation[0] ? json_string(r->operation) : json_null());
	json_object_set_new(o, "blobs", blobs);
	json_object_set_new(o, "advice", advice);
	return o;
}

json_t *oa_repair_records(json_t *report)
{
	static const char *const arrays[] = { "blobs", "advice" };
	static const char *const types[] = { "blob", "advice" };
	return records(report, arrays, types, 2);
}
