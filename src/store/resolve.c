/* resolve.c - names to tags (what a user types, legacy anchors under a
 * manifests-v2 name) and lists to children (the child in use, the other
 * rows of a list). */
#include "ollama_audit/resolve.h"
#include "formats/digest_set.h"
#include "ollama_audit/manifest_list.h"
#include "store/blobs_private.h"
#include "store/resolve_private.h"
#include "base/platform.h"
#include "base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The bytes of a list entry's manifest: the child blob, or the entry itself
 * when inline. NULL when it is not here. */
uint8_t *store_child_bytes(oa_store *s, const oa_list_entry *e, size_t *len)
{
	if (e->inline_json) {
		*len = strlen(e->inline_json);
		return (uint8_t *)oa_xstrdup(e->inline_json);
	}
	oa_blob *b = store_entry_blob(s, e);
	uint8_t *bytes;
	if (!b || store_read_blob(s, b, OA_MANIFEST_MAX, &bytes, len) < 0)
		return NULL;
	return bytes;
}

/* A tag whose manifest is a list: use the child the server would (one that
 * is here, by the platform's runner preference), and say which a pull on
 * that platform would fetch. m->m becomes that child's manifest. */
void store_use_list_child(oa_store *s, oa_model *m)
{
	m->is_list = true;
	m->list = oa_xmalloc(sizeof *m->list);
	*m->list = m->m;
	memset(&m->m, 0, sizeof m->m);
	size_t n = m->list->n_manifests;
	m->child_present = oa_xcalloc(n ? n : 1, sizeof *m->child_present);
	for (size_t i = 0; i < n; i++) {
		const oa_list_entry *e = &m->list->entries[i];
		m->child_present[i] = e->inline_json || store_entry_blob(s, e);
	}
	const char *platform = s->platform ? s->platform : oa_platform_default();
	m->child_pull = oa_list_select(m->list, NULL, platform);
	m->child = oa_list_select(m->list, m->child_present, platform);
	for (size_t i = 0; i < n && m->child < 0; i++)
		if (m->child_present[i])
			m->child = (long)i; /* a runner no preference names: the first that is here */
	char err[256] = "";
	uint8_t *bytes = NULL;
	size_t len = 0;
	if (m->child >= 0)
		bytes = store_child_bytes(s, &m->list->entries[m->child], &len);
	if (!bytes || oa_manifest_parse_in(s->digests, bytes, len, &m->m, err, sizeof err) < 0 || m->m.is_list) {
		if (!*err)
			snprintf(err, sizeof err, "%s", m->child < 0 ? "no child of the list is here"
			         : bytes ? "its child is another manifest list, which the server rejects"
			         : "cannot read its child manifest");
		m->manifest_ok = false;
		m->manifest_error = oa_escape(err, strlen(err));
		if (!m->m.media_type) { /* never parsed: an empty manifest */
			m->m.media_type = oa_xstrdup("");
			m->m.config.media_type = oa_xstrdup("");
			m->m.config.digest = oa_xstrdup("");
			m->m.config.hex = "";
			m->m.runner = oa_xstrdup("");
			m->m.format = oa_xstrdup("");
		}
		oa_finding_code code = m->child < 0 ? OA_FINDING_MISSING_CHILD
		                       : m->m.is_list ? OA_FINDING_NESTED_LIST : OA_FINDING_INVALID_MANIFEST;
		oa_findings_add(&s->findings, code, m->display, NULL, m->rel_path, "manifest list: %s",
		                m->manifest_error);
	}
	free(bytes);
	/* ollama list shows the child's digest as the ID (the list's when none is here) */
	const oa_list_entry *e = m->child >= 0 ? &m->list->entries[m->child] : NULL;
	if (e && e->digest_valid)
		memcpy(m->m.id, e->hex, sizeof m->m.id);
	else if (!e || !e->inline_json)
		memcpy(m->m.id, m->list->id, sizeof m->m.id);
}

static int cmp_layer_digest(const void *a, const void *b)
{
	return strcmp((*(const oa_layer *const *)a)->digest, (*(const oa_layer *const *)b)->digest);
}

