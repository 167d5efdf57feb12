/*
 * safetensors.h - read and check the safetensors blobs of Ollama MLX models
 * (`image.tensor` layers), total them per model the way `ollama show` does,
 * and read the Hugging Face config.json (`image.json` layer named
 * `config.json`).
 *
 * Only the 8-byte length prefix and the JSON header are ever read; tensor data
 * is never touched. Every string that comes from a file is kept raw (valid
 * UTF-8 as checked by jansson) in the structs; diagnostic messages escape
 * control characters, C1 controls, bidi overrides and invalid UTF-8 as \xNN,
 * so they are safe to print on a terminal.
 *
 * Specification: shared/spec/ollama-store.md §3, §4.4, §6.
 * Limits and exact checks: docs/safetensors-limits.md.
 *
 * Thread safety: no global state; distinct structs may be used from
 * different threads.
 */
#ifndef OLLAMA_AUDIT_SAFETENSORS_H
#define OLLAMA_AUDIT_SAFETENSORS_H

#include "ollama_audit/export.h"

#include "ollama_audit/severity.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest header accepted. x/server/show.go caps at 100 MB, but jansson
 * needs about twenty times a header's size to parse it, and a blob in an
 * Ollama store holds one tensor or one expert group (a few KB of header), so
 * 16 MiB is far above anything real and bounds memory at a few hundred MB.
 * The length is also checked against the file size before any allocation. */
#define OA_ST_MAX_HEADER ((uint64_t)16 * 1024 * 1024)
/* Headers above this get a warning: x/imagegen/manifest.readBlobHeader refuses
 * headers over 1 MB. */
#define OA_ST_LOADER_HEADER_LIMIT ((uint64_t)1024 * 1024)
/* More dimensions than this in one shape is an error (bounds memory use). */
#define OA_ST_MAX_DIMS 64
/* Pass as file_size to oa_st_read_fd to have it fstat() the descriptor. */
#define OA_ST_SIZE_UNKNOWN UINT64_MAX

/* Return values of the oa_st_read_* functions. */
#define OA_ST_OK 0       /* examined, no error diagnostics (warnings possible) */
#define OA_ST_INVALID 1  /* examined, at least one error diagnostic */
/* -1: system error (open/read/stat failure, out of memory), errno is set;
 *     *out is still valid to inspect and must be freed. */

typedef struct oa_st_diag {
	oa_severity severity;
	char *message; /* one line, no trailing newline, escaped (see above) */
} oa_st_diag;

/* Where oa_st_tensor.quant_type came from. */
enum oa_st_quant_source {
	OA_ST_QSRC_NONE = 0,    /* not quantized (as far as metadata and Ollama's rule tell) */
	OA_ST_QSRC_TENSOR_META, /* __metadata__["<name>.quant_type"] */
	OA_ST_QSRC_GLOBAL_META, /* __metadata__["quant_type"] */
	OA_ST_QSRC_RATIO,       /* Ollama's packed_cols/scale_cols rule (4 int4, 16 int8) */
};

typedef struct oa_st_tensor {
	char *name;          /* header key; for the old `data`-key layout the layer
	                        name given by the caller (or "data" if none) */
	char *dtype;         /* dtype string as written; NULL if missing / not a string */
	unsigned dtype_bits; /* bits per element, 0 = unknown dtype */
	uint32_t n_dims;
	uint64_t *shape;     /* n_dims entries; NULL when n_dims == 0 */
	bool shape_ok;       /* shape present, integers >= 0, product fits in 64 bits */
	uint64_t elements;   /* product of shape (1 for a scalar), valid if shape_ok */
	bool offsets_ok;     /* data_offsets present, two integers, begin <= end */
	uint64_t begin, end; /* data_offsets, relative to the data section start */
	bool valid;          /* entry is an object and dtype, shape, offsets are all ok */

	/* Companions: names ending in .scale, .bias, .global_scale (Ollama drops
	 * them from "main" tensors), plus `_scale` / `_qbias` layers of the
	 * old data-key layout. */
	bool is_companion;
	bool companion_orphan; /* companion whose base tensor is not in this blob */

	/* The rest is filled for main tensors only. */
	bool has_scale, has_bias, has_global_scale; /* companions present in this blob */
	char *quant_type;      /* canonical lowercase (e.g. "int4") or the metadata
	                          value lowercased when not a known type; NULL = none */
	int quant_source;      /* enum oa_st_quant_source */
	unsigned quant_bits;   /* bits of quant_type, 0 if none / unknown */
	char *ollama_quant_type; /* what x/server/show.go labels it: global
	                          metadata quant_type (lowercased) else the ratio
	                          rule; NULL = none */
	char *quant_guess;     /* inferred from geometry (packed/scale columns,
	                          group size, bias/global_scale presence, scale
	                          dtype); NULL = no guess */
	uint64_t group_size;   /* per-tensor else global metadata; 0 = unknown */
	uint64_t params;       /* parameters: elements, with the last dimension
	                          x 32/bits for U32-packed quantized tensors (bits of
	                          quant_type, else of quant_guess) */
	bool params_ok;        /* params is meaningful (shape ok, no overflow) */
} oa_st_tensor;

