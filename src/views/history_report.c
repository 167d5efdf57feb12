/* history_report.c - the history document and records (history_report.h). */
#include "ollama_audit/history_report.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/logline.h"
#include "ollama_audit/records.h"
#include "ollama_audit/report.h"
#include "base/jsonutil.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static void utc_time(int64_t ns, char *buf, size_t len)
{
	oa_iso8601((time_t)(ns / 1000000000), (long)(ns % 1000000000), buf, len);
}

char *oa_history_load_label(const oa_store *s, const oa_load *e)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < e->n_models; i++) {
		const char *d = s->models[e->models[i]].display;
		if (i)
			oa_buf_adds(&b, ", ");
		oa_buf_add_escaped(&b, d, strlen(d));
	}
	if (!e->n_models) {
		if (*e->digest)
			oa_buf_printf(&b, "sha256:%.12s (not in the store)", e->digest);
		else if (*e->logged) {
			oa_buf_add_escaped(&b, e->logged, strlen(e->logged));
			oa_buf_adds(&b, " (not in the store)");
		} else {
			oa_buf_adds(&b, "(not logged)");
		}
	}
	return oa_buf_take(&b);
}

const char *oa_history_load_id(const oa_store *s, const oa_load *e, char id[13])
{
	if (!e->n_models)
		return "-";
	snprintf(id, 13, "%.12s", s->models[e->models[0]].m.id);
	return id;
}

/* Count load e for the row labelled `label` (taken), adding the row. */
static void count_load(oa_history_model **sum, size_t *k, char *label, const char *id, const oa_load *e)
{
	size_t j = 0;
	while (j < *k && strcmp((*sum)[j].label, label))
		j++;
	if (j == *k) {
		*sum = oa_xreallocarray(*sum, *k + 1, sizeof **sum);
		memset(&(*sum)[j], 0, sizeof (*sum)[j]);
		(*sum)[j].label = label;
		snprintf((*sum)[j].id, sizeof (*sum)[j].id, "%.12s", id);
		(*sum)[j].last = e; /* newest first */
		(*k)++;
	} else {
		free(label);
	}
	(*sum)[j].loads++;
	(*sum)[j].failed += e->result == OA_LOAD_FAILED;
	(*sum)[j].runners |= 1u << e->runner;
}

size_t oa_history_models(const oa_store *s, const oa_load *const *v, size_t n, oa_history_model **out)
{
	oa_history_model *sum = NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		/* A blob several tags share ran for each of them: one row per tag. */
		for (size_t m = 0; m < v[i]->n_models; m++) {
			const oa_model *mod = &s->models[v[i]->models[m]];
			oa_buf b;
			oa_buf_init(&b);
			oa_buf_add_escaped(&b, mod->display, strlen(mod->display));
			count_load(&sum, &k, oa_buf_take(&b), mod->m.id, v[i]);
		}
		if (!v[i]->n_models)
			count_load(&sum, &k, oa_history_load_label(s, v[i]), "-", v[i]);
	}
	*out = sum;
	return k;
}

void oa_history_models_free(oa_history_model *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].label);
	free(m);
}

void oa_history_runners_text(unsigned mask, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int r = OA_LR_LLAMACPP; r <= OA_LR_MLX; r++)
		if (mask & (1u << r))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", *buf ? "," : "",
			         oa_log_runner_name((enum oa_log_runner)r));
	if (!*buf)
		snprintf(buf, len, "-");
}

static json_t *time_json(const oa_load *e)
{
	if (!e->has_time)
		return json_null();
	char buf[48];
	utc_time(e->time_ns, buf, sizeof buf);
	return json_string(buf);
}

static json_t *memory_json(const oa_load *e)
{
	json_t *mem = json_object();
	struct { const char *k; uint64_t v; } f[] = {
		{ "required", e->mem_required }, { "peak", e->mem_peak }, { "gpu_free", e->mem_gpu_free },
		{ "system_total", e->mem_sys_total }, { "system_free", e->mem_sys_free },
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].v)
			json_object_set_new(mem, f[i].k, json_integer((json_int_t)f[i].v));
	return mem;
}

