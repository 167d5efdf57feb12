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
