/*
 * finding.h - the vocabulary of problems an audit reports, after git fsck:
 * a stable kebab-case code, a severity, what it concerns and one line of text.
 * The codes are part of the JSON schema: add new ones, never rename.
 */
#ifndef OLLAMA_AUDIT_FINDING_H
#define OLLAMA_AUDIT_FINDING_H

#include "ollama_audit/export.h"

#include "ollama_audit/severity.h"

#include <stddef.h>

/*
 * Every finding code, once: X(ID, "code", severity, "docs/ anchor", "summary").
 * The enum, the table of kinds and tests/cli/test_docs.py (which checks
 * docs/schema.md, the man page's FINDINGS and each anchor against it) all
 * read this list, so a code exists everywhere or nowhere and a misspelt
 * OA_FINDING_* constant does not compile. Append; never rename a code.
 */
#define OA_FINDING_CODES(X) \
	X(MISSING_BLOB, "missing-blob", ERROR, "schema.md#finding-codes", \
	  "a manifest references a blob that is not in blobs/") \
	X(SIZE_MISMATCH, "size-mismatch", ERROR, "schema.md#finding-codes", \
	  "a blob's size on disk differs from the size its manifest declares") \
	X(EMPTY_BLOB, "empty-blob", ERROR, "schema.md#finding-codes", \
	  "a referenced blob is an empty file although its manifest declares content") \
	X(DIGEST_MISMATCH, "digest-mismatch", ERROR, "schema.md#finding-codes", \
	  "a blob's sha256 differs from its name (verify)") \
	X(FINGERPRINT_MISMATCH, "fingerprint-mismatch", ERROR, "schema.md#finding-codes", \
	  "a blob's content changed since it was last verified (verify --quick)") \
	X(INVALID_MANIFEST, "invalid-manifest", ERROR, "schema.md#finding-codes", \
	  "a manifest file cannot be read as a manifest") \
	X(INVALID_NAME, "invalid-name", ERROR, "schema.md#finding-codes", \
	  "a file under manifests/ whose path is not a valid model name") \
	X(INVALID_CONFIG, "invalid-config", ERROR, "schema.md#finding-codes", \
	  "a config blob cannot be parsed") \
	X(MISSING_CONFIG, "missing-config", ERROR, "schema.md#finding-codes", \
	  "a manifest's config blob is missing") \
	X(INVALID_GGUF, "invalid-gguf", ERROR, "schema.md#finding-codes", \
	  "a GGUF layer's header is broken") \
	X(GGUF_WARNING, "gguf-warning", WARNING, "schema.md#finding-codes", \
	  "a GGUF header is readable but llama.cpp would refuse or misread it") \
	X(INVALID_SAFETENSORS, "invalid-safetensors", ERROR, "schema.md#finding-codes", \
	  "a tensor layer's safetensors header is broken") \
	X(SAFETENSORS_WARNING, "safetensors-warning", WARNING, "schema.md#finding-codes", \
	  "a safetensors header is readable but unusual") \
	X(CONFIG_MISMATCH, "config-mismatch", WARNING, "schema.md#finding-codes", \
	  "the config blob and the weights disagree") \
	X(UNKNOWN_MEDIA_TYPE, "unknown-media-type", WARNING, "schema.md#finding-codes", \
	  "a layer media type this tool (and the server) does not know") \
	X(INVALID_DIGEST, "invalid-digest", ERROR, "schema.md#finding-codes", \
	  "a digest that is not sha256: + 64 hex; never turned into a path") \
	X(LEGACY_BLOB_NAME, "legacy-blob-name", WARNING, "schema.md#finding-codes", \
	  "a blob named sha256:<hex>, renamed by the server at start") \
	X(SYMLINK_OUT_OF_STORE, "symlink-out-of-store", WARNING, "schema.md#finding-codes", \
	  "a symlink under manifests/ or manifests-v2/ that leads out of the store: never followed; prune keeps every complete blob") \
	X(SYMLINKED_BLOB, "symlinked-blob", WARNING, "schema.md#finding-codes", \
	  "a blob that is a symbolic link (inside or outside the store, or dangling)") \
	X(UNREADABLE, "unreadable", ERROR, "schema.md#finding-codes", \
	  "a file or directory that cannot be read (permissions, I/O error)") \
	X(PRUNE_BLOCKER, "prune-blocker", WARNING, "schema.md#finding-codes", \
	  "something that makes the server skip its start-up prune") \
	X(HIDDEN_FROM_LIST, "hidden-from-list", WARNING, "schema.md#finding-codes", \
	  "a model that `ollama list` would not show") \
	X(ORPHAN_BLOB, "orphan-blob", WARNING, "schema.md#finding-codes", \
	  "a blob no manifest references (the server prunes it after 1 h)") \
	X(UNPARSED_REFERENCE, "unparsed-reference", INFO, "schema.md#finding-codes", \
	  "a blob named only by a manifest that cannot be parsed or has an invalid name (kept: it may still be needed)") \
	X(MANIFEST_BLOB, "manifest-blob", INFO, "schema.md#finding-codes", \
	  "an unreferenced blob whose content is a manifest (newer Ollama keeps these)") \
	X(PARTIAL_DOWNLOAD, "partial-download", WARNING, "schema.md#finding-codes", \
	  "an interrupted download (-partial data and -partial-N part files)") \
	X(TEMP_FILE, "temp-file", WARNING, "schema.md#finding-codes", \
	  "a temporary file left by create, quantize or a tensor pull") \
	X(FOREIGN_FILE, "foreign-file", WARNING, "schema.md#finding-codes", \
	  "a file in blobs/ that Ollama did not write") \
	X(IGNORED_FILE, "ignored-file", INFO, "schema.md#finding-codes", \
	  "a file or directory under manifests/ that the server ignores") \
	X(EMPTY_MANIFEST_DIR, "empty-manifest-dir", INFO, "schema.md#finding-codes", \
	  "an empty directory under manifests/") \
	X(MANIFEST_LIST, "manifest-list", INFO, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifest list (Ollama 0.40): the child the tag uses, and the one a pull on another platform would fetch") \
	X(MISSING_CHILD, "missing-child", ERROR, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifest list none of whose children is here: the tag has no model") \
	X(NESTED_LIST, "nested-list", ERROR, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifest list whose child is another list, which the server rejects") \
	X(CHILD_MISMATCH, "child-mismatch", WARNING, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifest's runner or format (its own, or its list entry's) contradicts its config") \
	X(DANGLING_TAG, "dangling-tag", ERROR, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifests-v2 tag that is a symlink to nothing") \
	X(LEGACY_ANCHOR, "legacy-anchor", WARNING, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a legacy manifests/ tag shadowed by a manifests-v2 tag of the same name (info when both are the same model)") \
	X(LOAD_FAILED, "load-failed", WARNING, "history.md#findings-in-check", \
	  "the server's logs show that the model's latest load failed, with the server's reason") \
	X(NO_RUNTIME_FOR_MODEL, "no-runtime-for-model", WARNING, "history.md#what-can-run-here-show-and-check", \
	  "a safetensors (MLX) model on a machine without Ollama's MLX runtime: it cannot run here") \
	X(RUNNER_CHANGED, "runner-changed", INFO, "history.md#findings-in-check", \
	  "the server's logs show the tag ran on another engine than its files select now (re-pulled as another child)") \
	X(COMPAT_SHADOW, "compat-shadow", INFO, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a legacy tag llamacpp:<hex> the compatibility migration wrote so that an older Ollama keeps a converted child") \
	X(ORPHANED_SHADOW, "orphaned-shadow", WARNING, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a compatibility shadow whose model is gone: no list names its child, and it alone holds those bytes") \
	X(DOWNGRADE_LOSS, "downgrade-loss", WARNING, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a model only manifests-v2/ names: one start of an Ollama from before manifest lists deletes its blobs") \
	X(STALE_METADATA, "stale-metadata", INFO, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a metadata/sha256-<hex>.json cache whose blob is gone (prune removes it)") \
	X(UNSERVABLE, "unservable", WARNING, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a model the current server refuses to load (mllama; image generation)") \
	X(SPLIT_DIR, "split-dir", INFO, "store-format-notes.md#the-newest-layout-anchors-shards-retirement-fail-closed-cleanup", \
	  "a blobs/.ollama-split-* directory of hard links a load of a split GGUF makes (prune removes a stale one)") \
	X(SPLIT_MISMATCH, "split-mismatch", ERROR, "store-format-notes.md#the-newest-layout-anchors-shards-retirement-fail-closed-cleanup", \
	  "the shards of a split GGUF do not make one model: one missing, duplicated or out of range (split.no, split.count)")

