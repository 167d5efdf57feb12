/*
 * dedupe_run.h - a dedupe run over a plan (dedupe.h): what it promises on
 * these filesystems, the stores it must leave alone because a server uses
 * them (guard.h), applying every planned action under the stores' write
 * locks, and the outcome the documents report (docs/multi-store.md).
 */
#ifndef OLLAMA_AUDIT_DEDUPE_RUN_H
#define OLLAMA_AUDIT_DEDUPE_RUN_H

#include "ollama_audit/export.h"

#include "ollama_audit/dedupe.h"
#include "ollama_audit/guard.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a dedupe run planned and did. */
typedef struct oa_dedupe_outcome {
	bool hardlink;           /* --hardlink plan (else reflinks) */
	bool applied;            /* actions were tried */
	size_t planned;          /* actions planned (after the servers' refusals, with --apply) */
	uint64_t planned_bytes;
	size_t done;
	uint64_t freed;
	size_t counts[OA_DD_STATUS_COUNT]; /* actions by status */
	size_t keepers_bad;      /* actions whose planned kept copy did not hash to its digest */
	/* reflinks the filesystem cannot make: what a --hardlink plan would do,
	 * and what it would refuse because the copies' owners differ */
	bool alternative;
	size_t hardlink_planned;
	uint64_t hardlink_planned_bytes;
	size_t hardlink_refused_owner;
	uint64_t hardlink_refused_owner_bytes;
} oa_dedupe_outcome;

/* The plan of `how` among the stores, promising only what their
 * filesystems can do (oa_dedupe_plan_probe, a scratch file allowed); o
 * gets what is planned and, where reflinks cannot be made, what a
 * --hardlink plan would do instead. */
OA_EXPORT void oa_dedupe_plan_make(oa_store *const *stores, const oa_dupes *d, oa_dedupe_how how,
                                   oa_dedupe_plan *p, oa_dedupe_outcome *o);

/* What dedupe can really free among these stores (a read-only look: the
 * filesystem type answers): reflinks where the targets can make them, else
 * hard links when they free more (*hardlink set). */
OA_EXPORT uint64_t oa_dedupe_can_free(oa_store *const *stores, const oa_dupes *d, bool *hardlink);

/* A store of the plan's planned actions that a server may use. */
#define OA_DEDUPE_BUSY_MAX 4
typedef struct oa_dedupe_busy {
	size_t store;
	int found;               /* processes that use it (may exceed the users kept), or -1: cannot tell */
	oa_store_user users[OA_DEDUPE_BUSY_MAX];
	char why[256];           /* found -1: why */
} oa_dedupe_busy;

/* Ask, store by store, whether an Ollama server or runner uses a store
 * that planned actions touch; unless force, those actions become
 * OA_DD_SERVER. *out (free it) lists the stores in use or that cannot be
 * told. Returns whether actions were held back. */
OA_EXPORT bool oa_dedupe_hold_busy(oa_dedupe_plan *p, oa_store *const *stores, size_t n, bool force,
                                   oa_dedupe_busy **out, size_t *n_out);

/* The actions planned now and their bytes (p->bytes, o->planned). */
OA_EXPORT void oa_dedupe_recount(oa_dedupe_plan *p, oa_dedupe_outcome *o);

/* Apply every planned action under the write lock of every store (each
 * once, taken in the order of their roots' device and inode, whatever the
 * order of `stores`); after the first reflink a filesystem refuses, the
 * others on it are not tried. -1 with err when a lock could not be taken
 * (p->no_lock passes a filesystem that cannot lock), or when a store that
 * would change has a symlinked blobs/ whose owner cannot be found
 * (oa_peers_unfound) unless p->force: nothing is applied then. */
OA_EXPORT int oa_dedupe_apply_all(oa_dedupe_plan *p, oa_store *const *stores, size_t n,
                                  volatile sig_atomic_t *interrupt, char *err, size_t errlen);

/* Count the actions by status, what was done and freed, the kept copies
 * found bad, and the bytes planned. */
OA_EXPORT void oa_dedupe_tally(const oa_dedupe_plan *p, oa_dedupe_outcome *o);

#endif