typedef struct oa_st_blob {
	uint64_t file_size;   /* whole blob */
	uint64_t header_len;  /* from the 8-byte little-endian prefix */
	uint64_t data_start;  /* 8 + header_len (when it fits) */
	uint64_t data_bytes;  /* file_size - data_start (0 if header runs past EOF) */
	uint64_t data_end;    /* max(data_offsets end) over valid tensors */
	bool header_ok;       /* header read and parsed as a JSON object */

	size_t n_tensors;     /* every key except __metadata__, header order */
	oa_st_tensor *tensors;
	size_t n_main;        /* tensors that are not companions */
	size_t n_companions;
	bool packed;          /* n_main > 1 (an expert group: layer name = prefix) */
	bool data_key_layout; /* single key `data` (v0.14-v0.15 layout) */

	bool has_metadata;    /* __metadata__ key present */
	bool metadata_null;   /* ... and JSON null (MLX writer with no metadata) */
	size_t n_metadata;    /* entries in __metadata__ (when an object) */
	char *quant_type;     /* __metadata__.quant_type: canonical, or the value
	                         lowercased if unknown; NULL if absent */
	uint64_t group_size;  /* __metadata__.group_size; 0 if absent/invalid */

	uint64_t orphan_companion_elements; /* elements in orphan companions: real
	                         `.bias` tensors Ollama leaves out of its count */

	size_t n_diags;
	oa_st_diag *diags;
	size_t n_errors, n_warnings;
	bool ok;              /* header_ok && n_errors == 0 */
} oa_st_blob;

/*
 * Read a blob. layer_name is the manifest layer's `name` (may be NULL); it
 * names the tensor of the old `data`-key layout and is compared with the
 * header keys (a single-tensor blob should be keyed by it, a packed group
 * should have it as prefix). *out is always initialised; free it with
 * oa_st_blob_free() whatever the return value.
 *
 * oa_st_read_fd:   file_size from fstat or OA_ST_SIZE_UNKNOWN; reads with pread
 *                  (the file offset is not used or changed).
 * oa_st_read_mem:  the whole blob in memory (tests, fuzzing, small blobs).
 * oa_st_read_path: opens read-only (O_NOATIME where allowed), regular files only.
 */
OA_EXPORT int oa_st_read_fd(int fd, uint64_t file_size, const char *layer_name, oa_st_blob *out);
OA_EXPORT int oa_st_read_mem(const void *buf, size_t len, const char *layer_name, oa_st_blob *out);
OA_EXPORT int oa_st_read_path(const char *path, const char *layer_name, oa_st_blob *out);
OA_EXPORT void oa_st_blob_free(oa_st_blob *b);

/* Bits of a quant type or alias, case-insensitive (nvfp4 mxfp4 int4 fp4 q4 ->
 * 4; mxfp8 int8 fp8 q8 -> 8); 0 if unknown or NULL. */
OA_EXPORT int oa_st_quant_bits(const char *quant_type);
/* Canonical lowercase name ("int4", "int8", "nvfp4", "mxfp4", "mxfp8") of a
 * quant type or alias, case-insensitive; NULL if unknown. Static storage. */
