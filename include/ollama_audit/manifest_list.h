/*
 * manifest_list.h - which child of a manifest list a tag uses (spec §2.5,
 * the seed article's 0.40.8 runnerPreferences), and the runner label 0.40
 * reports for a manifest that names none.
 */
#ifndef OLLAMA_AUDIT_MANIFEST_LIST_H
#define OLLAMA_AUDIT_MANIFEST_LIST_H

#include "ollama_audit/export.h"

#include "ollama_audit/manifest.h"

#include <stdbool.h>
#include <stddef.h>

/* "os/arch" as Go spells GOOS/GOARCH: this machine's ("darwin/arm64",
 * "linux/amd64", ...). A static string. */
OA_EXPORT const char *oa_platform_default(void);
/* Whether `p` is of the form os/arch (lowercase letters, digits, '_'). */
OA_EXPORT bool oa_platform_valid(const char *p);

/* The child a pull on `platform` chooses: the first runner of its preference
 * order (darwin/arm64: mlx, llamacpp, ggml; everywhere else: llamacpp, ggml,
 * mlx) that some entry has, among the entries with usable[i] (all when
 * usable is NULL); the first entry of that runner. -1 when none has one of
 * those runners. */
OA_EXPORT long oa_list_select(const oa_manifest *list, const bool *usable, const char *platform);

/* The runner 0.40 reports for a manifest without "runner" (MetadataForConfig):
 * "mlx" for model_format safetensors, "ggml" for gguf, ggml or "" (legacy
 * GGUF models), NULL for anything else. */
OA_EXPORT const char *oa_runner_label_for_format(const char *model_format);

#endif
