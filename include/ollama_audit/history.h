/*
 * history.h - the record of model loads an Ollama server left in its logs:
 * one event per load, however many lines describe it (logline.h reads the
 * lines). Sources are fed one at a time, each as the ordered lines of one
 * file, stream or journal; then the events are matched to the models of a
 * store by blob digest (a path from any machine) or by name (MLX).
 */
#ifndef OLLAMA_AUDIT_HISTORY_H
#define OLLAMA_AUDIT_HISTORY_H

#include "ollama_audit/export.h"

#include "ollama_audit/logline.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum oa_load_result { OA_LOAD_UNKNOWN, OA_LOAD_OK, OA_LOAD_FAILED };
OA_EXPORT const char *oa_load_result_name(enum oa_load_result r);

typedef struct oa_load {
	bool has_time;
	int64_t time_ns;
	int tz_min;
	enum oa_log_runner runner;
	char *logged;           /* the model as logged (blob path or name), "" if none */
	oa_digest_hex digest;   /* of a blob path, or "" */
	enum oa_load_result result;
	char *reason;           /* failure reason, or NULL */
	int64_t failed_ns;      /* when the failure was logged (result failed) */
	uint64_t mem_required, mem_sys_total, mem_sys_free, mem_gpu_free, mem_peak;
	char *version;          /* server version announced earlier in the source, or NULL */
	char *source;           /* file name or "journal" */
	unsigned long line;     /* of the line that started the load */
	/* Matched by oa_history_match(): the store's models this load ran. */
	size_t *models;
	size_t n_models;
} oa_load;

typedef struct oa_history {
	oa_load *v;
	size_t n, cap;
	char **warnings;        /* "FILE:LINE: what", in reading order */
	size_t n_warnings, warn_cap;
	size_t warnings_dropped; /* beyond the first OA_HISTORY_WARN_MAX */
	bool any_time;
	int64_t first_ns, last_ns; /* the times the sources cover */
	size_t n_sources;
	/* Per-source state while feeding. */
	char *src;
	char *version;
	long open;              /* the load whose result is still to come, or -1 */
	long last;              /* the source's latest load, or -1 */
	bool open_started;      /* its runner start line was seen (not only a hint) */
	oa_log_line pre;        /* memory figures logged before the load they belong to */
	/* The server start the sources show last ("Listening on ... (version
	 * X)"): by time, else the last one read. */
	char *started_version;  /* NULL when none was logged */
	bool started_timed;
	int64_t started_ns;
} oa_history;

#define OA_HISTORY_WARN_MAX 50

OA_EXPORT void oa_history_init(oa_history *h);
OA_EXPORT void oa_history_free(oa_history *h);

/* Feed one source: begin, every line in order, end. */
OA_EXPORT void oa_history_begin(oa_history *h, const char *source);
/* One line; fallback_ns (or -1) is the time the storage gave it (the
 * journal's own timestamp) for lines that carry none. */
OA_EXPORT void oa_history_line(oa_history *h, const char *p, size_t n, unsigned long lineno, int64_t fallback_ns);
OA_EXPORT void oa_history_end(oa_history *h);

/* Read a whole stream as one source. Lines longer than 1 MiB are cut (with
 * a warning). Returns 0, or -1 with errno on a read error. */
OA_EXPORT int oa_history_read_fd(oa_history *h, int fd, const char *source);

/* The same for bytes in memory (standard input read once, a journal). */
OA_EXPORT void oa_history_read_mem(oa_history *h, const void *data, size_t len, const char *source);

/* Match every load to the store's models and sort newest first. */
OA_EXPORT void oa_history_match(oa_history *h, oa_store *s);

/* Does the store's model `idx` have loads, and the newest one's time. */
OA_EXPORT bool oa_history_last_load(const oa_history *h, size_t idx, int64_t *ns);

#endif
