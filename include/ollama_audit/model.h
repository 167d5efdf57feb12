/*
 * model.h - what a model is, derived from its manifest, config and blobs:
 * format (gguf / safetensors / remote / mixed / unknown), the runner the
 * server would start, layer counts, disk usage, and the details that
 * `ollama list` and /api/tags show.
 */
#ifndef OLLAMA_AUDIT_MODEL_H
#define OLLAMA_AUDIT_MODEL_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

OA_EXPORT void oa_model_classify(oa_store *s, oa_model *m);
OA_EXPORT void oa_model_free(oa_model *m);

/* The `from` of the last image.model layer (details.parent_model), or "". */
OA_EXPORT const char *oa_model_parent(const oa_model *m);

#endif
