/*
 * reach.h - the blob files a tag reaches, and what a converted list's
 * children cost (part of store.h, which includes it).
 */
#ifndef OLLAMA_AUDIT_REACH_H
#define OLLAMA_AUDIT_REACH_H

#include "ollama_audit/export.h"
#include "ollama_audit/store_core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every blob file the model's tag reaches: its config and layers, the
 * manifest blob the tag is (0.40), and for a manifest list each child here
 * with what it names. A new array (free it); the blobs are the store's. */
OA_EXPORT size_t oa_model_reach(oa_store *s, const oa_model *m, oa_blob ***out);

/* The manifest blobs a manifests-v2 row stands on (at most 2, into out):
 * the blob its tag is (a list, or its manifest) and, for a list's row, its
 * child's. Without them the tag no longer resolves. None for a legacy tag. */
OA_EXPORT size_t oa_model_manifest_blobs(const oa_store *s, const oa_model *m, oa_blob *out[2]);

/* A tag the compatibility migration converted (spec §2.5.1): its list has a
 * ggml and a llamacpp child here. The converted copy doubles the model. */
typedef struct oa_conversion {
	const oa_model *ggml, *llamacpp; /* the two rows (one is the tag's own) */
	uint64_t duplicated;     /* allocated bytes of the llamacpp child's config and layers its
	                            ggml source does not have: what the copy adds */
	uint64_t drop_llamacpp;  /* freed by dropping the converted child (its shadow too) */
	uint64_t drop_ggml;      /* freed by dropping the source child (its anchor too) */
} oa_conversion;
/* Every converted tag of the store; a new array (free it). Only blobs no
 * other tag names count as freed. */
OA_EXPORT size_t oa_store_conversions(const oa_store *s, oa_conversion **out);
/* The conversion of m's tag (m: the tag's model or one of its rows). */
OA_EXPORT bool oa_model_conversion(const oa_store *s, const oa_model *m, oa_conversion *out);

#endif
