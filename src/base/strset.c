/* strset.c - a string set by open addressing over FNV-1a (strset.h). */
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

/* The slot holding s, or the empty slot where it would go. */
static size_t find(const oa_strset *set, const char *s)
{
	size_t mask = set->cap - 1, k = (size_t)oa_str_hash(s) & mask;
	while (set->slot[k] && strcmp(set->slot[k], s) != 0)
		k = (k + 1) & mask;
	return k;
}

static void grow(oa_strset *set)
{
	oa_strset old = *set;
	set->cap = old.cap ? old.cap * 2 : 64;
	set->slot = oa_xcalloc(set->cap, sizeof *set->slot);
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i])
			set->slot[find(set, old.slot[i])] = old.slot[i];
	free(old.slot);
}

bool oa_strset_add(oa_strset *set, const char *s)
{
	if ((set->n + 1) * 2 > set->cap)
		grow(set);
	size_t k = find(set, s);
	if (set->slot[k])
		return false;
	set->slot[k] = s;
	set->n++;
	return true;
}

bool oa_strset_has(const oa_strset *set, const char *s)
{
	return set->cap && set->slot[find(set, s)] != NULL;
}

void oa_strset_free(oa_strset *set)
{
	free(set->slot);
	memset(set, 0, sizeof *set);
}
