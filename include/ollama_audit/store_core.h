/*
 * store_core.h - the types of a store (its blobs, its models, what its walk
 * read) and what needs nothing else in src/store/: opening a store, its
 * bounds, model names, the disk bytes of models' blobs, releasing it.
 * Programs include store.h, which includes this header with the rest.
 */
#ifndef OLLAMA_AUDIT_STORE_CORE_H
#define OLLAMA_AUDIT_STORE_CORE_H

#include "ollama_audit/export.h"

/* Room for a resolved path (oa_store_resolve_path, the paths in the structs):
 * realpath() writes at most PATH_MAX bytes, and <limits.h> defines PATH_MAX
 * only for POSIX programs, not for a consumer built with plain -std=c17.
 * 4096 is Linux's PATH_MAX and at least the others' (store_core.c checks it). */
#define OA_PATH_MAX 4096

#include "ollama_audit/config.h"
#include "ollama_audit/finding.h"
#include "ollama_audit/manifest.h"
#include "ollama_audit/name.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* The directories the llama.cpp runner links a split GGUF's shards into
 * (blobs/.ollama-split-<12 hex of the manifest digest>-<digits>/). */
#define OA_SPLIT_DIR_PREFIX ".ollama-split-"
/* The temp name a metadata/ cache is written under before its rename. */
#define OA_METADATA_TEMP_PREFIX ".gguf-metadata-"

/* What a directory entry of blobs/ is (spec §1.3, §5.1). */
enum oa_blob_class {
	OA_BLOB_VALID,        /* sha256-<64 hex>: a content-addressed blob */
	OA_BLOB_PARTIAL,      /* sha256-<hex>-partial: download data */
	OA_BLOB_PARTIAL_PART, /* sha256-<hex>-partial-<N>: download part state (JSON) */
	OA_BLOB_TMP,          /* sha256-<hex>.tmp: tensor (MLX) pull in progress */
	OA_BLOB_CREATE_TEMP,  /* sha256-<decimal digits>: create's CreateTemp */
	OA_BLOB_QUANT_TEMP,   /* Q4_K_M<digits>, COPY<digits>, ...: create/quantize temps */
	OA_BLOB_LEGACY,       /* sha256:<hex>: pre-rename name, fixed by the server at start */
	OA_BLOB_TEMP_DIR,     /* split-gguf-<digits>/: a create temp directory */
	OA_BLOB_DIR,          /* any other directory */
	OA_BLOB_FOREIGN,      /* anything else */
	OA_BLOB_SPLIT_DIR,    /* .ollama-split-<12 hex>-<digits>/: the hard links a load of a split GGUF
	                         makes (spec §2.5.2), removed when the model unloads */
	OA_BLOB_CLASS_COUNT
};
OA_EXPORT const char *oa_blob_class_name(enum oa_blob_class c);

/* What the audit uses of a file's stat, in 64 bytes (a struct stat is 144:
 * 3.5 MB over the 22,000 blobs and 10,000 tags of a large store). */
typedef struct oa_file_info {
	uint64_t dev, ino;
	int64_t size;
	int64_t blocks;           /* st_blocks: 512-byte units */
	int64_t mtime_ns, ctime_ns;
	uint32_t mode, uid, nlink;
} oa_file_info;
/* fi from st (nlink saturates at UINT32_MAX). */
OA_EXPORT void oa_file_info_set(oa_file_info *fi, const struct stat *st);

typedef struct oa_blob {
	char *name;              /* entry name in blobs/ */
	const char *hex;         /* lowercase digest hex, for classes that carry one, else "": inside
	                            name (name + 7) when it spells it so, else after name's NUL */
	char *link_target;       /* readlink() text, or NULL */
	unsigned long partial_index; /* N of -partial-N */
	oa_file_info st;         /* of the file itself, following a symlink when it resolves */
	enum oa_blob_class cls;
	int stat_errno;
	unsigned refs;           /* manifest entries (config + layers) that name this file */
	unsigned weak_refs;      /* digests found in the bytes of manifests that do not parse:
	                            the blob may still be needed, so it is never an orphan */
	bool stat_ok;
	bool is_symlink, dangling, link_outside;
	bool checked_manifest;   /* content looked at for the manifest-blob test */
	bool is_manifest_blob;   /* content is a manifest or manifest list */
} oa_blob;