/* SIZE in 0.40 (TotalSizeForName): every distinct digest once. */
int64_t store_unique_size(const oa_manifest *mf)
{
	size_t n = mf->n_layers + 1;
	const oa_layer **v = oa_xcalloc(n, sizeof *v);
	v[0] = &mf->config;
	for (size_t i = 0; i < mf->n_layers; i++)
		v[i + 1] = &mf->layers[i];
	qsort(v, n, sizeof *v, cmp_layer_digest);
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		if (*v[i]->digest && (i == 0 || strcmp(v[i - 1]->digest, v[i]->digest) != 0))
			total = (int64_t)((uint64_t)total + (uint64_t)v[i]->size);
	free(v);
	return total;
}

/* The runner a tag's row names: its manifest's own, else its list entry's. */
const char *store_row_runner(const oa_model *r)
{
	const oa_list_entry *e = r->sibling ? r->row_entry
	                         : r->is_list && r->child >= 0 ? &r->list->entries[r->child] : NULL;
	if (r->m.runner && *r->m.runner)
		return r->m.runner;
	return e ? e->runner : "";
}

/* The next layer of m at or after k that is not a link to a manifest blob. */
static size_t next_model_layer(const oa_manifest *m, size_t k)
{
	while (k < m->n_layers && m->layers[k].kind == OA_LAYER_MANIFEST)
		k++;
	return k;
}

/* Whether two parsed manifests name the same config and layers, in order,
 * leaving out the layers that link manifest blobs (an anchor is the child
 * re-serialised, with those links since PR #16590: other bytes, same model). */
bool store_same_manifest(const oa_model *a, const oa_model *b)
{
	if (!a->manifest_ok || !b->manifest_ok || strcmp(a->m.config.digest, b->m.config.digest) != 0)
		return false;
	size_t i = next_model_layer(&a->m, 0), k = next_model_layer(&b->m, 0);
	for (; i < a->m.n_layers && k < b->m.n_layers; i = next_model_layer(&a->m, i + 1), k = next_model_layer(&b->m, k + 1))
		if (strcmp(a->m.layers[i].digest, b->m.layers[k].digest) != 0)
			return false;
	return i == a->m.n_layers && k == b->m.n_layers;
}

/* How many layers of m link manifest blobs. */
static size_t manifest_links(const oa_manifest *m)
{
	size_t n = 0;
	for (size_t k = 0; k < m->n_layers; k++)
		n += m->layers[k].kind == OA_LAYER_MANIFEST;
	return n;
}

/* Names ignoring case, part by part, as oa_name_equal_fold compares them. */
static int cmp_fold(const oa_model_name *a, const char *host, const char *ns, const char *model, const char *tag)
{
	int c = strcasecmp(a->host, host);
	if (!c)
		c = strcasecmp(a->ns, ns);
	if (!c)
		c = strcasecmp(a->model, model);
	return c ? c : strcasecmp(a->tag, tag);
}

/* An entry being sorted: the comparison needs the name, the caller keeps
 * only where the model is (no context for qsort, so two stores may be
 * scanned on two threads). */
typedef struct name_at {
	const oa_model_name *name;
	size_t i;
} name_at;

