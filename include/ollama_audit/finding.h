/*
 * finding.h - the vocabulary of problems an audit reports, after git fsck:
 * a stable kebab-case code, a severity, what it concerns and one line of text.
 * The codes are part of the JSON schema: add new ones, never rename.
 */
#ifndef OLLAMA_AUDIT_FINDING_H
#define OLLAMA_AUDIT_FINDING_H

#include "ollama_audit/severity.h"

#include <stddef.h>

typedef struct oa_finding_kind {
	const char *code;
	oa_severity severity; /* the default severity of this code */
	const char *summary;  /* what it means, for --help and docs */
} oa_finding_kind;

/* The table of every code, terminated by a NULL code. */
extern const oa_finding_kind oa_finding_kinds[];
const oa_finding_kind *oa_finding_kind_get(const char *code);

typedef struct oa_finding {
	const char *code;  /* static, from the table */
	oa_severity severity;
	char *model;       /* display name, or NULL for store-wide findings */
	char *digest;      /* "sha256:<hex>" or NULL */
	char *path;        /* path relative to the store root, or NULL */
	char *message;     /* one line, printable */
} oa_finding;

typedef struct oa_findings {
	oa_finding *v;
	size_t n, cap;
} oa_findings;

/* Add a finding with the code's default severity. */
void oa_findings_add(oa_findings *f, const char *code, const char *model, const char *digest,
                     const char *path, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Same with an explicit severity. */
void oa_findings_add_sev(oa_findings *f, const char *code, oa_severity sev, const char *model,
                         const char *digest, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
void oa_findings_free(oa_findings *f);
size_t oa_findings_count(const oa_findings *f, oa_severity sev);

#endif
