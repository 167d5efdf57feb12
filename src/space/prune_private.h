/* prune_private.h - what prune.c (building a plan) shares with plan_file.c
 * (reading one back) and apply.c (applying it). Private to src/space/. */
#ifndef OLLAMA_AUDIT_SPACE_PRUNE_PRIVATE_H
#define OLLAMA_AUDIT_SPACE_PRUNE_PRIVATE_H

#include "ollama_audit/prune.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>

/* A new zeroed entry at the end of l. */
oa_plan_entry *plan_list_add(oa_plan_list *l);
/* What the whole plan frees (its freed, allocated and apparent bytes, and
 * each entry's): a file with several links frees its blocks only when the
 * plan removes every link. */
void plan_totals(oa_plan *p);
/* rm --child, rm DIGEST: the entry of a list tag rewritten, never removed. */
bool plan_is_rewrite(const oa_plan_entry *e);
/* The rewrite of the list tag at path, or NULL. */
const oa_plan_rewrite *plan_rewrite_at(const oa_plan *p, const char *path);
/* What one child of a list reaches: its manifest blob, its config and
 * layers (a new array of the store's blobs). */
size_t row_child_reach(const oa_store *s, const oa_model *r, oa_blob ***out);
/* Whether row r of a list tag stands for the child whose digest is hex. */
bool row_is_child(const oa_model *r, const char *hex);

#endif
