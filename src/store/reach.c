/* reach.c - what a tag, a list and a list's child reach in blobs/, and
 * what a converted list's children cost. */
#include "ollama_audit/reach.h"
#include "ollama_audit/resolve.h"
#include "store/blobs_private.h"
#include "store/reach_private.h"
#include "store/resolve_private.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every blob a list entry reaches: its manifest blob and what that names
 * (a nested list's entries too: the server rejects it, but nothing it names
 * may be lost). fn is called for each blob here; a child that does not parse
 * marks the blobs its bytes mention as weak references instead. */
typedef void (*blob_fn)(void *ctx, oa_blob *b);

static void reach_child(oa_store *s, const oa_list_entry *e, int depth, blob_fn fn, void *ctx)
{
	oa_blob *b = store_entry_blob(s, e);
	if (b)
		fn(ctx, b);
	size_t len;
	uint8_t *bytes = store_child_bytes(s, e, &len);
	if (!bytes)
		return;
	oa_manifest c;
	char err[256] = "";
	if (oa_manifest_parse(bytes, len, &c, err, sizeof err) == 0 && c.is_list) {
		for (size_t k = 0; k < c.n_manifests && depth < 8; k++)
			reach_child(s, &c.entries[k], depth + 1, fn, ctx);
	} else if (!*err) {
		for (size_t k = 0; k <= c.n_layers; k++) {
			const oa_layer *l = k == 0 ? &c.config : &c.layers[k - 1];
			oa_blob *lb = oa_store_find_blob(s, l);
			if (lb && lb->cls == OA_BLOB_VALID)
				fn(ctx, lb);
		}
	} else {
		store_mark_weak_refs(s, bytes, len);
	}
	oa_manifest_free(&c);
	free(bytes);
}

/* The manifest blobs a tag is or names, beyond its config and layers: the
 * blob the tag is, and for a list every child here with what it names (the
 * child in use only as a manifest blob: its config and layers are m's). */
static void reach_manifests(oa_store *s, const oa_model *m, bool rows_count, blob_fn fn, void *ctx)
{
	oa_blob *b;
	if (m->tag_blob && (b = store_blob_by_hex(s, m->tag_blob)))
		fn(ctx, b);
	for (size_t i = 0; m->is_list && i < m->list->n_manifests; i++) {
		const oa_list_entry *e = &m->list->entries[i];
		if (!m->child_present[i])
			continue;
		if (rows_count && m->child_row && m->child_row[i]) /* its row counts its config and layers */
			fn(ctx, store_entry_blob(s, e));
		else if ((long)i != m->child || !m->manifest_ok)
			reach_child(s, e, 0, fn, ctx);
		else if ((b = store_entry_blob(s, e)))
			fn(ctx, b);
	}
}

static void count_ref(void *ctx, oa_blob *b)
{
	(void)ctx;
	b->refs++;
}

typedef struct blob_vec {
	oa_blob **v;
	size_t n, cap;
} blob_vec;

static void collect_blob(void *ctx, oa_blob *b)
{
	blob_vec *bv = ctx;
	OA_ALLOC_GROW(bv->v, bv->n + 1, bv->cap);
	bv->v[bv->n++] = b;
}

typedef struct blob_at {
	const oa_blob *b;
	size_t at;
} blob_at;

static int cmp_blob_at(const void *a, const void *b)
{
	const blob_at *x = a, *y = b;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* Keep the first of each blob, in order (a model may name one many times). */
static size_t unique_blobs(oa_blob **v, size_t n)
{
	blob_at *k = oa_xcalloc(n ? n : 1, sizeof *k);
	bool *dup = oa_xcalloc(n ? n : 1, sizeof *dup);
	for (size_t i = 0; i < n; i++)
		k[i] = (blob_at){ v[i], i };
	qsort(k, n, sizeof *k, cmp_blob_at);
	for (size_t i = 1; i < n; i++)
		dup[k[i].at] = k[i].b == k[i - 1].b;
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!dup[i])
			v[w++] = v[i];
	free(k);
	free(dup);
	return w;
}

size_t oa_model_manifest_blobs(const oa_store *s, const oa_model *m, oa_blob *out[2])
{
	size_t n = 0;
	oa_blob *b;
	if (!m->v2)
		return 0; /* a legacy tag is its own file */
	if (!m->sibling && m->tag_blob && (b = store_blob_by_hex(s, m->tag_blob)))
		out[n++] = b;
	const oa_list_entry *e = m->sibling ? m->row_entry : m->is_list && m->child >= 0 ? &m->list->entries[m->child]
	                                                                                  : NULL;
	if (e && e->digest_valid && (b = store_blob_by_hex(s, e->hex)) && (!n || b != out[0]))
		out[n++] = b;
	return n;
}

size_t oa_model_reach(oa_store *s, const oa_model *m, oa_blob ***out)
{
	blob_vec bv = { NULL, 0, 0 };
	if (m->manifest_ok) {
		if (m->config_blob)
			collect_blob(&bv, m->config_blob);
		for (size_t i = 0; m->layer_blobs && i < m->m.n_layers; i++)
			if (m->layer_blobs[i])
				collect_blob(&bv, m->layer_blobs[i]);
	}
	reach_manifests(s, m, false, collect_blob, &bv); /* the tag reaches every child here */
	*out = bv.v;
	return unique_blobs(bv.v, bv.n);
}

