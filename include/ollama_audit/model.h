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

/* RUNNER as a list shows it: a manifest list's row names its child's runner
 * (details.runner: "ggml" for the original, "llamacpp" for a converted
 * copy); any other model the engine that runs it. */
OA_EXPORT const char *oa_model_list_runner(const oa_model *m);
/* The row a load of the tag would use, among several children here. */
OA_EXPORT bool oa_model_row_in_use(const oa_model *m);

#endif
