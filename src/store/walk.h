/* walk.h - the walk of manifests/ and manifests-v2/ (walk.c). Private to
 * src/store/. */
#ifndef OLLAMA_AUDIT_STORE_WALK_H
#define OLLAMA_AUDIT_STORE_WALK_H

#include "ollama_audit/store_core.h"
#include "store/blobs_private.h"

#include <stddef.h>

/* Walk both trees as the server does: a model per tag (s->models, grown
 * with capacity *cap), their findings, and s->tags; blobs: the listing of
 * blobs/ under way beside it, done when this returns. */
void store_walk(oa_store *s, size_t *cap, store_blob_scan *blobs);

#endif
