/*
 * finding.h - the vocabulary of problems an audit reports, after git fsck:
 * a stable kebab-case code, a severity, what it concerns and one line of text.
 * The codes are part of the JSON schema: add new ones, never rename.
 */
#ifndef OLLAMA_AUDIT_FINDING_H
#define OLLAMA_AUDIT_FINDING_H

#include "ollama_audit/export.h"

#include "ollama_audit/severity.h"

#include <stdbool.h>
#include <stddef.h>

/* What a code means to the rules beyond its own report (oa_finding_kind.flags). */
enum {
	OA_FC_HIDES = 1, /* `ollama list` does not show the model (or the name): list's problems */
	OA_FC_JUNK = 2,  /* junk a plain `prune` removes once it is past the grace period */
	OA_FC_IO = 4,    /* a part that could not be read: the audit is incomplete (exit 8) */
};

/*
 * Every finding code, once: X(ID, "code", severity, "docs/ anchor",
 * "summary", flags, "fix"). The enum, the table of kinds and
 * tests/cli/test_docs.py (which checks docs/schema.md, the man page's
 * FINDINGS and each anchor against it) all read this list, so a code exists
 * everywhere or nowhere and a misspelt OA_FINDING_* constant does not
 * compile. Append; never rename a code.
 *
 * "fix" is the one remedy a finding of the code prints (its `fix` field,
 * check's FIX column, report's page), a command that works as printed or,
 * when there is none, what to do by hand, never claiming a command. It is
 * a template (src/audit/remedy.c): {model}, {path} (the finding's file),
 * {store}, {blob} (the blob its digest names) and {aside} (a name in the
 * store's root to move a file to) are filled in quoted for a shell; the
 * others are remedies of their own: {pull} fetches the model again (not
 * one created here); {repair} mends a missing or damaged blob (ollama-audit
 * repair: a good copy from another store, else the damaged file removed and
 * the pull to run printed), known by its size, {repair-recorded} one verify
 * found (with the cache that records it) and {repair-hashed} one only a
 * hash tells; {prune} is prune's plan for the file, {emptydir} removes an
 * empty directory (prune's, under manifests/), {perm} a permission
 * fix, {relink} replaces a symlinked blob and {same} is the fix of the
 * other finding about the same file.
 */
