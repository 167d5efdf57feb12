/* junk_private.h - what junk.c (the junk taxonomy) shares with apply.c.
 * Private to src/space/. */
#ifndef OLLAMA_AUDIT_SPACE_JUNK_PRIVATE_H
#define OLLAMA_AUDIT_SPACE_JUNK_PRIVATE_H

#include "ollama_audit/store.h"

#include <stdbool.h>

/* Whether the directory dirfd/name holds a file no name in blobs/ has (a
 * split directory's link whose blob is gone: the bytes may be the last of
 * a blob a manifest names), or cannot be read in full. */
bool junk_tree_unnamed(const oa_store *s, int dirfd, const char *name);

#endif
