/* list_text.c - `list`'s table, -q names, csv and /api/tags. */
#include "views/list_text.h"
#include "views/csv.h"
#include "audit/select.h"
#include "ollama_audit/model.h"
#include "ollama_audit/report.h"
#include "base/jsonutil.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which models of a store are listed, per model (calloc'd). */
static bool *selection(const oa_list_store *ls)
{
	bool *sel = oa_xcalloc(ls->s->n_models + 1, sizeof *sel);
	for (size_t i = 0; i < ls->n_models; i++)
		sel[ls->models[i]] = true;
	return sel;
}

void oa_list_totals(const oa_list_store *v, size_t n, oa_list_total *t)
{
	*t = (oa_list_total){ 0, 0, 0, 0 };
	for (size_t i = 0; i < n; i++) {
		bool *sel = selection(&v[i]);
		oa_list_total_add(t, v[i].s, sel);
		free(sel);
	}
}

static bool have_logs(const oa_list_store *ls)
{
	return ls->lu && ls->lu->have_logs;
}

/* Manifest sizes are signed: the server sums what each manifest declares,
 * and HumanBytes prints a negative total as the plain integer ("-1 B"). */
static void size_cell(const oa_text_style *st, int64_t size, char *buf, size_t len)
{
	if (size >= 0)
		oa_format_size((uint64_t)size, st->units, buf, len);
	else
		snprintf(buf, len, st->units == OA_UNITS_BYTES ? "%lld" : "%lld B", (long long)size);
}

char *oa_last_used_text(const oa_last_used *lu, const size_t *models, size_t n, int64_t now_ns)
{
	int64_t last = 0;
	if (!lu || !lu->have_logs)
		return oa_xstrdup("-");
	if (!oa_last_used_newest(lu, models, n, &last))
		return oa_xstrdup("never");
	char age[64];
	oa_human_age(oa_age_ns(last, now_ns), age, sizeof age);
	return oa_xstrdup(age);
}

/* LAST USED, when there are logs: the column after QUANT. */
#define LAST_USED_COL 10

/* The SHADOW OF column: the last one when a compatibility shadow is
 * listed, else 0. */
static size_t shadow_col(const oa_table *tb)
{
	return strcmp(tb->col[tb->ncol - 1].head, "SHADOW OF") == 0 ? tb->ncol - 1 : 0;
}

static char *escaped_or_dash(const char *s)
{
	return oa_escape(s ? s : "-", strlen(s ? s : "-"));
}

static void model_row(const oa_text_style *st, const oa_table *tb, const oa_list_store *ls, size_t j, int64_t now,
                      char **out)
{
	const oa_model *m = &ls->s->models[j];
	char size[32], mod[64];
	/* ollama list prints "-" for any model /api/tags gives a remote_model,
	 * remote or not */
	if (m->remote || (m->config_state == OA_CONFIG_OK && *m->cfg.remote_model))
		snprintf(size, sizeof size, "-");
	else
		size_cell(st, m->m.size, size, sizeof size);
	oa_human_age(oa_age_ns(m->st.mtime_ns, now), mod, sizeof mod);
	size_t shadow = shadow_col(tb);
	char *cell[12] = {
		oa_escape(m->display, strlen(m->display)),
		oa_user_cell(st, ls->s),
		oa_xasprintf("%.12s", m->m.id),
		oa_xstrdup(size),
		oa_xstrdup(mod),
		oa_xstrdup(m->manifest_ok ? oa_format_name(m->format) : "invalid"),
		/* "*": the child a load uses, when the tag lists several */
		m->manifest_ok ? oa_xasprintf("%s%s", oa_model_list_runner(m), oa_model_row_in_use(m) ? "*" : "")
		               : oa_xstrdup("-"),
		escaped_or_dash(m->arch),
		escaped_or_dash(m->params),
		escaped_or_dash(m->quant),
		tb->ncol > LAST_USED_COL && shadow != LAST_USED_COL ? oa_last_used_text(ls->lu, &j, 1, now) : NULL,
	};
	if (shadow) /* the tag whose converted child a llamacpp:<hex> shadow keeps */
		cell[shadow] = oa_xstrdup(!m->shadow ? "-" : m->shadow_of ? m->shadow_of : "(gone)");
	memcpy(out, cell, tb->ncol * sizeof *out);
}

/* The table's rows, made as the table asks for them, in order: a section
 * heading per store when there are several, then its models. */
