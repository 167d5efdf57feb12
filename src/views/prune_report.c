/* prune_report.c - the JSON of a server start-up prediction (prune_report.h). */
#include "ollama_audit/prune_report.h"
#include "ollama_audit/plan_file.h"
#include "ollama_audit/report.h"
#include "ollama_audit/humanize.h"

#include <string.h>

static json_t *deletes_json(const oa_sp_delete *v, size_t n, bool later)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_pack("{s:s,s:s,s:I,s:I}", "path", v[i].path, "reason", v[i].reason, "disk_bytes",
		                      (json_int_t)v[i].bytes, "age_seconds", (json_int_t)v[i].age_seconds);
		if (later) {
			char when[48];
			oa_iso8601((time_t)v[i].after, 0, when, sizeof when);
			json_object_set_new(x, "deleted_by_a_start_after", json_string(when));
		}
		json_array_append_new(a, x);
	}
	return a;
}

const char *oa_predict_server_version(const char *option, const oa_log_usage *u, const char **chosen_by)
{
	*chosen_by = option ? "option" : "layout";
	if (option)
		return option;
	const char *v = u ? u->server_version : NULL;
	if (!v || strcmp(v, "0.0.0") == 0 || oa_server_era_parse(v) < 0)
		return NULL;
	*chosen_by = "logs";
	return v;
}

json_t *oa_report_server_prune(const oa_store *s, const oa_server_prune *p)
{
	json_t *o = oa_report_store(s);
	json_t *renames = json_array(), *dirs = json_array();
	for (size_t i = 0; i < p->n_renames; i++)
		json_array_append_new(renames, json_pack("{s:s,s:s}", "from", p->renames[i].from, "to",
		                                         p->renames[i].to));
	for (size_t i = 0; i < p->n_dirs; i++)
		json_array_append_new(dirs, json_string(p->dirs[i]));
	json_object_set_new(o, "server_version", json_string(p->version ? p->version : p->server));
	json_object_set_new(o, "server_version_assumed", json_boolean(p->assumed));
	json_object_set_new(o, "server_version_from", json_string(p->chosen_by));
	json_object_set_new(o, "generation", json_string(p->generation));
	json_object_set_new(o, "reads_manifests_v2", json_boolean(p->era != OA_SERVER_LEGACY));
	json_t *retired = json_array(), *meta = json_array();
	for (size_t i = 0; i < p->n_retired; i++)
		json_array_append_new(retired, json_pack("{s:s,s:s,s:s,s:s+}", "name", p->retired[i].name, "tag",
		                                         p->retired[i].tag, "anchor_removed", p->retired[i].anchor,
		                                         "child_dropped", "sha256:", p->retired[i].child));
	for (size_t i = 0; i < p->n_metadata; i++)
		json_array_append_new(meta, json_string(p->metadata[i]));
	json_object_set_new(o, "retired", retired);
	json_object_set_new(o, "metadata_removed", meta);
	json_t *models = json_array();
	for (size_t i = 0; i < p->n_destroyed; i++) {
		const oa_sp_model *d = &p->destroyed[i];
		json_t *x = json_pack("{s:s,s:I,s:I,s:b}", "name", d->name, "blobs", (json_int_t)d->n_blobs,
		                      "disk_bytes", (json_int_t)d->bytes, "weights_deleted", d->weights);
		if (d->runner)
			json_object_set_new(x, "runner", json_string(d->runner));
		json_array_append_new(models, x);
	}
	json_object_set_new(o, "models_destroyed", models);
	json_object_set_new(o, "nothing", p->nothing ? json_string(p->nothing) : json_null());
	json_object_set_new(o, "renames", renames);
	json_object_set_new(o, "deletes", deletes_json(p->deletes, p->n_deletes, false));
	json_object_set_new(o, "deleted_later", deletes_json(p->later, p->n_later, true));
	json_object_set_new(o, "empty_dirs_removed", dirs);
	json_object_set_new(o, "freed_bytes", json_integer((json_int_t)p->bytes_freed));
	return o;
}

static json_t *apply_result_json(const oa_apply_result *r)
{
	/* freed_bytes: freed on disk; a move into a quarantine is moved_bytes
	 * (its filesystem gets nothing back until `restore DIR --empty`) */
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:b}", "done", (json_int_t)r->done, "skipped",
	                      (json_int_t)r->skipped, "failed", (json_int_t)r->failed, "freed_bytes",
	                      (json_int_t)r->freed, "moved_bytes", (json_int_t)r->moved, "interrupted", r->interrupted);
	json_object_set_new(o, "quarantine",
	                    r->operation[0] ? json_pack("{s:s,s:I,s:I}", "operation", r->operation, "held_entries",
	                                                (json_int_t)r->quarantine_entries, "held_bytes",
	                                                (json_int_t)r->quarantine_bytes)
	                                    : json_null());
	return o;
}

/* An entry's bytes in a report: planned_bytes what removing it would free
 * (0 for a kept one), freed_bytes what the run freed of it (0 unless
 * --apply removed it). */
static void entries_bytes(json_t *doc, const oa_apply_result *r)
{
	json_t *v = json_object_get(doc, "entries"), *k = json_object_get(doc, "kept");
	for (size_t i = 0; i < json_array_size(v); i++)
		json_object_set_new(json_array_get(v, i), "freed_bytes",
		                    json_integer(r && r->freed_each ? (json_int_t)r->freed_each[i] : 0));
	for (size_t i = 0; i < json_array_size(k); i++) {
		json_object_set_new(json_array_get(k, i), "planned_bytes", json_integer(0));
		json_object_set_new(json_array_get(k, i), "freed_bytes", json_integer(0));
	}
}

json_t *oa_plan_report(const oa_plan *p, bool dry_run, const oa_apply_result *r, const char *not_applied)
{
	json_t *doc = oa_plan_to_json(p);
	entries_bytes(doc, r);
	/* What the plan would free is planned; freed is only what went. */
	json_object_set_new(doc, "planned_bytes", json_integer((json_int_t)p->freed));
	json_object_set_new(doc, "freed_bytes", json_integer(r ? (json_int_t)r->freed : 0));
	json_object_set_new(doc, "dry_run", json_boolean(dry_run));
	/* the other stores whose references were kept too (shared.h) */
	json_t *shared = json_array();
	for (size_t i = 0; i < p->n_shared; i++)
		json_array_append_new(shared, json_pack("{s:s,s:s}", "store", p->shared_store[i], "how",
		                                        p->shared_how[i]));
	json_object_set_new(doc, "shared_with", shared);
	if (r)
		json_object_set_new(doc, "result", apply_result_json(r));
	else if (not_applied)
		json_object_set_new(doc, "not_applied", json_string(not_applied));
	return doc;
}

json_t *oa_plan_records(json_t *report, const char *host)
{
	json_t *out = json_array();
	const char *lists[] = { "entries", "kept" }, *states[] = { "planned", "kept" };
	for (size_t k = 0; k < 2; k++) {
		json_t *v = json_object_get(report, lists[k]);
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *rec = json_pack("{s:s,s:s,s:O,s:O,s:s}", "type", "entry", "host", host, "command",
			                        json_object_get(report, "command"), "store",
			                        json_object_get(report, "store"), "state", states[k]);
			json_object_update_missing(rec, json_array_get(v, i));
			json_array_append_new(out, rec);
		}
	}
	json_t *rec = json_pack("{s:s,s:s}", "type", "summary", "host", host);
	json_object_update(rec, report);
	json_object_del(rec, "entries");
	json_object_del(rec, "kept");
	json_array_append_new(out, rec);
	return out;
}
