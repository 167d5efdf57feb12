/* rm_select.c - the models rm plans for a selection, and what that frees
 * (rm_select.h). */
#include "audit/rm_select.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/resolve.h"
#include "base/util.h"

#include <stdbool.h>
#include <stdlib.h>

size_t *oa_rm_select(const oa_list_query *q, oa_store *s, const size_t *named, size_t n_named, size_t *n)
{
	oa_list_query all = *q;
	all.prefix = NULL;
	all.limit = 0; /* counted below, among the models named */
	size_t m;
	size_t *order = oa_list_order(&all, s, &m);
	bool *wanted = NULL, *taken = oa_xcalloc(s->n_models + 1, sizeof *taken);
	if (n_named) {
		wanted = oa_xcalloc(s->n_models + 1, sizeof *wanted);
		for (size_t i = 0; i < n_named; i++)
			wanted[named[i]] = true;
	}
	size_t *v = oa_xcalloc(m + 1, sizeof *v), k = 0, rows = 0;
	for (size_t i = 0; i < m && !(q->limit && rows == q->limit); i++) {
		size_t tag = oa_store_row_tag(s, order[i]);
		if (wanted && !wanted[tag])
			continue;
		rows++;
		if (!taken[tag])
			taken[tag] = true, v[k++] = tag;
	}
	free(order);
	free(wanted);
	free(taken);
	*n = k;
	return v;
}

uint64_t oa_rm_select_frees(oa_store *s, const size_t *tags, size_t n)
{
	if (!n)
		return 0;
	oa_plan p;
	oa_plan_rm(s, tags, n, 0, false, &p);
	uint64_t freed = p.freed;
	oa_plan_free(&p);
	return freed;
}
