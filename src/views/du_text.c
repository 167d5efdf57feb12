/* du_text.c - du's table, -q names and csv (du_text.h). */
#include "views/du_text.h"
#include "views/csv.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static char *row_name(const oa_store *s, const oa_du_row *r, const char *sep)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < r->n_models; i++) {
		const oa_model *m = &s->models[r->models[i]];
		if (i)
			oa_buf_adds(&b, sep);
		oa_buf_add_escaped(&b, m->display, strlen(m->display));
		if (m->anchor)
			oa_buf_adds(&b, " (legacy anchor)");
	}
	if (!r->manifest_ok)
		oa_buf_adds(&b, " (unparseable manifest)");
	return oa_buf_take(&b);
}

/* LAST USED: an age, "never" (not in the logs), "-" (no logs). */
static char *last_used_text(const oa_last_used *lu, const oa_du_row *r, int64_t now_ns)
{
	int64_t last;
	if (!lu || !lu->have_logs)
		return oa_xstrdup("-");
	if (!oa_last_used_newest(lu, r->models, r->n_models, &last))
		return oa_xstrdup("never");
	char age[64];
	oa_human_age(oa_age_ns(last, now_ns), age, sizeof age);
	return oa_xstrdup(age);
}

static void rows_table(const oa_text_style *st, FILE *out, const oa_store *s, const oa_du_store *d,
                       const oa_last_used *lu, int64_t now_ns)
{
	/* On a narrow terminal USER (--all-users) goes first, then NAME keeps
	 * 24 columns while APPARENT, SHARED, LAST USED and ON DISK give way;
	 * UNIQUE (what rm frees) stays. */
	static const oa_column cols[7] = {
		{ "NAME", 0, 24, false },   OA_COLUMN_USER,           { "UNIQUE", 0, 0, true },
		{ "SHARED", 4, 0, true },   { "ON DISK", 2, 0, true }, { "APPARENT", 5, 0, true },
		{ "LAST USED", 3, 0, false },
	};
	/* LAST USED when the store has server logs (docs/history.md). */
	oa_table tb = { .col = cols, .ncol = lu && lu->have_logs ? 7 : 6, .gap = "   ", .name_cols = 1u << 0,
		        .age_cols = 1u << 6 /* LAST USED */, .absent_cols = oa_user_absent(st, 1) };
	for (size_t i = 0; i < d->du.n_rows; i++) {
		const oa_du_row *r = &d->du.rows[i];
		uint64_t v[4] = { r->unique, r->shared, r->allocated, r->apparent };
		char *cell[7] = { row_name(s, r, ", "), oa_user_cell(st, s) };
		for (int k = 0; k < 4; k++) {
			char b[48];
			oa_format_size(v[k], st->units, b, sizeof b);
			cell[k + 2] = oa_xstrdup(b);
		}
		if (tb.ncol > 6)
			cell[6] = last_used_text(lu, r, now_ns);
		oa_table_add(&tb, cell);
	}
	oa_table_print(st, &tb, out);
}

/* What the store holds besides the rows: after the table. */
static void store_totals(const oa_text_style *st, FILE *out, const oa_store *s, const oa_du_store *d)
{
	char b1[48], b2[48];
	oa_format_size(d->du.referenced, st->units, b1, sizeof b1);
	oa_format_size(d->du.referenced_apparent, st->units, b2, sizeof b2);
	fprintf(out, "referenced     %10s on disk (%s apparent)\n", b1, b2);
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		if (!d->junk.count[k])
			continue;
		oa_format_size(d->junk.allocated[k], st->units, b1, sizeof b1);
		fprintf(out, "junk %-14s %6s  %zu entr%s\n", oa_junk_cat_name((enum oa_junk_cat)k), b1,
		        d->junk.count[k], d->junk.count[k] == 1 ? "y" : "ies");
	}
	oa_format_size(d->reclaimable, st->units, b1, sizeof b1);
	fprintf(out, "reclaimable    %10s (`prune`: orphans, partials, temps older than 1 h)\n", b1);
	if (d->quarantine) {
		oa_format_size(d->quarantine_bytes, st->units, b1, sizeof b1);
		fprintf(out, "quarantine     %10s  %zu entr%s in %s (`restore DIR --empty` frees them)\n", b1,
		        d->quarantine_entries, d->quarantine_entries == 1 ? "y" : "ies", oa_text_safe(d->quarantine));
	}
	oa_format_size(d->du.blobs_total, st->units, b1, sizeof b1);
	oa_format_size(d->du.blobs_total_apparent, st->units, b2, sizeof b2);
	fprintf(out, "blobs/ total   %10s on disk (%s apparent)\n", b1, b2);
	if (s->n_metadata || s->n_stale_metadata) {
		oa_format_size(s->metadata_bytes, st->units, b1, sizeof b1);
		fprintf(out, "metadata/      %10s  %zu cache%s, %zu stale\n", b1, s->n_metadata + s->n_stale_metadata,
		        s->n_metadata + s->n_stale_metadata == 1 ? "" : "s", s->n_stale_metadata);
	}
}

