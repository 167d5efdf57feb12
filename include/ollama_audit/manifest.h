/*
 * manifest.h - the manifest JSON (spec §2) and the ID/SIZE that `ollama list`
 * derives from it (spec §4.1, §4.2).
 *
 * Parsing is as tolerant as Go's encoding/json into upstream's structs:
 * unknown fields are ignored, field names match case-insensitively, the last
 * duplicate key wins, bytes after the top-level value are never examined.
 * A known field of the wrong JSON type makes the manifest invalid, as it does
 * for the server.
 */
#ifndef OLLAMA_AUDIT_MANIFEST_H
#define OLLAMA_AUDIT_MANIFEST_H

#include "ollama_audit/export.h"

#include "ollama_audit/digest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OA_MEDIA_PREFIX "application/vnd.ollama.image."
#define OA_MEDIA_CONFIG "application/vnd.docker.container.image.v1+json"
#define OA_MEDIA_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define OA_MEDIA_MANIFEST_LIST "application/vnd.ollama.manifest.list.v2+json"

/* What a layer is, from its media type (after splitting off ";" parameters). */
enum oa_layer_kind {
	OA_LAYER_UNKNOWN = 0,
	OA_LAYER_MODEL,     /* GGUF weights (llama.cpp runner) */
	OA_LAYER_ADAPTER,   /* GGUF LoRA */
	OA_LAYER_PROJECTOR, /* GGUF mmproj / clip */
	OA_LAYER_DRAFT,     /* GGUF draft model */
	OA_LAYER_TENSOR,    /* safetensors blob (MLX runner) */
	OA_LAYER_JSON,      /* config.json, tokenizer.json, ... */
	OA_LAYER_TEMPLATE,  /* includes the legacy "prompt" */
	OA_LAYER_SYSTEM,
	OA_LAYER_PARAMS,
	OA_LAYER_MESSAGES,
	OA_LAYER_LICENSE,
	OA_LAYER_EMBED,     /* deprecated, ignored by the server */
	OA_LAYER_CONFIG,    /* the docker config media type listed as a layer (very old manifests) */
	OA_LAYER_MANIFEST,  /* a manifest or manifest list blob, named by a downgrade anchor so that an
	                       Ollama before manifest lists keeps it (spec §2.5.2) */
	OA_LAYER_KIND_COUNT
};

OA_EXPORT const char *oa_layer_kind_name(enum oa_layer_kind kind); /* "model", "tensor", ... */
OA_EXPORT enum oa_layer_kind oa_layer_kind_of(const char *media_type);

typedef struct oa_layer {
	char *media_type;   /* as written, may carry ";" parameters; "" when absent */
	char *digest;       /* as written; "" when absent */
	const char *hex;    /* the 64 hex digits when digest_valid, lowercased, else "": stored
	                       once, inside digest (digest + 7) unless it has upper-case hex */
	char *from;         /* NULL when absent */
	char *name;         /* NULL when absent */
	int64_t size;       /* declared size; 0 when absent */
	enum oa_layer_kind kind;
	bool digest_valid;  /* "sha256:" or "sha256-" + 64 hex: safe to turn into a blob path */
	bool hex_uppercase; /* the digest had upper-case hex (the server's prune would delete it) */
} oa_layer;

/* One entry of a manifest list (spec §2.5): a child manifest by digest, or
 * inline (a whole manifest object in place of the digest). */
typedef struct oa_list_entry {
	char *media_type;   /* "" when absent */
	char *digest;       /* "" when absent */
	const char *hex;    /* as oa_layer's hex */
	char *runner;       /* "mlx", "llamacpp", "ggml", ...; "" when absent */
	char *format;       /* "safetensors", "gguf", ...; "" when absent */
	char *inline_json;  /* the entry itself when it carries config or layers, else NULL */
	int64_t size;       /* 0 when absent */
	bool digest_valid;
} oa_list_entry;

typedef struct oa_manifest {
	int64_t schema_version;
	char *media_type;   /* "" when absent */
	oa_layer config;    /* config.digest == "" means no config blob */
	size_t n_layers;
	oa_layer *layers;
	oa_digest_hex id;   /* Ollama's digest: sha256 of the bytes the decoder read (§4.1) */
	bool is_list;       /* a manifest list (unmerged upstream format, spec §2.5) */
	size_t id_len;      /* how many bytes that hash covered */
	int64_t size;       /* Manifest.Size(): config + every layer, duplicates counted */
	size_t n_manifests; /* entries of a manifest list */
	oa_list_entry *entries; /* the n_manifests entries, when the list parsed */
	char *runner;       /* 0.40's optional top-level "runner"; "" when absent */
	char *format;       /* 0.40's optional top-level "format"; "" when absent */
	void *block;        /* the strings and arrays above, in one allocation (oa_manifest_free) */
	struct oa_digest_set *digests; /* the store's set its layer digests are shared through, or NULL */
} oa_manifest;

/* Manifests are ~1 KB; anything this large is not one we should slurp. */
#define OA_MANIFEST_MAX (16u << 20)

/* Parse manifest bytes. Returns 0, or -1 with a one-line reason in err.
 * The ID is computed in both cases when the bytes hold a complete JSON value. */
OA_EXPORT int oa_manifest_parse(const uint8_t *bytes, size_t len, oa_manifest *out, char *err, size_t errlen);
OA_EXPORT void oa_manifest_free(oa_manifest *m);

/* The bytes Go's json.Decoder pulls in before it sees the end of the
 * top-level value: min(len, first refill boundary >= end of value). */
OA_EXPORT size_t oa_manifest_hashed_length(const uint8_t *bytes, size_t len);
/* Offset just past the top-level JSON value, or 0 if there is none. */
OA_EXPORT size_t oa_json_value_end(const uint8_t *bytes, size_t len);

/* Call fn for every "sha256:<64 hex>" or "sha256-<64 hex>" in raw bytes,
 * with the 64 hex digits as written, also where JSON \u escapes spell any of
 * its characters (Go's decoder reads those as the digest). For manifests
 * that do not parse: what they might reference must not be deleted. A digest
 * may be reported more than once. */
typedef void (*oa_digest_fn)(void *ctx, const oa_digest_hex hex);
OA_EXPORT void oa_digest_scan(const uint8_t *bytes, size_t len, oa_digest_fn fn, void *ctx);

#endif
