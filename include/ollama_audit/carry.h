/*
 * carry.h - what a set of models carries from a store: every tag file
 * that names them (the manifests-v2 tag and its legacy anchor, or the
 * legacy tag) and every blob those tags reach (config, layers, the
 * manifest blobs of a list and its children here), each digest once.
 * export writes it as a bundle (bundle_write.h); import --from STORE copies
 * it into another store (import.h).
 */
#ifndef OLLAMA_AUDIT_CARRY_H
#define OLLAMA_AUDIT_CARRY_H

#include "ollama_audit/export.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oa_carry_blob {
	oa_digest_hex hex;
	int64_t size;          /* on disk, which is what every manifest naming it declares */
	const oa_blob *b;      /* the store's file */
	size_t model;          /* the first model (index in the carry) that needs it */
} oa_carry_blob;

typedef struct oa_carry_tag {
	char *path;            /* manifests/... or manifests-v2/..., as the store spells it */
	uint8_t *bytes;        /* the tag file's content (a v2 tag's: its manifest blob's) */
	size_t len;
	oa_digest_hex sha256;  /* of bytes */
	size_t model;          /* index in the carry's models */
} oa_carry_tag;

typedef struct oa_carry_model {
	const oa_model *m;     /* the tag's model */
	size_t *blobs;         /* indexes into the carry's blobs: every blob its tags reach */
	size_t n_blobs;
	uint64_t bytes;        /* of those blobs */
} oa_carry_model;

typedef struct oa_carry {
	oa_carry_model *models;
	size_t n_models;
	oa_carry_blob *blobs;  /* in the order the models first need them */
	size_t n_blobs;
	oa_carry_tag *tags;    /* per model: the manifests-v2 tag first, then its anchor */
	size_t n_tags;
	uint64_t bytes;        /* of every blob */
} oa_carry;

/* What the models s->models[models[i]] carry (a list's other row stands for
 * its tag; a model named twice counts once). 0, or -1 with err naming the
 * model and the blob or tag that cannot be carried whole: a blob missing,
 * of another size than its manifest declares, a manifest that does not
 * parse, a tag file that cannot be read or is not what its name says. */
OA_EXPORT int oa_carry_collect(oa_store *s, const size_t *models, size_t n, oa_carry *out, char *err, size_t errlen);
OA_EXPORT void oa_carry_free(oa_carry *c);

/* Read a store file by its path relative to the root (a tag: through a
 * symlink only when it stays in the store), at most max bytes. 0, or -1
 * with errno (EXDEV: it leads out of the store). */
OA_EXPORT int oa_store_read_rel(const oa_store *s, const char *rel, size_t max, uint8_t **out, size_t *len);

#endif