enum oa_config_state { OA_CONFIG_NONE, OA_CONFIG_OK, OA_CONFIG_MISSING, OA_CONFIG_INVALID,
                       OA_CONFIG_BAD_DIGEST };

enum oa_format { OA_FORMAT_UNKNOWN, OA_FORMAT_GGUF, OA_FORMAT_SAFETENSORS, OA_FORMAT_REMOTE,
                 OA_FORMAT_MIXED };
enum oa_runner { OA_RUNNER_NONE, OA_RUNNER_LLAMACPP, OA_RUNNER_MLX, OA_RUNNER_REMOTE };
OA_EXPORT const char *oa_format_name(enum oa_format f);
OA_EXPORT const char *oa_runner_name(enum oa_runner r);

struct oa_model_headers; /* weight-header facts, see headers.h */

/* A model's name: the four parts of an oa_name in one allocation (an
 * oa_name holds 594 bytes of arrays: 6 MB over 10,000 tags). */
typedef struct oa_model_name {
	char *host;                   /* the allocation: "host\0ns\0model\0tag\0" */
	const char *ns, *model, *tag; /* into it */
} oa_model_name;
OA_EXPORT void oa_model_name_set(oa_model_name *dst, const oa_name *n);
OA_EXPORT void oa_model_name_get(const oa_model_name *n, oa_name *out);
OA_EXPORT void oa_model_name_free(oa_model_name *n);
/* oa_name_equal, or with fold oa_name_equal_fold, of a model's name and n. */
OA_EXPORT bool oa_model_name_is(const oa_model_name *a, const oa_name *n, bool fold);

typedef struct oa_model {
	oa_model_name name;
	char *display;            /* DisplayShortest (a model is ~1.9 KB: no 598-byte array per tag) */
	char *rel_path;           /* manifests/<host>/<ns>/<model>/<tag> */
	oa_file_info st;          /* of the manifest file (following a symlink) */
	char *manifest_error;
	oa_manifest m;
	size_t manifest_bytes;
	enum oa_config_state config_state;
	/* (bools in the 4 bytes after config_state, and after tag_blob's 65: a
	 * model is 56 bytes less, issue 21) */
	bool manifest_ok;
	bool remote;             /* classification (model.c) */
	bool hidden_from_list;
	bool created_here;       /* its tag's bytes end in a newline: written by `ollama create`
	                            (json.Encoder), not a registry's (spec 2.1): no pull brings it back */
	char *config_error;
	oa_config cfg;            /* zeroed unless config_state == OA_CONFIG_OK */
	oa_blob **layer_blobs;    /* per m.layers[i]: the blob file, or NULL */
	oa_blob *config_blob;

	/* Classification (model.c). */
	enum oa_format format;
	enum oa_runner runner;
	unsigned missing_blobs;
	unsigned list_rows;       /* on a list tag's model: its children here (rows listed, see below) */
	uint64_t disk_bytes;      /* allocated (st_blocks), unique existing blob files */
	uint64_t apparent_bytes;  /* st_size of the same files */
	const char *template_text; /* for capability hints; NULL if none (the store's copy, one per
	                              template blob, shared by the tags naming it) */

	/* /api/tags details: pointers into cfg or headers, or static strings. */
	const char *d_format, *d_family, *d_parameter_size, *d_quantization, *d_parent_model;
	int64_t d_context_length, d_embedding_length;
	const char **caps;        /* capabilities as /api/tags lists them (static strings, or the
	                             config's own: the array alone is the model's) */
	size_t n_caps;
	/* What we show in ARCH / PARAMS / QUANT (config first, then headers). */
	const char *arch, *params, *quant;

	struct oa_model_headers *headers; /* NULL until headers are read */

	/* Ollama 0.40 stores (spec §2.5, docs/store-format-notes.md). */
	const char *tag_kind;     /* "file", "symlink", "hardlink" or "copy" (of a manifest blob) */
	char *tag_blob;           /* the manifest blob the tag is (its 64 hex digits, owned), or NULL
	                             (not a 65-byte array in every model, issue 21) */
	bool v2;                  /* the tag lives under manifests-v2/ */
	bool anchor;              /* a legacy tag that a manifests-v2 tag of the same name shadows */
	bool anchored;            /* a manifests-v2 tag (or its list's row) that such an anchor has */
	bool is_list;             /* the tag is a manifest list; m is the child in use */
	bool sibling;             /* a row for another present child of a list tag (see below) */
	bool shadow;              /* 0.40's migration (below): a legacy tag llamacpp:<hex> whose bytes
	                             hash to <hex> */
	bool migration_anchor;    /* 0.40's migration: an anchor equal to its list's ggml child */
	oa_manifest *list;        /* the list itself when is_list, else NULL */
	bool *child_present;      /* per list entry: its manifest is here */
	long child;               /* the entry in use, or -1 */
	long child_pull;          /* the entry a pull on the --platform would fetch, or -1 */
	const char *d_runner;     /* /api/tags details.runner as 0.40 reports it, or NULL */

	/* A list with several children here lists one row per child, as 0.40's
	 * buildModelListSummaries does: the tag's model is the child in use and
	 * each other present child is a row of its own (sibling), with the
	 * tag's name, never resolved by name, never removed on its own. */
	const oa_list_entry *row_entry; /* a sibling's list entry (in its tag's list), or NULL */
	bool *child_row;          /* on the tag's model, per list entry: a sibling row is it */

	/* Ollama 0.40's compatibility migration (compatmigrate/, spec §2.5.1). */
	const char *shadow_of;    /* the display name of the tag whose list names that child, or NULL */
	uint64_t downgrade_loss;  /* allocated bytes of its config and layers no legacy tag names */
	const char *unservable;   /* why the current server refuses to load it, or NULL */
} oa_model;

