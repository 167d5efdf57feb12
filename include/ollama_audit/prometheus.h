/*
 * prometheus.h - store metrics in the Prometheus text exposition format, for
 * node_exporter's textfile collector (docs/multi-store.md, "Prometheus").
 *
 * Conventions (spec anchors §5.6): one prefix, ollama_store_; base units in
 * names (_bytes, _seconds); gauges only (every value is a fresh measurement);
 * one fixed HELP string per metric whatever the host or store, so files from
 * many runs never disagree; labels store, user, model, state and a few
 * low-cardinality ones (format, severity, code); never a digest as a label;
 * no sample timestamps (node_exporter skips a file that has any). A series
 * is written once: a later sample with the same labels is dropped.
 */
#ifndef OLLAMA_AUDIT_PROMETHEUS_H
#define OLLAMA_AUDIT_PROMETHEUS_H

#include "ollama_audit/du.h"
#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct oa_prom oa_prom;

OA_EXPORT oa_prom *oa_prom_new(void);
/* The same for one job (check, verify, du): every family is written as
 * ollama_<job>_... instead of ollama_store_..., so that the files of several
 * jobs can lie in one textfile-collector directory (node_exporter rejects a
 * family that two files define). NULL is oa_prom_new(). */
OA_EXPORT oa_prom *oa_prom_new_job(const char *job);
OA_EXPORT void oa_prom_free(oa_prom *p);

/* One sample of a metric of the fixed table (name without checks at run
 * time beyond "is it in the table": an unknown name aborts in debug builds
 * and is dropped otherwise). Labels: name/value string pairs, NULL-ended. */
OA_EXPORT void oa_prom_add(oa_prom *p, const char *metric, double value, ...);

/* What the caller knows about one store's audit. */
typedef struct oa_prom_store {
	const char *user;        /* owner of the store root */
	const char *source;      /* how it was found */
	double timestamp;        /* wall clock when the audit finished */
	double duration;         /* seconds the audit took */
	bool success;            /* read completely */
	bool verified;           /* a content pass ran: verified_bytes is meaningful */
	uint64_t verified_bytes;
	bool no_findings;        /* the job looked for none (du): no findings families */
	const oa_du_store *du;   /* du's result for this store, all rows in du's order, or
	                          * NULL: reclaimable and unique bytes are computed here */
	const char *quarantine;  /* a quarantine of this store (du --quarantine DIR), or NULL */
	size_t quarantine_entries;
	uint64_t quarantine_bytes;
} oa_prom_store;

/* Every per-store metric of a scanned store: info, models by format, blobs
 * and bytes by state, findings by code and severity, reclaimable bytes,
 * model info and unique bytes, audit timestamp/duration/success, verified
 * bytes. The store is not changed (du and junk need it non-const). */
OA_EXPORT void oa_prom_add_store(oa_prom *p, oa_store *s, const oa_prom_store *info);
/* A store that could not be opened: info, timestamp and success 0. */
OA_EXPORT void oa_prom_add_failed(oa_prom *p, const char *store, const oa_prom_store *info);

/* Write every family (HELP, TYPE, samples) in the table's order. */
OA_EXPORT void oa_prom_write(const oa_prom *p, FILE *out);

/* The blob state of a blobs/ entry: referenced, orphaned, partial, temp, foreign. */
OA_EXPORT const char *oa_prom_blob_state(const oa_blob *b);

#endif
