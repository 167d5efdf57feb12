/*
 * verify.h - the blob integrity engine: hash many files in parallel and
 * compare with the digest their name promises.
 *
 * A pool of pthreads takes jobs largest first. Each worker owns one read
 * buffer (opts.buffer_size), so memory is jobs x buffer whatever the blob
 * sizes. A file is read once, sequentially, feeding SHA-256 (OpenSSL EVP) and
 * XXH3-128 in the same pass; the XXH3-128 fingerprint goes to the cache so a
 * later QUICK run can re-check the content at XXH3 speed. Page-cache pages
 * that a verify brought in are dropped behind the reader (pages that were
 * already cached are left alone), so verifying a 100 GB store does not evict
 * what the machine is using.
 *
 * Stopping: when *opts.interrupt becomes non-zero or opts.max_duration has
 * passed, workers abandon the file in progress at the next chunk boundary
 * and take no new job; every job not finished is OA_VERIFY_NOT_DONE. What was
 * verified is in the cache, so a later run with changed_only continues.
 */
#ifndef OLLAMA_AUDIT_VERIFY_H
#define OLLAMA_AUDIT_VERIFY_H

#include "ollama_audit/export.h"

#include "ollama_audit/digest.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ollama_audit/verify_cache.h"

#define OA_VERIFY_SIZE_UNKNOWN UINT64_MAX
#define OA_VERIFY_DEFAULT_BUFFER (1u << 20)   /* per worker; see tests/bench/README-verify.md */
#define OA_VERIFY_DEFAULT_RACY_WINDOW 2.0      /* seconds; see oa_verify_opts.racy_window */

typedef struct oa_verify_job {
	const char *path;          /* the blob file */
	oa_digest_hex expected_hex; /* expected sha256, 64 hex (upper case accepted) */
	uint64_t expected_size;    /* from the manifest, or OA_VERIFY_SIZE_UNKNOWN */
	void *user;                /* caller's, untouched */
} oa_verify_job;

typedef enum oa_verify_mode {
	OA_VERIFY_SHA256 = 0, /* full SHA-256 of every blob (plus XXH3-128 for the cache) */
	OA_VERIFY_QUICK,      /* XXH3-128 vs the cached fingerprint; SHA-256 when not cached */
} oa_verify_mode;

typedef enum oa_verify_status {
	OA_VERIFY_NOT_DONE = 0,         /* interrupted / out of time before it finished */
	OA_VERIFY_OK,                   /* SHA-256 matches (or, by_fingerprint, XXH3-128 matches the cache) */
	OA_VERIFY_DIGEST_MISMATCH,      /* SHA-256 differs from expected_hex */
	OA_VERIFY_FINGERPRINT_MISMATCH, /* quick mode: content changed since it was verified */
	OA_VERIFY_SIZE_MISMATCH,        /* file size != expected_size: bad without reading it */
	OA_VERIFY_MISSING,              /* ENOENT / ENOTDIR */
	OA_VERIFY_UNREADABLE,           /* open/read error (err), or not a regular file */
	OA_VERIFY_SKIPPED_UNCHANGED,    /* changed_only: stat equals the cached good entry */
	OA_VERIFY_ERROR,                /* internal failure (OpenSSL, memory); err may say ENOMEM */
	OA_VERIFY_STATUS_COUNT
} oa_verify_status;

typedef struct oa_verify_result {
	oa_verify_status status;
	int err;                /* errno for MISSING / UNREADABLE / ERROR, else 0 */
	bool by_fingerprint;    /* quick mode checked XXH3-128 only (sha256_hex is "") */
	bool stat_valid;        /* st was filled (the file was opened) */
	bool cache_updated;     /* this result was written to the cache */
	oa_digest_hex sha256_hex; /* computed SHA-256, "" if not computed */
	char xxh128_hex[33];    /* computed XXH3-128, "" if not computed */
	uint64_t bytes_hashed;  /* bytes read and hashed (partial for an abandoned job) */
	oa_file_stamp st;       /* fstat after open */
} oa_verify_result;

