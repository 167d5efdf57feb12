/* findings_fix.c - the worst severity and the fix command of a model's
 * findings, for check's one-screen answer. */
#include "views/findings_fix.h"
#include "ollama_audit/finding.h"
#include "ollama_audit/severity.h"

#include <stdlib.h>
#include <string.h>

int oa_findings_store_worst(const oa_store *s, const bool *selected, oa_buf *codes)
{
	int worst = -1;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!selected[i] || f->model)
			continue;
		if ((int)f->severity > worst)
			worst = (int)f->severity;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = selected[k] && !s->findings.v[k].model && s->findings.v[k].id == f->id;
		if (!seen)
			oa_buf_printf(codes, "%s%s", codes->len ? ", " : "", f->code);
	}
	return worst;
}

static int by_model(const void *a, const void *b)
{
	const oa_findings_entry *x = a, *y = b;
	int c = strcmp(x->model, y->model);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

void oa_findings_index_build(oa_findings_index *ix, const oa_store *s, const bool *selected)
{
	ix->s = s;
	ix->n = 0;
	ix->v = oa_xcalloc(s->findings.n + 1, sizeof *ix->v);
	for (size_t i = 0; i < s->findings.n; i++)
		if ((!selected || selected[i]) && s->findings.v[i].model)
			ix->v[ix->n++] = (oa_findings_entry){ s->findings.v[i].model, i };
	qsort(ix->v, ix->n, sizeof *ix->v, by_model);
	oa_findings_entry *names = oa_xcalloc(s->n_models + 1, sizeof *names);
	for (size_t j = 0; j < s->n_models; j++)
		names[j] = (oa_findings_entry){ s->models[j].display, j };
	qsort(names, s->n_models, sizeof *names, by_model);
	ix->first = oa_xcalloc(s->n_models + 1, sizeof *ix->first);
	for (size_t k = 0; k < s->n_models; k++)
		ix->first[names[k].i] = k == 0 || strcmp(names[k - 1].model, names[k].model) != 0;
	free(names);
}

void oa_findings_index_free(oa_findings_index *ix)
{
	free(ix->v);
	free(ix->first);
	ix->v = NULL;
	ix->first = NULL;
	ix->n = 0;
}

void oa_findings_index_range(const oa_findings_index *ix, const char *model, size_t *lo, size_t *hi)
{
	size_t a = 0, b = ix->n; /* the first entry not below model */
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (strcmp(ix->v[mid].model, model) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	while (a < ix->n && strcmp(ix->v[a].model, model) == 0)
		a++;
	*hi = a;
}

int oa_findings_worst_in(const oa_findings_index *ix, const char *model, oa_buf *codes)
{
	size_t lo, hi;
	oa_findings_index_range(ix, model, &lo, &hi);
	int worst = -1;
	for (size_t r = lo; r < hi; r++) {
		const oa_finding *f = &ix->s->findings.v[ix->v[r].i];
		if ((int)f->severity > worst)
			worst = (int)f->severity;
		bool seen = false; /* the same code said of this model before */
		for (size_t q = lo; q < r && !seen; q++)
			seen = ix->s->findings.v[ix->v[q].i].id == f->id;
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

char *oa_findings_model_fix(const char *name, const char *codes, int worst)
{
	static const char *const unusable[] = { "invalid-manifest", "invalid-name", "dangling-tag", "nested-list",
	                                        NULL };
	if (worst < OA_SEV_ERROR)
		return oa_xasprintf("see: ollama-audit show %s", name);
	/* a damaged blob: a pull keeps any blob file that is there */
	static const char *const damaged[] = { "missing-blob", "missing-config", "empty-blob", "size-mismatch",
	                                       "digest-mismatch", NULL };
	if (has_code(codes, unusable))
		return oa_xasprintf("fix: ollama-audit rm %s --apply", name);
	if (has_code(codes, damaged))
		return oa_xasprintf("fix: ollama-audit repair %s", name);
	return oa_xasprintf("fix: ollama pull %s", name);
}

char *oa_findings_store_fix(const char *codes)
{
	static const char *const junk[] = { "orphan-blob", "partial-download", "temp-file", NULL };
	return oa_xstrdup(has_code(codes, junk) ? "fix: ollama-audit prune" : "see: ollama-audit check --format json");
}

unsigned oa_findings_tally(const oa_store *s, const bool *selected, int fail_on, oa_audit_summary *sum)
{
	size_t counts[3] = { 0, 0, 0 };
	unsigned fails = 0;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!selected[i])
			continue;
		counts[f->severity]++;
		if (f->id == OA_FINDING_UNREADABLE && ((int)f->severity >= fail_on || f->severity == OA_SEV_ERROR))
			fails |= OA_FAILS_UNREADABLE;
		else if (f->severity == OA_SEV_ERROR)
			fails |= OA_FAILS_ERRORS;
		else if ((int)f->severity >= fail_on)
			fails |= OA_FAILS_WARNINGS;
	}
	sum->errors = counts[OA_SEV_ERROR];
	sum->warnings = counts[OA_SEV_WARNING];
	sum->infos = counts[OA_SEV_INFO];
	return fails;
}
