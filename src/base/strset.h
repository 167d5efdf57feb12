/*
 * strset.h - a set of strings the caller keeps alive (the set holds
 * pointers, not copies): membership in constant time, for the plans that
 * ask "is this path already planned" once per file of a large store.
 */
#ifndef OLLAMA_AUDIT_STRSET_H
#define OLLAMA_AUDIT_STRSET_H

#include "base/hash_index.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* All zero is an empty set. */
typedef struct oa_strset {
	const char **v;      /* the strings, in the order added */
	size_t n, cap;
	oa_hash_index index; /* of v */
} oa_strset;

/* FNV-1a of a NUL-terminated string: the set's hash, and refs.c's. */
uint64_t oa_str_hash(const char *s);

/* Add s (not copied); false when an equal string was there already. */
bool oa_strset_add(oa_strset *set, const char *s);
bool oa_strset_has(const oa_strset *set, const char *s);
void oa_strset_free(oa_strset *set);

#endif
