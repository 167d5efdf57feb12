/*
 * import.h - models into a store from a bundle (bundle.h: a tar file, a
 * tar on standard input, an unpacked directory) or from another store on
 * this machine (docs/carry.md).
 *
 * A dry run unless opts.apply: what would be added, what is there already,
 * the bytes it needs against the free space. Applying, under the store's
 * write lock: every new blob is copied under a temporary name in blobs/
 * (the temp class prune removes) while it is hashed, and put in place only
 * when it hashes to its name, with a fresh mtime; a blob already here is
 * kept as it is; then the tags, each written whole and linked into place,
 * only once every blob they reach is here. Nothing is ever replaced: a tag
 * here with other content refuses its model (nothing of it is written), as
 * does a blob here of another size (mend it with repair). A bundle with a
 * member outside the grammar (an absolute path, "..", a link, a device, a
 * name that is not a blob or a tag), a blob that does not hash to its name,
 * a cut or corrupt tar, or a member its index promised and did not bring,
 * is refused whole: no tag is written and the temporaries go.
 */
#ifndef OLLAMA_AUDIT_IMPORT_H
#define OLLAMA_AUDIT_IMPORT_H

#include "ollama_audit/export.h"
#include "ollama_audit/digest.h"
#include "ollama_audit/store.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum oa_import_state {
	OA_IMP_NEW,      /* a dry run: would be added */
	OA_IMP_PRESENT,  /* here already: the same tag bytes, a blob of the same size */
	OA_IMP_ADDED,    /* written */
	OA_IMP_CONFLICT, /* here with other content (a tag) or another size (a blob): never replaced */
	OA_IMP_REFUSED,  /* not written: its model is refused, or the source is */
	OA_IMP_UNUSED,   /* a blob no tag of the bundle reaches: not written */
};
OA_EXPORT const char *oa_import_state_name(enum oa_import_state s); /* "new", "present", ... */

typedef struct oa_import_blob {
	oa_digest_hex hex;
	int64_t size;
	enum oa_import_state state;
	int64_t size_here;   /* CONFLICT: the size of the file here (-1: not a regular file) */
	char *model;         /* the first model that needs it, or NULL */
	char *how;           /* --from STORE: "hardlink", "reflink" or "copy" once added; else NULL */
	/* the import's own */
	bool in_source;      /* the bundle has it as a member / the source store has it */
	bool hashed;         /* its bytes were hashed and are what its name says */
	uint8_t *bytes;      /* a small blob's bytes (a manifest, a config), or NULL */
	char tmp[40];        /* its temporary in blobs/, or "" */
	const void *src;     /* --from STORE: the source store's blob */
} oa_import_blob;

typedef struct oa_import_tag {
	char *path;          /* manifests/... or manifests-v2/... */
	char *model;         /* the model's name, as list shows it */
	oa_digest_hex sha256;
	uint8_t *bytes;
	size_t len;
	bool v2;
	enum oa_import_state state;
} oa_import_tag;

typedef struct oa_import_model {
	char *name;
	enum oa_import_state state; /* NEW, PRESENT (every tag here), ADDED, REFUSED */
	char *why;           /* REFUSED: why */
	uint64_t bytes_new;  /* of the blobs it adds */
	size_t *needs;       /* indexes into blobs: what its tags reach */
	size_t n_needs;
} oa_import_model;

typedef struct oa_import_result {
	const char *source;      /* as given */
	char *store;             /* the store's root */
	oa_import_blob *blobs;
	size_t n_blobs;
	oa_import_tag *tags;
	size_t n_tags;
	oa_import_model *models;
	size_t n_models;
	char *refused;           /* the source refused whole: why; NULL when it was read whole */
	bool corrupt;            /* that refusal is an integrity error (a bad member, a bad blob, a cut tar) */
	char *tool;              /* the bundle index's "tool", or NULL */
	bool indexed;            /* the bundle had an index, or SHA256SUMS: every promised member came */
	bool hashed;             /* every blob it would add was hashed (applied, or opts.verify) */
	uint64_t bytes_new;      /* blob bytes to add / added */
	uint64_t bytes_present;  /* of the blobs here already */
	uint64_t free_bytes;     /* on the store's file system, for us */
	bool free_known;
	bool applied, interrupted;
	bool unlocked;           /* no_lock: the store could not be locked */
	char *leftover;          /* temporaries that could not be removed, and why, or NULL */
} oa_import_result;

typedef struct oa_import_opts {
	bool apply;
	bool verify;                  /* a dry run reads and hashes every new blob too */
	bool no_lock;                 /* go on where the filesystem cannot lock the store (apply.h) */
	volatile sig_atomic_t *stop;  /* set by a signal handler: stop, remove the temporaries */
	const char *pause_dir;        /* testing aid: OA_TEST_IMPORT_PAUSE (oa_test_pause), NULL */
} oa_import_opts;

OA_EXPORT void oa_import_result_free(oa_import_result *r);

#endif
