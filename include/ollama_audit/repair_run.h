/*
 * repair_run.h - running a repair (repair.h says what it finds and does).
 */
#ifndef OLLAMA_AUDIT_REPAIR_RUN_H
#define OLLAMA_AUDIT_REPAIR_RUN_H

#include "ollama_audit/export.h"
#include "ollama_audit/repair.h"
#include "ollama_audit/store.h"
#include "ollama_audit/verify_cache.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct oa_repair_opts {
	const char *from;             /* a bundle FILE, a DIR holding blobs/ or a STORE; NULL: every other
	                                 store discovery finds (the ones `stores` lists) */
	bool verify;                  /* hash the models' blobs now (else: sizes, and the verify cache) */
	oa_verify_cache *cache;       /* its failed entries for these very files (may be NULL) */
	const char *quarantine;       /* set the damaged files aside there; NULL: one with no good copy is deleted */
	bool apply;
	bool no_lock;                 /* go on where the filesystem cannot lock the store or the
	                                 quarantine (apply.h) */
	int jobs;                     /* threads for --verify (0: one per CPU) */
	volatile sig_atomic_t *stop;  /* set by a signal handler: stop after the current blob */
	const char *pause_dir;        /* testing aid: OA_TEST_REPAIR_PAUSE (oa_test_pause), NULL */
} oa_repair_opts;

/* Repair the models s->models[models[i]] of a scanned store (every model
 * when n is 0). Applying, under the store's write lock: each damaged blob
 * that has a good copy gets it (a temporary in blobs/, hashed, renamed over
 * the damaged file, which goes into the quarantine first when there is
 * one); one that has none is moved into the quarantine, or deleted without
 * one, so that a pull fetches it; it stays where it is when the source
 * could not be read, or when its bytes hash to its name (a manifest
 * declares the wrong size); a file that changed since the scan, or is not
 * a regular file, is left alone. 0 when it ran (r), -1 when it could not
 * start (err: the lock, the quarantine, the hashing). */
OA_EXPORT int oa_repair(oa_store *s, const size_t *models, size_t n, const oa_repair_opts *o, oa_repair_result *r,
                        char *err, size_t errlen);

#endif
