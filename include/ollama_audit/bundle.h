/*
 * bundle.h - what a bundle (`export`'s tar, or the same files unpacked in
 * a directory) may hold, and the two files it carries beside the store's:
 * docs/schema.md ("Bundles").
 *
 * Every member is a store path, so that `tar -xf BUNDLE -C <store>` gives
 * a working store: blobs/sha256-<64 lowercase hex>, the tag files
 * manifests/<host>/<namespace>/<model>/<tag> and manifests-v2/<host>/...
 * (the host with ':' written %3A), the directories on the way to them, and
 * at the root SHA256SUMS (`sha256sum -c` format, one line per blob) and
 * ollama-audit-bundle.json (the index: models, blobs, tags, sizes, the
 * tool's version). Neither root file is a store path Ollama or this tool
 * reads as part of a store. Anything else (an absolute path, "..", an
 * empty component, a name that is not a digest or a valid model name) is
 * outside the grammar, and import refuses the whole bundle.
 */
#ifndef OLLAMA_AUDIT_BUNDLE_H
#define OLLAMA_AUDIT_BUNDLE_H

#include "ollama_audit/export.h"
#include "ollama_audit/digest.h"
#include "ollama_audit/name.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OA_BUNDLE_SUMS "SHA256SUMS"
#define OA_BUNDLE_INDEX "ollama-audit-bundle.json"
#define OA_BUNDLE_SCHEMA "ollama-audit.bundle/1"
/* The longest member path accepted (a v2 host of 350 bytes, every one a
 * %3A, and the three other parts at their limits fit well below it). */
#define OA_BUNDLE_PATH_MAX 1536
/* The root files and a tag are read whole; nothing larger is one. */
#define OA_BUNDLE_SMALL_MAX (16u << 20)

enum oa_member_kind {
	OA_MEMBER_BAD,    /* outside the grammar */
	OA_MEMBER_DIR,    /* the root, blobs/, or a directory on the way to a tag */
	OA_MEMBER_BLOB,   /* blobs/sha256-<64 lowercase hex> */
	OA_MEMBER_TAG,    /* manifests/<host>/<namespace>/<model>/<tag> */
	OA_MEMBER_TAG_V2, /* manifests-v2/<host>/<namespace>/<model>/<tag> */
	OA_MEMBER_SUMS,   /* SHA256SUMS */
	OA_MEMBER_INDEX,  /* ollama-audit-bundle.json */
};

typedef struct oa_member_name {
	enum oa_member_kind kind;
	char path[OA_BUNDLE_PATH_MAX]; /* without leading "./" nor a directory's trailing "/" */
	oa_digest_hex hex;             /* a blob's digest */
	oa_name name;                  /* a tag's model, as the server names it */
	const char *why;               /* why it is BAD (a static string) */
} oa_member_name;

/* What the member path `raw` (as a tar header or a directory walk gives it;
 * is_dir: the member is a directory) is. Leading "./" are dropped. */
OA_EXPORT enum oa_member_kind oa_bundle_member(const char *raw, bool is_dir, oa_member_name *out);

/* "<hex>  blobs/sha256-<hex>\n", the line of SHA256SUMS for a blob (buf of
 * at least OA_BUNDLE_SUMS_LINE bytes). */
#define OA_BUNDLE_SUMS_LINE (64 + 2 + 13 + 64 + 2)
OA_EXPORT void oa_bundle_sums_line(const char *hex, char *buf);

/* What a bundle's index or SHA256SUMS promise: the members that must all
 * arrive for the bundle to be whole. */
typedef struct oa_bundle_promise {
	oa_digest_hex *blobs; /* unique, in the order first named */
	int64_t *blob_sizes;  /* per blob; -1 when SHA256SUMS alone named it */
	size_t n_blobs;
	char **tags;          /* member paths, unique */
	oa_digest_hex *tag_sha256; /* sha256 of each tag file's bytes */
	size_t n_tags;
	char *tool;           /* the index's "tool", or NULL */
} oa_bundle_promise;

/* Add what an index (its bytes) promises. 0, or -1 with err when it is not
 * an index of this schema or names something outside the grammar. */
OA_EXPORT int oa_bundle_promise_index(oa_bundle_promise *p, const uint8_t *bytes, size_t len, char *err,
                                      size_t errlen);
/* Add what SHA256SUMS promises: every line "<hex>  blobs/sha256-<hex>" with
 * the same digest twice. 0, or -1 with err naming the first line that is not. */
OA_EXPORT int oa_bundle_promise_sums(oa_bundle_promise *p, const uint8_t *bytes, size_t len, char *err,
                                     size_t errlen);
/* Whether the promise names the blob / the tag (tag_sha256: its digest, or NULL). */
OA_EXPORT bool oa_bundle_promise_has_blob(const oa_bundle_promise *p, const char *hex, int64_t *size);
OA_EXPORT bool oa_bundle_promise_has_tag(const oa_bundle_promise *p, const char *path, const char **tag_sha256);
OA_EXPORT void oa_bundle_promise_free(oa_bundle_promise *p);

#endif
