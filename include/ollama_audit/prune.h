/*
 * prune.h - planned, re-checked, reversible deletion (docs/disk-space.md).
 *
 * A plan lists exactly what will be removed, with the identity of each entry
 * (device, inode, size, mtime). Applying a plan re-checks every entry just
 * before it is removed: the file is re-stat'ed without following symlinks,
 * and for blob files the reference set is refreshed before each batch of
 * blobs (refs.h: new or changed manifests re-read); anything that changed is
 * skipped. Removal uses unlinkat/renameat on directory descriptors opened
 * with O_NOFOLLOW, so no symlink is ever followed out of the store.
 *
 * `rm` plans list the manifests first, then the directories they leave
 * empty, then the blobs no other manifest can reference: a crash at any point
 * leaves no manifest pointing at a removed blob.
 *
 * What a plan entry may remove is decided from its path, its type and the
 * plan's command alone: a plan's digest, category and flags are never
 * trusted (a plan file is input). Every blobs/sha256[-:]<hex>... entry is
 * re-checked against its own digest; only split-gguf-<digits> and root
 * ollama-safetensors<digits> directories are removed recursively; under
 * manifests/ a directory is only ever rmdir'ed.
 *
 * Quarantine: entries are moved (renameat, same filesystem) into DIR/files/,
 * each batch appended to DIR's journal (synced) before and after its moves,
 * and merged into DIR/index.json once at the end (src/space/quarantine.c). Each apply is
 * one operation of DIR; `oa_quarantine_restore` (restore.h) puts one, or
 * every one, back, and `oa_quarantine_empty` (trash.h) deletes them for good.
 */
#ifndef OLLAMA_AUDIT_PRUNE_H
#define OLLAMA_AUDIT_PRUNE_H

#include "ollama_audit/export.h"

#include "ollama_audit/guard.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/refs.h"
#include "ollama_audit/store.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define OA_PLAN_SCHEMA "ollama-audit.plan/2"

typedef struct oa_plan_entry {
	char *path;          /* relative to the store root */
	char *category;      /* a junk category, or "manifest" / "model-blob" for rm */
	oa_digest_hex hex;   /* the digest its name carries, or "" */
	bool check_refs;     /* re-read every manifest before removing it */
	bool empty_dir;      /* an empty directory: rmdir only, no age check */
	char type;           /* 'f' file (or anything not a dir/link), 'l' symlink, 'd' directory */
	uint64_t dev, ino, nlink;
	int64_t size, mtime_ns;
	uint64_t allocated;  /* st_blocks * 512 (a directory: its contents) */
	uint64_t freed;      /* what removing it frees, given the rest of the plan */
	char *note;          /* NULL, or why it frees nothing, or (kept list) why it is kept */
	char *model;         /* rm: the model it belongs to */
	double age;
} oa_plan_entry;

typedef struct oa_plan_list {
	oa_plan_entry *v;
	size_t n, cap;
} oa_plan_list;

/* rm: a compatibility shadow (llamacpp:<hex>) of a removed tag's converted
 * child. Ollama's rm leaves it; rm --with-shadow removes it too. */
typedef struct oa_plan_shadow {
	char *name, *path;
	uint64_t bytes_only_it_holds; /* once the tag is gone: what removing it frees */
	bool removed;
} oa_plan_shadow;

/* rm --child RUNNER, rm DIGEST: a list tag rewritten without one child
 * (first entries of the plan, category "list-rewrite"): its new bytes are
 * written as a manifest blob (unless the tag had none), and the tag, of the
 * same kind as before (symlink, hard link or copy), replaces the old one by
 * rename. The blobs only that child reached go after it. rm DIGEST may
 * rewrite several lists: `next`. In memory only: a plan with a rewrite is
 * never written to a plan file. */
