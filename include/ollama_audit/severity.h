/*
 * severity.h - how much a finding or a header diagnostic matters. One scale
 * for the whole library: the GGUF and safetensors readers grade their
 * diagnostics on it and the store turns them into findings unchanged.
 */
#ifndef OLLAMA_AUDIT_SEVERITY_H
#define OLLAMA_AUDIT_SEVERITY_H

#include "ollama_audit/export.h"

typedef enum oa_severity { OA_SEV_INFO = 0, OA_SEV_WARNING = 1, OA_SEV_ERROR = 2 } oa_severity;

OA_EXPORT const char *oa_severity_name(oa_severity s); /* "info", "warning", "error" */
OA_EXPORT int oa_severity_parse(const char *s);        /* -1 if unknown */

#endif
