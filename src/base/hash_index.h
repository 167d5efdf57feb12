/*
 * hash_index.h - the one open-addressing hash table of the library: an
 * index from a key's 64-bit hash to the number of the entry holding the key
 * in an array the caller keeps (git's hashmap.h, without the intrusion).
 *
 * Linear probing over slots of 8 bytes (the hash folded to 32 bits, the
 * entry number), at most half full: a look-up is about one probe and one
 * comparison of keys, the folded hashes being compared first. The caller
 * hashes its keys (any good 64-bit hash; seeded where names come from
 * files someone else writes) and says when an entry holds a key:
 *
 *     static bool same_name(const void *ctx, size_t entry, const void *key)
 *     {
 *         const struct blob *v = ctx;
 *         return strcmp(v[entry].name, key) == 0;
 *     }
 *     ...
 *     uint64_t h = XXH3_64bits(name, strlen(name));
 *     size_t i = oa_hash_index_find(&ix, h, same_name, blobs, name);
 *     if (i == OA_HASH_NONE) {
 *         blobs[n] = ...;                    (the entry first, then its number)
 *         oa_hash_index_add(&ix, h, n++);
 *     }
 *
 * Entries are numbered from 0, fewer than 2^31 of them. Removing one
 * (oa_hash_index_remove) keeps every probe run whole (backward shift, no
 * tombstones); an array that then moves its last entry into the hole says
 * so with oa_hash_index_renumber.
 */
#ifndef OLLAMA_AUDIT_HASH_INDEX_H
#define OLLAMA_AUDIT_HASH_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oa_hash_slot {
	uint32_t hash;   /* the key's hash folded to 32 bits: where its probe starts */
	uint32_t entry;  /* the entry's number + 1; 0: an empty slot */
} oa_hash_slot;

/* All zero is an empty index. */
typedef struct oa_hash_index {
	oa_hash_slot *slot;
	size_t n, cap;   /* cap: 0 or a power of two, at least 2n */
} oa_hash_index;

/* Whether the caller's entry number `entry` holds `key` (ctx: its array). */
typedef bool (*oa_hash_same_fn)(const void *ctx, size_t entry, const void *key);

#define OA_HASH_NONE SIZE_MAX

static inline uint32_t oa_hash_fold(uint64_t hash)
{
	return (uint32_t)(hash ^ (hash >> 32));
}

/* The number of the entry holding key (hash: its hash), or OA_HASH_NONE.
 * Inline, so that a `same` known where it is called is inlined there. */
static inline size_t oa_hash_index_find(const oa_hash_index *ix, uint64_t hash, oa_hash_same_fn same,
                                        const void *ctx, const void *key)
{
	if (!ix->cap)
		return OA_HASH_NONE;
	uint32_t h = oa_hash_fold(hash);
	size_t mask = ix->cap - 1;
	for (size_t k = h & mask; ix->slot[k].entry; k = (k + 1) & mask)
		if (ix->slot[k].hash == h && same(ctx, ix->slot[k].entry - 1, key))
			return ix->slot[k].entry - 1;
	return OA_HASH_NONE;
}

/* Index entry number `entry` under hash (the caller knows its key is not
 * there yet), growing the table as needed; out of memory runs the
 * library's handler (oom.h). */
void oa_hash_index_add(oa_hash_index *ix, uint64_t hash, size_t entry);
/* The same for a caller that reports running out of memory itself (a
 * parser of hostile files): -1 with ENOMEM, the index as it was. */
int oa_hash_index_try_add(oa_hash_index *ix, uint64_t hash, size_t entry);
/* Room for n entries in all without growing again (a table built once). */
void oa_hash_index_reserve(oa_hash_index *ix, size_t n);
/* Forget every entry, keeping the table's room. */
void oa_hash_index_clear(oa_hash_index *ix);
/* Forget entry number `entry` (indexed under hash). */
void oa_hash_index_remove(oa_hash_index *ix, uint64_t hash, size_t entry);
/* Entry number `from` (indexed under hash) is now number `to`. */
void oa_hash_index_renumber(oa_hash_index *ix, uint64_t hash, size_t from, size_t to);
void oa_hash_index_free(oa_hash_index *ix);

#endif
