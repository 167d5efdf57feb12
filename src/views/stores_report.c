/* stores_report.c - the documents of `stores`, from its rows and totals
 * (stores.h). */
#include "ollama_audit/stores_report.h"
#include "ollama_audit/records.h"
#include "ollama_audit/report.h"
#include "base/jsonutil.h"

json_t *oa_stores_view_row(const oa_stores_row *r)
{
	const oa_candidate *k = r->cand;
	json_t *o = json_object();
	json_object_set_new(o, "root", oa_json_str(oa_stores_row_root(r)));
	json_object_set_new(o, "state", json_string(r->state));
	json_object_set_new(o, "user", oa_json_str(k->user));
	json_object_set_new(o, "uid", k->have_uid ? json_integer((json_int_t)k->uid) : json_null());
	json_t *paths = json_array();
	for (size_t i = 0; i < k->n_paths; i++)
		json_array_append_new(paths, oa_json_str(k->paths[i]));
	json_object_set_new(o, "paths", paths);
	json_object_set_new(o, "found_by", oa_report_found_by(k->found, k->n_found));
	json_t *shared = json_array();
	for (size_t i = 0; i < k->n_blobs_shared; i++)
		json_array_append_new(shared, oa_json_str(k->blobs_shared[i]));
	json_object_set_new(o, "shares_blobs_with", shared);
	if (r->opened) {
		json_object_set_new(o, "models", json_integer((json_int_t)oa_store_listed_models(&r->s)));
		json_object_set_new(o, "blob_files", json_integer((json_int_t)r->s.n_blobs));
		json_object_set_new(o, "disk_bytes", json_integer((json_int_t)r->bytes));
		json_object_set_new(o, "apparent_bytes", json_integer((json_int_t)r->apparent));
		json_object_set_new(o, "unreadable_parts", json_integer((json_int_t)r->unreadable));
	}
	if (r->error)
		json_object_set_new(o, "error", oa_json_str(r->error));
	return o;
}

static json_t *user_json(const oa_stores_tally *u)
{
	return json_pack("{s:o,s:I,s:I,s:I,s:I}", "user", oa_json_str(u->user), "stores", (json_int_t)u->stores,
	                 "models", (json_int_t)u->models, "disk_bytes", (json_int_t)u->disk_bytes,
	                 "apparent_bytes", (json_int_t)u->apparent_bytes);
}

static json_t *total_json(const oa_stores_tally *a)
{
	return json_pack("{s:I,s:I,s:I,s:I}", "stores", (json_int_t)a->stores, "models", (json_int_t)a->models,
	                 "disk_bytes", (json_int_t)a->disk_bytes, "apparent_bytes",
	                 (json_int_t)a->apparent_bytes);
}

static json_t *dupes_json(const oa_stores_dupes *d)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:s}", "digests", (json_int_t)d->dupes.n, "saving_bytes",
	                 (json_int_t)d->dupes.saving, "linkable_bytes", (json_int_t)d->dupes.linkable,
	                 "already_shared_bytes", (json_int_t)d->dupes.already_shared, "dedupe_bytes",
	                 (json_int_t)d->dedupe_bytes, "dedupe_method", d->by_hardlink ? "hardlink" : "reflink");
}

json_t *oa_stores_view_document(const char *host, const oa_stores_row *rows, size_t n,
                                const oa_stores_totals *t, const oa_stores_dupes *d)
{
	json_t *sa = json_array(), *ua = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(sa, oa_stores_view_row(&rows[i]));
	for (size_t j = 0; j < t->n_users; j++)
		json_array_append_new(ua, user_json(&t->users[j]));
	return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "schema", OA_SCHEMA_STORES, "host", host, "stores", sa,
	                 "users", ua, "total", total_json(&t->all), "duplicates", dupes_json(d));
}

static void add_record(json_t *out, const char *type, const char *host, json_t *body)
{
	json_array_append_new(out, oa_record(type, OA_SCHEMA_STORES, host, NULL, body));
	json_decref(body);
}

json_t *oa_stores_view_records(const char *host, const oa_stores_row *rows, size_t n,
                               const oa_stores_totals *t, const oa_stores_dupes *d)
{
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		add_record(out, "store", host, oa_stores_view_row(&rows[i]));
	for (size_t j = 0; j < t->n_users; j++)
		add_record(out, "user", host, user_json(&t->users[j]));
	add_record(out, "total", host, total_json(&t->all));
	add_record(out, "duplicates", host, dupes_json(d));
	return out;
}