struct list_rows {
	const oa_text_style *st;
	const oa_table *tb;
	const oa_list_store *v;
	size_t n;
	int64_t now;
	size_t store, model; /* the next row's */
	bool headed;         /* the store's heading is out */
};

static void list_row(void *ctx, size_t r, char **cells, char **line)
{
	struct list_rows *lr = ctx;
	if (r == 0)
		lr->store = lr->model = 0, lr->headed = false;
	while (lr->store < lr->n) {
		const oa_list_store *ls = &lr->v[lr->store];
		if (lr->n > 1 && !lr->headed) {
			lr->headed = true;
			*line = oa_xasprintf("# %s", ls->s->root);
			return;
		}
		if (lr->model < ls->n_models) {
			model_row(lr->st, lr->tb, ls, ls->models[lr->model++], lr->now, cells);
			return;
		}
		lr->store++;
		lr->model = 0;
		lr->headed = false;
	}
}

void oa_list_text(const oa_text_style *st, FILE *out, const oa_list_store *v, size_t n)
{
	/* SIZE and PARAMS read better right-aligned, but ollama list aligns
	 * every column left: so do we. On a narrow terminal the columns beyond
	 * OA_PRIORITY_CORE (all but what `ollama list` shows) go first when
	 * that keeps names whole, USER (--all-users) before any; else NAME
	 * keeps 24 columns while SHADOW OF, RUNNER, ARCH, PARAMS, QUANT, FORMAT
	 * and ID give way, in that order. */
	static const oa_column all[12] = {
		{ "NAME", 0, 24, false },   OA_COLUMN_USER,             { "ID", 3, 0, false },
		{ "SIZE", 1, 0, false },    { "MODIFIED", 2, 0, false }, { "FORMAT", 4, 0, false },
		{ "RUNNER", 8, 0, false },  { "ARCH", 7, 0, false },    { "PARAMS", 6, 0, false },
		{ "QUANT", 5, 0, false },   { "LAST USED", 2, 0, false },
	};
	oa_column cols[12];
	memcpy(cols, all, sizeof cols);
	/* ollama list pads its table columns with four spaces (tablewriter's
	 * table padding in cmd.ListHandler). */
	oa_table tb = { .col = cols, .ncol = LAST_USED_COL, .gap = "    ", .name_cols = 1u << 0,
		        .age_cols = 1u << 4 | 1u << LAST_USED_COL /* MODIFIED, LAST USED */,
		        .absent_cols = oa_user_absent(st, 1) };
	bool shadows = false;
	for (size_t i = 0; i < n; i++) {
		/* LAST USED only when some store has server logs (docs/history.md). */
		if (have_logs(&v[i]))
			tb.ncol = LAST_USED_COL + 1;
		for (size_t o = 0; o < v[i].n_models; o++)
			shadows |= v[i].s->models[v[i].models[o]].shadow;
	}
	if (shadows) /* dropped first on a narrow terminal, after USER */
		cols[tb.ncol++] = (oa_column){ "SHADOW OF", 9, 0, false };
	if (!n)
		return; /* the error said it; an empty table would only add noise */
	/* Rows made twice, never held: 10,000 tags' cells are 3 MiB. */
	struct list_rows lr = { .st = st, .tb = &tb, .v = v, .n = n, .now = oa_wall_now_ns() };
	size_t rows = 0;
	for (size_t i = 0; i < n; i++)
		rows += v[i].n_models + (n > 1); /* a section heading per store */
	oa_table_print_rows(st, &tb, rows, list_row, &lr, out);
	if (n > 1) {
		oa_list_total t;
		oa_list_totals(v, n, &t);
		char size[32], disk[32];
		oa_format_size(t.size, st->units, size, sizeof size);
		oa_format_size(t.disk, st->units, disk, sizeof disk);
		fprintf(out, "# all %zu stores: %zu models, SIZE %s, %s on disk\n", t.stores, t.models, size, disk);
	}
}

void oa_list_names(FILE *out, const oa_list_store *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t o = 0; o < v[i].n_models; o++) {
			const char *name = v[i].s->models[v[i].models[o]].display;
			char *e = oa_escape(name, strlen(name));
			fprintf(out, "%s\n", e);
			free(e);
		}
}

static void csv_num(FILE *out, unsigned long long v)
{
	char num[32];
	snprintf(num, sizeof num, "%llu", v);
	oa_csv_field(out, num, false);
}

