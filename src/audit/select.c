/* select.c - which models, findings and loads a command reports: MODEL
 * arguments, list's PREFIX, --unused-for and --sort, --since/--until. */
#include "audit/select.h"
#include "ollama_audit/du.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/logline.h"
#include "ollama_audit/name.h"
#include "base/strset.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The names the arguments resolve to, each resolved once: resolving is a
 * pass over the models, and a selection asks for every model or finding. */
static oa_strset args_names(const oa_store *s, const oa_model_args *a)
{
	oa_strset names = { 0 };
	for (size_t i = 0; i < a->n; i++) {
		long idx = oa_store_resolve(s, a->v[i]);
		if (idx >= 0)
			oa_strset_add(&names, s->models[idx].display);
	}
	return names;
}

static bool names_select(const oa_model_args *a, const oa_strset *names, const char *display)
{
	return a->n == 0 || oa_strset_has(names, display);
}

size_t oa_args_count(const oa_store *s, const oa_model_args *a)
{
	oa_strset names = args_names(s, a);
	size_t n = 0;
	for (size_t j = 0; j < s->n_models; j++)
		n += !s->models[j].anchor && names_select(a, &names, s->models[j].display);
	oa_strset_free(&names);
	return n;
}

bool *oa_args_models(const oa_store *s, const oa_model_args *a)
{
	oa_strset names = args_names(s, a);
	bool *sel = oa_xcalloc(s->n_models + 1, sizeof *sel);
	for (size_t j = 0; j < s->n_models; j++)
		sel[j] = names_select(a, &names, s->models[j].display);
	oa_strset_free(&names);
	return sel;
}

bool *oa_args_findings(const oa_store *s, const oa_model_args *a)
{
	oa_strset names = args_names(s, a);
	bool *sel = oa_xcalloc(s->findings.n + 1, sizeof *sel);
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		sel[i] = a->n == 0 || (f->model && names_select(a, &names, f->model));
	}
	oa_strset_free(&names);
	return sel;
}

bool oa_list_selected(const oa_list_query *q, const oa_store *s, size_t idx)
{
	const oa_model *m = &s->models[idx];
	if (q->unused_only && !oa_log_usage_unused(q->usage, s, idx, q->cutoff_ns))
		return false;
	if (!oa_model_filters_pass(q->filters, q->n_filters, s, idx, q->usage, q->now_ns))
		return false;
	/* A legacy tag that a manifests-v2 tag shadows is not listed (reads try
	 * manifests-v2 first); check reports it. */
	if (m->anchor)
		return false;
	/* ollama list [PREFIX]: a case-insensitive prefix match on NAME. */
	return !q->prefix || oa_name_has_prefix_fold(m->display, q->prefix);
}

int64_t oa_usage_newest(const oa_log_usage *u, const size_t *models, size_t n)
{
	if (!u)
		return INT64_MIN;
	oa_last_used lu = { u->have_logs, u->loaded, u->last_ns, u->sources, u->n_sources };
	int64_t last;
	return oa_last_used_newest(&lu, models, n, &last) ? last : INT64_MIN;
}

size_t *oa_list_order(const oa_list_query *q, oa_store *s, size_t *n)
{
	oa_sort_key *k = oa_xcalloc(s->n_models + 1, sizeof *k);
	size_t m = 0;
	oa_du du;
	bool have_du = q->sort == OA_LIST_SORT_UNIQUE;
	if (have_du)
		oa_du_compute(s, &du);
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *mo = &s->models[j];
		if (!oa_list_selected(q, s, j))
			continue;
		oa_sort_key *x = &k[m++];
		x->idx = j;
		switch (q->sort) {
		case OA_LIST_SORT_NAME: x->name = mo->display; break;
		case OA_LIST_SORT_SIZE: x->num = mo->remote ? INT64_MIN : mo->m.size; break;
		case OA_LIST_SORT_MODIFIED: x->num = mo->st.mtime_ns; break;
		case OA_LIST_SORT_LAST_USED: x->num = oa_usage_newest(q->usage, &j, 1); break;
		case OA_LIST_SORT_UNSERVABLE: x->num = mo->unservable ? 1 : 0; break; /* then the store's order */
		case OA_LIST_SORT_UNIQUE:
			for (size_t r = 0; r < du.n_rows; r++)
				for (size_t p = 0; p < du.rows[r].n_models; p++)
					if (du.rows[r].models[p] == j)
						x->num = (int64_t)du.rows[r].unique;
			break;
		default: break;
		}
	}
	if (have_du)
		oa_du_free(&du);
	oa_sort_keys(k, m);
	size_t *v = oa_xcalloc(m + 1, sizeof *v);
	for (size_t i = 0; i < m; i++)
		v[i] = k[q->reverse ? m - 1 - i : i].idx;
	free(k);
	*n = q->limit && q->limit < m ? q->limit : m;
	return v;
}

int oa_when_parse(const char *s, int64_t now_ns, int64_t *out)
{
	size_t n = strlen(s);
	int tz;
	if (n && oa_log_parse_time(s, n, out, &tz) == n)
		return 0;
	if (n == 10) {
		char t[32];
		snprintf(t, sizeof t, "%sT00:00:00Z", s);
		if (oa_log_parse_time(t, strlen(t), out, &tz) == strlen(t))
			return 0;
	}
	double secs;
	if (oa_parse_duration(s, &secs) == 0) {
		*out = now_ns - (int64_t)(secs * 1e9);
		return 0;
	}
	return -1;
}

static bool in_window(const oa_load *e, const oa_load_window *w)
{
	if ((w->has_since || w->has_until) && !e->has_time)
		return false;
	return !(w->has_since && e->time_ns < w->since) && !(w->has_until && e->time_ns > w->until);
}

static bool load_selected(const oa_store *s, const oa_model_args *a, const oa_strset *names, const oa_load *e)
{
	if (!a->n)
		return true;
	for (size_t i = 0; i < e->n_models; i++)
		if (names_select(a, names, s->models[e->models[i]].display))
			return true;
	return false;
}

size_t oa_history_pick(const oa_history *h, const oa_store *s, const oa_load_window *w,
                       const oa_model_args *a, const oa_load **v)
{
	oa_strset names = args_names(s, a);
	size_t k = 0;
	for (size_t j = 0; j < h->n; j++)
		if (in_window(&h->v[j], w) && load_selected(s, a, &names, &h->v[j]))
			v[k++] = &h->v[j];
	oa_strset_free(&names);
	return k;
}

bool oa_finding_is_listing(const oa_finding *f)
{
	/* a blob file no model names cannot hide one */
	bool blob_alone = oa_finding_is(f, OA_FC_IO) && f->path && oa_str_has_prefix(f->path, "blobs/") && !f->model;
	return oa_finding_is(f, OA_FC_HIDES) && !blob_alone;
}

static int cmp_key(const void *a, const void *b)
{
	const oa_sort_key *x = a, *y = b;
	if (x->num != y->num)
		return x->num > y->num ? -1 : 1;
	if (x->name && y->name) {
		int r = strcasecmp(x->name, y->name);
		if (!r)
			r = strcmp(x->name, y->name);
		if (r)
			return r;
	}
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void oa_sort_keys(oa_sort_key *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_key);
}
