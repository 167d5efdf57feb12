/*
 * apply.h - applying a plan (prune.h) to a store: every entry re-checked
 * against the manifests as they are when it goes, under the store's write
 * lock (docs/disk-space.md).
 */
#ifndef OLLAMA_AUDIT_APPLY_H
#define OLLAMA_AUDIT_APPLY_H

#include "ollama_audit/export.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/store.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The lock prune/rm --apply, dedupe --apply and restore hold on a store
 * while they write it: an exclusive flock on its root directory (no file),
 * waited for up to 60 s. 0 locked; -1 with err: another holder kept it
 * ("... is busy"), or the filesystem cannot lock it ("cannot lock ...":
 * flock failed, ENOLCK on NFS without its lock service); 1 not locked for
 * that second reason, only when no_lock (the user's word that nothing
 * else writes the store: --no-lock). */
OA_EXPORT int oa_store_write_lock(const oa_store *s, bool no_lock, char *err, size_t errlen);
OA_EXPORT void oa_store_write_unlock(const oa_store *s);

typedef struct oa_apply_opts {
	const char *quarantine;         /* NULL: delete */
	int64_t min_age;                /* entries younger are skipped (empty dirs exempt) */
	bool force;                     /* proceed although a server uses the store or a manifest
	                                 * cannot be read (guard.h); never past a reference check */
	bool no_lock;                   /* go on where the filesystem cannot lock the store or the
	                                 * quarantine (oa_store_write_lock); a holder is still waited for */
	volatile sig_atomic_t *stop;    /* set by a signal handler: stop after this entry */
	FILE *log;                      /* one line per entry, or NULL */
	unsigned delay_us;              /* pause before each entry (tests of crash safety) */
	const char *pause_dir;          /* testing aid: stop before each refresh of the
	                                 * references (oa_test_pause point "refresh") */
	uint64_t *freed_each;           /* NULL, or a slot per entry of the plan: what removing
	                                 * it freed (0 when skipped, failed or moved) */
} oa_apply_opts;

typedef struct oa_apply_result {
	size_t done, skipped, failed;
	bool unlocked;                  /* no_lock: the store or the quarantine could not be locked */
	uint64_t freed;                 /* allocated bytes removed for good */
	uint64_t moved;                 /* allocated bytes moved into the quarantine (not freed) */
	const uint64_t *freed_each;     /* the options' freed_each, filled in (or NULL) */
	bool interrupted;
	/* --quarantine: this apply's operation in it (restore --op), and what
	 * the quarantine holds once it is done (all its operations) */
	char operation[40];
	size_t quarantine_entries;
	uint64_t quarantine_bytes;
} oa_apply_result;

/* Apply a plan to an open store. Returns 0 when it ran (see r for what was
 * skipped or failed), -1 when it could not start (err says why: an Ollama
 * server uses the store, a manifest cannot be read, or the store's
 * symlinked blobs/ leads to a store that cannot be found (shared.h), unless
 * o->force; the store has blobs/ but no manifests (never forced); the
 * store or the quarantine cannot be locked (unless o->no_lock where the
 * filesystem cannot lock); the quarantine directory is unusable or on
 * another filesystem, ...). When the directory sync after a manifest goes
 * (or a list is rewritten) fails, that entry counts as failed and every
 * entry after it is skipped: a crash could bring the manifest back without
 * them. A tree removal never crosses a mount point (that entry fails). */
OA_EXPORT int oa_plan_apply(oa_store *s, const oa_plan *p, const oa_apply_opts *o, oa_apply_result *r,
                  char *err, size_t errlen);

/* The preconditions oa_plan_apply checks first (guard.h): 0, or -1 with
 * err saying why it refuses. `force` passes a server using the store, a
 * manifest that cannot be read and a symlinked blobs/ whose owner cannot be
 * found (oa_peers_unfound: every complete blob is kept all the same), never
 * a store without manifests. */
OA_EXPORT int oa_plan_check(oa_store *s, const oa_plan *p, bool force, char *err, size_t errlen);

/* Why --apply refuses a plan before anything is asked, checked in order:
 * a manifest that cannot be parsed or read (oa_plan_blockers), an Ollama
 * server or runner using the store, a symlinked blobs/ whose owner cannot
 * be found (oa_peers_unfound; all three passed by `force`, each then a
 * note), what force never passes (oa_plan_check). */
typedef struct oa_apply_refusal {
	bool refused;
	char why[512];      /* the refusal (refused), said after the store's path */
	char **lines;       /* what it lists under it: the manifests, the processes */
	size_t n_lines;
	char **notes;       /* said after the store's path: what force went past, what cannot be told */
	size_t n_notes;
} oa_apply_refusal;
/* Fills r (oa_apply_refusal_free it); returns r->refused. */
OA_EXPORT bool oa_plan_refusal(oa_store *s, const oa_plan *p, bool force, oa_apply_refusal *r);
OA_EXPORT void oa_apply_refusal_free(oa_apply_refusal *r);

#endif