static json_t *load_json(const oa_store *s, const oa_load *e)
{
	json_t *models = json_array();
	for (size_t i = 0; i < e->n_models; i++) {
		const oa_model *m = &s->models[e->models[i]];
		char id[13];
		snprintf(id, sizeof id, "%.12s", m->m.id);
		json_array_append_new(models, json_pack("{s:o,s:s}", "name", oa_json_str(m->display), "id", id));
	}
	char zone[16];
	int off = e->tz_min < 0 ? -e->tz_min : e->tz_min;
	snprintf(zone, sizeof zone, "%c%02d:%02d", e->tz_min < 0 ? '-' : '+', off / 60, off % 60);
	json_t *o = json_pack("{s:o,s:o,s:o,s:o,s:o,s:b,s:s,s:s,s:o}", "time", time_json(e), "zone",
	                      e->has_time ? json_string(zone) : json_null(), "models", models, "logged_model",
	                      *e->logged ? oa_json_str(e->logged) : json_null(), "digest",
	                      *e->digest ? json_sprintf("sha256:%s", e->digest) : json_null(), "in_store",
	                      e->n_models > 0, "runner", oa_log_runner_name(e->runner), "result",
	                      oa_load_result_name(e->result), "reason", oa_json_str(e->reason));
	json_object_set_new(o, "memory", memory_json(e));
	json_object_set_new(o, "server_version", oa_json_str(e->version));
	json_object_set_new(o, "source", oa_json_str(e->source));
	json_object_set_new(o, "line", json_integer((json_int_t)e->line));
	return o;
}

static json_t *model_json(const oa_history_model *m)
{
	json_t *rs = json_array();
	for (int r = OA_LR_UNKNOWN; r <= OA_LR_MLX; r++)
		if (m->runners & (1u << r))
			json_array_append_new(rs, json_string(oa_log_runner_name((enum oa_log_runner)r)));
	return json_pack("{s:o,s:o,s:o,s:I,s:I,s:o}", "name", oa_json_str(m->label), "id",
	                 strcmp(m->id, "-") ? json_string(m->id) : json_null(), "last_loaded",
	                 time_json(m->last), "loads", (json_int_t)m->loads, "failed", (json_int_t)m->failed,
	                 "runners", rs);
}

static json_t *strings_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, oa_json_str(v[i]));
	return a;
}

json_t *oa_history_store_json(const oa_store *s, const oa_history *h, char *const *sources,
                              size_t n_sources, const oa_load *const *v, size_t n)
{
	json_t *o = oa_report_store(s);
	json_object_set_new(o, "sources", strings_json(sources, n_sources));
	char buf[48];
	utc_time(h->first_ns, buf, sizeof buf);
	json_object_set_new(o, "logs_from", h->any_time ? json_string(buf) : json_null());
	utc_time(h->last_ns, buf, sizeof buf);
	json_object_set_new(o, "logs_to", h->any_time ? json_string(buf) : json_null());
	json_object_set_new(o, "warnings", strings_json(h->warnings, h->n_warnings));
	json_t *loads = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(loads, load_json(s, v[i]));
	json_object_set_new(o, "loads", loads);
	oa_history_model *sum;
	size_t k = oa_history_models(s, v, n, &sum);
	json_t *models = json_array();
	for (size_t i = 0; i < k; i++)
		json_array_append_new(models, model_json(&sum[i]));
	oa_history_models_free(sum, k);
	json_object_set_new(o, "models", models);
	return o;
}

json_t *oa_history_records(const oa_store *s, json_t *store_entry, const char *host)
{
	json_t *out = json_array();
	const char *lists[] = { "loads", "models" }, *types[] = { "load", "model" };
	for (size_t t = 0; t < 2; t++) {
		json_t *v = json_object_get(store_entry, lists[t]);
		for (size_t i = 0; i < json_array_size(v); i++)
			json_array_append_new(out, oa_store_record(types[t], OA_SCHEMA_HISTORY, host, s,
			                                     json_array_get(v, i)));
	}
	json_t *so = json_copy(store_entry);
	json_object_del(so, "loads");
	json_object_del(so, "models");
	json_array_append_new(out, oa_record("sources", OA_SCHEMA_HISTORY, host, NULL, so));
	json_decref(so);
	return out;
}
