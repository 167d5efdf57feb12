/* import_private.h - what the files of an import share: the run's state
 * and what import.c keeps of it (each blob and tag once, the refusal).
 * Reading a bundle is import_read.h's, the models import_plan.h's.
 * Private to src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_IMPORT_PRIVATE_H
#define OLLAMA_AUDIT_CARRY_IMPORT_PRIVATE_H

#include "ollama_audit/bundle.h"
#include "ollama_audit/import.h"
#include "carry/land.h"

#include <stdbool.h>
#include <stddef.h>

/* Blobs this small are kept in memory as they are read (manifests and
 * configs: a list's children are parsed from them). */
#define IMPORT_SMALL_BLOB (64u << 10)

typedef struct imp {
	oa_import_result *r;
	const oa_import_opts *o;
	land l;
	oa_store *lock;              /* the target, locked while applying, or NULL */
	oa_store *from;              /* --from STORE, or NULL */
	oa_bundle_promise promise;
	bool promised;
	char *err;
	size_t errlen;
} imp;

/* The blob hex in r (its index), or (size_t)-1. */
size_t imp_blob_find(const oa_import_result *r, const char *hex);
/* Add the blob (or find it); its index. */
size_t imp_blob_add(oa_import_result *r, const char *hex, int64_t size);
/* Add a tag (path and bytes taken over). */
void imp_tag_add(oa_import_result *r, const oa_member_name *n, uint8_t *bytes, size_t len);
/* Refuse the whole source when applying would need more than the free space. */
void imp_check_room(imp *m, uint64_t need);
/* Refuse the whole source (the first reason counts). */
void imp_refuse(imp *m, bool corrupt, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