typedef struct oa_verify_totals {
	size_t jobs;                            /* number of jobs */
	size_t count[OA_VERIFY_STATUS_COUNT];   /* results per status */
	uint64_t bytes_total;                   /* planned bytes (expected or stat sizes) */
	uint64_t bytes_hashed;                  /* bytes actually read and hashed */
	double seconds;                         /* wall time of oa_verify_run */
	int threads;                            /* workers used */
	bool interrupted;                       /* *interrupt was seen */
	bool timed_out;                         /* max_duration passed */
} oa_verify_totals;

/* bytes_done counts hashed bytes plus the sizes of skipped / finished-early
 * jobs, so it ends at bytes_total on a complete run. label is the path of the
 * job started most recently (NULL before the first). */
typedef void (*oa_verify_progress_fn)(void *ctx, uint64_t bytes_done, uint64_t bytes_total,
                                      const char *label);
/* Called from a worker thread for every job a worker took, as it finishes or
 * is abandoned (status NOT_DONE); must be thread-safe. */
typedef void (*oa_verify_result_fn)(void *ctx, size_t job_index, const oa_verify_result *r);

typedef struct oa_verify_opts {
	int jobs;                          /* worker threads; 0 = online CPUs (capped at the job count) */
	oa_verify_mode mode;
	double max_duration;               /* seconds; 0 = no limit */
	volatile sig_atomic_t *interrupt;  /* non-zero = stop (set by a SIGINT handler); may be NULL */
	oa_verify_progress_fn progress;    /* called from the calling thread only, <= 1/progress_interval Hz */
	void *progress_ctx;
	double progress_interval;          /* seconds between progress calls (default 0.1) */
	oa_verify_result_fn on_result;     /* optional, see above */
	void *result_ctx;
	oa_verify_cache *cache;            /* may be NULL: no fingerprints, no changed_only */
	bool changed_only;                 /* skip files whose stat equals the cached good entry */
	size_t buffer_size;                /* read buffer per worker (default OA_VERIFY_DEFAULT_BUFFER) */
	/* changed_only trusts a cached stat only when the file's ctime is older
	 * than the verification by more than this many seconds: a write landing
	 * in the same timestamp tick right after we verified would otherwise go
	 * unnoticed (git's "racily clean" problem). 2 s covers 1-2 s timestamp
	 * filesystems (HFS+, FAT, ext3). Tests set 0. */
	double racy_window;
} oa_verify_opts;

/* Defaults: jobs 0, SHA256, no limit, progress every 0.1 s, buffer
 * OA_VERIFY_DEFAULT_BUFFER, racy_window OA_VERIFY_DEFAULT_RACY_WINDOW. */
OA_EXPORT void oa_verify_opts_init(oa_verify_opts *opts);

/* Verify n jobs; results[i] belongs to jobs[i] (the caller allocates n).
 * totals may be NULL. Returns 0 when every job was processed, 1 when stopped
 * early (interrupt / max_duration: some results are NOT_DONE), -1 on a setup
 * failure (no thread could start, OpenSSL has no SHA-256, out of memory) with
 * err set and every result NOT_DONE. A file's SHA-256 result, good or a
 * mismatch, replaces that file's own entry in opts->cache (when the file did
 * not change while it was read; other files claiming the digest keep
 * theirs). Saving the cache is the caller's job (oa_verify_cache_save). */
OA_EXPORT int oa_verify_run(const oa_verify_job *jobs, size_t n, const oa_verify_opts *opts,
                  oa_verify_result *results, oa_verify_totals *totals, char *err, size_t errlen);

/* "ok", "digest-mismatch", "fingerprint-mismatch", "size-mismatch", "missing",
 * "unreadable", "skipped-unchanged", "not-done", "error". */
OA_EXPORT const char *oa_verify_status_name(oa_verify_status s);

/* True for statuses that mean the blob is bad (mismatch, size, missing, unreadable). */
OA_EXPORT bool oa_verify_status_is_failure(oa_verify_status s);

#endif
