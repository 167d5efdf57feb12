/* report_common.c - the findings report shared by check and verify. */
#include "cli_machine.h"
#include "report_common.h"
#include "cli_multi.h"
#include "findings.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "views/csv.h"
#include "suggest.h"
#include "views/table.h"
#include "ollama_audit/findings_report.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *report_schema(const oa_audit_summary *sum)
{
	return sum->verify ? OA_SCHEMA_VERIFY : OA_SCHEMA_CHECK;
}

bool model_selected(const cli *c, const oa_store *s, const char *display)
{
	if (c->n_args == 0)
		return true;
	for (size_t i = 0; i < c->n_args; i++) {
		long idx = oa_store_resolve(s, c->args[i]);
		if (idx >= 0 && strcmp(s->models[idx].display, display) == 0)
			return true;
	}
	return false;
}

/* The models check and verify count: the selected models `list` shows
 * (every tag and list row, a broken manifest too, never a legacy anchor),
 * whether or not they have anything to hash. */
size_t selected_models(const cli *c, const oa_store *s)
{
	size_t n = 0;
	for (size_t j = 0; j < s->n_models; j++)
		n += !s->models[j].anchor && model_selected(c, s, s->models[j].display);
	return n;
}

/* With MODEL arguments only those models' findings count; without, all. */
bool finding_selected(const cli *c, const oa_store *s, const oa_finding *f)
{
	if (c->n_args == 0)
		return true;
	return f->model && model_selected(c, s, f->model);
}

bool check_args_resolve(cli *c, const oa_store *s)
{
	bool ok = true;
	for (size_t i = 0; i < c->n_args; i++) {
		long idx = cli_resolve_model(c, s, c->args[i]);
		if (idx == OA_RESOLVE_AMBIGUOUS_NAME) {
			ok = false;
		} else if (idx < 0) {
			cli_model_unresolved(c, s, c->args[i], idx);
			ok = false;
		}
	}
	if (!ok)
		c->exit_code |= OA_EXIT_USAGE;
	return ok;
}

/* Count the reported findings into the summary and fold them into the
 * exit status under --fail-on. */
static void count_findings(cli *c, const oa_store *s, const bool *selected, oa_audit_summary *sum)
{
	size_t counts[3] = { 0, 0, 0 };
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!selected[i])
			continue;
		counts[f->severity]++;
		if ((int)f->severity >= c->fail_on || f->severity == OA_SEV_ERROR) {
			if (f->id == OA_FINDING_UNREADABLE)
				c->exit_code |= OA_EXIT_OPERATIONAL;
			else if (f->severity == OA_SEV_ERROR)
				c->exit_code |= OA_EXIT_ERRORS;
			else if ((int)f->severity >= c->fail_on)
				c->exit_code |= OA_EXIT_WARNINGS;
		}
	}
	sum->errors = counts[OA_SEV_ERROR];
	sum->warnings = counts[OA_SEV_WARNING];
	sum->infos = counts[OA_SEV_INFO];
}

static void findings_csv(const oa_store *s, const bool *selected, bool first)
{
	FILE *out = cli_text_out();
	if (first)
		fprintf(out, "store,code,severity,model,digest,path,message\n");
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
		oa_csv_field(out, f->message, true);
	}
}

static void findings_ndjson(const oa_store *s, const bool *selected, const oa_audit_summary *sum)
{
	for (size_t i = 0; i < s->findings.n; i++)
		if (selected[i])
			cli_put_record(oa_finding_record(s, &s->findings.v[i], cli_host()));
	cli_put_record(oa_audit_summary_record(s, report_schema(sum), cli_host(), sum));
}

/* A model's findings under its name; a legacy anchor has its v2 tag's
 * name: one group for both. */
static void model_findings_table(const cli *c, const oa_store *s, const bool *selected, size_t j)
{
	const oa_model *m = &s->models[j];
	for (size_t k = 0; k < j; k++)
		if (strcmp(s->models[k].display, m->display) == 0)
			return;
	bool header = false;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!f->model || strcmp(f->model, m->display) != 0 || !selected[i])
			continue;
		if (!header)
			printf("  %s\n", oa_text_safe(m->display));
		header = true;
		printf("    ");
		cli_print_finding((cli *)c, stdout, f);
	}
}

/* The worst severity among the selected findings of one model (NULL:
 * store-wide), and their codes, each once, into codes. */
