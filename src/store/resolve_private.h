/* resolve_private.h - what resolve.c shares with the rest of src/store/.
 * Private to src/store/. */
#ifndef OLLAMA_AUDIT_STORE_RESOLVE_PRIVATE_H
#define OLLAMA_AUDIT_STORE_RESOLVE_PRIVATE_H

#include "ollama_audit/resolve.h"
#include "ollama_audit/manifest_list.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes of a list entry's manifest: the child blob, or the entry itself
 * when inline. NULL when it is not here. */
uint8_t *store_child_bytes(oa_store *s, const oa_list_entry *e, size_t *len);
/* A tag whose manifest is a list: use the child the server would; m->m
 * becomes that child's manifest. */
void store_use_list_child(oa_store *s, oa_model *m);
/* SIZE in 0.40 (TotalSizeForName): every distinct digest once. */
int64_t store_unique_size(const oa_manifest *mf);
/* The runner a tag's row names: its manifest's own, else its list entry's. */
const char *store_row_runner(const oa_model *r);
/* Whether two parsed manifests name the same config and layers, in order. */
bool store_same_manifest(const oa_model *a, const oa_model *b);
/* Legacy tags a manifests-v2 tag of the same name shadows (anchors), with
 * their findings. */
void store_mark_anchors(oa_store *s);
/* A row for every other child here of each list tag (cap: of s->models). */
void store_add_list_rows(oa_store *s, size_t *cap);
/* Index the models by name for oa_store_resolve, once they are final. */
void store_index_names(oa_store *s);

#endif