/* What the scan's one walk of manifests/ and manifests-v2/ read, kept for
 * the read-only views' reference set (refs.h: oa_refset_scanned) and the
 * empty directories prune removes (junk.h), so that neither walks the tree
 * again. Only when `plain` is true are the facts complete: directories
 * three deep, every entry below them a regular file (or a symlink to one
 * in the store) read in full, nothing hard-linked, nothing unreadable;
 * otherwise the views walk the tree themselves. */
typedef struct oa_tag_facts {
	bool plain;
	unsigned char (*dig)[32];      /* binary: every digest mentioned, every file's sha256, every blob
	                                * a tag symlink resolves to; sorted and unique once the scan is done */
	size_t n_dig, cap_dig, sorted_dig;
	unsigned char (*list_dig)[32]; /* what the files that mention a "manifests" key mention */
	size_t n_list_dig, cap_list_dig, sorted_list_dig;
	size_t files;            /* tag files read */
	char **empty_dirs;       /* manifests/<...> holding no file at any depth, deepest first */
	struct stat *empty_st;   /* their lstat */
	size_t n_empty_dirs;
} oa_tag_facts;

/* Who uses a store (guard.h: oa_store_in_use): a test's fake server in
 * place of the machine's processes. */
struct oa_store_user;
typedef int (*oa_store_users_fn)(const char *real_root, struct oa_store_user *users, int max, char *why,
                                 size_t whylen);

