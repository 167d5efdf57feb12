/* hash_index.c - the open-addressing index of hash_index.h. */
#include "base/hash_index.h"
#include "base/oom_private.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Entry numbers and counts stay below 2^31: an entry number + 1 fits the
 * slot's 32 bits, and the folded hash reaches every slot of the table. */
#define MAX_ENTRIES ((size_t)1 << 31)
#define MIN_SLOTS 16

static void place(oa_hash_slot *slot, size_t cap, oa_hash_slot s)
{
	size_t k = s.hash & (cap - 1);
	while (slot[k].entry)
		k = (k + 1) & (cap - 1);
	slot[k] = s;
}

/* Move the index into a table of cap slots; -1 when that table cannot be
 * had (only when may_fail: else the out-of-memory handler runs). */
static int resize(oa_hash_index *ix, size_t cap, bool may_fail)
{
	oa_hash_slot *slot = may_fail ? calloc(cap, sizeof *slot) : oa_xcalloc(cap, sizeof *slot);
	if (!slot)
		return -1;
	for (size_t i = 0; i < ix->cap; i++)
		if (ix->slot[i].entry)
			place(slot, cap, ix->slot[i]);
	free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
	return 0;
}

static int add(oa_hash_index *ix, uint64_t hash, size_t entry, bool may_fail)
{
	if (entry >= MAX_ENTRIES - 1 || ix->n >= MAX_ENTRIES - 1) {
		if (!may_fail)
			oa_out_of_memory(SIZE_MAX);
		errno = ENOMEM;
		return -1;
	}
	if ((ix->n + 1) * 2 > ix->cap && resize(ix, ix->cap ? ix->cap * 2 : MIN_SLOTS, may_fail) < 0) {
		errno = ENOMEM;
		return -1;
	}
	place(ix->slot, ix->cap, (oa_hash_slot){ oa_hash_fold(hash), (uint32_t)entry + 1 });
	ix->n++;
	return 0;
}

void oa_hash_index_add(oa_hash_index *ix, uint64_t hash, size_t entry)
{
	(void)add(ix, hash, entry, false);
}

int oa_hash_index_try_add(oa_hash_index *ix, uint64_t hash, size_t entry)
{
	return add(ix, hash, entry, true);
}

void oa_hash_index_reserve(oa_hash_index *ix, size_t n)
{
	if (n >= MAX_ENTRIES)
		oa_out_of_memory(SIZE_MAX);
	size_t cap = MIN_SLOTS;
	while (cap < 2 * n)
		cap *= 2;
	if (cap > ix->cap)
		(void)resize(ix, cap, false);
}

void oa_hash_index_clear(oa_hash_index *ix)
{
	if (ix->cap)
		memset(ix->slot, 0, ix->cap * sizeof *ix->slot);
	ix->n = 0;
}

/* The slot of entry number `entry` under hash; the caller indexed it. */
static size_t slot_of(const oa_hash_index *ix, uint64_t hash, size_t entry)
{
	size_t mask = ix->cap - 1, k = oa_hash_fold(hash) & mask;
	while (ix->slot[k].entry != entry + 1) {
		if (!ix->slot[k].entry)
			abort(); /* a programming error: never indexed */
		k = (k + 1) & mask;
	}
	return k;
}

void oa_hash_index_remove(oa_hash_index *ix, uint64_t hash, size_t entry)
{
	size_t mask = ix->cap - 1, hole = slot_of(ix, hash, entry), j = hole;
	/* Backward shift: a later member of the probe run whose home is not
	 * cyclically in (hole, j] moves into the hole, which moves on to j. */
	for (;;) {
		ix->slot[hole].entry = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!ix->slot[j].entry) {
				ix->n--;
				return;
			}
			size_t home = ix->slot[j].hash & mask;
			if (hole <= j ? (hole < home && home <= j) : (hole < home || home <= j))
				continue;
			break;
		}
		ix->slot[hole] = ix->slot[j];
		hole = j;
	}
}

void oa_hash_index_renumber(oa_hash_index *ix, uint64_t hash, size_t from, size_t to)
{
	ix->slot[slot_of(ix, hash, from)].entry = (uint32_t)to + 1;
}

void oa_hash_index_free(oa_hash_index *ix)
{
	free(ix->slot);
	memset(ix, 0, sizeof *ix);
}
