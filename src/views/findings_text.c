/* findings_text.c - check's and verify's findings for a person (per model,
 * then store-wide, the summary line and the one-screen answer with the
 * command that fixes each model) and their csv; one finding on its line. */
#include "views/findings_text.h"
#include "views/csv.h"
#include "views/findings_fix.h"
#include "audit/remedy.h"
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
		fprintf(out, "store,code,severity,model,digest,path,message,user,fix\n");
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
		oa_csv_field(out, oa_report_owner(s), false);
		oa_csv_field(out, f->fix, true);
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

/* The end of the word at p: the next space, outside single quotes in a
 * command (it quotes a path for the shell as one word). */
static const char *word_end(const char *p, bool command)
{
	bool quoted = false;
	for (; *p && (quoted || *p != ' '); p++)
		quoted ^= command && *p == '\'';
	return p;
}

/* A FIX under its row: whole, in lines of at most width columns where its
 * words allow (a word longer than that, a blob's path, stays whole on a
 * line of its own, which the terminal wraps: a cut command is no answer);
 * a command's lines end in " \\" so that it pastes as one. */
static void fix_lines(oa_table *t, const char *fix, size_t width)
{
	bool command = oa_fix_is_command(fix);
	size_t room = width > 14 ? width - 14 : 1; /* the indent, and the " \\" */
	bool first = true;
	for (const char *p = fix; *p;) {
		const char *end = word_end(p, command);
		while (*end && (size_t)(word_end(end + 1, command) - p) <= room)
			end = word_end(end + 1, command);
		bool more = *end != '\0';
		oa_table_line(t, oa_xasprintf("%s%.*s%s", first ? "          " : "            ", (int)(end - p), p,
		                              more && command ? " \\" : ""));
		first = false;
		p = more ? end + 1 : end;
	}
}

/* On a narrow terminal a cut command is no answer: each FIX goes on lines
 * of its own under its row, and the rest is a table without it. */
static void print_fix_below(const oa_text_style *st, FILE *out, oa_table *t)
{
	oa_table narrow = { .col = t->col, .ncol = ANSWER_FIX, .gap = t->gap, .absent_cols = t->absent_cols,
		            .whole_lines = true };
	for (size_t r = 0; r < t->rows; r++) {
		char **cell = t->cell + r * t->ncol, *row[ANSWER_FIX];
		for (size_t k = 0; k < ANSWER_FIX; k++)
			row[k] = oa_xstrdup(cell[k]);
		oa_table_add(&narrow, row);
		fix_lines(&narrow, cell[ANSWER_FIX], st->width);
	}
	oa_table_clear(t);
	oa_table_print(st, &narrow, out);
}

/* A finding the answer names: a warning or an error. */
static bool answered(const oa_finding *f)
{
	return f->severity >= OA_SEV_WARNING;
}

static const char *fix_text(const oa_finding *f)
{
	return f->fix ? f->fix : "-";
}

/* One row of the answer: the findings of one model (or of the store) that
 * one fix mends. */
typedef struct answer_row {
	const char *fix;
	size_t first;   /* where its first finding is among the model's */
	int worst;
	oa_buf codes;   /* each code once, in order */
} answer_row;

typedef struct fix_of_finding {
	const oa_finding *f;
	size_t at;
} fix_of_finding;

static int by_fix(const void *a, const void *b)
{
	const fix_of_finding *x = a, *y = b;
	int c = strcmp(fix_text(x->f), fix_text(y->f));
	return c ? c : (x->at > y->at) - (x->at < y->at);
}