void store_ref_manifest_blobs(oa_store *s, oa_model *m)
{
	reach_manifests(s, m, true, count_ref, NULL);
	if (!m->is_list)
		return;
	const char *platform = s->platform ? s->platform : oa_platform_default();
	const oa_list_entry *use = m->child >= 0 ? &m->list->entries[m->child] : NULL;
	const oa_list_entry *pull = m->child_pull >= 0 ? &m->list->entries[m->child_pull] : NULL;
	char pulls[160] = "";
	if (pull && pull != use)
		snprintf(pulls, sizeof pulls, "; a pull on %s would fetch the %s child (%s)%s", platform,
		         pull->runner, *pull->format ? pull->format : "format not named",
		         m->child_present[m->child_pull] ? "" : ", which is not here");
	char *r = use ? oa_escape(use->runner, strlen(use->runner)) : NULL;
	char *f = use ? oa_escape(use->format, strlen(use->format)) : NULL;
	oa_findings_add(&s->findings, OA_FINDING_MANIFEST_LIST, m->display, NULL, m->rel_path,
	                "a manifest list of %zu children: %s%s%s%s%s", m->list->n_manifests,
	                use ? "uses the " : "none is here", use ? r : "", use ? " child (" : "",
	                use ? (*f ? f : "format not named") : "", use ? ")" : "");
	if (*pulls)
		oa_findings_add(&s->findings, OA_FINDING_MANIFEST_LIST, m->display, NULL, m->rel_path, "%s",
		                pulls + 2);
	free(r);
	free(f);
}

/* Allocated bytes of the blobs m reaches that no other tag reaches. */
uint64_t store_bytes_only_in(oa_store *s, const oa_model *m)
{
	oa_blob **mine;
	size_t n = oa_model_reach(s, m, &mine);
	bool *shared = oa_xcalloc(n + 1, sizeof *shared);
	for (size_t i = 0; i < s->n_models; i++) {
		if (&s->models[i] == m)
			continue;
		oa_blob **other;
		size_t k = oa_model_reach(s, &s->models[i], &other);
		for (size_t a = 0; a < n; a++)
			for (size_t b = 0; b < k && !shared[a]; b++)
				shared[a] = mine[a] == other[b];
		free(other);
	}
	uint64_t bytes = 0;
	for (size_t a = 0; a < n; a++)
		if (!shared[a] && mine[a]->stat_ok)
			bytes += (uint64_t)mine[a]->st.blocks * 512;
	free(shared);
	free(mine);
	return bytes;
}

/* Whether model o goes with row r when r's child is dropped: r itself, or
 * a legacy copy of it (the migration's anchor, a shadow). */
static bool goes_with(const oa_model *o, const oa_model *r)
{
	return o == r || (!o->v2 && (o->anchor || o->shadow) && (strcmp(o->m.id, r->m.id) == 0 || store_same_manifest(o, r)));
}

static bool names_blob(const oa_model *o, const oa_blob *b)
{
	if (!o->manifest_ok)
		return false;
	if (o->config_blob == b)
		return true;
	for (size_t k = 0; o->layer_blobs && k < o->m.n_layers; k++)
		if (o->layer_blobs[k] == b)
			return true;
	return false;
}

/* Allocated bytes of r's config and layers: all of them (other == NULL)
 * or those that model `other` does not name; with drop, those no model
 * but r and its legacy copies names. */
static uint64_t row_bytes(const oa_store *s, const oa_model *r, const oa_model *other, bool drop)
{
	uint64_t bytes = 0;
	const oa_blob *prev = NULL;
	for (size_t k = 0; k <= r->m.n_layers; k++) {
		const oa_blob *b = k == 0 ? r->config_blob : r->layer_blobs ? r->layer_blobs[k - 1] : NULL;
		if (!b || b == prev || !b->stat_ok || (other && names_blob(other, b)))
			continue;
		prev = b;
		bool kept = false;
		for (size_t i = 0; drop && i < s->n_models && !kept; i++)
			kept = !goes_with(&s->models[i], r) && names_blob(&s->models[i], b);
		if (!kept)
			bytes += (uint64_t)b->st.blocks * 512;
	}
	return bytes;
}

/* The conversion of list tag t, when it has a ggml and a llamacpp row. */
static bool conversion_of(const oa_store *s, const oa_model *t, oa_conversion *c)
{
	memset(c, 0, sizeof *c);
	if (!t->is_list || t->list_rows < 2)
		return false;
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *r = &s->models[j];
		if (r != t && !(r->sibling && strcmp(r->rel_path, t->rel_path) == 0))
			continue;
		if (strcmp(store_row_runner(r), "ggml") == 0)
			c->ggml = r;
		else if (strcmp(store_row_runner(r), "llamacpp") == 0)
			c->llamacpp = r;
	}
	if (!c->ggml || !c->llamacpp)
		return false;
	c->duplicated = row_bytes(s, c->llamacpp, c->ggml, false);
	c->drop_llamacpp = row_bytes(s, c->llamacpp, NULL, true);
	c->drop_ggml = row_bytes(s, c->ggml, NULL, true);
	return true;
}

size_t oa_store_conversions(const oa_store *s, oa_conversion **out)
{
	size_t n = 0;
	*out = NULL;
	oa_conversion c;
	for (size_t i = 0; i < s->n_models; i++) {
		if (!conversion_of(s, &s->models[i], &c))
			continue;
		*out = oa_xreallocarray(*out, n + 1, sizeof **out);
		(*out)[n++] = c;
	}
	return n;
}

bool oa_model_conversion(const oa_store *s, const oa_model *m, oa_conversion *out)
{
	return m->v2 && conversion_of(s, &s->models[oa_store_row_tag(s, (size_t)(m - s->models))], out);
}
