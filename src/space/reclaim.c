/* reclaim.c - the one chain from a store to what prune can free (reclaim.h). */
#include "ollama_audit/reclaim.h"
#include "ollama_audit/refs.h"

#include <stdio.h>
#include <string.h>

void oa_reclaim_plan(oa_store *s, unsigned what, int64_t min_age, double now, oa_reclaim *out)
{
	memset(out, 0, sizeof *out);
	oa_refset refs;
	oa_refset_scanned(s, &refs);
	out->incomplete = refs.incomplete;
	if (refs.incomplete)
		snprintf(out->why, sizeof out->why, "%s", refs.why);
	oa_junk_collect(s, &refs, now, &out->junk);
	oa_plan_prune(s, &out->junk, what, min_age, &out->plan);
	oa_plan_note_shared(&out->plan, &refs);
	oa_refset_free(&refs);
}

void oa_reclaim_free(oa_reclaim *r)
{
	oa_plan_free(&r->plan);
	oa_junk_free(&r->junk);
	memset(r, 0, sizeof *r);
}
