/* strset.c - a string set over the hash index, keyed by FNV-1a (strset.h). */
#include "base/strset.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

uint64_t oa_str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static bool same_string(const void *ctx, size_t entry, const void *key)
{
	const char *const *v = ctx;
	return strcmp(v[entry], key) == 0;
}

bool oa_strset_add(oa_strset *set, const char *s)
{
	uint64_t h = oa_str_hash(s);
	if (oa_hash_index_find(&set->index, h, same_string, set->v, s) != OA_HASH_NONE)
		return false;
	OA_ALLOC_GROW(set->v, set->n + 1, set->cap);
	set->v[set->n] = s;
	oa_hash_index_add(&set->index, h, set->n++);
	return true;
}

bool oa_strset_has(const oa_strset *set, const char *s)
{
	return oa_hash_index_find(&set->index, oa_str_hash(s), same_string, set->v, s) != OA_HASH_NONE;
}

void oa_strset_free(oa_strset *set)
{
	free(set->v);
	oa_hash_index_free(&set->index);
	memset(set, 0, sizeof *set);
}