#define OA_FINDING_CODES(X) \
	X(MISSING_BLOB, "missing-blob", ERROR, "schema.md#finding-codes", \
	  "a manifest references a blob that is not in blobs/", \
	  0, "{repair}") \
	X(SIZE_MISMATCH, "size-mismatch", ERROR, "schema.md#finding-codes", \
	  "a blob's size on disk differs from the size its manifest declares", \
	  0, "{repair}") \
	X(EMPTY_BLOB, "empty-blob", ERROR, "schema.md#finding-codes", \
	  "a referenced blob is an empty file although its manifest declares content", \
	  0, "{repair}") \
	X(DIGEST_MISMATCH, "digest-mismatch", ERROR, "schema.md#finding-codes", \
	  "a blob's sha256 differs from its name (verify)", \
	  0, "{repair-recorded}") \
	X(FINGERPRINT_MISMATCH, "fingerprint-mismatch", ERROR, "schema.md#finding-codes", \
	  "a blob's content changed since it was last verified (verify --quick)", \
	  0, "{repair-recorded}") \
	X(INVALID_MANIFEST, "invalid-manifest", ERROR, "schema.md#finding-codes", \
	  "a manifest file cannot be read as a manifest", \
	  OA_FC_HIDES, "{pull}") \
	X(INVALID_NAME, "invalid-name", ERROR, "schema.md#finding-codes", \
	  "a file under manifests/ whose path is not a valid model name", \
	  OA_FC_HIDES, "{setaside}") \
	X(INVALID_CONFIG, "invalid-config", ERROR, "schema.md#finding-codes", \
	  "a config blob cannot be parsed", \
	  OA_FC_HIDES, "{repair-hashed}") \
	X(MISSING_CONFIG, "missing-config", ERROR, "schema.md#finding-codes", \
	  "a manifest's config blob is missing", \
	  OA_FC_HIDES, "{repair}") \
	X(INVALID_GGUF, "invalid-gguf", ERROR, "schema.md#finding-codes", \
	  "a GGUF layer's header is broken", \
	  0, "{repair-hashed}") \
	X(GGUF_WARNING, "gguf-warning", WARNING, "schema.md#finding-codes", \
	  "a GGUF header is readable but llama.cpp would refuse or misread it", \
	  0, "none in the store if it loads (ollama run {model}); if it does not, its weights need fixing where they came from") \
	X(INVALID_SAFETENSORS, "invalid-safetensors", ERROR, "schema.md#finding-codes", \
	  "a tensor layer's safetensors header is broken", \
	  0, "{repair-hashed}") \
	X(SAFETENSORS_WARNING, "safetensors-warning", WARNING, "schema.md#finding-codes", \
	  "a safetensors header is readable but unusual", \
	  0, "none in the store if it loads (ollama run {model}); if it does not, its weights need fixing where they came from") \
	X(CONFIG_MISMATCH, "config-mismatch", WARNING, "schema.md#finding-codes", \
	  "the config blob and the weights disagree", \
	  0, "none in the store: the config and the weights came this way (a pull fetches the same files); the server follows the config") \
	X(UNKNOWN_MEDIA_TYPE, "unknown-media-type", WARNING, "schema.md#finding-codes", \
	  "a layer media type this tool (and the server) does not know", \
	  0, "none: this Ollama ignores the layer; a newer one may use it") \
	X(INVALID_DIGEST, "invalid-digest", ERROR, "schema.md#finding-codes", \
	  "a digest that is not sha256: + 64 hex; never turned into a path", \
	  0, "{pull}") \
	X(LEGACY_BLOB_NAME, "legacy-blob-name", WARNING, "schema.md#finding-codes", \
	  "a blob named sha256:<hex>, renamed by the server at start", \
	  0, "mv -- {path} {blob}") \
	X(SYMLINK_OUT_OF_STORE, "symlink-out-of-store", WARNING, "schema.md#finding-codes", \
	  "a symlink under manifests/ or manifests-v2/ that leads out of the store: never followed; prune keeps every complete blob", \
	  0, "by hand: replace the link {path} by a copy of what it points to (Ollama follows it; ollama-audit never does, so prune keeps every complete blob meanwhile)") \
	X(SYMLINKED_BLOB, "symlinked-blob", WARNING, "schema.md#finding-codes", \
	  "a blob that is a symbolic link (inside or outside the store, or dangling)", \
	  0, "{relink}") \
	X(UNREADABLE, "unreadable", ERROR, "schema.md#finding-codes", \
	  "a file or directory that cannot be read (permissions, I/O error)", \
	  OA_FC_HIDES | OA_FC_IO, "{perm}") \
	X(PRUNE_BLOCKER, "prune-blocker", WARNING, "schema.md#finding-codes", \
	  "something that makes the server skip its start-up prune", \
	  0, "{same}") \
	X(HIDDEN_FROM_LIST, "hidden-from-list", WARNING, "schema.md#finding-codes", \
	  "a model that `ollama list` would not show", \
	  OA_FC_HIDES, "{pull}") \
	X(ORPHAN_BLOB, "orphan-blob", WARNING, "schema.md#finding-codes", \
	  "a blob no manifest references (the server prunes it after 1 h)", \
	  OA_FC_JUNK, "{prune}") \
	X(UNPARSED_REFERENCE, "unparsed-reference", INFO, "schema.md#finding-codes", \
	  "a blob named only by a manifest that cannot be parsed or has an invalid name (kept: it may still be needed)", \
	  0, "none: kept while a manifest that cannot be parsed names it (that manifest's own finding says how to fix it)") \
	X(MANIFEST_BLOB, "manifest-blob", INFO, "schema.md#finding-codes", \
	  "an unreferenced blob whose content is a manifest (newer Ollama keeps these)", \
	  0, "none: a newer Ollama keeps it (ollama-audit prune --apply --what manifest-blobs --store {store} would remove it)") \
	X(PARTIAL_DOWNLOAD, "partial-download", WARNING, "schema.md#finding-codes", \
	  "an interrupted download (-partial data and -partial-N part files)", \
	  OA_FC_JUNK, "{prune}") \
	X(TEMP_FILE, "temp-file", WARNING, "schema.md#finding-codes", \
	  "a temporary file left by create, quantize or a tensor pull", \
	  OA_FC_JUNK, "{prune}") \
	X(FOREIGN_FILE, "foreign-file", WARNING, "schema.md#finding-codes", \
	  "a file in blobs/ that Ollama did not write", \
	  0, "mv -- {path} {aside}") \
	X(IGNORED_FILE, "ignored-file", INFO, "schema.md#finding-codes", \
	  "a file or directory under manifests/ that the server ignores", \
	  0, "{setaside}") \
	X(EMPTY_MANIFEST_DIR, "empty-manifest-dir", INFO, "schema.md#finding-codes", \
	  "an empty directory under manifests/", \
	  0, "{emptydir}") \
	X(MANIFEST_LIST, "manifest-list", INFO, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifest list (Ollama 0.40): the child the tag uses, and the one a pull on another platform would fetch", \
	  0, "none: information (which child of the list the tag uses)") \
	X(MISSING_CHILD, "missing-child", ERROR, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifest list none of whose children is here: the tag has no model", \
	  OA_FC_HIDES, "{pull}") \
	X(NESTED_LIST, "nested-list", ERROR, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifest list whose child is another list, which the server rejects", \
	  OA_FC_HIDES, "ollama-audit rm {model} --apply --store {store}") \
	X(CHILD_MISMATCH, "child-mismatch", WARNING, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifest's runner or format (its own, or its list entry's) contradicts its config", \
	  0, "none in the store: the manifest came this way (a pull fetches the same one); the server follows the config") \
	X(DANGLING_TAG, "dangling-tag", ERROR, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a manifests-v2 tag that is a symlink to nothing", \
	  OA_FC_HIDES, "rm -- {path}") \
	X(LEGACY_ANCHOR, "legacy-anchor", WARNING, "store-format-notes.md#ollama-040-stores-manifests-v2-and-manifest-lists-spec-25", \
	  "a legacy manifests/ tag shadowed by a manifests-v2 tag of the same name (info when both are the same model)", \
	  0, "none: the manifests-v2 tag is the one this Ollama uses; the legacy one is what an Ollama before 0.40 would load") \
	X(LOAD_FAILED, "load-failed", WARNING, "history.md#findings-in-check", \
	  "the server's logs show that the model's latest load failed, with the server's reason", \
	  0, "none in the store: the message gives the server's reason (often memory); ollama-audit history {model} --store {store} lists every load") \
	X(NO_RUNTIME_FOR_MODEL, "no-runtime-for-model", WARNING, "history.md#what-can-run-here-show-and-check", \
	  "a safetensors (MLX) model on a machine without Ollama's MLX runtime: it cannot run here", \
	  0, "none here: run it where Ollama's MLX runtime is installed (Apple Silicon, or Linux with libmlxc), or pull a GGUF variant of it") \
	X(RUNNER_CHANGED, "runner-changed", INFO, "history.md#findings-in-check", \
	  "the server's logs show the tag ran on another engine than its files select now (re-pulled as another child)", \
	  0, "none: information (the tag was pulled again as another child)") \
	X(COMPAT_SHADOW, "compat-shadow", INFO, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a legacy tag llamacpp:<hex> the compatibility migration wrote so that an older Ollama keeps a converted child", \
	  0, "none: it keeps the converted copy for an Ollama before 0.40 (if you never go back, ollama-audit rm {model} --apply --store {store} frees it)") \
	X(ORPHANED_SHADOW, "orphaned-shadow", WARNING, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a compatibility shadow whose model is gone: no list names its child, and it alone holds those bytes", \
	  0, "ollama-audit rm {model} --apply --store {store}") \
	X(DOWNGRADE_LOSS, "downgrade-loss", WARNING, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a model only manifests-v2/ names: one start of an Ollama from before manifest lists deletes its blobs", \
	  0, "none now: do not start an Ollama before 0.40 on this store (its start-up prune deletes these blobs)") \
	X(STALE_METADATA, "stale-metadata", INFO, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a metadata/sha256-<hex>.json cache whose blob is gone (prune removes it)", \
	  OA_FC_JUNK, "{prune}") \
	X(UNSERVABLE, "unservable", WARNING, "store-format-notes.md#the-state-ollama-040s-compatibility-migration-leaves", \
	  "a model the current server refuses to load (mllama; image generation)", \
	  0, "none in the store: this Ollama refuses to load it; keep an older Ollama for it, or remove it (ollama-audit rm {model} --apply --store {store})") \
	X(SPLIT_DIR, "split-dir", INFO, "store-format-notes.md#the-newest-layout-anchors-shards-retirement-fail-closed-cleanup", \
	  "a blobs/.ollama-split-* directory of hard links a load of a split GGUF makes (prune removes a stale one)", \
	  OA_FC_JUNK, "{prune}") \
	X(SPLIT_MISMATCH, "split-mismatch", ERROR, "store-format-notes.md#the-newest-layout-anchors-shards-retirement-fail-closed-cleanup", \
	  "the shards of a split GGUF do not make one model: one missing, duplicated or out of range (split.no, split.count)", \
	  0, "{pull}")