void oa_list_csv(FILE *out, const oa_list_store *v, size_t n)
{
	/* user, the store's owner (in every csv record of a store), then
	 * last_used, as the JSON names it, when some store has server logs
	 * (docs/history.md): the newest load, empty when the logs have none.
	 * last_used stays the last field, as it was before user came. */
	bool logs = false;
	for (size_t i = 0; i < n; i++)
		logs |= have_logs(&v[i]);
	fprintf(out, "store,name,id,digest,size,modified_at,format,runner,arch,parameter_size,"
	        "quantization_level,layers,missing_blobs,disk_bytes,apparent_bytes,hidden_from_list,user%s\n",
	        logs ? ",last_used" : "");
	for (size_t i = 0; i < n; i++) {
		const oa_store *s = v[i].s;
		for (size_t k = 0; k < v[i].n_models; k++) {
			const oa_model *m = &s->models[v[i].models[k]];
			json_t *o = oa_list_view_model(s, v[i].models[k], logs ? v[i].lu : NULL);
			char num[32];
			oa_csv_field(out, s->root, false);
			oa_csv_field(out, m->display, false);
			oa_csv_field(out, json_string_value(json_object_get(o, "id")), false);
			oa_csv_field(out, m->m.id, false);
			snprintf(num, sizeof num, "%lld", (long long)m->m.size);
			oa_csv_field(out, num, false);
			oa_csv_field(out, json_string_value(json_object_get(o, "modified_at")), false);
			oa_csv_field(out, oa_format_name(m->format), false);
			oa_csv_field(out, oa_model_list_runner(m), false);
			oa_csv_field(out, m->arch, false);
			oa_csv_field(out, m->params, false);
			oa_csv_field(out, m->quant, false);
			csv_num(out, m->m.n_layers);
			csv_num(out, m->missing_blobs);
			csv_num(out, m->disk_bytes);
			csv_num(out, m->apparent_bytes);
			oa_csv_field(out, m->hidden_from_list ? "true" : "false", false);
			oa_csv_field(out, oa_report_owner(s), !logs);
			if (logs)
				oa_csv_field(out, json_string_value(json_object_get(o, "last_used")), true);
			json_decref(o);
		}
	}
}

void oa_list_tags(FILE *out, const oa_list_store *v, size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += v[i].s->n_models;
	const oa_model **m = oa_xcalloc(total + 1, sizeof *m);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool *sel = selection(&v[i]); /* in the store's order: the sort below is stable */
		for (size_t j = 0; j < v[i].s->n_models; j++)
			if (sel[j] && v[i].s->models[j].manifest_ok && !v[i].s->models[j].hidden_from_list)
				m[k++] = &v[i].s->models[j];
		free(sel);
	}
	json_t *root = oa_list_view_tags(m, k);
	oa_json_dump_go(root, out);
	fputc('\n', out);
	json_decref(root);
	free(m);
}

void oa_list_document_write(FILE *out, const oa_list_store *v, size_t n)
{
	oa_list_total t;
	oa_list_totals(v, n, &t);
	oa_list_view_document_write(out, v, n, &t);
}

void oa_list_ndjson(FILE *out, const oa_list_store *v, size_t n, const char *host)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < v[i].n_models + v[i].n_problems; k++) {
			json_t *rec = oa_list_view_record(&v[i], k, host);
			oa_json_dump_line(rec, out);
			json_decref(rec);
		}
	}
	oa_list_total t;
	oa_list_totals(v, n, &t);
	json_t *rec = oa_list_view_total_record(&t, host);
	oa_json_dump_line(rec, out);
	json_decref(rec);
}

void oa_list_store_make(oa_list_store *ls, const oa_list_query *q, oa_store *s, const oa_last_used *lu)
{
	const oa_finding **problems = oa_xcalloc(s->findings.n + 1, sizeof *problems);
	size_t np = 0;
	for (size_t j = 0; j < s->findings.n; j++)
		if (oa_finding_is_listing(&s->findings.v[j]))
			problems[np++] = &s->findings.v[j];
	*ls = (oa_list_store){ .s = s, .problems = problems, .n_problems = np, .lu = lu };
	ls->models = oa_list_order(q, s, &ls->n_models);
}

void oa_list_stores_free(oa_list_store *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((void *)v[i].models);
		free((void *)v[i].problems);
	}
	free(v);
}
