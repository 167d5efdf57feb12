/*
 * last_used.h - the "last_used" field of list and du (docs/history.md):
 * when the server's logs last show one of a row's models loaded.
 */
#ifndef OLLAMA_AUDIT_LAST_USED_H
#define OLLAMA_AUDIT_LAST_USED_H

#include "ollama_audit/export.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the logs say about each model of a store, indexed like s->models.
 * Without logs (have_logs false) the arrays may be NULL. */
typedef struct oa_last_used {
	bool have_logs;
	const bool *loaded;     /* a load of the model is in the logs */
	const int64_t *last_ns; /* its newest load, Unix ns */
	char *const *sources;   /* the log files (or "journal") read, for "log_sources" */
	size_t n_sources;
} oa_last_used;

/* The newest load of any of the models (indexes); false when none is in the logs. */
OA_EXPORT bool oa_last_used_newest(const oa_last_used *u, const size_t *models, size_t n, int64_t *ns);
/* Adds "last_used" to o (an ISO-8601 UTC time, or null: not in the logs)
 * when there are logs; u NULL or without logs adds nothing. */
OA_EXPORT void oa_view_last_used(const oa_last_used *u, const size_t *models, size_t n, json_t *o);

#endif