typedef enum oa_finding_code {
#define OA_FINDING_ENUM_(id, code, sev, anchor, summary, flags, fix) OA_FINDING_##id,
	OA_FINDING_CODES(OA_FINDING_ENUM_)
#undef OA_FINDING_ENUM_
	OA_FINDING_NCODES
} oa_finding_code;

typedef struct oa_finding_kind {
	const char *code;
	oa_severity severity; /* the default severity of this code */
	const char *anchor;   /* where docs/ describes it: "file.md#heading" */
	const char *summary;  /* what it means, in one line */
	unsigned flags;       /* OA_FC_* */
	const char *fix;      /* the remedy's template */
} oa_finding_kind;

/* The kind of every code, indexed by oa_finding_code. */
OA_EXPORT extern const oa_finding_kind oa_finding_kinds[OA_FINDING_NCODES];
/* The code named "code", or OA_FINDING_NCODES when none is. */
OA_EXPORT oa_finding_code oa_finding_code_of(const char *code);

typedef struct oa_finding {
	oa_finding_code id;
	const char *code;  /* oa_finding_kinds[id].code */
	oa_severity severity;
	char *model;       /* display name, or NULL for store-wide findings */
	char *digest;      /* "sha256:<hex>" or NULL */
	char *path;        /* path relative to the store root, or NULL */
	char *message;     /* one line, printable */
	char *fix;         /* the remedy with this finding's names filled in (oa_audit_fixes), or NULL */
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
/* Does the finding's code carry flag (OA_FC_*)? */
OA_EXPORT bool oa_finding_is(const oa_finding *f, unsigned flag);

#endif
