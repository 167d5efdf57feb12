/* findings_fix.c - the worst severity and the fix command of a model's
 * findings, for check's one-screen answer. */
#include "views/findings_fix.h"
#include "ollama_audit/finding.h"
#include "ollama_audit/severity.h"

#include <string.h>

int oa_findings_worst(const oa_store *s, const bool *selected, const char *model, oa_buf *codes)
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

char *oa_findings_model_fix(const char *name, const char *codes, int worst)
{
	static const char *const unusable[] = { "invalid-manifest", "invalid-name", "dangling-tag", "nested-list",
	                                        NULL };
	if (worst < OA_SEV_ERROR)
		return oa_xasprintf("see: ollama-audit show %s", name);
	if (has_code(codes, unusable))
		return oa_xasprintf("fix: ollama-audit rm %s --apply", name);
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
