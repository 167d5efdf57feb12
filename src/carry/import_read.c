/* import_read.c - a bundle's members into an import (import_read.h). */
#include "carry/import_read.h"
#include "carry/bundle_read.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reading {
	imp *m;
	bundle_in *b;
	bundle_member mb;
} reading;

static ssize_t read_member(void *ctx, void *buf, size_t n, char *err, size_t errlen)
{
	reading *g = ctx;
	return bundle_in_read(g->b, buf, n, err, errlen);
}

/* A member's whole data (at most max bytes). 0, or -1 (the source refused). */
static int read_small(reading *g, size_t max, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (g->mb.size < 0 || (uint64_t)g->mb.size > max) {
		imp_refuse(g->m, true, "%s: %lld bytes, more than such a member can be", g->mb.n.path,
		           (long long)g->mb.size);
		return -1;
	}
	uint8_t *buf = oa_xmalloc((size_t)g->mb.size + 1);
	size_t got = 0;
	char err[512] = "";
	for (;;) {
		ssize_t n = bundle_in_read(g->b, buf + got, (size_t)g->mb.size + 1 - got, err, sizeof err);
		if (n < 0 || (n == 0 && got != (size_t)g->mb.size) || got + (size_t)n > (size_t)g->mb.size) {
			imp_refuse(g->m, true, "%s: %s", g->mb.n.path, n < 0 ? err : "not as long as its header says");
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	*out = buf;
	*len = got;
	return 0;
}

/* A new blob: hashed (and copied when applying), or passed over. */
static void new_blob(reading *g, size_t i)
{
	imp *m = g->m;
	oa_import_blob *b = &m->r->blobs[i];
	char err[768] = "";
	int rc = 0;
	if (b->size <= (int64_t)IMPORT_SMALL_BLOB) {
		size_t len;
		if (read_small(g, IMPORT_SMALL_BLOB, &b->bytes, &len) < 0)
			return;
		oa_digest_hex sha;
		oa_sha256_hex(b->bytes, len, sha);
		if (strcmp(sha, b->hex) != 0) {
			imp_refuse(m, true, "blob sha256:%s does not hash to its name (its bytes hash to sha256:%s)", b->hex, sha);
			return;
		}
		b->hashed = true;
		if (m->o->apply)
			rc = land_copy_bytes(&m->l, b->hex, b->bytes, len, b->tmp, err, sizeof err);
	} else if (m->o->apply) {
		rc = land_copy(&m->l, b->hex, b->size, read_member, g, b->tmp, err, sizeof err);
		b->hashed = rc == 0;
	} else if (m->o->verify) {
		rc = land_hash(&m->l, b->hex, b->size, read_member, g, err, sizeof err);
		b->hashed = rc == 0;
	}
	if (rc)
		imp_refuse(m, rc > 0 || !m->o->stop || !*m->o->stop, "%s", err);
}

static void on_blob(reading *g)
{
	imp *m = g->m;
	size_t i = imp_blob_find(m->r, g->mb.n.hex);
	if (i != (size_t)-1 && m->r->blobs[i].in_source) {
		imp_refuse(m, true, "%s is in the bundle twice", g->mb.n.path);
		return;
	}
	i = imp_blob_add(m->r, g->mb.n.hex, g->mb.size);
	oa_import_blob *b = &m->r->blobs[i];
	b->in_source = true;
	b->size = g->mb.size;
	int64_t have;
	switch (land_blob_state(&m->l, b->hex, b->size, &have)) {
	case LB_PRESENT:
		b->state = OA_IMP_PRESENT;
		break;
	case LB_OTHER:
		b->state = OA_IMP_CONFLICT;
		b->size_here = have;
		break;
	case LB_ABSENT:
		b->state = OA_IMP_NEW;
		new_blob(g, i);
		break;
	}
}

static void on_root_file(reading *g)
{
	uint8_t *bytes;
	size_t len;
	char err[512];
	if (read_small(g, OA_BUNDLE_SMALL_MAX, &bytes, &len) < 0)
		return;
	int rc = g->mb.n.kind == OA_MEMBER_INDEX
	             ? oa_bundle_promise_index(&g->m->promise, bytes, len, err, sizeof err)
	             : oa_bundle_promise_sums(&g->m->promise, bytes, len, err, sizeof err);
	free(bytes);
	if (rc < 0)
		imp_refuse(g->m, true, "%s", err);
	g->m->promised = true;
	uint64_t need = 0; /* what it promises that the store lacks */
	const oa_bundle_promise *p = &g->m->promise;
	for (size_t i = 0; i < p->n_blobs; i++) {
		int64_t have;
		if (p->blob_sizes[i] > 0 && land_blob_state(&g->m->l, p->blobs[i], p->blob_sizes[i], &have) != LB_PRESENT)
			need += (uint64_t)p->blob_sizes[i];
	}
	imp_check_room(g->m, need);
}

static const char *type_name(enum bundle_type t)
{
	return t == BT_SYMLINK ? "a symbolic link" : t == BT_HARDLINK ? "a hard link" : t == BT_DIR ? "a directory"
	                                                                                      : "not a regular file";
}

/* One member judged and taken in; false when the source is refused. */
static bool take_member(reading *g)
{
	const bundle_member *mb = &g->mb;
	char *raw = oa_escape(mb->raw, strlen(mb->raw));
	if (mb->n.kind == OA_MEMBER_BAD) {
		imp_refuse(g->m, true, "member '%s' is outside the store's grammar: %s", raw, mb->n.why);
	} else if (mb->type != (mb->n.kind == OA_MEMBER_DIR ? BT_DIR : BT_FILE)) {
		imp_refuse(g->m, true, "member '%s' is %s", raw, type_name(mb->type));
	} else if (mb->n.kind == OA_MEMBER_BLOB) {
		on_blob(g);
	} else if (mb->n.kind == OA_MEMBER_TAG || mb->n.kind == OA_MEMBER_TAG_V2) {
		uint8_t *bytes;
		size_t len;
		bool twice = false;
		for (size_t k = 0; k < g->m->r->n_tags && !twice; k++)
			twice = strcmp(g->m->r->tags[k].path, mb->n.path) == 0;
		if (twice)
			imp_refuse(g->m, true, "the tag %s is in the bundle twice", mb->n.path);
		else if (read_small(g, OA_MANIFEST_MAX, &bytes, &len) == 0)
			imp_tag_add(g->m->r, &mb->n, bytes, len);
	} else if (mb->n.kind == OA_MEMBER_INDEX || mb->n.kind == OA_MEMBER_SUMS) {
		on_root_file(g);
	}
	free(raw);
	return !g->m->r->refused;
}

void import_read(imp *m, const char *src, int fd)
{
	reading g = { .m = m };
	char err[768] = "";
	int opened = bundle_in_open(&g.b, src, fd, err, sizeof err);
	if (opened < 0) {
		imp_refuse(m, opened == -2, "%s", err);
		return;
	}
	int rc;
	while ((rc = bundle_in_next(g.b, &g.mb, err, sizeof err)) == 1)
		if (!take_member(&g))
			break;
	if (rc < 0)
		imp_refuse(m, true, "%s", err);
	bundle_in_close(g.b);
	if (!m->r->refused && !m->r->n_tags)
		imp_refuse(m, true, "the bundle holds no tag: no model to import");
}

void import_check_promise(imp *m)
{
	const oa_bundle_promise *p = &m->promise;
	m->r->indexed = m->promised;
	if (p->tool && !m->r->tool)
		m->r->tool = oa_xstrdup(p->tool);
	for (size_t i = 0; !m->r->refused && i < p->n_blobs; i++) {
		size_t b = imp_blob_find(m->r, p->blobs[i]);
		if (b == (size_t)-1 || !m->r->blobs[b].in_source)
			imp_refuse(m, true, "the bundle is incomplete: its index promises blob sha256:%s, which is not in it",
			           p->blobs[i]);
		else if (p->blob_sizes[i] >= 0 && p->blob_sizes[i] != m->r->blobs[b].size)
			imp_refuse(m, true, "blob sha256:%s has %lld bytes where the index promises %lld", p->blobs[i],
			           (long long)m->r->blobs[b].size, (long long)p->blob_sizes[i]);
	}
	for (size_t i = 0; !m->r->refused && i < p->n_tags; i++) {
		const oa_import_tag *t = NULL;
		for (size_t k = 0; k < m->r->n_tags && !t; k++)
			if (strcmp(m->r->tags[k].path, p->tags[i]) == 0)
				t = &m->r->tags[k];
		if (!t)
			imp_refuse(m, true, "the bundle is incomplete: its index promises the tag %s, which is not in it",
			           p->tags[i]);
		else if (strcmp(t->sha256, p->tag_sha256[i]) != 0)
			imp_refuse(m, true, "the tag %s is not what the index promises (sha256 differs)", p->tags[i]);
	}
}
