/* history_text.c - `history` for a person (a store's loads, then per model
 * its last load) and as csv; which logs were read, on stderr. */
#include "views/history_text.h"
#include "views/csv.h"
#include "ollama_audit/history_report.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Says on stderr which logs a store's loads come from: a log of another
 * store read by mistake shows up here, not as silently wrong times. */
void oa_history_say_sources(FILE *diag, const oa_store *s, const oa_log_sources *l, const char *what)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < l->n; i++)
		oa_buf_printf(&b, "%s%s", i ? ", " : "", oa_text_safe(l->names[i]));
	fprintf(diag, "ollama-audit: %s: %s %s\n", oa_text_safe(s->root), what, b.data);
	oa_buf_free(&b);
}

/* 2026-10-22 09:15:02-07:00: the time in the zone the server logged it in. */
static void local_time(const oa_load *e, char *buf, size_t len)
{
	if (!e->has_time) {
		snprintf(buf, len, "-");
		return;
	}
	time_t t = (time_t)(e->time_ns / 1000000000 + (int64_t)e->tz_min * 60);
	struct tm tm;
	gmtime_r(&t, &tm);
	int off = e->tz_min < 0 ? -e->tz_min : e->tz_min;
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, e->tz_min < 0 ? '-' : '+', off / 60, off % 60);
}

/* A time as the csv gives it: RFC 3339 in UTC, nanoseconds when the log had them. */
static void utc_time(int64_t ns, char *buf, size_t len)
{
	oa_iso8601((time_t)(ns / 1000000000), (long)(ns % 1000000000), buf, len);
}

/* The same for a person: to the second. */
static void utc_second(int64_t ns, char *buf, size_t len)
{
	oa_iso8601((time_t)(ns / 1000000000), 0, buf, len);
}

static char *memory_text(const oa_text_style *st, const oa_load *e)
{
	struct { const char *what; uint64_t v; } f[] = {
		{ "needed", e->mem_required }, { "peak", e->mem_peak },
		{ "gpu free", e->mem_gpu_free }, { "free", e->mem_sys_free },
	};
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		if (!f[i].v)
			continue;
		char sz[32];
		oa_format_size(f[i].v, st->units, sz, sizeof sz);
		oa_buf_printf(&b, "%s%s %s", b.len ? ", " : "", f[i].what, sz);
	}
	if (!b.len)
		oa_buf_adds(&b, "-");
	return oa_buf_take(&b);
}

void oa_history_text(const oa_text_style *st, FILE *out, const oa_history_view *x, bool first)
{
	const oa_store *s = x->s;
	const oa_history *h = &x->h;
	const oa_log_sources *src = &x->src;
	const oa_load **v = x->v;
	size_t n = x->n;
	if (!first)
		fputc('\n', out);
	char from[40] = "", to[40] = "";
	if (h->any_time) {
		utc_second(h->first_ns, from, sizeof from);
		utc_second(h->last_ns, to, sizeof to);
	}
	fprintf(out, "%s: %zu load%s", oa_text_safe(s->root), n, n == 1 ? "" : "s");
	if (src->n)
		oa_history_say_sources(st->diag, s, src, "read");
	if (src->n) {
		fprintf(out, " in %zu log source%s", src->n, src->n == 1 ? "" : "s");
		if (h->any_time)
			fprintf(out, " covering %s to %s", from, to);
	} else {
		fprintf(out, ": no server logs found (see `ollama-audit history --help`; --log FILE names one)");
	}
	fprintf(out, "\n");
	if (!n)
		return;
	/* RESULT last: a failure's reason is the longest cell, cut first on a
	 * terminal and padding nothing after it. USER (--all-users) goes first. */
	static const oa_column load_cols[8] = {
		{ "TIME", 0, 0, false },   { "MODEL", 0, 20, false }, OA_COLUMN_USER,
		{ "ID", 4, 0, false },     { "RUNNER", 3, 0, false }, { "MEMORY", 5, 0, false },
		{ "VERSION", 6, 0, false }, { "RESULT", 0, 30, false },
	};
	oa_table t = { .col = load_cols, .ncol = 8, .gap = "  ", .absent_cols = oa_user_absent(st, 2) };
	for (size_t i = 0; i < n; i++) {
		char when[48], id[13];
		local_time(v[i], when, sizeof when);
		char *result = v[i]->result == OA_LOAD_FAILED && v[i]->reason ?
		               oa_xasprintf("failed: %s", v[i]->reason) :
		               oa_xstrdup(oa_load_result_name(v[i]->result));
		char *row[] = { oa_xstrdup(when), oa_history_load_label(s, v[i]), oa_user_cell(st, s),
		                oa_xstrdup(oa_history_load_id(s, v[i], id)), oa_xstrdup(oa_log_runner_name(v[i]->runner)),
		                memory_text(st, v[i]), oa_xstrdup(v[i]->version ? v[i]->version : "-"), result };
		oa_table_add(&t, row);
	}
	oa_table_print(st, &t, out);
	oa_history_model *sum;
	size_t k = oa_history_models(s, v, n, &sum);
	fprintf(out, "\n");
	static const oa_column models[6] = {
		{ "MODEL", 0, 24, false },       OA_COLUMN_USER,           { "ID", 3, 0, false },
		{ "LAST LOADED", 0, 0, false }, { "LOADS", 1, 0, false }, { "RUNNERS", 2, 0, false },
	};
	t = (oa_table){ .col = models, .ncol = 6, .gap = "  ", .absent_cols = oa_user_absent(st, 1) };
	for (size_t i = 0; i < k; i++) {
		char when[48], runners[48];
		local_time(sum[i].last, when, sizeof when);
		oa_history_runners_text(sum[i].runners, runners, sizeof runners);
		char *loads = sum[i].failed ? oa_xasprintf("%zu (%zu failed)", sum[i].loads, sum[i].failed) :
		                              oa_xasprintf("%zu", sum[i].loads);
		char *row[] = { oa_xstrdup(sum[i].label), oa_user_cell(st, s), oa_xstrdup(sum[i].id), oa_xstrdup(when),
		                loads, oa_xstrdup(runners) };
		oa_table_add(&t, row);
	}
	oa_table_print(st, &t, out);
	oa_history_models_free(sum, k);
}

