/*
 * audit.h - one audit of a store, read by every command that reports its
 * findings (check, report, list, show, their metrics): the scan's findings
 * with the orphans the reference set holds dropped (prune keeps them), what
 * the server's logs say (load-failed, runner-changed), what can run here
 * (no-runtime-for-model) and what verify's cache found, in that order.
 *
 * The run's inputs (the logs to read, the machine, the verify cache) are
 * carried by an oa_audit that the caller makes once; what it reads is read
 * on first use and kept for the next store. Nothing here is a module global:
 * two audits on two threads share nothing.
 */
#ifndef OLLAMA_AUDIT_AUDIT_H
#define OLLAMA_AUDIT_AUDIT_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct oa_audit_options {
	const char *const *logs;  /* server logs to read (check's log findings); "-" is standard input */
	size_t n_logs;
	const char *root;         /* another machine's root: its journal and its runtimes, or NULL */
	const char *sysroot;      /* a fake machine's root for tests, or NULL */
	const char *cache_path;   /* verify's cache, or NULL: the default one */
	const char *llm_library;  /* OLLAMA_LLM_LIBRARY as set for the server, or NULL */
	const char *gpu_overhead; /* OLLAMA_GPU_OVERHEAD as set for the server, or NULL */
	bool drop_tag_facts;      /* free the scan's tag facts once the audit read them */
	/* The caller's rule for the default cache (cache_path NULL): true when
	 * it is not to be read (a cache inside a store is none of ours; the
	 * caller says so), and the audit goes on without one. NULL: read it. */
	bool (*default_cache_refused)(void *ctx, const char *path);
	void *ctx;
} oa_audit_options;

typedef struct oa_audit oa_audit;

/* An audit with these inputs (the strings are the caller's, kept until
 * oa_audit_free). */
OA_EXPORT oa_audit *oa_audit_new(const oa_audit_options *o);
OA_EXPORT void oa_audit_free(oa_audit *a);

/* What a caller reads of the findings: every one (check, report, show), or
 * only those that hide a model from `ollama list` (list: nothing is read
 * beyond the scan). */
enum oa_audit_scope { OA_AUDIT_ALL, OA_AUDIT_LISTING };

/* The findings of a scanned store, into s->findings, each with its fix
 * (oa_finding.fix, as oa_audit_fixes). */
OA_EXPORT void oa_audit_findings(oa_audit *a, oa_store *s, enum oa_audit_scope scope);
/* Fill in the fix of every finding of s that has none (after verify): its
 * code's remedy (finding.h) with the model's name, the file's path and the
 * store filled in; junk's from the plan a plain `prune` would make now. */
OA_EXPORT void oa_audit_fixes(oa_audit *a, oa_store *s);

/* What the audit could not read since the last call (a --log that failed,
 * a store's log file, --root without a journal, a verify cache that is
 * unreadable), one line each; failed: a source the caller named failed.
 * The caller frees the lines and the array. */
typedef struct oa_audit_problems {
	char **v;
	size_t n;
	bool failed;
} oa_audit_problems;
OA_EXPORT void oa_audit_take_problems(oa_audit *a, oa_audit_problems *out);
OA_EXPORT void oa_audit_problems_free(oa_audit_problems *p);

#endif