static int cmp_name_at(const void *pa, const void *pb)
{
	const name_at *a = pa, *b = pb;
	int c = cmp_fold(a->name, b->name->host, b->name->ns, b->name->model, b->name->tag);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* Sort v, n indices of named models, by name ignoring case, then store
 * order: the models of one name are a run (name_run). */
static void sort_by_name(const oa_model *models, size_t *v, size_t n)
{
	name_at *t = oa_xcalloc(n + 1, sizeof *t);
	for (size_t k = 0; k < n; k++)
		t[k] = (name_at){ &models[v[k]].name, v[k] };
	qsort(t, n, sizeof *t, cmp_name_at);
	for (size_t k = 0; k < n; k++)
		v[k] = t[k].i;
	free(t);
}

/* The run of v (sorted by sort_by_name) with this name ignoring case:
 * [*lo, the return), empty when none. */
static size_t name_run(const oa_model *models, const size_t *v, size_t n, const char *host, const char *ns,
                       const char *model, const char *tag, size_t *lo)
{
	size_t a = 0, b = n;
	while (a < b) { /* the first entry not below the name */
		size_t mid = a + (b - a) / 2;
		if (cmp_fold(&models[v[mid]].name, host, ns, model, tag) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	size_t end = a;
	while (end < n && cmp_fold(&models[v[end]].name, host, ns, model, tag) == 0)
		end++;
	*lo = a;
	return end;
}

/* Reads try manifests-v2 first (spec §2.5): a legacy tag of the same name
 * is only a downgrade anchor. Say whether it still matches one of the
 * list's rows (the migration's anchor is its ggml child). */
void store_mark_anchors(oa_store *s)
{
	size_t *v2 = oa_xcalloc(s->n_models + 1, sizeof *v2), n = 0;
	for (size_t i = 0; i < s->n_models; i++)
		if (s->models[i].v2 && s->models[i].name.host)
			v2[n++] = i;
	sort_by_name(s->models, v2, n);
	for (size_t i = 0; n && i < s->n_models; i++) {
		oa_model *m = &s->models[i];
		if (m->v2 || !m->name.host)
			continue;
		const oa_model_name *mn = &m->name;
		size_t lo, end = name_run(s->models, v2, n, mn->host, mn->ns, mn->model, mn->tag, &lo);
		m->anchor = end > lo;
		if (!m->anchor)
			continue;
		for (size_t j = lo; j < end; j++)
			s->models[v2[j]].anchored = true;
		const oa_model *v = &s->models[v2[lo]], *same = NULL;
		for (size_t j = lo; j < end && !same; j++) {
			const oa_model *r = &s->models[v2[j]];
			if (strcmp(r->m.id, m->m.id) == 0 || store_same_manifest(r, m))
				same = r;
		}
		m->migration_anchor = same && same->is_list + same->sibling && strcmp(store_row_runner(same), "ggml") == 0;
		size_t links = manifest_links(&m->m);
		char linked[96] = "";
		if (links)
			snprintf(linked, sizeof linked, "; it links %zu manifest blob%s, so that Ollama keeps %s too", links,
			         links == 1 ? "" : "s", links == 1 ? "it" : "them");
		oa_findings_add_sev(&s->findings, OA_FINDING_LEGACY_ANCHOR, same ? OA_SEV_INFO : OA_SEV_WARNING,
		                    m->display, NULL, m->rel_path,
		                    m->migration_anchor ? "the downgrade anchor the compatibility migration wrote: the list's ggml child (ID %.12s), kept for an Ollama before 0.40%.0s%s"
		                    : same ? "the downgrade anchor: a legacy copy of the model the manifests-v2 tag uses, for an Ollama before 0.40 (the v2 tag takes precedence)%.0s%.0s%s"
		                         : "a legacy tag that differs from the manifests-v2 tag of the same name (ID %.12s, not %.12s): an Ollama before 0.40 would load another model%s",
		                    m->m.id, v->m.id, linked);
	}
	free(v2);
}

/* A row for entry e of list tag p (0.40 lists every child here): the
 * child's manifest, its digest as the ID, its SIZE over unique digests. */
static bool sibling_row(oa_store *s, const oa_model *p, const oa_list_entry *e, oa_model *r)
{
	size_t len;
	uint8_t *bytes = store_child_bytes(s, e, &len);
	char err[256];
	memset(r, 0, sizeof *r);
	bool ok = bytes && oa_manifest_parse_in(s->digests, bytes, len, &r->m, err, sizeof err) == 0 && !r->m.is_list;
	free(bytes);
	if (!ok) { /* the tag's own findings already say what is wrong with it */
		if (r->m.media_type)
			oa_manifest_free(&r->m);
		return false;
	}
	oa_name pn;
	oa_model_name_get(&p->name, &pn);
	oa_model_name_set(&r->name, &pn);
	r->display = oa_xstrdup(p->display);
	r->rel_path = oa_xstrdup(p->rel_path);
	r->st = p->st;
	r->v2 = p->v2;
	r->tag_kind = p->tag_kind;
	r->created_here = p->created_here;
	r->manifest_ok = true;
	r->manifest_bytes = len;
	r->child = r->child_pull = -1;
	r->sibling = true;
	r->row_entry = e;
	if (e->digest_valid)
		memcpy(r->m.id, e->hex, sizeof r->m.id);
	r->m.size = store_unique_size(&r->m);
	return true;
}

void store_add_list_rows(oa_store *s, size_t *cap)
{
	size_t n = s->n_models;
	for (size_t i = 0; i < n; i++) {
		oa_model *p = &s->models[i];
		if (!p->is_list || !p->manifest_ok)
			continue;
		p->list_rows = 1;
		p->child_row = oa_xcalloc(p->list->n_manifests + 1, sizeof *p->child_row);
		for (size_t k = 0; k < p->list->n_manifests; k++) {
			if ((long)k == p->child || !p->child_present[k])
				continue;
			oa_model r;
			if (!sibling_row(s, p, &s->models[i].list->entries[k], &r))
				continue;
			OA_ALLOC_GROW(s->models, s->n_models + 1, *cap);
			s->models[s->n_models++] = r;
			p = &s->models[i];
			p->child_row[k] = true;
			p->list_rows++;
		}
	}
}

/* The models a name may resolve to (neither anchors nor list rows), sorted
 * by name ignoring case, then store order: resolving many MODEL arguments
 * (rm of thousands) is a search each, not a pass over every model. */
typedef struct oa_name_index {
	size_t n_models; /* s->n_models when it was made: any other count, and it is not used */
	size_t n;
	size_t v[];
} oa_name_index;

void store_index_names(oa_store *s)
{
	free(s->name_index);
	oa_name_index *x = oa_xmalloc(sizeof *x + (s->n_models + 1) * sizeof x->v[0]);
	x->n = 0;
	for (size_t i = 0; i < s->n_models; i++) /* an anchor yields to its v2 tag; a list row has no name of its own */
		if (!s->models[i].anchor && !s->models[i].sibling && s->models[i].name.host)
			x->v[x->n++] = i;
	sort_by_name(s->models, x->v, x->n);
	x->n_models = s->n_models;
	s->name_index = x;
}

/* The first model (in store order) named exactly so, else the one model
 * named so ignoring case, else -1 (or ambiguous). */
static long resolve_indexed(const oa_name_index *x, const oa_store *s, const oa_name *want)
{
	size_t lo, end = name_run(s->models, x->v, x->n, want->host, want->ns, want->model, want->tag, &lo);
	for (size_t k = lo; k < end; k++) /* the run is in store order */
		if (oa_model_name_is(&s->models[x->v[k]].name, want, false))
			return (long)x->v[k];
	if (end - lo > 1)
		return OA_RESOLVE_AMBIGUOUS_NAME;
	return end > lo ? (long)x->v[lo] : -1;
}

/* The same answer by a pass over every model (a store no scan indexed). */
static long resolve_linear(const oa_store *s, const oa_name *want)
{
	long folded = -1;
	size_t n_folded = 0;
	for (size_t i = 0; i < s->n_models; i++) {
		if (s->models[i].anchor || s->models[i].sibling) /* manifests-v2 takes precedence */
			continue;
		if (oa_model_name_is(&s->models[i].name, want, false))
			return (long)i;
		if (oa_model_name_is(&s->models[i].name, want, true))
			folded = (long)i, n_folded++;
	}
	return n_folded > 1 ? OA_RESOLVE_AMBIGUOUS_NAME : folded;
}

long oa_store_resolve_name(const oa_store *s, const char *query)
{
	oa_name want;
	if (!oa_name_parse_ref(query, &want, NULL))
		return -1;
	const oa_name_index *x = s->name_index;
	return x && x->n_models == s->n_models ? resolve_indexed(x, s, &want) : resolve_linear(s, &want);
}

bool oa_model_same_manifest(const oa_model *a, const oa_model *b)
{
	return store_same_manifest(a, b);
}

/* Add digest hex (64) to the candidates v (n of them) unless it is there. */
static void candidate_add(const char **v, size_t *n, const char *hex)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i], hex) == 0)
			return;
	v[(*n)++] = hex;
}

