/* dedupe_report.c - du --duplicates and dedupe documents (dedupe_report.h). */
#include "ollama_audit/dedupe_report.h"
#include "ollama_audit/records.h"
#include "ollama_audit/report.h"
#include "base/jsonutil.h"
#include "base/util.h"

#include <string.h>

oa_dupes_user *oa_dupes_users(const oa_dupes *d, const char *const *users, size_t *n)
{
	oa_dupes_user *v = NULL;
	size_t nu = 0;
	for (size_t i = 0; i < d->n; i++)
		for (size_t j = 0; j < d->v[i].n_copies; j++) {
			const oa_dupe_copy *cp = &d->v[i].copies[j];
			const char *u = users[cp->store];
			size_t k = 0;
			while (k < nu && strcmp(v[k].user, u) != 0)
				k++;
			if (k == nu) {
				v = oa_xreallocarray(v, nu + 1, sizeof *v);
				v[nu++] = (oa_dupes_user){ .user = u };
			}
			v[k].copies++;
			if (cp->same_inode_as < 0)
				v[k].bytes += cp->allocated;
		}
	*n = nu;
	return v;
}

static json_t *copy_json(oa_store *const *sv, const char *const *users, const oa_dupe_copy *cp)
{
	const oa_store *s = sv[cp->store];
	json_t *models = json_array();
	for (size_t m = 0; m < cp->n_models; m++)
		json_array_append_new(models, oa_json_str(cp->models[m]));
	json_t *o = json_pack("{s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:b,s:o}", "store", oa_json_str(s->root), "user",
	                      oa_json_str(users[cp->store]), "path", oa_json_str(cp->blob->name), "uid",
	                      (json_int_t)cp->uid, "dev", (json_int_t)cp->dev, "inode", (json_int_t)cp->ino,
	                      "disk_bytes", (json_int_t)cp->allocated, "symlink", cp->symlink, "models", models);
	if (cp->same_inode_as >= 0)
		json_object_set_new(o, "same_inode_as", json_integer(cp->same_inode_as));
	return o;
}

static json_t *dupe_json(oa_store *const *sv, const char *const *users, const oa_dupe *dp)
{
	json_t *copies = json_array();
	for (size_t j = 0; j < dp->n_copies; j++)
		json_array_append_new(copies, copy_json(sv, users, &dp->copies[j]));
	char digest[72];
	snprintf(digest, sizeof digest, "sha256:%s", dp->hex);
	return json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "digest", digest, "apparent_bytes",
	                 (json_int_t)dp->size, "inodes", (json_int_t)dp->n_inodes, "saving_bytes",
	                 (json_int_t)dp->saving, "linkable_bytes", (json_int_t)dp->linkable,
	                 "already_shared_bytes", (json_int_t)dp->already_shared, "copies", copies);
}

json_t *oa_dupes_report(oa_store *const *stores, const char *const *users, const oa_dupes *d,
                        size_t stores_ok, const char *host)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < d->n; i++)
		json_array_append_new(arr, dupe_json(stores, users, &d->v[i]));
	size_t nu;
	oa_dupes_user *u = oa_dupes_users(d, users, &nu);
	json_t *ua = json_array();
	for (size_t k = 0; k < nu; k++)
		json_array_append_new(ua, json_pack("{s:s,s:I,s:I}", "user", u[k].user, "copies",
		                                    (json_int_t)u[k].copies, "disk_bytes", (json_int_t)u[k].bytes));
	free(u);
	json_t *tot = json_pack("{s:I,s:I,s:I,s:I,s:I}", "stores", (json_int_t)stores_ok, "digests",
	                        (json_int_t)d->n, "saving_bytes", (json_int_t)d->saving, "linkable_bytes",
	                        (json_int_t)d->linkable, "already_shared_bytes", (json_int_t)d->already_shared);
	return json_pack("{s:s,s:s,s:o,s:o,s:o}", "schema", OA_SCHEMA_DUPLICATES, "host", host, "duplicates",
	                 arr, "users", ua, "total", tot);
}

static json_t *action_json(oa_store *const *sv, const char *const *users, const oa_dedupe_action *a)
{
	char digest[72];
	snprintf(digest, sizeof digest, "sha256:%s", a->hex);
	/* Roots, user names and notes come from disk: oa_json_str escapes what
	 * is not UTF-8 instead of letting json_pack drop the whole record. */
	json_t *o = json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:I}", "digest", digest, "how",
	                      oa_dedupe_how_name(a->how), "status", oa_dedupe_status_name(a->status), "keep",
	                      oa_json_str(sv[a->src_store]->root), "keep_user",
	                      oa_json_str(users[a->src_store]), "replace", oa_json_str(sv[a->dst_store]->root),
	                      "replace_user", oa_json_str(users[a->dst_store]), "disk_bytes",
	                      (json_int_t)a->bytes);
	if (a->note[0])
		json_object_set_new(o, "note", oa_json_str(a->note));
	return o;
}

static json_t *outcome_json(const oa_dedupe_outcome *o)
{
	json_t *sum = json_pack("{s:s,s:b,s:I,s:I,s:I,s:I}", "mode", o->hardlink ? "hardlink" : "reflink",
	                        "applied", o->applied, "planned", (json_int_t)o->planned, "planned_bytes",
	                        (json_int_t)o->planned_bytes, "done", (json_int_t)o->done, "freed_bytes",
	                        (json_int_t)o->freed);
	json_t *byst = json_object();
	for (int k = 0; k < OA_DD_STATUS_COUNT; k++)
		if (o->counts[k])
			json_object_set_new(byst, oa_dedupe_status_name((oa_dedupe_status)k),
			                    json_integer((json_int_t)o->counts[k]));
	json_object_set_new(sum, "by_status", byst);
	if (o->alternative) {
		json_object_set_new(sum, "hardlink_planned", json_integer((json_int_t)o->hardlink_planned));
		json_object_set_new(sum, "hardlink_planned_bytes",
		                    json_integer((json_int_t)o->hardlink_planned_bytes));
	}
	return sum;
}

json_t *oa_dedupe_report(oa_store *const *stores, const char *const *users, const oa_dedupe_plan *p,
                         const oa_dedupe_outcome *o, const char *host)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < p->n; i++)
		json_array_append_new(arr, action_json(stores, users, &p->v[i]));
	return json_pack("{s:s,s:s,s:o,s:o}", "schema", OA_SCHEMA_DEDUPE, "host", host, "actions", arr,
	                 "summary", outcome_json(o));
}

/* One record per element of report[list] (an array) or for report[list]
 * itself (an object), each {"type":type, "schema", "host", ...}. */
static void add_records(json_t *out, json_t *report, const char *list, const char *type)
{
	const char *schema = json_string_value(json_object_get(report, "schema"));
	const char *host = json_string_value(json_object_get(report, "host"));
	json_t *v = json_object_get(report, list);
	if (json_is_object(v)) {
		json_array_append_new(out, oa_record(type, schema, host, NULL, v));
		return;
	}
	for (size_t i = 0; i < json_array_size(v); i++)
		json_array_append_new(out, oa_record(type, schema, host, NULL, json_array_get(v, i)));
}

json_t *oa_dupes_records(json_t *report)
{
	json_t *out = json_array();
	add_records(out, report, "duplicates", "duplicate");
	add_records(out, report, "users", "user");
	add_records(out, report, "total", "summary");
	return out;
}

json_t *oa_dedupe_records(json_t *report)
{
	json_t *out = json_array();
	add_records(out, report, "actions", "action");
	add_records(out, report, "summary", "summary");
	return out;
}
