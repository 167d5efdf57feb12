/* plan_rows.c - a plan by model and by kind of junk (plan_rows.h). */
#include "views/plan_rows.h"
#include "views/list_text.h"
#include "ollama_audit/humanize.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Entries that make one row: a model's (rm), a kind of junk's (one
 * interrupted download each), or those kept for one reason. */
typedef struct plan_group {
	char *key;        /* what groups them (below) */
	size_t first;     /* the first entry's index: kinds keep the plan's order */
	size_t n;
	uint64_t freed, allocated;
	const oa_plan_entry *e;  /* the first entry */
} plan_group;

/* The key of an entry: "m" + model, "k" + category (+ a download's
 * digest), or kept "k" + category + reason. */
static char *group_key(const oa_plan_entry *e, bool kept)
{
	if (kept)
		return oa_xasprintf("k%s%c%s", e->category, 1, e->note ? e->note : "kept");
	if (e->model)
		return oa_xasprintf("m%s", e->model);
	if (strcmp(e->category, "partials") == 0 && e->hex[0])
		return oa_xasprintf("k%s%c%s", e->category, 1, e->hex);
	return oa_xasprintf("k%s", e->category);
}

typedef struct keyed {
	char *key;
	size_t idx;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	int r = strcmp(x->key, y->key);
	return r ? r : x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The groups of l, *n of them: models by what they free (largest first,
 * then by name), then the rest in the order of their first entry. */
static plan_group *plan_groups(const oa_plan_list *l, bool kept, size_t *n)
{
	keyed *k = oa_xcalloc(l->n + 1, sizeof *k);
	for (size_t i = 0; i < l->n; i++)
		k[i] = (keyed){ group_key(&l->v[i], kept), i };
	qsort(k, l->n, sizeof *k, cmp_keyed);
	plan_group *g = oa_xcalloc(l->n + 1, sizeof *g);
	size_t m = 0;
	for (size_t i = 0; i < l->n; i++) {
		const oa_plan_entry *e = &l->v[k[i].idx];
		if (!m || strcmp(g[m - 1].key, k[i].key) != 0)
			g[m++] = (plan_group){ .key = k[i].key, .first = k[i].idx, .e = e };
		else
			free(k[i].key);
		g[m - 1].n++;
		g[m - 1].freed += e->freed;
		g[m - 1].allocated += e->allocated;
	}
	free(k);
	oa_sort_key *o = oa_xcalloc(m + 1, sizeof *o);
	for (size_t i = 0; i < m; i++) {
		bool model = g[i].key[0] == 'm';
		/* models first, largest first; the rest after them, in the plan's order */
		int64_t freed = g[i].freed > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)g[i].freed;
		o[i] = (oa_sort_key){ .num = model ? freed : -1 - (int64_t)g[i].first,
		                      .name = model ? g[i].key + 1 : NULL, .idx = i };
	}
	oa_sort_keys(o, m);
	plan_group *v = oa_xcalloc(m + 1, sizeof *v);
	for (size_t i = 0; i < m; i++)
		v[i] = g[o[i].idx];
	free(o);
	free(g);
	*n = m;
	return v;
}

static void groups_free(plan_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].key);
	free(g);
}

static char *size_text(const oa_text_style *st, uint64_t n)
{
	char b[48];
	oa_format_size(n, st->units, b, sizeof b);
	return oa_xstrdup(b);
}

/* The store's models sorted by name, to find a row's model by its name. */
typedef struct model_index {
	const oa_store *s;
	size_t *v, n;
} model_index;

static int cmp_model(const void *a, const void *b, const void *store)
{
	const oa_store *sort_store = store;
	const oa_model *x = &sort_store->models[*(const size_t *)a], *y = &sort_store->models[*(const size_t *)b];
	int r = strcmp(x->display, y->display);
	/* a name's tag (neither a list's other row nor a legacy anchor) first */
	return r ? r : (x->sibling || x->anchor) - (y->sibling || y->anchor);
}

static model_index index_models(const oa_store *s)
{
	model_index ix = { .s = s };
	if (!s)
		return ix;
	ix.v = oa_xcalloc(s->n_models + 1, sizeof *ix.v);
	for (size_t i = 0; i < s->n_models; i++)
		ix.v[ix.n++] = i;
	oa_sort(ix.v, ix.n, sizeof *ix.v, cmp_model, s);
	return ix;
}

/* The model named name, or -1. */
static long find_model(const model_index *ix, const char *name)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ix->s->models[ix->v[mid]].display, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && strcmp(ix->s->models[ix->v[lo]].display, name) == 0 ? (long)ix->v[lo] : -1;
}