static int worst_of(const oa_store *s, const bool *selected, const char *model, oa_buf *codes)
{
	int worst = -1;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!selected[i] || (model ? !f->model || strcmp(f->model, model) : f->model != NULL))
			continue;
		if ((int)f->severity > worst)
			worst = (int)f->severity;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = selected[k] && s->findings.v[k].id == f->id &&
			       (model ? s->findings.v[k].model && !strcmp(s->findings.v[k].model, model)
			              : !s->findings.v[k].model);
		if (!seen)
			oa_buf_printf(codes, "%s%s", codes->len ? ", " : "", f->code);
	}
	return worst;
}

/* Is one of the codes v in the ", "-separated list? */
static bool has_code(const char *codes, const char *const *v)
{
	for (; *v; v++) {
		size_t n = strlen(*v);
		for (const char *p = codes; (p = strstr(p, *v)); p += n)
			if ((p == codes || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
				return true;
	}
	return false;
}

/* The command that fixes a model's findings: a manifest that cannot be used
 * goes (rm), a blob that is missing or bad comes again (pull). */
static char *model_fix(const char *name, const char *codes, int worst)
{
	static const char *const unusable[] = { "invalid-manifest", "invalid-name", "dangling-tag", "nested-list",
	                                        NULL };
	if (worst < OA_SEV_ERROR)
		return oa_xasprintf("see: ollama-audit show %s", name);
	if (has_code(codes, unusable))
		return oa_xasprintf("fix: ollama-audit rm %s --apply", name);
	return oa_xasprintf("fix: ollama pull %s", name);
}

/* Would the answer's table show every FIX whole on this terminal? */
static bool fix_fits(const cli *c, const oa_table *t)
{
	size_t cols = cli_table_width(c), w[4] = { 0 };
	if (!cols)
		return true;
	for (size_t k = 0; k < 4; k++) {
		w[k] = oa_text_width(t->col[k].head);
		for (size_t r = 0; r < t->rows; r++)
			if (oa_text_width(t->cell[r * 4 + k]) > w[k])
				w[k] = oa_text_width(t->cell[r * 4 + k]);
	}
	return w[0] + w[1] + w[2] + w[3] + 3 * strlen(t->gap) <= cols;
}

/* On a narrow terminal a cut command is no answer: each FIX goes on a line
 * of its own under its row, and the rest is a table of three columns. */
static void print_fix_below(const cli *c, oa_table *t)
{
	static const oa_column cols[3] = {
		{ "SEVERITY", 0, 0, false }, { "MODEL", 0, 20, false }, { "FINDINGS", 2, 16, false },
	};
	oa_table narrow = { .col = cols, .ncol = 3, .gap = t->gap };
	for (size_t r = 0; r < t->rows; r++) {
		char **cell = t->cell + r * 4;
		oa_table_add(&narrow, (char *[3]){ oa_xstrdup(cell[0]), oa_xstrdup(cell[1]), oa_xstrdup(cell[2]) });
		oa_table_line(&narrow, oa_xasprintf("          %s", cell[3]));
	}
	oa_table_clear(t);
	cli_table_print(c, &narrow, stdout);
}

/* The one-screen answer: models by severity, each with the command that
 * fixes it, then what prune would clear. */
static void findings_answer(const cli *c, const oa_store *s, const bool *selected)
{
	static const oa_column cols[4] = {
		{ "SEVERITY", 0, 0, false }, { "MODEL", 0, 20, false }, { "FINDINGS", 2, 16, false },
		{ "FIX", 1, 24, false },
	};
	static const char *const junk[] = { "orphan-blob", "partial-download", "temp-file", NULL };
	oa_table t = { .col = cols, .ncol = 4, .gap = "  " };
	size_t models = 0, broken = 0, warned = 0;
	for (int sev = OA_SEV_ERROR; sev >= OA_SEV_WARNING; sev--)
		for (size_t j = 0; j < s->n_models; j++) {
			const oa_model *m = &s->models[j];
			bool dup = false;
			for (size_t k = 0; k < j && !dup; k++)
				dup = strcmp(s->models[k].display, m->display) == 0;
			if (dup)
				continue;
			models += sev == OA_SEV_ERROR;
			oa_buf codes;
			oa_buf_init(&codes);
			int worst = worst_of(s, selected, m->display, &codes);
			if (worst == sev) {
				broken += sev == OA_SEV_ERROR;
				warned += sev == OA_SEV_WARNING;
				char *row[4] = { oa_xstrdup(oa_severity_name(worst)), oa_escape(m->display, strlen(m->display)),
				                 oa_buf_take(&codes), NULL };
				row[3] = model_fix(m->display, row[2], worst);
				oa_table_add(&t, row);
			}
			oa_buf_free(&codes);
		}
	oa_buf codes;
	oa_buf_init(&codes);
	int worst = worst_of(s, selected, NULL, &codes);
	if (worst >= OA_SEV_WARNING) {
		char *row[4] = { oa_xstrdup(oa_severity_name(worst)), oa_xstrdup("(store)"), oa_buf_take(&codes),
		                 NULL };
		row[3] = oa_xstrdup(has_code(row[2], junk) ? "fix: ollama-audit prune" :
		                    "see: ollama-audit check --format json");
		oa_table_add(&t, row);
	}
	oa_buf_free(&codes);
	printf("%zu of %zu model%s broken, %zu with warnings\n", broken, models, models == 1 ? "" : "s", warned);
	if (t.rows && fix_fits(c, &t))
		cli_table_print(c, &t, stdout);
	else if (t.rows)
		print_fix_below(c, &t);
	/* no rows: nothing allocated, the count says it */
}

/* People: per model, then store-wide, then the summary line. */
static void findings_table(const cli *c, const oa_store *s, const bool *selected, const char *summary_line,
                           const oa_audit_summary *sum, bool first)
{
	printf("%s%s\n", first ? "" : "\n", oa_text_safe(s->root));
	for (size_t j = 0; j < s->n_models; j++)
		model_findings_table(c, s, selected, j);
	bool header = false;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (f->model || !selected[i])
			continue;
		if (!header)
			printf("  store\n");
		header = true;
		printf("    ");
		cli_print_finding((cli *)c, stdout, f);
	}
	printf("%s: %zu error%s, %zu warning%s\n", summary_line, sum->errors, sum->errors == 1 ? "" : "s",
	       sum->warnings, sum->warnings == 1 ? "" : "s");
	findings_answer(c, s, selected);
}

/* What every format of check and verify renders, once per store (the
 * slots of their entries in commands.c); prometheus has none: cli_multi.c
 * writes it from the totals. */
typedef struct findings_view {
	const oa_store *s;
	const bool *selected;
	const char *summary_line;
	const oa_audit_summary *sum;
	bool first;
} findings_view;

void findings_render_table(cli *c, const void *view)
{
	const findings_view *v = view;
	findings_table(c, v->s, v->selected, v->summary_line, v->sum, v->first);
}

/* One document, {"schema":..., "stores":[...]}, a store at a time. */
void findings_render_json(cli *c, const void *view)
{
	const findings_view *v = view;
	cli_emit_store(c, report_schema(v->sum), oa_findings_store_json(v->s, v->selected, v->sum));
}

void findings_render_ndjson(cli *c, const void *view)
{
	(void)c;
	const findings_view *v = view;
	findings_ndjson(v->s, v->selected, v->sum);
}

void findings_render_csv(cli *c, const void *view)
{
	(void)c;
	const findings_view *v = view;
	findings_csv(v->s, v->selected, v->first);
}

void report_findings(cli *c, const oa_store *s, const char *summary_line, oa_audit_summary *sum, bool first)
{
	bool *selected = oa_xcalloc(s->findings.n + 1, sizeof *selected);
	for (size_t i = 0; i < s->findings.n; i++)
		selected[i] = finding_selected(c, s, &s->findings.v[i]);
	count_findings(c, s, selected, sum);
	/* combined totals, and --format prometheus (cli_multi.c) */
	cli_multi_store_done(c, (oa_store *)s, sum);
	cli_render(c, &(findings_view){ .s = s, .selected = selected, .summary_line = summary_line, .sum = sum,
	                                .first = first });
	free(selected);
}

void report_finish(cli *c, const char *schema)
{
	/* The JSON document is closed here, not after "the last store", so a
	 * store skipped at the end (unreadable, a MODEL it lacks, an interrupt)
	 * cannot leave it open. */
	if (c->format == OUT_JSON)
		cli_emit_store(c, schema, NULL);
}
