/*
 * headers.h - what the weights themselves say: the GGUF header of each GGUF
 * layer and the safetensors header of each tensor layer, read without
 * loading any tensor data, and cross-checked against the config blob.
 */
#ifndef OLLAMA_AUDIT_HEADERS_H
#define OLLAMA_AUDIT_HEADERS_H

#include "ollama_audit/export.h"

#include "ollama_audit/gguf.h"
#include "ollama_audit/safetensors.h"
#include "ollama_audit/store.h"

/* One manifest layer's header, when it was read. */
typedef struct oa_layer_header {
	oa_gguf_info *gguf; /* when have_gguf, else NULL; shared with the scan's other layers
	                     * of the same blob: read-only (headers.c owns it) */
	oa_st_blob *st;     /* when have_st, else NULL (most layers are not tensors: 150 bytes
	                     * less per layer of every tag) */
	bool have_gguf;     /* gguf holds the parse (ok or not) */
	bool not_gguf;      /* a GGUF media type whose blob lacks the magic */
	bool have_st;       /* (the flags after the pointers: 24 bytes a layer, not 32) */
} oa_layer_header;

typedef struct oa_model_headers {
	size_t n_layers;
	oa_layer_header *layers; /* parallel to the manifest's layers (in h's allocation) */
	oa_st_model *st_model;   /* totals over the tensor layers, when have_st_model, else NULL */
	oa_hf_config *hf;        /* the config.json image.json layer, when have_hf, else NULL
	                          * (both are pointers: a GGUF tag has neither, 240 bytes less) */
	bool have_st_model;      /* (the flags together: no 7-byte hole after each) */
	bool have_hf;
	bool cap_completion, cap_embedding, cap_vision, cap_audio;
	char *params_text, *quant_text; /* PARAMS / QUANT the headers spell (owned), when m->params,
	                                 * m->quant is it, else NULL (not two 32-byte arrays in every
	                                 * tag's headers: 640 KB over 10,000 tags, issue 21) */
	size_t main_layer;       /* the model layer whose header describes the model (the list cache's
	                          * and the load's): the last, or the first of a split GGUF; SIZE_MAX none */
	bool sharded;            /* a split GGUF: the first model layer is shard 0 of split.count > 1,
	                          * every model layer one shard (spec §2.5.2) */
	uint64_t shard_params;   /* sharded, FULL headers: the parameters of every shard read */
} oa_model_headers;

enum oa_header_mode {
	OA_HEADERS_NONE,  /* config only */
	OA_HEADERS_QUICK, /* GGUF up to the tokenizer keys, like Ollama's list cache */
	OA_HEADERS_FULL,  /* every key and tensor info; safetensors headers */
};

/* Set before oa_store_scan(); the default is OA_HEADERS_QUICK. */
OA_EXPORT void oa_store_set_header_mode(oa_store *s, enum oa_header_mode mode);

/* Called by classification: read headers per the store's mode, fill the
 * details Ollama takes from the GGUF, and add cross-check findings. A weight
 * blob that several tags share is parsed once, between oa_headers_begin and
 * oa_headers_end (oa_store_scan calls both). */
OA_EXPORT void oa_headers_begin(oa_store *s);
OA_EXPORT void oa_headers_end(oa_store *s);
OA_EXPORT void oa_headers_apply(oa_store *s, oa_model *m);
/* ARCH / PARAMS / QUANT fallbacks from the headers when the config is silent. */
OA_EXPORT void oa_headers_fill_display(oa_model *m);
OA_EXPORT void oa_headers_free(struct oa_model_headers *h);

#endif
