/*
 * blobs.h - the files of blobs/: the class of a name, the blob a digest
 * names, reading one (part of store.h, which includes it).
 */
#ifndef OLLAMA_AUDIT_BLOBS_H
#define OLLAMA_AUDIT_BLOBS_H

#include "ollama_audit/export.h"
#include "ollama_audit/store_core.h"

#include <stdbool.h>

/* The class of a file named `name` in blobs/ (a regular file, not a directory). */
OA_EXPORT enum oa_blob_class oa_blob_name_class(const char *name);

/* The blob file for a validated layer digest, or NULL. */
OA_EXPORT oa_blob *oa_store_find_blob(const oa_store *s, const oa_layer *l);
/* The same for a lowercase hex digest: whatever blobs/ holds under
 * sha256-<hex> (partial, dangling or unreadable included), or NULL. */
OA_EXPORT oa_blob *oa_store_find_blob_hex(const oa_store *s, const char *hex);

/* Open a blob file for reading (never following a symlink out of... well,
 * reading through a symlink is fine; only deletion refuses to). */
OA_EXPORT int oa_store_open_blob(const oa_store *s, const oa_blob *b);

/* The blob file sha256-<hex> when it is a complete, present file, or NULL. */
OA_EXPORT oa_blob *oa_store_blob_by_hex(const oa_store *s, const char *hex);

/* Read the first bytes of a blob (the manifest-blob and GGUF magic tests). */
OA_EXPORT bool oa_blob_looks_like_manifest(const oa_store *s, oa_blob *b);

#endif
