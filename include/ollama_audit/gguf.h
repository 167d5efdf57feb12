/*
 * gguf.h - a bounded, allocation-safe GGUF header reader.
 *
 * Reads only the header region of a GGUF file (magic, counts, key/values and,
 * in FULL mode, the tensor infos) through a small buffered reader. It never
 * reads tensor data on purpose (the read-ahead window can overlap the first
 * bytes of the data section, at most OA_GGUF_MAX_WINDOW bytes), never
 * allocates from an unchecked count, and checks every length against the
 * bytes left in the file. See docs/gguf-limits.md for every limit and why.
 *
 * Byte orders: little-endian and big-endian (detected like ggml: the version's
 * low 16 bits are 0 when read little-endian) are both parsed. Versions 1, 2, 3.
 */
#ifndef OLLAMA_AUDIT_GGUF_H
#define OLLAMA_AUDIT_GGUF_H

#include "ollama_audit/export.h"

#include "ollama_audit/severity.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits (documented in docs/gguf-limits.md). */
#define OA_GGUF_MAX_STRING      (1ull << 30) /* any string length; ggml's GGUF_MAX_STRING_LENGTH */
#define OA_GGUF_MAX_ARRAY       (1ull << 30) /* array elements; ggml's GGUF_MAX_ARRAY_ELEMENTS */
#define OA_GGUF_MAX_KV          (1ull << 20) /* kv_count */
#define OA_GGUF_MAX_TENSORS     (1ull << 20) /* tensor_count */
#define OA_GGUF_MAX_ARRAY_DEPTH 2            /* array of arrays allowed (warning), deeper = error */
#define OA_GGUF_MAX_ALIGNMENT   (1u << 20)   /* general.alignment upper bound (1 MiB) */
#define OA_GGUF_MAX_NAME        63           /* tensor name bytes llama.cpp accepts */
#define OA_GGUF_KEEP_STRING     1024         /* longest kept string value (longer: truncated) */
#define OA_GGUF_KEEP_NAME       256          /* longest kept tensor name (longer: truncated) */
#define OA_GGUF_MAX_DIAGS       200          /* stored diags; more are counted, not stored */
#define OA_GGUF_MAX_WINDOW      (256u << 10) /* largest single pread of the buffered reader */

/* ggml_type ids (spec §3). */
enum {
	OA_GGML_TYPE_F32 = 0, OA_GGML_TYPE_F16 = 1, OA_GGML_TYPE_Q4_0 = 2, OA_GGML_TYPE_Q4_1 = 3,
	OA_GGML_TYPE_Q5_0 = 6, OA_GGML_TYPE_Q5_1 = 7, OA_GGML_TYPE_Q8_0 = 8, OA_GGML_TYPE_Q8_1 = 9,
	OA_GGML_TYPE_Q2_K = 10, OA_GGML_TYPE_Q3_K = 11, OA_GGML_TYPE_Q4_K = 12, OA_GGML_TYPE_Q5_K = 13,
	OA_GGML_TYPE_Q6_K = 14, OA_GGML_TYPE_Q8_K = 15, OA_GGML_TYPE_IQ2_XXS = 16,
	OA_GGML_TYPE_IQ2_XS = 17, OA_GGML_TYPE_IQ3_XXS = 18, OA_GGML_TYPE_IQ1_S = 19,
	OA_GGML_TYPE_IQ4_NL = 20, OA_GGML_TYPE_IQ3_S = 21, OA_GGML_TYPE_IQ2_S = 22,
	OA_GGML_TYPE_IQ4_XS = 23, OA_GGML_TYPE_I8 = 24, OA_GGML_TYPE_I16 = 25, OA_GGML_TYPE_I32 = 26,
	OA_GGML_TYPE_I64 = 27, OA_GGML_TYPE_F64 = 28, OA_GGML_TYPE_IQ1_M = 29, OA_GGML_TYPE_BF16 = 30,
	OA_GGML_TYPE_TQ1_0 = 34, OA_GGML_TYPE_TQ2_0 = 35, OA_GGML_TYPE_MXFP4 = 39,
	OA_GGML_TYPE_NVFP4 = 40, OA_GGML_TYPE_Q1_0 = 41, OA_GGML_TYPE_Q2_0 = 42,
	OA_GGML_TYPE_COUNT = 43
};

/* GGUF metadata value types (spec §1.3). */
enum {
	OA_GGUF_TYPE_UINT8 = 0, OA_GGUF_TYPE_INT8 = 1, OA_GGUF_TYPE_UINT16 = 2, OA_GGUF_TYPE_INT16 = 3,
	OA_GGUF_TYPE_UINT32 = 4, OA_GGUF_TYPE_INT32 = 5, OA_GGUF_TYPE_FLOAT32 = 6,
	OA_GGUF_TYPE_BOOL = 7, OA_GGUF_TYPE_STRING = 8, OA_GGUF_TYPE_ARRAY = 9,
	OA_GGUF_TYPE_UINT64 = 10, OA_GGUF_TYPE_INT64 = 11, OA_GGUF_TYPE_FLOAT64 = 12,
	OA_GGUF_TYPE_COUNT = 13
};

