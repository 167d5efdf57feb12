/* store_core_private.h - what store_core.c shares with the rest of
 * src/store/. Private to src/store/. */
#ifndef OLLAMA_AUDIT_STORE_STORE_CORE_PRIVATE_H
#define OLLAMA_AUDIT_STORE_STORE_CORE_PRIVATE_H

#include "ollama_audit/store_core.h"
#include "base/hash_index.h"

/* Free what the walk gathered and zero it. */
void store_free_tag_facts(oa_tag_facts *f);

/* The blobs by name (s->blob_index): a hash index of s->blobs, so that
 * finding the blob a digest names is a hash and about one string
 * comparison, not a binary search's dozen or more. blobs.c builds it. */
struct oa_blob_index {
	oa_hash_index ix;
};
/* Free s->blob_index (none: nothing). */
void store_free_blob_index(oa_store *s);

#endif
