/*
 * guard.h - the preconditions of every write to a store (docs/disk-space.md):
 * prune, rm and dedupe --apply check them through oa_plan_apply and
 * oa_dedupe_apply, which refuse by themselves; the CLI calls the same
 * functions first only to print the refusal in full.
 *
 *  - an Ollama server or runner uses the store (oa_store_in_use): refused
 *    unless forced;
 *  - a manifest cannot be parsed or read (oa_plan_blockers): what it names
 *    is unknown, and the server skips its own prune: refused unless forced;
 *  - blobs/ is a symlink and the store owning the directory it leads to, or
 *    one on the way, cannot be found (oa_peers_unfound, shared.h): what it
 *    references is unknown: refused unless forced, and no complete blob is
 *    removed either way;
 *  - the store has blobs/ but neither manifests/ nor manifests-v2/
 *    (oa_store_unowned): whose blobs these are cannot be told; never forced.
 */
#ifndef OLLAMA_AUDIT_GUARD_H
#define OLLAMA_AUDIT_GUARD_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct oa_store_user {
	long pid;
	char cmd[96];   /* its command line, printable, truncated */
	char how[160];  /* why it counts: "cwd /x/models", "open file ..." */
} oa_store_user;

/* The Ollama server or runner processes that use the store: fills up to max
 * and returns how many there are (may exceed max), 0 when none, -1 when it
 * cannot be told here (why says so; the caller warns and goes on). The
 * store's users_probe, when set, answers instead (a test's fake server). */
OA_EXPORT int oa_store_in_use(const oa_store *s, oa_store_user *users, int max, char *why, size_t whylen);


/* A manifest that blocks --apply: one per path (an unreadable manifest is
 * both `unreadable` and `prune-blocker`), those at the `removed` paths
 * excepted (rm of a broken manifest is fine). oa_plan_blockers (prune.h)
 * asks this for a plan. */
typedef struct oa_blocker {
	const char *path;     /* relative to the root, as the finding has it ("?" unknown) */
	const char *message;  /* the finding's */
} oa_blocker;
/* How many; *out (free it; may be NULL) lists them. */
OA_EXPORT size_t oa_store_blockers(const oa_store *s, const char *const *removed, size_t n_removed, oa_blocker **out);

/* Whether the store has blobs/ but neither manifests/ nor manifests-v2/. */
OA_EXPORT bool oa_store_unowned(const oa_store *s);

#endif
