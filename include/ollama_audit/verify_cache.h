/*
 * verify_cache.h - what `verify` remembers between runs.
 *
 * One JSON file, by default $XDG_CACHE_HOME/ollama-audit/verify-cache.json
 * (else $HOME/.cache/ollama-audit/verify-cache.json), never inside a store:
 *
 *   {"schema":"ollama-audit.verify-cache/3",
 *    "entries":{"<64 hex sha256>":[{"dev":..,"ino":..,"size":..,"mtime_ns":..,
 *               "ctime_ns":..,"xxh128":"<32 hex>","verified_at":<unix s, fractional>
 *               [,"failed":"digest-mismatch"|"fingerprint-mismatch"]}, ...]}}
 *
 * /2 added "failed": the entry then records a verify that found this very
 * file corrupt (xxh128 is what the file holds, not what it should), so `show`
 * and `check` can say the model cannot run until the file changes or verifies
 * good. A failed entry is never a fingerprint for --quick and never skipped
 * by --changed. /3 keeps one entry per file (dev, ino) under a digest, where
 * /1 and /2 kept one a digest: with several stores holding copies of a blob,
 * the last one verified replaced the others' entries, so a corrupt copy in
 * one store erased the good result of another (and the reverse). /1 and /2
 * files load (a /1 entry as a good one) and are saved back as /3; any other
 * schema is ignored with a warning.
 *
 * Keying: by the blob's sha256 hex, then by the file (dev, ino). An entry
 * means "this file, claiming that content, was verified with SHA-256, and
 * its XXH3-128 is xxh128"; a good entry's fingerprint is a property of the
 * content, so quick mode may use it for any file claiming that digest that
 * has no entry of its own. The stat part (dev, ino, size, mtime, ctime) names
 * the one file that was verified; changed_only trusts an entry only when all
 * five match. A digest keeps at most OA_VERIFY_CACHE_MAX_COPIES files; a new
 * one beyond that replaces the entry verified longest ago. dev and ino are
 * stored as JSON integers (two's complement int64 when above INT64_MAX; read
 * back losslessly).
 *
 * Thread safety: every function on one cache takes its internal mutex, so
 * verify workers may look up / update / remove concurrently.
 */
#ifndef OLLAMA_AUDIT_VERIFY_CACHE_H
#define OLLAMA_AUDIT_VERIFY_CACHE_H

#include "ollama_audit/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OA_VERIFY_CACHE_SCHEMA "ollama-audit.verify-cache/3"
#define OA_VERIFY_CACHE_SCHEMA_V2 "ollama-audit.verify-cache/2" /* still read */
#define OA_VERIFY_CACHE_SCHEMA_V1 "ollama-audit.verify-cache/1" /* still read */
#define OA_VERIFY_CACHE_MAX_COPIES 16 /* files remembered per digest */

typedef struct oa_verify_cache oa_verify_cache;

/* A file's identity and timestamps as fstat saw them. */
typedef struct oa_file_stamp {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
} oa_file_stamp;

typedef struct oa_verify_cache_entry {
	oa_file_stamp st;   /* the file that was verified */
	char xxh128[33];    /* XXH3-128 of the content, 32 lowercase hex (canonical, big-endian) */
	double verified_at; /* wall-clock seconds since the epoch when the verification
	                       started reading the file (the racy-window reference) */
	char failed[24];    /* "" = verified good; else the finding code verify raised
	                       ("digest-mismatch", "fingerprint-mismatch") */
} oa_verify_cache_entry;

/* What the cache says about one file now. */
enum oa_verify_state {
	OA_VSTATE_UNVERIFIED, /* no entry, or one that describes another file or an older state of it */
	OA_VSTATE_VERIFIED,   /* this very file (same stamp) verified good */
	OA_VSTATE_FAILED,     /* this very file (same stamp) failed verify */
};

OA_EXPORT const char *oa_verify_state_name(enum oa_verify_state s); /* "unverified", "verified", "failed" */

/* All five stamp fields equal. */
OA_EXPORT bool oa_file_stamp_equal(const oa_file_stamp *a, const oa_file_stamp *b);

/* The stamp of path without following a final symlink (a symlink's own
 * stamp never matches a verified file's). 0, or -1 with errno. */
OA_EXPORT int oa_file_stamp_of(const char *path, oa_file_stamp *out);

