/*
 * config.h - the config blob a manifest points at (ConfigV2, spec §3).
 * Every field is optional; a field of the wrong JSON type fails the parse,
 * as it does for the server (which then drops the model from `ollama list`).
 */
#ifndef OLLAMA_AUDIT_CONFIG_H
#define OLLAMA_AUDIT_CONFIG_H

#include "ollama_audit/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oa_config {
	char *model_format;     /* "gguf", "safetensors", "" */
	char *model_family;
	size_t n_families;
	char **model_families;
	bool families_null;     /* model_families absent or null */
	bool has_rootfs;
	char *model_type;       /* parameter size string, e.g. "8.0B" */
	char *file_type;        /* quantization level string, e.g. "Q4_K_M", "int4" */
	char *renderer, *parser, *requires;
	char *remote_host, *remote_model;
	size_t n_capabilities;
	char **capabilities;
	int64_t context_length, embedding_length;
	char *base_name;
	char *draft_format, *draft_architecture;
	char *architecture, *os;
	void *block;            /* every string and array above, in one allocation (oa_config_free) */
} oa_config;

OA_EXPORT int oa_config_parse(const uint8_t *bytes, size_t len, oa_config *out, char *err, size_t errlen);
OA_EXPORT void oa_config_free(oa_config *c);

#endif
