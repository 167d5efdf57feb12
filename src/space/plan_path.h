/* plan_path.h - what a plan entry may remove, from its path and type alone
 * (plan_path.c; apply.c removes and restore.c puts back only what these
 * allow). Private to src/space/. */
#ifndef OLLAMA_AUDIT_SPACE_PLAN_PATH_H
#define OLLAMA_AUDIT_SPACE_PLAN_PATH_H

#include "ollama_audit/digest.h"
#include "ollama_audit/store.h"

#include <stddef.h>

/* What a plan entry may remove, decided from its path, its type and the
 * plan's command alone (never from the plan's category, digest or flags). */
typedef enum {
	PK_BAD,
	PK_BLOB,          /* blobs/<name>, a file or symlink: unlink */
	PK_BLOB_TREE,     /* prune: blobs/split-gguf-<digits>/, blobs/.ollama-split-<...>/: recursive removal */
	PK_ROOT_TREE,     /* prune: <root>/ollama-safetensors<digits>/: recursive removal */
	PK_MANIFEST,      /* rm: manifests/<4 parts>, a file or symlink: unlink */
	PK_MANIFEST_DIR,  /* a directory under manifests/: rmdir only, never recursive */
	PK_STORE_TEMP,    /* prune: a manifests-v2 .manifest-* temp, rm --child's manifests/ .manifest-oa<pid>,
	                   * a metadata/sha256-<hex>.json or metadata/.gguf-metadata-*.tmp: unlink */
} path_kind;


/* command "prune" or "rm", a relative path, and 'f', 'l' or 'd'. */
path_kind plan_path_kind(const char *command, const char *path, char type);
/* "file", "symlink", "dir" -> 'f', 'l', 'd'; anything else 0. */
char plan_type_char(const char *type);
/* 'd' "dir", 'l' "symlink", else "file". */
const char *plan_type_name(char t);
/* Relative, no empty, "." or ".." component: the number of components,
 * else 0. */
size_t plan_path_parts(const char *path);
/* The digest a blobs/sha256[-:]<64 hex>... name carries (lowercase), or "". */
void plan_path_hex(const char *path, oa_digest_hex hex);
/* Open the directory holding `path` without following any symlink; the last
 * component goes to *leaf. Returns a new fd, or -1 with errno. */
int plan_open_parent(const oa_store *s, const char *path, const char **leaf);
/* The same below the directory root_fd. */
int plan_open_parent_at(int root_fd, const char *path, const char **leaf);

#endif