typedef enum {
	OA_GGUF_QUICK = 0, /* key/values only, stop at the first tokenizer.* key once the
	                      architecture is known (what Ollama's list cache does) */
	OA_GGUF_FULL = 1   /* every key/value and every tensor info, with all checks */
} oa_gguf_mode;

typedef enum {
	OA_GGUF_KIND_UNKNOWN = 0,   /* not GGUF, or stopped before anything could be said */
	OA_GGUF_KIND_MODEL = 1,     /* the default for a GGUF that is none of the below */
	OA_GGUF_KIND_PROJECTOR = 2, /* Ollama's isProjectorGGUF rules (spec §4) */
	OA_GGUF_KIND_ADAPTER = 3,   /* general.type "adapter", or a legacy GGLA file */
	OA_GGUF_KIND_IMATRIX = 4,   /* general.type "imatrix" */
	OA_GGUF_KIND_DRAFT = 5      /* never set by this reader: only the Ollama media type
	                               (image.draft) says a model is a draft; callers may set it */
} oa_gguf_kind;

typedef struct oa_gguf_tensor {
	char *name;        /* NUL-terminated, at most OA_GGUF_KEEP_NAME bytes kept, raw bytes
	                      (not escaped; may contain any byte but NUL is cut off) */
	uint32_t n_dims;   /* 0..4 */
	uint64_t ne[4];    /* elements per dimension, ne[0] = row length; unused dims are 1 */
	uint32_t type;     /* ggml_type id as stored (may be invalid, see valid) */
	uint64_t offset;   /* offset relative to data_offset, as stored */
	uint64_t nbytes;   /* unpadded byte size, 0 when the type or shape is invalid */
	bool valid;        /* type known and shape/size checks passed */
} oa_gguf_tensor;

typedef struct oa_gguf_diag {
	oa_severity severity;
	char *message;     /* one line, file bytes escaped as \xNN, mentions the file offset */
} oa_gguf_diag;

typedef struct oa_gguf_info {
	uint32_t version;           /* 1, 2 or 3 (as stored, after byte-swapping for BE) */
	bool big_endian;            /* the file is big-endian (version low 16 bits were 0) */
	bool is_ggla;               /* legacy GGLA LoRA adapter magic; nothing else parsed */
	uint64_t kv_count;          /* as declared in the header */
	uint64_t tensor_count;      /* as declared in the header */
	uint64_t kv_parsed;         /* key/values actually walked (< kv_count in QUICK mode) */
	uint64_t alignment;         /* general.alignment or 32 */
	uint64_t data_offset;       /* start of the tensor data (FULL mode; 0 in QUICK mode):
	                               align_up(end of tensor infos), no padding when 0 tensors */
	uint64_t header_bytes_read; /* bytes of the file the parse consumed (end position) */
	uint64_t io_bytes_read;     /* bytes actually fetched from the file (fd/path), includes
	                               read-ahead; equals header_bytes_read for read_mem */
	uint64_t file_size;         /* the size the parse was bounded by */

	char *architecture;         /* general.architecture, NULL when absent or not a string */
	char *general_type;         /* general.type ("model", "adapter", "mmproj", ...) or NULL */
	char *general_name;         /* general.name or NULL */
	char *tokenizer_model;      /* tokenizer.ggml.model or NULL (QUICK mode: usually NULL) */
	/* All kept strings are raw file bytes cut at OA_GGUF_KEEP_STRING and at the first NUL. */

	bool has_file_type;         /* general.file_type present with an integer type */
	uint32_t file_type;         /* its value (llama_ftype), read from any integer type */
	bool file_type_is_u32;      /* stored as UINT32: Ollama's KV.FileType() needs that, so
	                               oa_ftype_ollama_string(file_type, has_file_type && this)
	                               reproduces Ollama exactly */
	bool file_type_guessed;     /* FULL mode, key absent: guessed from the dominant type */
	uint32_t guessed_file_type; /* llama.cpp's guess (llama-model-loader), without 1024 flag */

	uint64_t parameter_count;   /* FULL mode: sum over tensors of product(ne), empty shape
	                               counts 1 (Ollama's rule); 0 in QUICK mode */
	uint64_t context_length;    /* <arch>.context_length, 0 = absent */
	uint64_t embedding_length;  /* <arch>.embedding_length, 0 = absent */
	uint64_t block_count;       /* <arch>.block_count, 0 = absent */
	uint64_t expert_count;      /* <arch>.expert_count, 0 = absent */
	uint64_t vocab_size;        /* length of tokenizer.ggml.tokens, else <arch>.vocab_size */
	bool has_pooling_type;      /* <arch>.pooling_type present (embedding models) */
	bool has_vision_block_count;/* <arch>.vision.block_count present */
	bool has_audio_block_count; /* <arch>.audio.block_count present */
	bool has_vision_encoder;    /* clip.has_vision_encoder present and true */
	bool has_audio_encoder;     /* clip.has_audio_encoder present and true */
	uint64_t vision_block_count;/* <arch>.vision.block_count value */
	uint64_t audio_block_count; /* <arch>.audio.block_count value */
	int kind;                   /* oa_gguf_kind */

	size_t n_tensors_kept;      /* FULL mode: tensor infos parsed and kept */
	oa_gguf_tensor *tensors;

	size_t n_diags;             /* stored diags (at most OA_GGUF_MAX_DIAGS + 1 summary) */
	oa_gguf_diag *diags;        /* errors, warnings and infos, in the order found */
	size_t n_errors, n_warnings;/* totals, including diags not stored */
	bool ok;                    /* false when an error-severity diag exists */
	bool quick_stopped;         /* QUICK mode stopped at the first tokenizer.* key */
	/* llama.cpp's gguf-split: every shard carries these; only the first
	 * (split.no 0) carries the model's other key-values. */
	bool has_split;             /* split.no and split.count both present, as integers */
	uint64_t split_no;          /* 0-based index of this shard */
	uint64_t split_count;       /* how many shards make the model */
	int64_t split_tensors;      /* split.tensors.count: tensors over all shards; -1 when absent */
} oa_gguf_info;