typedef struct oa_plan_rewrite {
	char *path;             /* the tag, relative to the root */
	char *runner;           /* the child removed */
	char *kept;             /* the runners of the children left, comma-separated */
	size_t entries_removed; /* the list's entries naming the child: all go */
	oa_digest_hex child;    /* its digest */
	oa_digest_hex old_list; /* sha256 of the tag's bytes now */
	oa_digest_hex new_list; /* sha256 of the bytes it gets */
	char *bytes;            /* those bytes */
	size_t len;
	char kind;              /* 'l' symlink, 'h' hard link of the list blob, 'c' copy, 'f' a file (no blob) */
	char *link_target;      /* 'l': the new symlink's text */
	bool anchor_removed;    /* the downgrade anchor (a legacy copy of the child) goes too */
	char *anchor;           /* its path, or NULL */
	char *model;            /* the tag's display name */
	struct oa_plan_rewrite *next; /* the next list rewritten (rm DIGEST), or NULL */
} oa_plan_rewrite;

typedef struct oa_plan {
	char *command;       /* "prune" or "rm" */
	char *store;         /* root path */
	uint64_t store_dev, store_ino;
	unsigned what;       /* prune: junk category mask */
	int64_t min_age;     /* seconds */
	char created[40];
	oa_plan_list todo;   /* what will be removed, in order */
	oa_plan_list kept;   /* what was considered and is kept, note = why (display only) */
	uint64_t freed, allocated, apparent;
	char **shared_store;  /* other stores reaching these blob files: what they */
	char **shared_how;    /* reference is kept too (shared.h), and how each does */
	size_t n_shared;
	oa_plan_shadow *shadows;  /* rm: the removed tags' compatibility shadows */
	size_t n_shadows;
	oa_plan_rewrite *rewrite;  /* rm --child, rm DIGEST: the list rewrites (a chain), else NULL */
} oa_plan;

OA_EXPORT void oa_plan_free(oa_plan *p);

/* prune: the junk of the selected categories, older than min_age. */
OA_EXPORT void oa_plan_prune(oa_store *s, const oa_junk_list *j, unsigned what, int64_t min_age, oa_plan *p);

/* rm: the models (indexes into s->models, deduplicated by the caller), their
 * empty parent directories, and the blobs no other manifest can reference.
 * Their compatibility shadows are named in p->shadows, and removed too (with
 * the blobs only they then hold) when with_shadow. */
OA_EXPORT void oa_plan_rm(oa_store *s, const size_t *models, size_t n, int64_t min_age, bool with_shadow,
                          oa_plan *p);

/* rm: the empty directories under manifests/ that `ollama rm` would also
 * remove (its prune of the whole tree) and p, which removes only the
 * parents its models empty, keeps: *n paths (free each, and the array). */
OA_EXPORT char **oa_plan_rm_unrelated_dirs(oa_store *s, const oa_plan *p, size_t *n);

/* rm --child RUNNER: the plan that rewrites the list tag of model `model`
 * (any of its rows) without its RUNNER child, then removes the blobs only
 * that child reached (and the old list blob). A child's legacy copies go
 * with it: the downgrade anchor of a dropped ggml child always (else it
 * would keep every byte), its compatibility shadow only when with_shadow
 * (named in p->shadows either way). 0, or -1 with err when the tag is not
 * a list, has no such child here, or would be left with no child here. */
OA_EXPORT int oa_plan_rm_child(oa_store *s, size_t model, const char *runner, int64_t min_age, bool with_shadow,
                               oa_plan *p, char *err, size_t errlen);

/* rm DIGEST, where hex (oa_store_child_digest) is a child of one or more
 * manifest lists here, as Ollama's rm of a digest does: the plan that
 * removes that child from every list holding it, each rewritten as
 * --child does, and removes a list left with no child here as `rm` of its
 * tag would (its anchor too); then the blobs only that child (and the old
 * lists) reached. The child's legacy copies go as with --child. 0, or -1
 * with err when a list's child manifest cannot be read. */
OA_EXPORT int oa_plan_rm_digest(oa_store *s, const char *hex, int64_t min_age, bool with_shadow, oa_plan *p,
                                char *err, size_t errlen);

/* Name on the plan the other stores whose references r holds (shared.h). */
OA_EXPORT void oa_plan_note_shared(oa_plan *p, const oa_refset *r);

/* The manifests that block applying p (guard.h): the plan's own manifests
 * (rm of a broken one) excepted. */
OA_EXPORT size_t oa_plan_blockers(const oa_store *s, const oa_plan *p, oa_blocker **out);

/* Writing and reading a plan file: plan_file.h. Applying a plan, and the
 * store's write lock: apply.h. */

#endif
