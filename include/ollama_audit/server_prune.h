/*
 * server_prune.h - what `ollama serve` does to a store when it starts, told
 * offline: fixBlobs renames sha256:* files to sha256-*, then, unless
 * OLLAMA_NOPRUNE is set or a manifest it cannot read blocks it, it deletes
 * every top-level blob no manifest names (those younger than the grace
 * period wait for a later start) and removes empty directories under
 * manifests/ (server/images.go, server/routes.go; docs/disk-space.md).
 *
 * The prediction reads the store as the server's Go code would, including
 * manifests jansson refuses but Go's decoder reads (JSON null, invalid
 * UTF-8). Nothing is written.
 */
#ifndef OLLAMA_AUDIT_SERVER_PRUNE_H
#define OLLAMA_AUDIT_SERVER_PRUNE_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oa_sp_rename {
	char *from; /* store-relative: blobs/sha256:..., in subdirectories too */
	char *to;   /* blobs/sha256-... */
} oa_sp_rename;

typedef struct oa_sp_delete {
	char *path;          /* blobs/<name after fixBlobs> */
	const char *reason;  /* static text: why the server deletes it */
	uint64_t bytes;      /* on disk (st_blocks) */
	int64_t age_seconds;
	int64_t after;       /* deleted_later only: Unix time after which a start deletes it */
} oa_sp_delete;

/* Which start-up prune (three generations, docs/disk-space.md): the one
 * before manifest lists reads manifests/ only and keeps what a legacy
 * manifest's config and layers name; PR #16590's head also reads
 * manifests-v2/ and keeps every manifest blob, list and child a tag
 * reaches; the newest first retires converted models (drops a list's ggml
 * child once its converted llamacpp child is here, with the downgrade
 * anchor that links both), fails closed on any tag it cannot read, and
 * ends by removing metadata/ caches whose blob is gone. */
enum oa_server_era { OA_SERVER_AUTO, OA_SERVER_LEGACY, OA_SERVER_LISTS, OA_SERVER_NEWEST };

/* A conversion the newest server retires: the list tag rewritten without
 * its ggml child, the downgrade anchor removed. */
typedef struct oa_sp_retire {
	const char *name;     /* the store's display name of the tag */
	const char *tag;      /* its manifests-v2 path */
	const char *anchor;   /* the anchor's path (removed) */
	oa_digest_hex child;  /* the ggml child dropped */
} oa_sp_retire;

/* A model whose blobs the prune deletes: an older server, a model only
 * manifests-v2/ names. That server does not list it either: it is gone. */
typedef struct oa_sp_model {
	const char *name;     /* the store's display name */
	const char *runner;   /* a list row's runner, or NULL */
	size_t n_blobs;       /* its config and layers deleted */
	uint64_t bytes;
	bool weights;         /* its weights (model or tensor layers) go too */
} oa_sp_model;

typedef struct oa_server_prune {
	enum oa_server_era era;
	const char *server;    /* "0.40", "0.40 at PR #16590's head" or "0.33" (before manifest lists) */
	const char *generation; /* "newest", "pr-16590", "before-lists" */
	bool assumed;          /* from the store's layout, not --server-version nor the logs */
	const char *version;   /* the version that chose the era (--server-version, the logs), or NULL */
	const char *chosen_by; /* "option", "logs" or "layout" */
	oa_sp_retire *retired; /* the newest: conversions retired first */
	size_t n_retired;
	char **metadata;       /* the newest: metadata/ caches removed last (store-relative) */
	size_t n_metadata;
	oa_sp_model *destroyed;
	size_t n_destroyed;
	const char *nothing;   /* why the server prunes nothing, or NULL */
	bool noprune;          /* OLLAMA_NOPRUNE is set (the reason above) */
	oa_sp_rename *renames;
	size_t n_renames;
	oa_sp_delete *deletes; /* at the next start */
	size_t n_deletes;
	oa_sp_delete *later;   /* younger than the grace period: at a later start */
	size_t n_later;
	char **dirs;           /* empty directories removed (store-relative) */
	size_t n_dirs;
	uint64_t bytes_freed;  /* by the deletes */
} oa_server_prune;

/* Predict the server's start-up for store s at time now (Unix seconds), for
 * era (OA_SERVER_AUTO: the newest the layout implies, the newest server
 * when manifests-v2/ exists, else one before manifest lists). */
OA_EXPORT void oa_server_prune_predict(oa_store *s, double now, enum oa_server_era era, oa_server_prune *out);
/* The same for the server version V (NULL: the layout decides), which
 * chosen_by ("option", "logs") says where it came from. */
OA_EXPORT void oa_server_prune_predict_version(oa_store *s, double now, const char *version, const char *chosen_by,
                                               oa_server_prune *out);
/* "0.33", "0.39.2": before manifest lists; "0.40", "0.40.8" and later: the
 * newest; or a generation by name ("before-lists", "pr-16590", "newest").
 * The era, or -1 when V is neither. */
OA_EXPORT int oa_server_era_parse(const char *v);
OA_EXPORT void oa_server_prune_free(oa_server_prune *p);

/* OLLAMA_NOPRUNE as the server reads it (envconfig.Bool); *value is the raw
 * variable or NULL. */
OA_EXPORT bool oa_server_noprune(const char **value);

#endif
