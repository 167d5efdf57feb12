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

/* Which start-up prune: the one before manifest lists reads manifests/ only
 * and keeps what a legacy manifest's config and layers name; 0.40's also
 * reads manifests-v2/ and keeps every manifest blob, list and child. */
enum oa_server_era { OA_SERVER_AUTO, OA_SERVER_LEGACY, OA_SERVER_LISTS };

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
	const char *server;    /* "0.40" or "0.33" (before manifest lists) */
	bool assumed;          /* from the store's layout, not --server-version */
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
 * era (OA_SERVER_AUTO: the newest the layout implies, 0.40 when
 * manifests-v2/ exists). */
OA_EXPORT void oa_server_prune_predict(oa_store *s, double now, enum oa_server_era era, oa_server_prune *out);
/* "0.33", "0.39.2", "0.40" ...: the era, or -1 when V is not MAJOR.MINOR[.PATCH]. */
OA_EXPORT int oa_server_era_parse(const char *v);
OA_EXPORT void oa_server_prune_free(oa_server_prune *p);

/* OLLAMA_NOPRUNE as the server reads it (envconfig.Bool); *value is the raw
 * variable or NULL. */
OA_EXPORT bool oa_server_noprune(const char **value);

#endif