/* Parse the header of an open file. file_size bounds every read (pass the
 * size from fstat). Returns 0 when ok (maybe with warnings), -1 when invalid or
 * on an I/O error (a diag says which). *out is always initialised and must be
 * released with oa_gguf_info_free. */
OA_EXPORT int oa_gguf_read_fd(int fd, uint64_t file_size, oa_gguf_mode mode, oa_gguf_info *out);
/* Same, on bytes in memory (tests, fuzzing, mmap). */
OA_EXPORT int oa_gguf_read_mem(const void *buf, size_t len, oa_gguf_mode mode, oa_gguf_info *out);
/* Same, opening path read-only (fstat gives the size). */
OA_EXPORT int oa_gguf_read_path(const char *path, oa_gguf_mode mode, oa_gguf_info *out);
/* Free everything info owns and zero it. Safe on a zeroed struct. */
OA_EXPORT void oa_gguf_info_free(oa_gguf_info *info);
/* *dst becomes a deep copy of *src (free it with oa_gguf_info_free). */
OA_EXPORT void oa_gguf_info_copy(oa_gguf_info *dst, const oa_gguf_info *src);

/* First 4 bytes are "GGUF", or the legacy GGLA adapter magic (u32 0x67676C61 in
 * either byte order: bytes "algg" or "ggla"). */
OA_EXPORT bool oa_gguf_is_magic(const void *first4bytes);

/* ggml's type_name ("q4_K", "mxfp4"), NULL for unknown or removed ids. */
OA_EXPORT const char *oa_ggml_type_name(uint32_t type);
/* Elements and bytes per block; false for unknown or removed ids. */
OA_EXPORT bool oa_ggml_type_block(uint32_t type, uint32_t *blck, uint32_t *bytes);
/* Ollama's FileType.String(): "Q4_K_M", "F16", ...; "unknown" when !present, for
 * ftype 0 (Ollama's FileType() needs a u32 > 0, so ALL_F32 shows "unknown"),
 * removed ids and ids Ollama does not know (41 Q2_0 and above). */
OA_EXPORT const char *oa_ftype_ollama_string(uint32_t ftype, bool present);
/* What Ollama's list cache (/api/tags) prints for a general.file_type of any
 * integer type: ggml.FileType(v).String(), where 0 is "F32". */
OA_EXPORT const char *oa_ftype_list_string(uint32_t ftype);
/* The name `show` gives a header's general.file_type, in its text and its
 * JSON (file_type_ollama): oa_ftype_list_string's, so all F32 (0) is "F32"
 * as `ollama list` shows it; "unknown" when the key is absent or not a u32
 * (Ollama's KV reads no other type). */
OA_EXPORT const char *oa_gguf_file_type_name(const oa_gguf_info *g);
/* llama.cpp's llama_ftype_name ("Q4_K - Medium", "all F32"), NULL if unknown. */
OA_EXPORT const char *oa_ftype_llama_name(uint32_t ftype);
/* Ollama's format.HumanNumber: "8.0B", "136.73M", "7B", "1K", "999". */
OA_EXPORT void oa_human_number(uint64_t n, char *buf, size_t len);
/* Name of a metadata value type ("u32", "string", ...), "?" when out of range. */
OA_EXPORT const char *oa_gguf_value_type_name(uint32_t type);

#endif