/* Tags the compatibility migration converted: what dropping either child frees. */
static void conversions(const oa_text_style *st, FILE *out, const oa_store *s)
{
	oa_conversion *cv;
	size_t ncv = oa_store_conversions(s, &cv);
	for (size_t i = 0; i < ncv; i++) {
		char b1[48], b2[48], b3[48];
		oa_format_size(cv[i].duplicated, st->units, b1, sizeof b1);
		oa_format_size(cv[i].drop_llamacpp, st->units, b2, sizeof b2);
		oa_format_size(cv[i].drop_ggml, st->units, b3, sizeof b3);
		fprintf(out, "converted      %s: the llamacpp child duplicates %s of its ggml source; dropping the "
		        "llamacpp child frees %s, the ggml child %s\n", cv[i].ggml->display, b1, b2, b3);
	}
	free(cv);
}

void oa_du_text_store(const oa_text_style *st, FILE *out, const oa_store *s, const oa_du_store *d,
                      const oa_last_used *lu, int64_t now_ns, bool first)
{
	if (st->header) {
		char *er = oa_escape(s->root, strlen(s->root));
		fprintf(out, "%s%s\n", first ? "" : "\n", er);
		free(er);
	}
	rows_table(st, out, s, d, lu, now_ns);
	fputc('\n', out);
	store_totals(st, out, s, d);
	conversions(st, out, s);
}

void oa_du_text_selection(const oa_text_style *st, FILE *out, const oa_du_view *v)
{
	if (!v->rm_args)
		return;
	char b[48];
	oa_format_size(v->rm_frees, st->units, b, sizeof b);
	fprintf(out, "rm would free  %10s  the %zu model%s of `ollama-audit rm %s`\n", b, v->rm_models,
	        v->rm_models == 1 ? "" : "s", oa_text_safe(v->rm_args));
}

void oa_du_view_selection_json(const oa_du_view *v, json_t *o)
{
	if (v->rm_args)
		json_object_set_new(o, "selection", json_pack("{s:s,s:I,s:I}", "rm_args", v->rm_args, "models",
		                                              (json_int_t)v->rm_models, "planned_bytes",
		                                              (json_int_t)v->rm_frees));
}

void oa_du_text_names(FILE *out, const oa_store *s, const oa_du_store *d)
{
	for (size_t k = 0; k < d->du.n_rows; k++)
		for (size_t m = 0; m < d->du.rows[k].n_models; m++) {
			const oa_model *x = &s->models[d->du.rows[k].models[m]];
			if (x->anchor || x->sibling)
				continue;
			char *e = oa_escape(x->display, strlen(x->display));
			fprintf(out, "%s\n", e);
			free(e);
		}
}

void oa_du_text_total(const oa_text_style *st, FILE *out, const oa_du_total *t)
{
	char b1[48], b2[48];
	fprintf(out, "\nall %zu stores (%zu model rows)\n", t->stores, t->models);
	oa_format_size(t->referenced, st->units, b1, sizeof b1);
	oa_format_size(t->referenced_apparent, st->units, b2, sizeof b2);
	fprintf(out, "referenced     %10s on disk (%s apparent)\n", b1, b2);
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		if (!t->junk_count[k])
			continue;
		oa_format_size(t->junk_bytes[k], st->units, b1, sizeof b1);
		fprintf(out, "junk %-14s %6s  %llu entr%s\n", oa_junk_cat_name((enum oa_junk_cat)k), b1,
		        (unsigned long long)t->junk_count[k], t->junk_count[k] == 1 ? "y" : "ies");
	}
	oa_format_size(t->reclaimable, st->units, b1, sizeof b1);
	fprintf(out, "reclaimable    %10s\n", b1);
	oa_format_size(t->blobs, st->units, b1, sizeof b1);
	oa_format_size(t->blobs_apparent, st->units, b2, sizeof b2);
	fprintf(out, "blobs/ total   %10s on disk (%s apparent)\n", b1, b2);
}

void oa_du_csv_header(FILE *out)
{
	fputs("store,name,id,digest,manifest_ok,unique_bytes,shared_bytes,disk_bytes,apparent_bytes,user\n", out);
}

void oa_du_csv_store(FILE *out, const oa_store *s, const oa_du_store *d)
{
	for (size_t k = 0; k < d->du.n_rows; k++) {
		const oa_du_row *r = &d->du.rows[k];
		char *name = row_name(s, r, " ");
		uint64_t v[4] = { r->unique, r->shared, r->allocated, r->apparent };
		char id[13];
		snprintf(id, sizeof id, "%.12s", r->id);
		oa_csv_field(out, s->root, false);
		oa_csv_field(out, name, false);
		oa_csv_field(out, id, false);
		oa_csv_field(out, r->id, false);
		oa_csv_field(out, r->manifest_ok ? "true" : "false", false);
		for (int q = 0; q < 4; q++) {
			char num[32];
			snprintf(num, sizeof num, "%llu", (unsigned long long)v[q]);
			oa_csv_field(out, num, false);
		}
		oa_csv_field(out, oa_report_owner(s), true);
		free(name);
	}
}