static void model_rows(const oa_text_style *st, FILE *out, const plan_group *g, size_t n, const oa_plan_models *m)
{
	/* on a narrow terminal NAME keeps 24 columns; PULLED, then LAST USED give way */
	static const oa_column cols[4] = {
		{ "NAME", 0, 24, false }, { "FREES", 0, 0, true }, { "LAST USED", 2, 0, false }, { "PULLED", 3, 0, false },
	};
	oa_table tb = { .col = cols, .ncol = 4, .gap = "    " };
	model_index ix = index_models(m ? m->s : NULL);
	for (size_t i = 0; i < n; i++) {
		if (g[i].key[0] != 'm')
			continue;
		long idx = find_model(&ix, g[i].key + 1);
		size_t j = idx < 0 ? 0 : (size_t)idx;
		char pulled[64] = "-";
		if (idx >= 0)
			oa_human_age(oa_age_ns(m->s->models[j].st.mtime_ns, m->now_ns), pulled, sizeof pulled);
		char *cell[4] = { oa_escape(g[i].key + 1, strlen(g[i].key + 1)), size_text(st, g[i].freed),
		                  idx >= 0 ? oa_last_used_text(m->lu, &j, 1, m->now_ns) : oa_xstrdup("-"),
		                  oa_xstrdup(pulled) };
		oa_table_add(&tb, cell);
	}
	oa_table_print(st, &tb, out);
	free(ix.v);
}

/* What a kind of junk is, in a few words. */
static const char *kind_words(const char *category)
{
	static const char *const words[][2] = {
		{ "orphans", "blobs no manifest references" },
		{ "manifest-blobs", "manifests stored as blobs that no tag names" },
		{ "partials", "partial downloads" },
		{ "temps", "temp files of pulls, creates and quantizations" },
		{ "legacy", "blobs under an old sha256:<hex> name" },
		{ "foreign", "other files in blobs/" },
		{ "empty-dirs", "empty directories under manifests/" },
	};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcmp(category, words[i][0]) == 0)
			return words[i][1];
	return NULL;
}

/* What a kind's row says beyond its count: a download's progress. */
static char *kind_detail(const oa_text_style *st, const plan_group *g, const oa_junk_list *junk)
{
	if (strcmp(g->e->category, "partials") != 0 || !g->e->hex[0]) {
		const char *w = kind_words(g->e->category);
		return w ? oa_xstrdup(w) : NULL;
	}
	const oa_partial_group *d = junk ? oa_junk_group(junk, g->e->hex) : NULL;
	if (!d)
		return oa_xasprintf("download sha256:%.12s", g->e->hex);
	if (d->downloaded >= 0 && d->total > 0) {
		char a[48], b[48];
		oa_format_size((uint64_t)d->downloaded, st->units, a, sizeof a);
		oa_format_size((uint64_t)d->total, st->units, b, sizeof b);
		return oa_xasprintf("download sha256:%.12s: %s of %s (%.0f%%) in %zu part file%s", g->e->hex, a, b,
		                    100.0 * (double)d->downloaded / (double)d->total, d->n_parts,
		                    d->n_parts == 1 ? "" : "s");
	}
	return oa_xasprintf("download sha256:%.12s: progress unknown (%s)", g->e->hex,
	                    d->n_parts ? "a part file is unreadable or implausible" : "no part files");
}

static void kind_rows(const oa_text_style *st, FILE *out, const plan_group *g, size_t n, const oa_junk_list *junk)
{
	static const oa_column cols[4] = {
		{ "KIND", 0, 0, false }, { "ENTRIES", 0, 0, true }, { "FREES", 0, 0, true }, { "WHAT", 1, 20, false },
	};
	oa_table tb = { .col = cols, .ncol = 4, .gap = "    " };
	for (size_t i = 0; i < n; i++) {
		if (g[i].key[0] == 'm')
			continue;
		char *cell[4] = { oa_escape(g[i].e->category, strlen(g[i].e->category)), oa_xasprintf("%zu", g[i].n),
		                  size_text(st, g[i].freed), kind_detail(st, &g[i], junk) };
		oa_table_add(&tb, cell);
	}
	oa_table_print(st, &tb, out);
}

/* A line per kind and reason of what is kept. */
static void kept_lines(const oa_text_style *st, FILE *out, const plan_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char b[48];
		oa_format_size(g[i].allocated, st->units, b, sizeof b);
		fprintf(out, "kept %zu %s entr%s (%s on disk): %s\n", g[i].n, oa_text_safe(g[i].e->category),
		        g[i].n == 1 ? "y" : "ies", b, oa_text_safe(g[i].e->note ? g[i].e->note : "kept"));
	}
}

void oa_plan_rows_text(const oa_text_style *st, FILE *out, const oa_plan *p, const oa_junk_list *junk,
                       const oa_plan_models *m)
{
	size_t n, nk, models = 0;
	plan_group *g = plan_groups(&p->todo, false, &n);
	for (size_t i = 0; i < n; i++)
		models += g[i].key[0] == 'm';
	if (models)
		model_rows(st, out, g, n, m);
	if (models < n)
		kind_rows(st, out, g, n, junk);
	for (size_t i = 0; i < p->todo.n; i++) /* rm --child: what the list tag becomes */
		if (strcmp(p->todo.v[i].category, "list-rewrite") == 0)
			fprintf(out, "list-rewrite %s: %s\n", oa_text_safe(p->todo.v[i].path),
			        oa_text_safe(p->todo.v[i].note ? p->todo.v[i].note : "rewritten"));
	plan_group *k = plan_groups(&p->kept, true, &nk);
	kept_lines(st, out, k, nk);
	groups_free(g, n);
	groups_free(k, nk);
}
