/* restore_report.c - the document of a quarantine's operations (restore_report.h). */
#include "ollama_audit/restore_report.h"

static json_t *op_json(const oa_quarantine_op *op)
{
	json_t *models = json_array(), *held = json_array();
	for (size_t m = 0; m < op->n_models; m++)
		json_array_append_new(models, json_string(op->models[m]));
	for (size_t m = 0; m < op->n_models_held; m++)
		json_array_append_new(held, json_string(op->models_held[m]));
	return json_pack("{s:s,s:s,s:I,s:s,s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s}", "id", op->id, "time",
	                 op->time, "unix_time", (json_int_t)op->unix_time, "command", op->command, "child",
	                 op->child[0] ? json_string(op->child) : json_null(), "models", models, "models_held", held,
	                 "planned_entries", (json_int_t)op->planned_entries, "planned_bytes",
	                 (json_int_t)op->planned_bytes, "entries", (json_int_t)op->entries, "disk_bytes",
	                 (json_int_t)op->disk_bytes, "held_entries", (json_int_t)op->held, "held_bytes",
	                 (json_int_t)op->held_bytes, "restored_entries", (json_int_t)op->restored,
	                 "deleted_entries", (json_int_t)op->deleted, "state", op->state);
}

json_t *oa_quarantine_ops_report(const char *dir, const oa_quarantine_ops *ops)
{
	json_t *v = json_array();
	for (size_t k = 0; k < ops->n; k++)
		json_array_append_new(v, op_json(&ops->v[k]));
	return json_pack("{s:s,s:s,s:s,s:s,s:o,s:I,s:I}", "schema", OA_RESTORE_LIST_SCHEMA, "quarantine", dir,
	                 "store", ops->store ? ops->store : "", "index_schema", ops->schema ? ops->schema : "",
	                 "operations", v, "held_entries", (json_int_t)ops->held_entries, "held_bytes",
	                 (json_int_t)ops->held_bytes);
}

json_t *oa_quarantine_ops_records(json_t *report, const char *host)
{
	json_t *out = json_array(), *op;
	size_t i;
	json_array_foreach(json_object_get(report, "operations"), i, op) {
		json_t *rec = json_pack("{s:s,s:O,s:s,s:O,s:O}", "type", "operation", "schema",
		                        json_object_get(report, "schema"), "host", host, "quarantine",
		                        json_object_get(report, "quarantine"), "store", json_object_get(report, "store"));
		json_object_update_missing(rec, op);
		json_array_append_new(out, rec);
	}
	json_t *rec = json_pack("{s:s,s:s}", "type", "summary", "host", host);
	json_object_update_missing(rec, report);
	json_object_del(rec, "operations");
	json_array_append_new(out, rec);
	return out;
}
