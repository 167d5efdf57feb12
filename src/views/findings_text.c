/* findings_text.c - check's and verify's findings for a person (per model,
 * then store-wide, the summary line and the one-screen answer with the
 * command that fixes each model) and their csv; one finding on its line. */
#include "views/findings_text.h"
#include "views/csv.h"
#include "views/findings_fix.h"
#include "ollama_audit/findings_report.h"
#include "ollama_audit/records.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An ndjson record on its line (freed). */
static void dump_record(FILE *out, json_t *rec)
{
	oa_json_dump_line(rec, out);
	json_decref(rec);
}

void oa_finding_print(const oa_text_style *st, FILE *out, const oa_finding *f)
{
	const char *on = "", *off = "";
	if (st->color) {
		on = f->severity == OA_SEV_ERROR ? "\033[31m" : f->severity == OA_SEV_WARNING ? "\033[33m" : "\033[2m";
		off = "\033[0m";
	}
	fprintf(out, "%s%s%s %s: ", on, oa_severity_name(f->severity), off, f->code);
	if (f->path)
		fprintf(out, "%s: ", oa_text_safe(f->path));
	fprintf(out, "%s\n", oa_text_safe(f->message));
}

bool oa_findings_group(const oa_text_style *st, FILE *out, const oa_store *s, const bool *selected,
                       const char *model, const char *heading, const char *indent)
{
	bool any = false;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if ((selected && !selected[i]) || (model ? !f->model || strcmp(f->model, model) != 0 : f->model != NULL))
			continue;
		if (!any)
			fputs(heading, out);
		any = true;
		fputs(indent, out);
		oa_finding_print(st, out, f);
	}
	return any;
}

void oa_audit_summary_line(const oa_audit_summary *sum, char *line, size_t len)
{
	if (!sum->verify) {
		snprintf(line, len, "%zu model%s, %zu blob files checked in %.3f s", sum->models,
		         sum->models == 1 ? "" : "s", sum->blob_files, sum->seconds);
		return;
	}
	char total[32], rate[32];
	oa_human_bytes((int64_t)sum->bytes_hashed, total, sizeof total);
	oa_human_bytes(sum->seconds > 0 ? (int64_t)((double)sum->bytes_hashed / sum->seconds) : 0, rate,
	               sizeof rate);
	int n = snprintf(line, len, "%zu model%s, %zu blob%s, %s verified in %.1f s (%s/s)", sum->models,
	                 sum->models == 1 ? "" : "s", sum->blobs, sum->blobs == 1 ? "" : "s", total,
	                 sum->seconds, rate);
	if (sum->skipped_unchanged)
		n += snprintf(line + n, len - (size_t)n, ", %zu unchanged skipped", sum->skipped_unchanged);
	if (sum->not_done)
		snprintf(line + n, len - (size_t)n, ", %zu not done (%s)", sum->not_done,
		         sum->interrupted ? "interrupted" : "time budget");
}

void oa_findings_csv(FILE *out, const oa_store *s, const bool *selected, bool first)
{
	if (first)
		fprintf(out, "store,code,severity,model,digest,path,message,user\n");
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!selected[i])
			continue;
		oa_csv_field(out, s->root, false);
		oa_csv_field(out, f->code, false);
		oa_csv_field(out, oa_severity_name(f->severity), false);
		oa_csv_field(out, f->model, false);
		oa_csv_field(out, f->digest, false);
		oa_csv_field(out, f->path, false);
		oa_csv_field(out, f->message, false);
		oa_csv_field(out, oa_report_owner(s), true);
	}
}

/* A model's findings under its name; a legacy anchor has its v2 tag's
 * name: one group for both, under the first. */
static void model_findings(const oa_text_style *st, FILE *out, const oa_findings_index *ix, size_t j)
{
	const char *name = ix->s->models[j].display;
	size_t lo, hi;
	if (!ix->first[j])
		return;
	oa_findings_index_range(ix, name, &lo, &hi);
	if (lo < hi)
		fprintf(out, "  %s\n", oa_text_safe(name));
	for (size_t r = lo; r < hi; r++) {
		fputs("    ", out);
		oa_finding_print(st, out, &ix->s->findings.v[ix->v[r].i]);
	}
}

/* The answer's columns: FIX last; USER (--all-users) hidden first. */
enum { ANSWER_USER = 2, ANSWER_FIX = 4, ANSWER_COLS };

/* Would the answer's table show every FIX whole on this terminal (USER
 * left out: it goes before anything is cut)? */
static bool fix_fits(const oa_text_style *st, const oa_table *t)
{
	size_t cols = st->width, sum = 0;
	if (!cols)
		return true;
	for (size_t k = 0; k < t->ncol; k++) {
		if (k == ANSWER_USER)
			continue;
		size_t w = oa_text_width(t->col[k].head);
		for (size_t r = 0; r < t->rows; r++)
			if (oa_text_width(t->cell[r * t->ncol + k]) > w)
				w = oa_text_width(t->cell[r * t->ncol + k]);
		sum += w;
	}
	return sum + (t->ncol - 2) * strlen(t->gap) <= cols;
}

/* On a narrow terminal a cut command is no answer: each FIX goes on a line
 * of its own under its row, and the rest is a table without it. */
