/*
 * runhere.h - can this machine run a model, and on which engine? GGUF runs
 * on llama.cpp everywhere; safetensors only on MLX, where Ollama's MLX
 * runtime (libmlxc) is installed. Then the fit check Ollama's MLX client
 * applies at load time: the weights against free memory minus a reserve
 * (512 MiB on Metal, 457 MiB elsewhere) and OLLAMA_GPU_OVERHEAD.
 *
 * GPU memory is not visible offline: system memory stands in, which is
 * what an Apple Silicon (unified memory) Mac has. docs/history.md.
 */
#ifndef OLLAMA_AUDIT_RUNHERE_H
#define OLLAMA_AUDIT_RUNHERE_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct oa_machine {
	const char *root;          /* another machine's root, or NULL: this one */
	bool mlx_found;
	char mlx_lib[OA_PATH_MAX];    /* the libmlxc the server would load */
	char searched[2048];       /* the directories looked in, for messages */
	bool mlx_platform_ok;      /* MLX runs on this OS/arch (not on Intel Macs) */
	bool metal;                /* Apple GPU: the larger reserve */
	bool mem_known;
	uint64_t mem_total, mem_available;
	uint64_t gpu_overhead;     /* OLLAMA_GPU_OVERHEAD, bytes */
} oa_machine;

/* Look at root (NULL: this machine; else its usr/lib/ollama, ... and its
 * proc/meminfo when there is one). llm_library is OLLAMA_LLM_LIBRARY and
 * gpu_overhead OLLAMA_GPU_OVERHEAD as set for the server (either NULL). */
OA_EXPORT void oa_machine_probe(oa_machine *mc, const char *root, const char *llm_library, const char *gpu_overhead);

enum oa_fit { OA_FIT_UNKNOWN, OA_FIT_FITS, OA_FIT_TIGHT, OA_FIT_NO };
OA_EXPORT const char *oa_fit_name(enum oa_fit f); /* "fits", "tight", "won't fit", "unknown" */

typedef struct oa_runhere {
	const char *engine;        /* "llamacpp", "mlx", or NULL (remote, unknown format) */
	bool can_run;
	enum oa_fit fit;
	uint64_t weights;          /* bytes the fit check weighs */
	uint64_t reserve;          /* minimum reserve + OLLAMA_GPU_OVERHEAD */
} oa_runhere;

OA_EXPORT void oa_runhere_model(const oa_machine *mc, const oa_model *m, oa_runhere *out);

/* check's no-runtime-for-model, into s->findings: every model of s (not a
 * legacy anchor or a list's sibling) an engine runs, but not on mc. */
OA_EXPORT void oa_runhere_findings(const oa_machine *mc, oa_store *s);

/* Layer i is one of the weights the engine loads (and the fit weighs). */
OA_EXPORT bool oa_runhere_weight_layer(const oa_model *m, size_t i);

/* MemTotal and MemAvailable of a meminfo-format text (bytes). -1 if absent. */
OA_EXPORT int oa_meminfo_parse(const char *text, uint64_t *total, uint64_t *available);

#endif
