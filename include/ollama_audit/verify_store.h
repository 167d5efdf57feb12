/*
 * verify_store.h - `verify` on one scanned store, and what an earlier verify
 * found that `check` reports. The library makes every finding of both
 * (digest-mismatch, fingerprint-mismatch, ...); the CLI parses, calls and
 * renders.
 */
#ifndef OLLAMA_AUDIT_VERIFY_STORE_H
#define OLLAMA_AUDIT_VERIFY_STORE_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"
#include "ollama_audit/verify.h"
#include "ollama_audit/verify_cache.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct oa_verify_store_opts {
	/* The engine's options (jobs, mode, cache, changed_only, interrupt,
	 * max_duration, ...). run.progress's label is the name of the model the
	 * blob belongs to (a blob no selected model references: its file name). */
	oa_verify_opts run;
	const bool *selected; /* per model of the store: hash its blobs; NULL: every model */
	bool all;             /* also every other valid blob of the store (verify --all) */
} oa_verify_store_opts;

typedef struct oa_verify_store_result {
	size_t blobs;             /* blobs handed to the engine */
	size_t skipped_unchanged; /* --changed: the file is the one cached good */
	size_t not_done;          /* stopped (interrupt, max_duration) before they were done */
	oa_verify_totals tot;     /* the engine's totals */
} oa_verify_store_result;

/* Hash the blobs the selected models reference (configs too, each blob
 * once) and make the findings of a content pass: on return s->findings
 * holds the structure findings a content pass cannot do without
 * (missing-blob, missing-config, invalid-digest, unreadable,
 * invalid-manifest) and what hashing found (digest-mismatch,
 * fingerprint-mismatch, size-mismatch or empty-blob, missing-blob,
 * unreadable), a blob's content finding once for every model that
 * references it. Returns what oa_verify_run returns (0, 1 stopped early, -1
 * setup failure with err set); *out is filled in every case. */
OA_EXPORT int oa_verify_store(oa_store *s, const oa_verify_store_opts *o, oa_verify_store_result *out,
                              char *err, size_t errlen);

/* For `check`: add to s->findings, for every blob of the store that the
 * cache vc (may be NULL: nothing) holds a failed verify of for this very
 * file (same dev, ino, size, mtime and ctime), the finding verify raised
 * (digest-mismatch or fingerprint-mismatch), once for every model that
 * references the blob. Reads the cache and stats those files only: nothing
 * is hashed or written. */
OA_EXPORT void oa_verify_cached_findings(oa_store *s, oa_verify_cache *vc);

#endif