typedef struct oa_store {
	char *input;          /* the path as given */
	char *root;           /* the models directory (holds manifests/ and blobs/) */
	const char *how;      /* "--store", "OLLAMA_MODELS", "default" */
	char *owner;          /* the user name of the root's owner (oa_user_name), or NULL before
	                         oa_store_scan */
	const struct oa_found_by *found; /* with --all-users: every way discovery reached it */
	size_t n_found;                  /* (borrowed; 0: how and input say it) */
	int root_fd, manifests_fd, blobs_fd; /* -1 when absent */
	int manifests_v2_fd;  /* -1 when absent */
	struct stat root_st;
	bool has_manifests, has_blobs, has_manifests_v2;
	const char *platform; /* "os/arch" that chooses a list's child; NULL: this machine */

	char *bounds[5];      /* the resolved root, manifests/, manifests-v2/, blobs/: nothing */
	size_t n_bounds;      /* outside them is ever read or walked through a symlink (a fifth:
	                       * another store's blobs/ its tags link into, shared.h) */
	char *blobs_real;     /* the resolved blobs/, or NULL */

	oa_model *models;
	size_t n_models;
	oa_blob *blobs;       /* sorted by name */
	size_t n_blobs;
	bool blobs_listed;    /* every entry of blobs/ is in blobs (the listing did not fail) */
	unsigned n_manifest_files; /* depth-4 files seen, valid or not */
	bool prune_blocked;   /* the server's start-up prune would be skipped */

	/* Ollama 0.40 (spec §2.5.1): interrupted tag writes in manifests-v2/
	 * (.manifest-*), and the metadata/sha256-<hex>.json caches. */
	char **v2_temps;      /* paths relative to the root */
	size_t n_v2_temps;
	size_t n_metadata;    /* cache files whose blob is here */
	uint64_t metadata_bytes; /* allocated bytes of every cache file, stale included */
	char **stale_metadata; /* metadata/<name> of caches whose blob is gone */
	size_t n_stale_metadata;
	char **metadata_temps; /* metadata/.gguf-metadata-*.tmp: cache writes not renamed (yet) */
	size_t n_metadata_temps;
	oa_findings findings;
	double scan_seconds;
	int header_mode;      /* enum oa_header_mode, see headers.h */
	struct oa_header_cache *header_cache; /* headers.c, during oa_store_scan only */
	oa_tag_facts tags;    /* what the walk read, for the reference set and empty directories */
	bool no_tag_facts;    /* set before oa_store_scan: its walk gathers no tag facts, as if
	                         oa_store_drop_tag_facts ran after it, but without holding them at
	                         the scan's peak (list, verify: issue 21) */
	oa_store_users_fn users_probe; /* set after opening: asked instead of the machine's processes
	                                  whether a server uses the store (tests), or NULL */
	char **blob_text;     /* per blob: its bytes once read as a template, or NULL */
	struct oa_digest_set *digests; /* the layer digests of its manifests, each held once */
	int jobs;             /* threads the scan may use: 0 one per online CPU, 1 none beside the caller */
	struct oa_peer_index *peer_index; /* the stores audited with it, looked at once for the stores
	                                     sharing its blob files (shared.h), or NULL; borrowed */
	struct oa_name_index *name_index; /* the models by name, for oa_store_resolve (resolve.c), or NULL */
	struct oa_blob_index *blob_index; /* blobs by name, for oa_store_find_blob (blobs.c), or NULL */
} oa_store;

/* Resolve a store from a user path: the models dir itself, its parent
 * `.ollama`, or any dir holding manifests/ and/or blobs/. Returns 0, or -1
 * with a one-line reason. */
OA_EXPORT int oa_store_open(oa_store *s, const char *path, const char *how, char *err, size_t errlen);

/* Resolve root/rel (rel relative to the store root, not escaped). Returns 1
 * when the result lies inside the store's bounds (written to out), 0 when it
 * leads elsewhere, -1 when it cannot be resolved (errno). */
OA_EXPORT int oa_store_resolve_path(const oa_store *s, const char *rel, char out[OA_PATH_MAX]);

/* The digest a resolved path names when it is <blobs>/sha256-<64 hex>. */
OA_EXPORT bool oa_store_blob_path_hex(const oa_store *s, const char *resolved, oa_digest_hex hex);

/* The default store: $OLLAMA_MODELS (trimmed of blanks and quotes, as the
 * server does), else $HOME/.ollama/models. Writes how it was chosen. */
OA_EXPORT char *oa_store_default_path(const char **how);

/* What oa_store_close (scan.h) does once each model is freed: free the
 * arrays, findings and names, close the directories. */
OA_EXPORT void oa_store_release(oa_store *s);

/* Free what the scan's walk kept in s->tags (its digests, ~1 MB on a store of
 * 10,000 tags, and the empty directories) for a command that is done with
 * them: the answers stay the same, but cost a walk again, as after a walk
 * that was not plain: oa_refset_scanned reads the tags (oa_refset_build)
 * and oa_junk_collect walks manifests/ for empty directories. check calls it
 * once the referenced blobs are known, du once its view is made; list and
 * verify scan without them (oa_store.no_tag_facts) (issue 21). */
OA_EXPORT void oa_store_drop_tag_facts(oa_store *s);

/* How many of the model's manifest layers are of kind k (counted when
 * asked: an array of a count per kind was 56 bytes in every model, issue 21). */
OA_EXPORT unsigned oa_model_layer_count(const oa_model *m, enum oa_layer_kind k);

/* Allocated bytes of the distinct blob files (by device and inode) that the
 * store's models reference (only models[i] with selected[i], when selected
 * is not NULL): their real footprint, unlike the sum of per-model
 * disk_bytes, which counts a shared blob once per model. */
OA_EXPORT uint64_t oa_store_models_disk_bytes(const oa_store *s, const bool *selected);
/* The same for one model: allocated and apparent bytes of its blob files. */
OA_EXPORT void oa_model_blob_usage(const oa_model *m, uint64_t *alloc, uint64_t *apparent);

#endif