OA_EXPORT const char *oa_st_quant_canonical(const char *quant_type);
/* Bits per element of a safetensors dtype (exact, case-sensitive as the
 * format defines them: "BF16" -> 16, "F4" -> 4, "BOOL" -> 8); 0 if unknown. */
OA_EXPORT unsigned oa_st_dtype_bits(const char *dtype);

/* ---- Per-model totals over all image.tensor blobs of one manifest ---- */

typedef struct oa_st_dtype_total {
	char *dtype;      /* as written; "?" for tensors without a dtype string */
	uint64_t tensors; /* tensors (main and companions) of that dtype */
	uint64_t bytes;   /* sum of end - begin */
} oa_st_dtype_total;

typedef struct oa_st_model {
	size_t n_blobs;        /* blobs added */
	size_t n_bad_blobs;    /* blobs added with ok == false */
	uint64_t n_tensors;    /* main tensors (what Ollama counts) */
	uint64_t n_companions;
	uint64_t params;       /* sum of main tensor params (see oa_st_tensor) */
	bool params_exact;     /* false if some main tensor had params_ok == false */
	uint64_t ollama_params; /* like params but with Ollama's labels only
	                          (ollama_quant_type), i.e. what `ollama show` prints */
	uint64_t uncounted_params; /* elements of orphan companions (real .bias
	                          tensors) that Ollama's count misses */
	uint64_t data_bytes;   /* sum of tensor byte lengths */
	size_t n_dtypes;
	oa_st_dtype_total *dtypes; /* in first-seen order; dtypes the format does not
	                              define are totalled as "other" */
	size_t n_quant_types;
	char **quant_types;    /* distinct canonical quant types, first-seen order;
	                          unknown values are listed once as "other" */
	char *quant_level;     /* set by finish: the quant type with fewest bits
	                          (first seen wins a tie), else torch_dtype, else "" */
	unsigned quant_bits;   /* bits of quant_level, 0 when not quantized */
	char *ollama_quant_level; /* same over ollama_quant_type (show.go) */
	unsigned ollama_quant_bits;
	bool finished;
	bool oom;              /* an allocation failed in add/finish */
} oa_st_model;

OA_EXPORT void oa_st_model_init(oa_st_model *m);
/* Adds every tensor with a usable shape/offsets; bad blobs still count. 0, or
 * -1 on allocation failure (m->oom set). */
OA_EXPORT int oa_st_model_add(oa_st_model *m, const oa_st_blob *b);
/* torch_dtype: config.json torch_dtype / dtype (oa_hf_config.torch_dtype), may
 * be NULL. 0, or -1 on allocation failure. */
OA_EXPORT int oa_st_model_finish(oa_st_model *m, const char *torch_dtype);
OA_EXPORT void oa_st_model_free(oa_st_model *m);

/* ---- Hugging Face config.json ---- */

typedef struct oa_hf_config {
	bool ok;             /* parsed as a JSON object */
	char *error;         /* when !ok: one line, escaped */
	char *model_type;    /* "model_type" (string) or NULL */
	char *architecture;  /* "architectures"[0] (string) or NULL */
	char *family;        /* model_type if non-empty, else architecture lowercased
	                        minus a trailing "forcausallm" or
	                        "forconditionalgeneration"; NULL if neither */
	char *torch_dtype;   /* "torch_dtype", else "dtype" (top level, then
	                        text_config); NULL if absent */
	/* Numbers: text_config.<key> preferred over the top-level <key>; 0 = absent
	 * or not a non-negative integer. */
	uint64_t context_length;   /* max_position_embeddings */
	uint64_t embedding_length; /* hidden_size */
	uint64_t block_count;      /* num_hidden_layers */
	uint64_t vocab_size;       /* vocab_size */
	uint64_t head_count;       /* num_attention_heads */
	uint64_t head_count_kv;    /* num_key_value_heads */
	uint64_t feed_forward_length; /* intermediate_size */
} oa_hf_config;

/* 0 if parsed (out->ok), -1 otherwise (out->error set, or errno ENOMEM with
 * out->error possibly NULL). Always free with oa_hf_config_free. */
OA_EXPORT int oa_hf_config_parse(const void *buf, size_t len, oa_hf_config *out);
OA_EXPORT void oa_hf_config_free(oa_hf_config *c);

#endif
