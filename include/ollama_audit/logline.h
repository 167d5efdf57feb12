/*
 * logline.h - one line of an Ollama server log, as the history of model
 * loads needs it. The server writes Go slog text lines (time=... level=...
 * source=... msg=... key=value...); a line may carry the prefix of whatever
 * stored it: a journalctl text export ("Nov 20 07:15:02 host ollama[123]: "),
 * `docker logs -t` (a leading RFC 3339 time) or docker compose ("name  | ").
 *
 * The parser is pure: bytes in, facts out, nothing allocated. The formats
 * and the Ollama versions that write them are listed in docs/history.md.
 */
#ifndef OLLAMA_AUDIT_LOGLINE_H
#define OLLAMA_AUDIT_LOGLINE_H

#include "ollama_audit/export.h"

#include "ollama_audit/digest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a line says about model loads. */
enum oa_log_kind {
	OA_LOG_NONE,     /* nothing we use (most lines: GIN, llama.cpp, other slog) */
	OA_LOG_VERSION,  /* "Listening on ... (version X)": a server started */
	OA_LOG_LOAD,     /* a runner started for a model */
	OA_LOG_HINT,     /* the model of the runner about to start (0.3x+ llama-server) */
	OA_LOG_ENGINE,   /* "MLX engine initialized": the runner is MLX */
	OA_LOG_LOADED,   /* the runner answered: the load succeeded */
	OA_LOG_FAILED,   /* the load failed or the runner died; reason set */
	OA_LOG_MEMORY,   /* memory figures only */
};

/* The engine a runner uses, as `ollama ps` labels it. */
enum oa_log_runner { OA_LR_UNKNOWN, OA_LR_LLAMACPP, OA_LR_OLLAMA, OA_LR_MLX };
OA_EXPORT const char *oa_log_runner_name(enum oa_log_runner r);

#define OA_LOG_MODEL_MAX 1024
#define OA_LOG_TEXT_MAX 256

typedef struct oa_log_line {
	enum oa_log_kind kind;
	bool slog;             /* the line is a slog line (time=...) */
	bool has_time;         /* time_ns is known (slog time=, or a prefix with a year) */
	int64_t time_ns;       /* Unix time, nanoseconds */
	int tz_min;            /* the zone offset the line was written in, minutes east */
	enum oa_log_runner runner;
	bool after_start;      /* a HINT logged after its runner started (0.40's "loading model via") */
	char model[OA_LOG_MODEL_MAX]; /* a blob path or a model name, as logged */
	oa_digest_hex digest;  /* the sha256 hex of a blob path in model, or "" */
	char version[64];
	char reason[OA_LOG_TEXT_MAX];
	/* Bytes, 0 when the line does not give the figure. */
	uint64_t mem_required, mem_sys_total, mem_sys_free, mem_gpu_free, mem_peak;
} oa_log_line;

/* Parse one line (n bytes, no newline needed; NUL bytes allowed). Returns 0,
 * or -1 when the line claims to be slog but is malformed (bad time, an
 * unterminated quote, a load line without its model): *why says what. The
 * output is filled as far as it could be either way. */
OA_EXPORT int oa_log_parse_line(const char *p, size_t n, oa_log_line *out, char *why, size_t whylen);

/* An RFC 3339 time (2024-09-26T18:08:31.326+02:00, ...Z, or +0200) into Unix
 * nanoseconds and the zone in minutes. Returns the bytes used, 0 if none. */
OA_EXPORT size_t oa_log_parse_time(const char *p, size_t n, int64_t *ns, int *tz_min);

/* A size as slog prints Ollama's format.HumanBytes2: "5.8 GiB", "787.5 MiB",
 * "0 B" (also SI "1.2 GB"; brackets around a list take its first entry).
 * Returns 0, or -1 when it is not one. */
OA_EXPORT int oa_log_parse_size(const char *s, uint64_t *bytes);

/* The sha256 hex of a blob path (sha256-<64 hex> or sha256:<64 hex>, any
 * directory, any machine's path), lowercase into hex; false when none. */
OA_EXPORT bool oa_log_blob_digest(const char *path, oa_digest_hex hex);

#endif
