/*
 * keyed.h - items grouped by a two-part key (a device and an inode, say)
 * without comparing each item with each: sort (key, item) records, then
 * each run of equal keys is one group, its items in their own order.
 */
#ifndef OLLAMA_AUDIT_KEYED_H
#define OLLAMA_AUDIT_KEYED_H

#include <stddef.h>
#include <stdint.h>

typedef struct oa_keyed {
	uint64_t a, b;  /* the key */
	size_t i;       /* the item */
} oa_keyed;

/* Sort by a, then b, then i. */
void oa_keyed_sort(oa_keyed *v, size_t n);
/* The first record of v[0..n) (sorted) whose key is (a, b) or after it. */
size_t oa_keyed_find(const oa_keyed *v, size_t n, uint64_t a, uint64_t b);
/* The end of the run of v[start]'s key in v[0..n), sorted. */
size_t oa_keyed_run(const oa_keyed *v, size_t n, size_t start);

#endif