static void print_fix_below(const oa_text_style *st, FILE *out, oa_table *t)
{
	oa_table narrow = { .col = t->col, .ncol = ANSWER_FIX, .gap = t->gap, .absent_cols = t->absent_cols };
	for (size_t r = 0; r < t->rows; r++) {
		char **cell = t->cell + r * t->ncol, *row[ANSWER_FIX];
		for (size_t k = 0; k < ANSWER_FIX; k++)
			row[k] = oa_xstrdup(cell[k]);
		oa_table_add(&narrow, row);
		/* indented under MODEL, less when that would cut the command */
		size_t len = oa_text_width(cell[ANSWER_FIX]), indent = 10;
		if (st->width && len + indent > st->width)
			indent = len < st->width ? st->width - len : 0;
		oa_table_line(&narrow, oa_xasprintf("%*s%s", (int)indent, "", cell[ANSWER_FIX]));
	}
	oa_table_clear(t);
	oa_table_print(st, &narrow, out);
}

/* The one-screen answer: models by severity, each with the command that
 * fixes it, then what prune would clear. */
static void findings_answer(const oa_text_style *st, FILE *out, const oa_findings_index *ix, const bool *selected)
{
	const oa_store *s = ix->s;
	static const oa_column cols[ANSWER_COLS] = {
		{ "SEVERITY", 0, 0, false }, { "MODEL", 0, 20, false }, OA_COLUMN_USER,
		{ "FINDINGS", 2, 16, false }, { "FIX", 1, 24, false },
	};
	oa_table t = { .col = cols, .ncol = ANSWER_COLS, .gap = "  ", .absent_cols = oa_user_absent(st, ANSWER_USER) };
	size_t models = 0, broken = 0, warned = 0;
	for (int sev = OA_SEV_ERROR; sev >= OA_SEV_WARNING; sev--)
		for (size_t j = 0; j < s->n_models; j++) {
			const oa_model *m = &s->models[j];
			if (!ix->first[j])
				continue;
			models += sev == OA_SEV_ERROR;
			oa_buf codes;
			oa_buf_init(&codes);
			int worst = oa_findings_worst_in(ix, m->display, &codes);
			if (worst == sev) {
				broken += sev == OA_SEV_ERROR;
				warned += sev == OA_SEV_WARNING;
				char *row[ANSWER_COLS] = { oa_xstrdup(oa_severity_name(worst)),
				                           oa_escape(m->display, strlen(m->display)), oa_user_cell(st, s),
				                           oa_buf_take(&codes), NULL };
				row[ANSWER_FIX] = oa_findings_model_fix(m->display, row[3], worst);
				oa_table_add(&t, row);
			}
			oa_buf_free(&codes);
		}
	oa_buf codes;
	oa_buf_init(&codes);
	int worst = oa_findings_store_worst(s, selected, &codes);
	if (worst >= OA_SEV_WARNING) {
		char *row[ANSWER_COLS] = { oa_xstrdup(oa_severity_name(worst)), oa_xstrdup("(store)"), oa_user_cell(st, s),
		                           oa_buf_take(&codes), NULL };
		row[ANSWER_FIX] = oa_findings_store_fix(row[3]);
		oa_table_add(&t, row);
	}
	oa_buf_free(&codes);
	fprintf(out, "%zu of %zu model%s broken, %zu with warnings\n", broken, models, models == 1 ? "" : "s", warned);
	if (t.rows && fix_fits(st, &t))
		oa_table_print(st, &t, out);
	else if (t.rows)
		print_fix_below(st, out, &t);
	/* no rows: nothing allocated, the count says it */
}

/* People: per model, then store-wide, then the summary line. */
void oa_findings_text(const oa_text_style *st, FILE *out, const oa_store *s, const bool *selected,
                      const char *summary_line, const oa_audit_summary *sum, bool first)
{
	fprintf(out, "%s%s\n", first ? "" : "\n", oa_text_safe(s->root));
	oa_findings_index ix;
	oa_findings_index_build(&ix, s, selected);
	for (size_t j = 0; j < s->n_models; j++)
		model_findings(st, out, &ix, j);
	oa_findings_group(st, out, s, selected, NULL, "  store\n", "    ");
	fprintf(out, "%s: %zu error%s, %zu warning%s\n", summary_line, sum->errors, sum->errors == 1 ? "" : "s",
	        sum->warnings, sum->warnings == 1 ? "" : "s");
	findings_answer(st, out, &ix, selected);
	oa_findings_index_free(&ix);
}

void oa_verify_progress_line(FILE *diag, uint64_t done, uint64_t total, double elapsed, const char *label)
{
	double rate = elapsed > 0 ? (double)done / elapsed : 0;
	double eta = rate > 0 ? (double)(total - done) / rate : 0;
	char d[32], t[32], r[32];
	oa_human_bytes((int64_t)done, d, sizeof d);
	oa_human_bytes((int64_t)total, t, sizeof t);
	oa_human_bytes((int64_t)rate, r, sizeof r);
	int pct = total ? (int)(100.0 * (double)done / (double)total) : 100;
	fprintf(diag, "\r\033[K%3d%% %s / %s  %s/s  ETA %.0fs  %.40s", pct, d, t, r, eta, oa_text_safe(label));
}

void oa_audit_summary_verified(oa_audit_summary *sum, const oa_verify_store_result *res)
{
	sum->blobs = res->blobs;
	sum->skipped_unchanged = res->skipped_unchanged;
	sum->not_done = res->not_done;
	sum->bytes_hashed = res->tot.bytes_hashed;
	sum->seconds = res->tot.seconds;
	sum->interrupted = res->tot.interrupted;
	sum->timed_out = res->tot.timed_out;
}

void oa_findings_ndjson(FILE *out, const oa_store *s, const bool *selected, const oa_audit_summary *sum,
                        const char *host)
{
	for (size_t i = 0; i < s->findings.n; i++)
		if (selected[i])
			dump_record(out, oa_finding_record(s, &s->findings.v[i], host));
	dump_record(out, oa_audit_summary_record(s, sum->verify ? OA_SCHEMA_VERIFY : OA_SCHEMA_CHECK, host, sum));
}
