/* remedy.h - the fix each finding prints (oa_finding.fix): its code's
 * template (OA_FINDING_CODES, finding.h) with the store's names filled in
 * (library-internal; oa_audit_fixes is the entry point). */
#ifndef OA_AUDIT_REMEDY_H
#define OA_AUDIT_REMEDY_H

#include "ollama_audit/reclaim.h"
#include "ollama_audit/store.h"
#include "base/strset.h"

#include <stdbool.h>
#include <sys/types.h>

/* What a plain `prune` does with each junk file (reclaim.h), by path:
 * planned now (todo), else its junk entry says why not. Borrows from the
 * reclaim it was read from. */
typedef struct oa_remedy_prune {
	oa_strset todo;
	oa_junk **junk;   /* every junk entry, by path */
	size_t n_junk;
} oa_remedy_prune;
void oa_remedy_prune_read(oa_remedy_prune *p, const oa_reclaim *r);
void oa_remedy_prune_free(oa_remedy_prune *p);

typedef struct oa_remedy_facts {
	uid_t euid;                   /* who runs the fix: a file someone else owns needs root */
	const oa_remedy_prune *prune; /* NULL: junk is left without a fix */
	size_t blockers;              /* manifests that make prune --apply refuse (guard.h) */
	const char *cache_path;       /* the verify cache the run names (--cache), or NULL: the default */
	/* Whether verify's failures are on record in that cache, where repair
	 * reads them (asked only when a fix needs it); NULL: they are not. */
	bool (*has_cache)(void *ctx);
	void *ctx;
} oa_remedy_facts;

/* Fill in the fix of every finding of s that has none. */
void oa_remedy_fill(oa_store *s, const oa_remedy_facts *facts);
/* Is the fix a command (else it says what to do by hand: "none...",
 * "by hand: ...", "wait: ...")? */
bool oa_fix_is_command(const char *fix);

#endif