static int by_first(const void *a, const void *b)
{
	const answer_row *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

/* The rows of findings v[0..n) (indexes into s), one per fix, in the order
 * each fix first appears: sorted by fix, so that a store with 10,000
 * files in blobs/ to fix is no 10^8 compares. */
static answer_row *answer_group(const oa_store *s, const size_t *v, size_t n, size_t *n_rows)
{
	fix_of_finding *k = oa_xcalloc(n + 1, sizeof *k);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (answered(&s->findings.v[v[i]]))
			k[m++] = (fix_of_finding){ &s->findings.v[v[i]], i };
	qsort(k, m, sizeof *k, by_fix);
	answer_row *rows = oa_xcalloc(m + 1, sizeof *rows);
	*n_rows = 0;
	for (size_t a = 0, b; a < m; a = b) {
		answer_row *r = &rows[(*n_rows)++];
		*r = (answer_row){ .fix = fix_text(k[a].f), .first = k[a].at, .worst = -1 };
		oa_buf_init(&r->codes);
		for (b = a; b < m && strcmp(fix_text(k[b].f), r->fix) == 0; b++) {
			bool seen = false; /* the same code for the same fix (k[a..b) in finding order) */
			for (size_t c = a; c < b && !seen; c++)
				seen = k[c].f->id == k[b].f->id;
			if (!seen)
				oa_buf_printf(&r->codes, "%s%s", r->codes.len ? ", " : "", k[b].f->code);
			if ((int)k[b].f->severity > r->worst)
				r->worst = (int)k[b].f->severity;
		}
	}
	free(k);
	qsort(rows, *n_rows, sizeof *rows, by_first);
	return rows;
}

/* The answer's rows for the findings v[0..n) of one model (or of the
 * store) whose worst is sev: one row per fix, with the codes it mends. */
static void answer_rows(const oa_text_style *st, oa_table *t, const oa_store *s, const size_t *v, size_t n,
                        const char *name, int sev)
{
	size_t nr;
	answer_row *rows = answer_group(s, v, n, &nr);
	for (size_t i = 0; i < nr; i++) {
		if (rows[i].worst != sev) {
			oa_buf_free(&rows[i].codes);
			continue;
		}
		char *row[ANSWER_COLS] = { oa_xstrdup(oa_severity_name((oa_severity)sev)), oa_escape(name, strlen(name)),
		                           oa_user_cell(st, s), oa_buf_take(&rows[i].codes), oa_xstrdup(rows[i].fix) };
		oa_table_add(t, row);
	}
	free(rows);
}

/* The worst severity among findings v[0..n), -1 when none is answered. */
static int worst_of(const oa_store *s, const size_t *v, size_t n)
{
	int worst = -1;
	for (size_t k = 0; k < n; k++) {
		const oa_finding *f = &s->findings.v[v[k]];
		if (answered(f) && (int)f->severity > worst)
			worst = (int)f->severity;
	}
	return worst;
}

/* The findings of model j (an index into ix->s->findings each), *n of them. */
static size_t *model_rows(const oa_findings_index *ix, size_t j, size_t *n)
{
	size_t lo, hi;
	oa_findings_index_range(ix, ix->s->models[j].display, &lo, &hi);
	size_t *v = oa_xcalloc(hi - lo + 1, sizeof *v);
	for (size_t r = lo; r < hi; r++)
		v[r - lo] = ix->v[r].i;
	*n = hi - lo;
	return v;
}

/* The one-screen answer: models by severity, one row per fix each (the
 * findings carry it), then the store's. */
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
			if (!ix->first[j])
				continue;
			size_t n, *v = model_rows(ix, j, &n);
			int worst = worst_of(s, v, n);
			models += sev == OA_SEV_ERROR;
			broken += sev == OA_SEV_ERROR && worst == OA_SEV_ERROR;
			warned += sev == OA_SEV_WARNING && worst == OA_SEV_WARNING;
			answer_rows(st, &t, s, v, n, s->models[j].display, sev);
			free(v);
		}
	size_t n = 0, *v = oa_xcalloc(s->findings.n + 1, sizeof *v);
	for (size_t i = 0; i < s->findings.n; i++)
		if (selected[i] && !s->findings.v[i].model)
			v[n++] = i;
	for (int sev = OA_SEV_ERROR; sev >= OA_SEV_WARNING; sev--)
		answer_rows(st, &t, s, v, n, "(store)", sev);
	free(v);
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