/* The state of the file stamped `now` that claims digest hex, by that
 * file's own entry (another copy's says nothing about it); *e (may be NULL)
 * gets the entry when the state is VERIFIED or FAILED. */
OA_EXPORT enum oa_verify_state oa_verify_cache_judge(oa_verify_cache *c, const char *hex, const oa_file_stamp *now,
                                           oa_verify_cache_entry *e);

/* Default cache file path into buf. Returns 0, or -1 (no XDG_CACHE_HOME/HOME,
 * or buf too small). */
OA_EXPORT int oa_verify_cache_default_path(char *buf, size_t len);

/* Open (load) a cache. path NULL = the default path. A missing file is an empty
 * cache. An unreadable or corrupt file (bad JSON, wrong schema) is an empty
 * cache plus a warning in err; invalid single entries are dropped with a
 * warning. A file someone else could have written is not read (an empty
 * cache and a warning): one owned by another user than the one running,
 * writable by group or others, or a symlink (opened O_NOFOLLOW and judged
 * by fstat of that open file). So: on success err is "" or a warning to
 * print. Returns NULL only when no path can be determined or memory runs
 * out (err says why). */
OA_EXPORT oa_verify_cache *oa_verify_cache_open(const char *path, char *err, size_t errlen);

/* The same with only the entries that record a failure (failed != ""): what
 * check's cached findings ask of it (lookups of a good entry find nothing),
 * at a fraction of the memory. Read-only: oa_verify_cache_update and
 * oa_verify_cache_save refuse it (-1), so it never writes a partial table
 * over the file; remove and remove_file change only the table. */
OA_EXPORT oa_verify_cache *oa_verify_cache_open_failed(const char *path, char *err, size_t errlen);

/* The file path this cache loads from / saves to. */
OA_EXPORT const char *oa_verify_cache_path(const oa_verify_cache *c);

/* Copy an entry for hex into *out: of the files claiming it, the one
 * verified good most recently, else the latest failure. Returns true if
 * there is one. */
OA_EXPORT bool oa_verify_cache_lookup(oa_verify_cache *c, const char *hex, oa_verify_cache_entry *out);

/* Copy the entry of the file (dev, ino) claiming hex into *out. Returns
 * true if present (whatever its size and times say now). */
OA_EXPORT bool oa_verify_cache_lookup_file(oa_verify_cache *c, const char *hex, uint64_t dev, uint64_t ino,
                                           oa_verify_cache_entry *out);

/* Insert or replace the entry of the file e->st names (its dev, ino) under
 * hex: a good result replaces that file's failure and the reverse; the
 * entries of other files claiming hex stay. Returns 0, -1 on a bad
 * hex/xxh128/failed code or OOM. */
OA_EXPORT int oa_verify_cache_update(oa_verify_cache *c, const char *hex, const oa_verify_cache_entry *e);

/* Remove every entry for hex (no-op if absent). */
OA_EXPORT void oa_verify_cache_remove(oa_verify_cache *c, const char *hex);

/* Remove the entry of the file (dev, ino) claiming hex (no-op if absent). */
OA_EXPORT void oa_verify_cache_remove_file(oa_verify_cache *c, const char *hex, uint64_t dev, uint64_t ino);

/* Number of entries (files, over every digest). */
OA_EXPORT size_t oa_verify_cache_count(oa_verify_cache *c);

/* True when there are changes not yet saved. */
OA_EXPORT bool oa_verify_cache_dirty(oa_verify_cache *c);

/* Write the cache atomically: mkdir -p the directory (0700), write
 * ".<name>.<pid>.tmp" (0600), fsync, rename over path, fsync the directory
 * (outfile.h). Writes even when not dirty. A file that open did not read
 * because of its owner or mode is never written again as it was: a fresh
 * file of this user, mode 0600, replaces it where the directory is this
 * user's or root's and writable by no one else (err then says so: 0 with a
 * note), else nothing is written (-1); a symlink is refused as outfile.h
 * refuses it. Returns 0 (err "" or a note to print), or -1 with err set. */
OA_EXPORT int oa_verify_cache_save(oa_verify_cache *c, char *err, size_t errlen);

OA_EXPORT void oa_verify_cache_close(oa_verify_cache *c);

#endif