typedef enum oa_finding_code {
#define OA_FINDING_ENUM_(id, code, sev, anchor, summary) OA_FINDING_##id,
	OA_FINDING_CODES(OA_FINDING_ENUM_)
#undef OA_FINDING_ENUM_
	OA_FINDING_NCODES
} oa_finding_code;

typedef struct oa_finding_kind {
	const char *code;
	oa_severity severity; /* the default severity of this code */
	const char *anchor;   /* where docs/ describes it: "file.md#heading" */
	const char *summary;  /* what it means, in one line */
} oa_finding_kind;

/* The kind of every code, indexed by oa_finding_code. */
OA_EXPORT extern const oa_finding_kind oa_finding_kinds[OA_FINDING_NCODES];

typedef struct oa_finding {
	oa_finding_code id;
	const char *code;  /* oa_finding_kinds[id].code */
	oa_severity severity;
	char *model;       /* display name, or NULL for store-wide findings */
	char *digest;      /* "sha256:<hex>" or NULL */
	char *path;        /* path relative to the store root, or NULL */
	char *message;     /* one line, printable */
} oa_finding;

typedef struct oa_findings {
	oa_finding *v;
	size_t n, cap;
} oa_findings;

/* Add a finding with the code's default severity. */
OA_EXPORT void oa_findings_add(oa_findings *f, oa_finding_code code, const char *model, const char *digest,
                     const char *path, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Same with an explicit severity. */
OA_EXPORT void oa_findings_add_sev(oa_findings *f, oa_finding_code code, oa_severity sev, const char *model,
                         const char *digest, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
OA_EXPORT void oa_findings_free(oa_findings *f);
OA_EXPORT size_t oa_findings_count(const oa_findings *f, oa_severity sev);

#endif
