/* import.c - what an import finds and decides, blob by blob and tag by
 * tag (import.h, import_private.h); the runs are import_run.c's. */
#include "ollama_audit/import.h"
#include "carry/import_private.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *oa_import_state_name(enum oa_import_state s)
{
	static const char *const names[] = { "new", "present", "added", "conflict", "refused", "unused" };
	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

size_t imp_blob_find(const oa_import_result *r, const char *hex)
{
	for (size_t i = 0; i < r->n_blobs; i++)
		if (strcmp(r->blobs[i].hex, hex) == 0)
			return i;
	return (size_t)-1;
}

size_t imp_blob_add(oa_import_result *r, const char *hex, int64_t size)
{
	size_t i = imp_blob_find(r, hex);
	if (i != (size_t)-1)
		return i;
	r->blobs = oa_xreallocarray(r->blobs, r->n_blobs + 1, sizeof *r->blobs);
	oa_import_blob *b = &r->blobs[r->n_blobs];
	*b = (oa_import_blob){ .size = size, .state = OA_IMP_NEW, .size_here = -1 };
	memcpy(b->hex, hex, sizeof b->hex);
	return r->n_blobs++;
}

void imp_tag_add(oa_import_result *r, const oa_member_name *n, uint8_t *bytes, size_t len)
{
	char name[OA_NAME_DISPLAY_MAX];
	oa_name_display(&n->name, name, sizeof name);
	r->tags = oa_xreallocarray(r->tags, r->n_tags + 1, sizeof *r->tags);
	oa_import_tag *t = &r->tags[r->n_tags++];
	*t = (oa_import_tag){ .path = oa_xstrdup(n->path), .model = oa_xstrdup(name), .bytes = bytes, .len = len,
	                      .v2 = n->kind == OA_MEMBER_TAG_V2, .state = OA_IMP_NEW };
	oa_sha256_hex(bytes, len, t->sha256);
}

void imp_refuse(imp *m, bool corrupt, const char *fmt, ...)
{
	if (m->r->refused)
		return;
	va_list ap;
	va_start(ap, fmt);
	m->r->refused = oa_xvasprintf(fmt, ap);
	va_end(ap);
	m->r->corrupt = corrupt;
	if (m->o->stop && *m->o->stop)
		m->r->interrupted = true;
}

/* Refuse to start writing what does not fit. */
void imp_check_room(imp *m, uint64_t need)
{
	if (m->o->apply && m->r->free_known && need > m->r->free_bytes)
		imp_refuse(m, false, "it needs %llu bytes in blobs/ and the file system has %llu free",
		           (unsigned long long)need, (unsigned long long)m->r->free_bytes);
}

void oa_import_result_free(oa_import_result *r)
{
	for (size_t i = 0; i < r->n_blobs; i++) {
		free(r->blobs[i].model);
		free(r->blobs[i].how);
		free(r->blobs[i].bytes);
	}
	free(r->blobs);
	for (size_t i = 0; i < r->n_tags; i++) {
		free(r->tags[i].path);
		free(r->tags[i].model);
		free(r->tags[i].bytes);
	}
	free(r->tags);
	for (size_t i = 0; i < r->n_models; i++) {
		free(r->models[i].name);
		free(r->models[i].why);
		free(r->models[i].needs);
	}
	free(r->models);
	free(r->refused);
	free(r->leftover);
	free(r->store);
	free(r->tool);
	memset(r, 0, sizeof *r);
}
