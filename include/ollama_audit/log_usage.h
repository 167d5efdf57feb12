/*
 * log_usage.h - what the server's logs say about each model of a store
 * (docs/history.md), from a history matched to it (oa_history_match): when
 * each model was last loaded (LAST USED), its newest failed load, which
 * models --unused-for takes as unused, and check's findings load-failed and
 * runner-changed.
 */
#ifndef OLLAMA_AUDIT_LOG_USAGE_H
#define OLLAMA_AUDIT_LOG_USAGE_H

#include "ollama_audit/export.h"

#include "ollama_audit/history.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per model of a store, indexed like s->models. */
typedef struct oa_log_usage {
	bool have_logs;     /* some log source was read */
	bool logs_known;    /* logs_from/logs_to are set */
	int64_t logs_from, logs_to;
	bool *loaded;       /* per model: a load of it is in the logs */
	int64_t *last_ns;   /* per model: its newest load */
	char **failure;     /* per model: its newest failed load ("TIME: reason"), or NULL */
	size_t n_failure;   /* the models failure covers (the store may be closed before release) */
	char **sources;     /* the log sources read (owned: oa_log_usage_free frees them) */
	size_t n_sources;
	char *server_version; /* the version the newest server start in the logs announced (owned), or NULL */
} oa_log_usage;

/* Fill u from h, matched to s and sorted newest first (oa_history_match).
 * sources (n_sources names, taken over by u) are the sources h was read
 * from; with none there are no logs. A list's other rows take their tag's
 * failure. Free with oa_log_usage_free. */
OA_EXPORT void oa_log_usage_of(oa_log_usage *u, const oa_history *h, const oa_store *s, char **sources,
                               size_t n_sources);
OA_EXPORT void oa_log_usage_free(oa_log_usage *u);

/* --unused-for: is model idx not loaded since cutoff_ns (never, as far as
 * the logs go) and not pulled since either (a manifest written is a use)?
 * Without logs nothing is unused. */
OA_EXPORT bool oa_log_usage_unused(const oa_log_usage *u, const oa_store *s, size_t idx, int64_t cutoff_ns);
/* The last use of model idx as --unused-for takes it: its newest load in
 * the logs or its pull (the manifest written), whichever is newer; false
 * without logs. */
OA_EXPORT bool oa_log_usage_last_use(const oa_log_usage *u, const oa_store *s, size_t idx, int64_t *ns);

/* check: add load-failed (the model's latest load failed) and
 * runner-changed (its latest load of its own ran on another engine than its
 * files select now, for s->platform) to s->findings, from h matched to s. */
OA_EXPORT void oa_history_findings(const oa_history *h, oa_store *s);

#endif
