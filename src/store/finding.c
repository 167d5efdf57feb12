/* finding.c - the finding vocabulary and a list of findings. */
#include "ollama_audit/finding.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const oa_finding_kind oa_finding_kinds[OA_FINDING_NCODES] = {
#define OA_FINDING_KIND_(id, code, sev, anchor, summary, flags, fix) \
	[OA_FINDING_##id] = { code, OA_SEV_##sev, anchor, summary, flags, fix },
	OA_FINDING_CODES(OA_FINDING_KIND_)
#undef OA_FINDING_KIND_
};

__attribute__((format(printf, 7, 0)))
static void add_v(oa_findings *f, oa_finding_code code, int sev, const char *model,
                  const char *digest, const char *path, const char *fmt, va_list ap)
{
	if ((unsigned)code >= OA_FINDING_NCODES)
		abort(); /* a programming error: not a value of the enum */
	const oa_finding_kind *k = &oa_finding_kinds[code];
	OA_ALLOC_GROW(f->v, f->n + 1, f->cap);
	oa_finding *x = &f->v[f->n++];
	x->id = code;
	x->code = k->code;
	x->severity = sev < 0 ? k->severity : (oa_severity)sev;
	x->model = model ? oa_xstrdup(model) : NULL;
	x->digest = digest ? oa_xstrdup(digest) : NULL;
	x->path = path ? oa_xstrdup(path) : NULL;
	x->message = oa_xvasprintf(fmt, ap);
	x->fix = NULL;
}

oa_finding_code oa_finding_code_of(const char *code)
{
	for (int i = 0; i < OA_FINDING_NCODES; i++)
		if (code && strcmp(oa_finding_kinds[i].code, code) == 0)
			return (oa_finding_code)i;
	return OA_FINDING_NCODES;
}

bool oa_finding_is(const oa_finding *f, unsigned flag)
{
	return (unsigned)f->id < OA_FINDING_NCODES && (oa_finding_kinds[f->id].flags & flag);
}

void oa_findings_add(oa_findings *f, oa_finding_code code, const char *model, const char *digest,
                     const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_v(f, code, -1, model, digest, path, fmt, ap);
	va_end(ap);
}

void oa_findings_add_sev(oa_findings *f, oa_finding_code code, oa_severity sev, const char *model,
                         const char *digest, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_v(f, code, (int)sev, model, digest, path, fmt, ap);
	va_end(ap);
}

void oa_findings_free(oa_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].model);
		free(f->v[i].digest);
		free(f->v[i].path);
		free(f->v[i].message);
		free(f->v[i].fix);
	}
	free(f->v);
	f->v = NULL;
	f->n = f->cap = 0;
}

size_t oa_findings_count(const oa_findings *f, oa_severity sev)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += f->v[i].severity == sev;
	return n;
}
