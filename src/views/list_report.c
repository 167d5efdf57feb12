/* list_report.c - the json, ndjson and /api/tags documents of `list`. */
#include "ollama_audit/list_report.h"
#include "ollama_audit/records.h"
#include "ollama_audit/report.h"
#include "base/jsonutil.h"
#include "base/util.h"

#include <stdlib.h>

void oa_list_total_add(oa_list_total *t, const oa_store *s, const bool *selected)
{
	t->stores++;
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *m = &s->models[j];
		if (!selected[j])
			continue;
		t->models++;
		t->size += m->m.size > 0 && !m->remote ? (uint64_t)m->m.size : 0;
	}
	t->disk += oa_store_models_disk_bytes(s, selected);
}

json_t *oa_list_view_model(const oa_store *s, size_t idx, const oa_last_used *lu)
{
	json_t *mo = oa_report_model(s, &s->models[idx]);
	oa_view_last_used(lu, &idx, 1, mo);
	return mo;
}

/* A store's members after "models": "problems" and, when there are logs,
 * "log_sources". */
static void store_rest(const oa_list_store *ls, json_t *so)
{
	json_t *problems = json_array();
	for (size_t i = 0; i < ls->n_problems; i++)
		json_array_append_new(problems, oa_report_finding(ls->problems[i]));
	json_object_set_new(so, "problems", problems);
	if (ls->lu && ls->lu->have_logs) {
		/* which logs LAST USED comes from, so a reader can tell them wrong */
		json_t *src = json_array();
		for (size_t i = 0; i < ls->lu->n_sources; i++)
			json_array_append_new(src, json_string(ls->lu->sources[i]));
		json_object_set_new(so, "log_sources", src);
	}
}

json_t *oa_list_view_store(const oa_list_store *ls)
{
	json_t *so = oa_report_store(ls->s);
	json_t *models = json_array();
	for (size_t i = 0; i < ls->n_models; i++)
		json_array_append_new(models, oa_list_view_model(ls->s, ls->models[i], ls->lu));
	json_object_set_new(so, "models", models);
	store_rest(ls, so);
	return so;
}

/* oa_list_view_store's bytes, each model made, written and freed in turn. */
static void store_write(const oa_list_store *ls, FILE *out)
{
	json_t *so = oa_report_store(ls->s);
	fputc('{', out);
	fputs(oa_json_dump_members(so, out) ? ",\"models\":[" : "\"models\":[", out);
	json_decref(so);
	for (size_t i = 0; i < ls->n_models; i++) {
		json_t *mo = oa_list_view_model(ls->s, ls->models[i], ls->lu);
		if (i)
			fputc(',', out);
		json_dumpf(mo, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(mo);
	}
	fputs("],", out);
	json_t *rest = json_object();
	store_rest(ls, rest);
	oa_json_dump_members(rest, out);
	json_decref(rest);
	fputc('}', out);
}

static json_t *total_json(const oa_list_total *t)
{
	return json_pack("{s:I,s:I,s:I,s:I}", "stores", (json_int_t)t->stores, "models", (json_int_t)t->models,
	                 "size", (json_int_t)t->size, "disk_bytes", (json_int_t)t->disk);
}

json_t *oa_list_view_document(json_t *stores, const oa_list_total *t)
{
	return json_pack("{s:s,s:o,s:o}", "schema", OA_SCHEMA_LIST, "stores", stores, "total", total_json(t));
}

void oa_list_view_document_write(FILE *out, const oa_list_store *v, size_t n, const oa_list_total *t)
{
	json_t *head = json_pack("{s:s}", "schema", OA_SCHEMA_LIST);
	fputc('{', out);
	oa_json_dump_members(head, out);
	json_decref(head);
	fputs(",\"stores\":[", out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		store_write(&v[i], out);
	}
	json_t *tail = json_pack("{s:o}", "total", total_json(t));
	fputs("],", out);
	oa_json_dump_members(tail, out);
	json_decref(tail);
}

/* A record of the list schema with the body's fields (stolen); of store s
 * (with its owner) unless s is NULL. */
static json_t *record(const char *type, const char *schema, const char *host, const oa_store *s, json_t *body)
{
	json_t *rec = s ? oa_store_record(type, schema, host, s, body) : oa_record(type, schema, host, NULL, body);
	json_decref(body);
	return rec;
}

json_t *oa_list_view_record(const oa_list_store *ls, size_t i, const char *host)
{
	if (i < ls->n_models)
		return record("model", OA_SCHEMA_LIST, host, ls->s, oa_list_view_model(ls->s, ls->models[i], ls->lu));
	return record("problem", NULL, host, ls->s, oa_report_finding(ls->problems[i - ls->n_models]));
}

json_t *oa_list_view_records(const oa_list_store *ls, const char *host)
{
	json_t *out = json_array();
	for (size_t i = 0; i < ls->n_models + ls->n_problems; i++)
		json_array_append_new(out, oa_list_view_record(ls, i, host));
	return out;
}

json_t *oa_list_view_total_record(const oa_list_total *t, const char *host)
{
	return record("total", OA_SCHEMA_LIST, host, NULL, total_json(t));
}

static bool newer(const oa_model *x, const oa_model *y)
{
	return x->st.mtime_ns / 1000000000 > y->st.mtime_ns / 1000000000;
}

json_t *oa_list_view_tags(const oa_model **v, size_t n)
{
	/* a stable sort: insertion keeps equal mtimes in walk order */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && newer(v[j], v[j - 1]); j--) {
			const oa_model *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	json_t *models = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(models, oa_report_tags_model(v[i]));
	json_t *root = json_object();
	json_object_set_new(root, "models", models);
	return root;
}
