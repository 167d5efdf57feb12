/* carry.c - what a set of models carries from a store (carry.h). */
#include "ollama_audit/carry.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int oa_store_read_rel(const oa_store *s, const char *rel, size_t max, uint8_t **out, size_t *len)
{
	char resolved[OA_PATH_MAX];
	int in = oa_store_resolve_path(s, rel, resolved);
	if (in < 0)
		return -1;
	if (in == 0) {
		errno = EXDEV;
		return -1;
	}
	return oa_read_file_at(AT_FDCWD, resolved, max, out, len);
}

typedef struct collect {
	oa_store *s;
	oa_carry *c;
	char *err;
	size_t errlen;
} collect;

static size_t blob_index(collect *k, const char *hex)
{
	for (size_t i = 0; i < k->c->n_blobs; i++)
		if (strcmp(k->c->blobs[i].hex, hex) == 0)
			return i;
	return (size_t)-1;
}

/* Add blob b to model mi of the carry (each digest once in both). */
static void need_blob(collect *k, size_t mi, const oa_blob *b)
{
	oa_carry *c = k->c;
	size_t i = blob_index(k, b->hex);
	if (i == (size_t)-1) {
		c->blobs = oa_xreallocarray(c->blobs, c->n_blobs + 1, sizeof *c->blobs);
		oa_carry_blob *cb = &c->blobs[c->n_blobs];
		memcpy(cb->hex, b->hex, sizeof cb->hex);
		cb->size = b->st.size;
		cb->b = b;
		cb->model = mi;
		c->bytes += (uint64_t)b->st.size;
		i = c->n_blobs++;
	}
	oa_carry_model *cm = &c->models[mi];
	for (size_t j = 0; j < cm->n_blobs; j++)
		if (cm->blobs[j] == i)
			return;
	cm->blobs = oa_xreallocarray(cm->blobs, cm->n_blobs + 1, sizeof *cm->blobs);
	cm->blobs[cm->n_blobs++] = i;
	cm->bytes += (uint64_t)b->st.size;
}

/* The config and layers of m's manifest: each present, whole, of its declared size. */
static int need_layers(collect *k, size_t mi, const oa_model *m)
{
	for (size_t i = 0; i <= m->m.n_layers; i++) {
		const oa_layer *l = i == 0 ? &m->m.config : &m->m.layers[i - 1];
		if (i == 0 && !*l->digest)
			continue; /* no config blob: tolerated, as by the server */
		const oa_blob *b = l->digest_valid ? oa_store_find_blob(k->s, l) : NULL;
		const char *what = i == 0 ? "config" : "layer";
		if (!l->digest_valid) {
			oa_seterr(k->err, k->errlen, "%s: a %s digest is not sha256:<64 hex>: %s", m->display, what, l->digest);
			return -1;
		}
		if (!b || b->cls != OA_BLOB_VALID || !b->stat_ok || b->dangling) {
			oa_seterr(k->err, k->errlen, "%s: its %s blob sha256:%s is missing (mend it first: ollama-audit repair %s)",
			          m->display, what, l->hex, m->display);
			return -1;
		}
		if (b->st.size != l->size) {
			oa_seterr(k->err, k->errlen,
			          "%s: its %s blob sha256:%s has %lld bytes where the manifest declares %lld (mend it "
			          "first: ollama-audit repair %s)",
			          m->display, what, l->hex, (long long)b->st.size, (long long)l->size, m->display);
			return -1;
		}
		need_blob(k, mi, b);
	}
	return 0;
}

/* The tag file of model t, read whole; a v2 tag must be the manifest blob it names. */
static int need_tag(collect *k, size_t mi, const oa_model *t)
{
	oa_carry *c = k->c;
	uint8_t *bytes;
	size_t len;
	if (oa_store_read_rel(k->s, t->rel_path, OA_MANIFEST_MAX, &bytes, &len) < 0) {
		oa_seterr(k->err, k->errlen, "%s: cannot read its tag %s: %s", t->display, t->rel_path,
		          errno == EXDEV ? "a symlink out of the store" : strerror(errno));
		return -1;
	}
	oa_carry_tag *ct = &(c->tags = oa_xreallocarray(c->tags, c->n_tags + 1, sizeof *c->tags))[c->n_tags];
	*ct = (oa_carry_tag){ .path = oa_xstrdup(t->rel_path), .bytes = bytes, .len = len, .model = mi };
	oa_sha256_hex(bytes, len, ct->sha256);
	c->n_tags++;
	if (t->tag_blob && strcmp(t->tag_blob, ct->sha256) != 0) {
		oa_seterr(k->err, k->errlen, "%s: its tag %s does not hash to the manifest blob sha256:%s it is",
		          t->display, t->rel_path, t->tag_blob);
		return -1;
	}
	return 0;
}

/* Model t (a tag's model, or its anchor) into carry model mi: its tag,
 * its config and layers, and every manifest blob it reaches. */
static int need_model(collect *k, size_t mi, const oa_model *t)
{
	if (!t->manifest_ok) {
		oa_seterr(k->err, k->errlen, "%s: its tag %s cannot be read as a manifest: %s", t->display, t->rel_path,
		          t->manifest_error ? t->manifest_error : "unreadable");
		return -1;
	}
	if (need_tag(k, mi, t) < 0 || need_layers(k, mi, t) < 0)
		return -1;
	for (size_t r = 0; r < k->s->n_models; r++) { /* a list's other children here: their own layers */
		const oa_model *row = &k->s->models[r];
		if (row->sibling && row->manifest_ok && oa_store_row_tag(k->s, r) == (size_t)(t - k->s->models) &&
		    need_layers(k, mi, row) < 0)
			return -1;
	}
	oa_blob **reach;
	size_t n = oa_model_reach(k->s, t, &reach);
	for (size_t i = 0; i < n; i++)
		need_blob(k, mi, reach[i]);
	free(reach);
	return 0;
}

int oa_carry_collect(oa_store *s, const size_t *models, size_t n, oa_carry *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	collect k = { .s = s, .c = out, .err = err, .errlen = errlen };
	out->models = oa_xcalloc(n ? n : 1, sizeof *out->models);
	for (size_t i = 0; i < n; i++) {
		const oa_model *m = &s->models[oa_store_row_tag(s, models[i])];
		bool dup = false;
		for (size_t j = 0; j < out->n_models && !dup; j++)
			dup = out->models[j].m == m;
		if (dup)
			continue;
		size_t mi = out->n_models++;
		out->models[mi].m = m;
		if (need_model(&k, mi, m) < 0)
			goto fail;
		for (size_t a = 0; m->v2 && a < s->n_models; a++) /* its downgrade anchor */
			if (s->models[a].anchor && strcmp(s->models[a].display, m->display) == 0 &&
			    need_model(&k, mi, &s->models[a]) < 0)
				goto fail;
	}
	return 0;
fail:
	oa_carry_free(out);
	return -1;
}

void oa_carry_free(oa_carry *c)
{
	for (size_t i = 0; i < c->n_models; i++)
		free(c->models[i].blobs);
	free(c->models);
	for (size_t i = 0; i < c->n_tags; i++) {
		free(c->tags[i].path);
		free(c->tags[i].bytes);
	}
	free(c->tags);
	free(c->blobs);
	memset(c, 0, sizeof *c);
}
