/* findings_fix.c - the worst severity of a model's findings, for check's
 * one-screen answer, and what they make of a run under --fail-on. */
#include "views/findings_fix.h"
#include "ollama_audit/finding.h"
#include "ollama_audit/severity.h"

#include <stdlib.h>
#include <string.h>

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

unsigned oa_findings_tally(const oa_store *s, const bool *selected, int fail_on, oa_audit_summary *sum)
{
	size_t counts[3] = { 0, 0, 0 };
	unsigned fails = 0;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!selected[i])
			continue;
		counts[f->severity]++;
		if (oa_finding_is(f, OA_FC_IO) && ((int)f->severity >= fail_on || f->severity == OA_SEV_ERROR))
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
