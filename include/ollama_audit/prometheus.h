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

#include "ollama_audit/export.h"

#include "ollama_audit/last_used.h"
#include "ollama_audit/metrics.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Every metric, once, in output order: X(ID, "name", "type", "help"). The
 * names oa_prom_add takes, the HELP and TYPE lines and enum oa_prom_metric
 * all come from this list. HELP strings are fixed: never a store, host or
 * count in them (node_exporter drops a metric whose HELP differs between
 * files). Append; never rename.
 */
#define OA_PROM_METRICS(X) \
	X(INFO, "ollama_store_info", "gauge", \
	  "Ollama model store on this host (always 1); source says how it was found.") \
	X(MODELS, "ollama_store_models", "gauge", "Models (manifests) in the store, by format.") \
	X(BLOBS, "ollama_store_blobs", "gauge", \
	  "Entries under blobs/, by state (referenced, orphaned, partial, temp, foreign).") \
	X(BLOBS_BYTES, "ollama_store_blobs_bytes", "gauge", \
	  "Allocated bytes of the entries under blobs/, by state; each inode counted once per store.") \
	X(BLOBS_APPARENT_BYTES, "ollama_store_blobs_apparent_bytes", "gauge", \
	  "Apparent bytes (st_size) of the entries under blobs/, by state; each inode counted once per store.") \
	X(FINDINGS, "ollama_store_findings", "gauge", "Audit findings, by code and severity.") \
	X(FINDINGS_BY_SEVERITY, "ollama_store_findings_by_severity", "gauge", \
	  "Audit findings, by severity; 0 when there are none.") \
	X(RECLAIMABLE_BYTES, "ollama_store_reclaimable_bytes", "gauge", \
	  "Allocated bytes prune would free now (orphans, partials, temps older than 1 h).") \
	X(MODEL_INFO, "ollama_store_model_info", "gauge", "Model metadata (always 1).") \
	X(MODEL_SIZE_BYTES, "ollama_store_model_size_bytes", "gauge", \
	  "Model size as ollama list shows it (sum of the manifest's layer sizes).") \
	X(MODEL_UNIQUE_BYTES, "ollama_store_model_unique_bytes", "gauge", \
	  "Allocated bytes only this model uses (freed if it alone were removed).") \
	X(LAST_AUDIT_TIMESTAMP_SECONDS, "ollama_store_last_audit_timestamp_seconds", "gauge", \
	  "Unix time the last audit of the store finished.") \
	X(AUDIT_DURATION_SECONDS, "ollama_store_audit_duration_seconds", "gauge", \
	  "Seconds the last audit of the store took.") \
	X(AUDIT_SUCCESS, "ollama_store_audit_success", "gauge", \
	  "1 if the last audit read the whole store, 0 if it could not open it or parts were unreadable.") \
	X(VERIFIED_BYTES, "ollama_store_verified_bytes", "gauge", "Bytes whose sha256 the last verify computed.") \
	X(QUARANTINE_BYTES, "ollama_store_quarantine_bytes", "gauge", \
	  "Allocated bytes a quarantine of the store holds (prune/rm --quarantine; restore --empty frees them).") \
	X(QUARANTINE_ENTRIES, "ollama_store_quarantine_entries", "gauge", \
	  "Entries a quarantine of the store holds.") \
	X(DUPLICATE_BYTES, "ollama_store_duplicate_bytes", "gauge", \
	  "Allocated bytes that blobs duplicated across the stores of this host cost (one copy each kept).") \
	X(MODEL_LAST_USED_TIMESTAMP_SECONDS, "ollama_store_model_last_used_timestamp_seconds", "gauge", \
	  "Unix time of the model's newest load in the server's logs; absent for a model they show no load of.")

typedef enum oa_prom_metric {
#define OA_PROM_ENUM_(id, name, type, help) OA_PROM_##id,
	OA_PROM_METRICS(OA_PROM_ENUM_)
#undef OA_PROM_ENUM_
	OA_PROM_NMETRICS
} oa_prom_metric;

typedef struct oa_prom oa_prom;

OA_EXPORT oa_prom *oa_prom_new(void);
/* The same for one job (check, verify, du): every family is written as
 * ollama_<job>_... instead of ollama_store_..., so that the files of several
 * jobs can lie in one textfile-collector directory (node_exporter rejects a
 * family that two files define). NULL is oa_prom_new(). */
OA_EXPORT oa_prom *oa_prom_new_job(const char *job);
OA_EXPORT void oa_prom_free(oa_prom *p);

/* One sample of a metric of OA_PROM_METRICS, by name (no check at run time
 * beyond "is it in the list"). Labels: name/value string pairs, NULL-ended.
 * Returns 0; a name not in the list adds nothing and returns -1, and in a
 * debug build (the library compiled without NDEBUG) says so on stderr and
 * aborts. */
OA_EXPORT int oa_prom_add(oa_prom *p, const char *metric, double value, ...);

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
	/* The store's metrics (oa_store_metrics_compute): blobs and bytes by
	 * state, reclaimable bytes, each model's unique bytes, and a quarantine
	 * of the store when metrics->du.quarantine is set (du --quarantine DIR).
	 * Nothing is measured here: NULL leaves those families out. */
	const oa_store_metrics *metrics;
	/* What the server's logs say about each model (last_used.h): a
	 * model's newest load, for the models they show loaded. NULL, or no
	 * logs: that family is left out. */
	const oa_last_used *last_used;
} oa_prom_store;

/* Every per-store metric of a scanned store: info, models by format, blobs
 * and bytes by state, findings by code and severity, reclaimable bytes,
 * model info and unique bytes, audit timestamp/duration/success, verified
 * bytes, each model's last use. */
OA_EXPORT void oa_prom_add_store(oa_prom *p, const oa_store *s, const oa_prom_store *info);
/* A store that could not be opened: info, timestamp and success 0. */
OA_EXPORT void oa_prom_add_failed(oa_prom *p, const char *store, const oa_prom_store *info);

/* Write every family (HELP, TYPE, samples) in the table's order. */
OA_EXPORT void oa_prom_write(const oa_prom *p, FILE *out);

/* The blob state of a blobs/ entry: referenced, orphaned, partial, temp,
 * foreign (oa_blob_state_of, metrics.h). */
OA_EXPORT const char *oa_prom_blob_state(const oa_blob *b);

#endif
