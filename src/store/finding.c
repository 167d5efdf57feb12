/* finding.c - the finding vocabulary and a list of findings. */
#include "ollama_audit/finding.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const oa_finding_kind oa_finding_kinds[] = {
	{ "missing-blob", OA_SEV_ERROR, "a manifest references a blob that is not in blobs/" },
	{ "size-mismatch", OA_SEV_ERROR, "a blob's size on disk differs from the size its manifest declares" },
	{ "empty-blob", OA_SEV_ERROR, "a referenced blob is an empty file although its manifest declares content" },
	{ "digest-mismatch", OA_SEV_ERROR, "a blob's sha256 differs from its name (verify)" },
	{ "fingerprint-mismatch", OA_SEV_ERROR, "a blob's content changed since it was last verified (verify --quick)" },
	{ "invalid-manifest", OA_SEV_ERROR, "a manifest file cannot be read as a manifest" },
	{ "invalid-name", OA_SEV_ERROR, "a file under manifests/ whose path is not a valid model name" },
	{ "invalid-config", OA_SEV_ERROR, "a config blob cannot be parsed" },
	{ "missing-config", OA_SEV_ERROR, "a manifest's config blob is missing" },
	{ "invalid-gguf", OA_SEV_ERROR, "a GGUF layer's header is broken" },
	{ "gguf-warning", OA_SEV_WARNING, "a GGUF header is readable but llama.cpp would refuse or misread it" },
	{ "invalid-safetensors", OA_SEV_ERROR, "a tensor layer's safetensors header is broken" },
	{ "safetensors-warning", OA_SEV_WARNING, "a safetensors header is readable but unusual" },
	{ "config-mismatch", OA_SEV_WARNING, "the config blob and the weights disagree" },
	{ "unknown-media-type", OA_SEV_WARNING, "a layer media type this tool (and the server) does not know" },
	{ "invalid-digest", OA_SEV_ERROR, "a digest that is not sha256: + 64 hex; never turned into a path" },
	{ "legacy-blob-name", OA_SEV_WARNING, "a blob named sha256:<hex>, renamed by the server at start" },
	{ "symlink-out-of-store", OA_SEV_WARNING, "a symlink under manifests/ or manifests-v2/ that leads out of the store: never followed; prune keeps every complete blob" },
	{ "symlinked-blob", OA_SEV_WARNING, "a blob that is a symbolic link (inside or outside the store, or dangling)" },
	{ "unreadable", OA_SEV_ERROR, "a file or directory that cannot be read (permissions, I/O error)" },
	{ "prune-blocker", OA_SEV_WARNING, "something that makes the server skip its start-up prune" },
	{ "hidden-from-list", OA_SEV_WARNING, "a model that `ollama list` would not show" },
	{ "orphan-blob", OA_SEV_WARNING, "a blob no manifest references (the server prunes it after 1 h)" },
	{ "unparsed-reference", OA_SEV_INFO, "a blob named only by a manifest that cannot be parsed or has an invalid name (kept: it may still be needed)" },
	{ "manifest-blob", OA_SEV_INFO, "an unreferenced blob whose content is a manifest (newer Ollama keeps these)" },
	{ "partial-download", OA_SEV_WARNING, "an interrupted download (-partial data and -partial-N part files)" },
	{ "temp-file", OA_SEV_WARNING, "a temporary file left by create, quantize or a tensor pull" },
	{ "foreign-file", OA_SEV_WARNING, "a file in blobs/ that Ollama did not write" },
	{ "ignored-file", OA_SEV_INFO, "a file or directory under manifests/ that the server ignores" },
	{ "empty-manifest-dir", OA_SEV_INFO, "an empty directory under manifests/" },
	{ "manifest-list", OA_SEV_INFO, "a manifest list (Ollama 0.40): the child the tag uses, and the one a pull on another platform would fetch" },
	{ "missing-child", OA_SEV_ERROR, "a manifest list none of whose children is here: the tag has no model" },
	{ "nested-list", OA_SEV_ERROR, "a manifest list whose child is another list, which the server rejects" },
	{ "child-mismatch", OA_SEV_WARNING, "a manifest's runner or format (its own, or its list entry's) contradicts its config" },
	{ "dangling-tag", OA_SEV_ERROR, "a manifests-v2 tag that is a symlink to nothing" },
	{ "legacy-anchor", OA_SEV_WARNING, "a legacy manifests/ tag shadowed by a manifests-v2 tag of the same name (info when both are the same model)" },
	{ "load-failed", OA_SEV_WARNING, "the server's logs show that the model's latest load failed, with the server's reason" },
	{ "no-runtime-for-model", OA_SEV_WARNING, "a safetensors (MLX) model on a machine without Ollama's MLX runtime: it cannot run here" },
	{ "runner-changed", OA_SEV_INFO, "the server's logs show the tag ran on another engine than its files select now (re-pulled as another child)" },
	{ NULL, OA_SEV_INFO, NULL },
};

const oa_finding_kind *oa_finding_kind_get(const char *code)
{
	for (const oa_finding_kind *k = oa_finding_kinds; k->code; k++)
		if (strcmp(k->code, code) == 0)
			return k;
	return NULL;
}

__attribute__((format(printf, 7, 0)))
static void add_v(oa_findings *f, const char *code, int sev, const char *model,
                  const char *digest, const char *path, const char *fmt, va_list ap)
{
	const oa_finding_kind *k = oa_finding_kind_get(code);
	if (!k)
		abort(); /* a programming error: every code must be in the table */
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 16;
		f->v = oa_xreallocarray(f->v, f->cap, sizeof *f->v);
	}
	oa_finding *x = &f->v[f->n++];
	x->code = k->code;
	x->severity = sev < 0 ? k->severity : (oa_severity)sev;
	x->model = model ? oa_xstrdup(model) : NULL;
	x->digest = digest ? oa_xstrdup(digest) : NULL;
	x->path = path ? oa_xstrdup(path) : NULL;
	x->message = oa_xvasprintf(fmt, ap);
}

void oa_findings_add(oa_findings *f, const char *code, const char *model, const char *digest,
                     const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_v(f, code, -1, model, digest, path, fmt, ap);
	va_end(ap);
}

void oa_findings_add_sev(oa_findings *f, const char *code, oa_severity sev, const char *model,
                         const char *digest, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_v(f, code, (int)sev, model, digest, path, fmt, ap);
	va_end(ap);
}

void oa_findings_free(oa_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].model);
		free(f->v[i].digest);
		free(f->v[i].path);
		free(f->v[i].message);
	}
	free(f->v);
	f->v = NULL;
	f->n = f->cap = 0;
}

size_t oa_findings_count(const oa_findings *f, oa_severity sev)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += f->v[i].severity == sev;
	return n;
}