void oa_history_csv(FILE *out, const oa_history_view *x, bool first)
{
	const oa_store *s = x->s;
	const oa_load **v = x->v;
	size_t n = x->n;
	if (first)
		fputs("store,time,model,id,runner,result,reason,memory_required,memory_peak,gpu_free,"
		      "system_free,server_version,source,line,user\n", out);
	for (size_t i = 0; i < n; i++) {
		const oa_load *e = v[i];
		char when[48] = "", id[13], num[5][24], line[24];
		if (e->has_time)
			utc_time(e->time_ns, when, sizeof when);
		uint64_t mem[5] = { e->mem_required, e->mem_peak, e->mem_gpu_free, e->mem_sys_free, 0 };
		for (size_t k = 0; k < 4; k++)
			if (mem[k])
				snprintf(num[k], sizeof num[k], "%llu", (unsigned long long)mem[k]);
			else
				num[k][0] = '\0';
		snprintf(line, sizeof line, "%lu", e->line);
		char *label = oa_history_load_label(s, e);
		oa_csv_field(out, s->root, false);
		oa_csv_field(out, when, false);
		oa_csv_field(out, label, false);
		oa_csv_field(out, oa_history_load_id(s, e, id), false);
		oa_csv_field(out, oa_log_runner_name(e->runner), false);
		oa_csv_field(out, oa_load_result_name(e->result), false);
		oa_csv_field(out, e->reason, false);
		for (size_t k = 0; k < 4; k++)
			oa_csv_field(out, num[k], false);
		oa_csv_field(out, e->version, false);
		oa_csv_field(out, e->source, false);
		oa_csv_field(out, line, false);
		oa_csv_field(out, oa_report_owner(s), true);
		free(label);
	}
}

void oa_usage_say_span(FILE *diag, const oa_store *s, const oa_log_usage *u)
{
	char from[48] = "?", to[48] = "?";
	if (u->logs_known) {
		utc_second(u->logs_from, from, sizeof from);
		utc_second(u->logs_to, to, sizeof to);
	}
	/* Never loaded means: not in the logs we have. */
	fprintf(diag, "ollama-audit: %s: the logs go back to %s (newest line %s): a model not loaded "
	        "in them is taken as unused\n", oa_text_safe(s->root), from, to);
}

void oa_history_say_warnings(FILE *diag, const oa_history *h)
{
	for (size_t i = 0; i < h->n_warnings; i++)
		fprintf(diag, "ollama-audit: warning: %s\n", oa_text_safe(h->warnings[i]));
	if (h->warnings_dropped)
		fprintf(diag, "ollama-audit: warning: %zu more lines could not be read\n", h->warnings_dropped);
}

json_t *oa_history_view_json(const oa_history_view *x)
{
	return oa_history_store_json(x->s, &x->h, x->src.names, x->src.n, x->v, x->n);
}

void oa_history_ndjson(FILE *out, const oa_history_view *x, const char *host)
{
	json_t *so = oa_history_view_json(x);
	json_t *recs = oa_history_records(x->s, so, host);
	oa_json_dump_lines(recs, out);
	json_decref(recs);
	json_decref(so);
}