/* What a candidate digest is, for a refusal: the list child or tag it is. */
static void candidate_say(const oa_store *s, const char *hex, char *buf, size_t len)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (!m->anchor && strcmp(m->m.id, hex) == 0) {
			snprintf(buf, len, "sha256:%.12s (%s%s%s)", hex, m->display, m->is_list || m->sibling ? ", child " : "",
			         m->is_list || m->sibling ? store_row_runner(m) : "");
			return;
		}
	}
	snprintf(buf, len, "sha256:%.12s", hex);
}

int oa_store_child_digest(const oa_store *s, const char *query, oa_digest_hex hex, char *err, size_t errlen)
{
	char q[72];
	size_t n = strlen(query);
	while (n && isspace((unsigned char)*query))
		query++, n--;
	while (n && isspace((unsigned char)query[n - 1]))
		n--;
	if (n >= 7 && (strncasecmp(query, "sha256:", 7) == 0 || strncasecmp(query, "sha256-", 7) == 0))
		query += 7, n -= 7;
	if (n < 12 || n > 64 || !oa_is_hex(query, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		q[i] = (char)tolower((unsigned char)query[i]);
	q[n] = '\0';
	/* the digests the prefix may mean: every child of a list here, every tag's ID */
	const char **v = oa_xcalloc(s->n_models + 1, sizeof *v);
	size_t nv = 0;
	bool child = false;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		const oa_list_entry *e = m->sibling ? m->row_entry : m->is_list && m->child >= 0 ? &m->list->entries[m->child]
		                                                                                : NULL;
		bool is_child = e && e->digest_valid && strncmp(e->hex, q, n) == 0;
		if (is_child || (!m->anchor && strncmp(m->m.id, q, n) == 0))
			candidate_add(v, &nv, is_child ? e->hex : m->m.id);
		child |= is_child;
	}
	int rc = nv == 1 && child ? 1 : 0;
	if (nv > 1) {
		oa_buf b;
		oa_buf_init(&b);
		for (size_t i = 0; i < nv; i++) {
			char one[OA_NAME_DISPLAY_MAX + 48];
			candidate_say(s, v[i], one, sizeof one);
			oa_buf_printf(&b, "%s%s", i ? ", " : "", one);
		}
		snprintf(err, errlen, "%s is ambiguous: it begins %zu digests (%s)", q, nv, b.data);
		oa_buf_free(&b);
		rc = -1;
	}
	if (rc == 1)
		memcpy(hex, v[0], sizeof(oa_digest_hex));
	free(v);
	return rc;
}

long oa_store_resolve(const oa_store *s, const char *query)
{
	long r = oa_store_resolve_name(s, query);
	if (r != -1)
		return r;
	size_t n = strlen(query);
	if (strncmp(query, "sha256:", 7) == 0 || strncmp(query, "sha256-", 7) == 0)
		query += 7, n -= 7;
	if (n < 6 || n > 64 || !oa_is_hex(query, n))
		return -1;
	/* Tags copied with `ollama cp` share an ID; a prefix naming two tags is
	 * ambiguous even then, as the user must say which name is meant. */
	long found = -1;
	for (size_t i = 0; i < s->n_models; i++) {
		if (!s->models[i].anchor && !s->models[i].sibling && strncasecmp(s->models[i].m.id, query, n) == 0) {
			if (found >= 0)
				return OA_RESOLVE_AMBIGUOUS_ID;
			found = (long)i;
		}
	}
	return found;
}

size_t oa_store_row_tag(const oa_store *s, size_t idx)
{
	const oa_model *r = &s->models[idx];
	for (size_t i = 0; r->sibling && i < s->n_models; i++)
		if (!s->models[i].sibling && s->models[i].is_list && strcmp(s->models[i].rel_path, r->rel_path) == 0)
			return i;
	return idx;
}

size_t oa_store_listed_models(const oa_store *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_models; i++)
		n += !s->models[i].anchor;
	return n;
}
