/* du_view.c - the rows a du view shows, in its order, and what rm plans
 * for the selection (du_view.h). */
#include "audit/du_view.h"
#include "audit/rm_select.h"
#include "audit/select.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static bool row_unused(const oa_store *s, const oa_du_row *r, const oa_du_select *sel)
{
	bool unused = true;
	for (size_t m = 0; m < r->n_models; m++)
		unused &= oa_log_usage_unused(sel->unused, s, r->models[m], sel->cutoff_ns);
	return unused;
}

/* --filter: every tag of the row passes (removing them all frees UNIQUE). */
static bool row_filtered(const oa_store *s, const oa_du_row *r, const oa_du_select *sel)
{
	bool pass = true;
	for (size_t m = 0; m < r->n_models && pass; m++)
		pass = oa_model_filters_pass(sel->filters, sel->n_filters, s, r->models[m], sel->usage, sel->now_ns);
	return pass;
}

/* The sort key of a row (oa_sort_keys: largest first, then name). */
static void sort_key(const oa_store *s, const oa_du_row *r, const oa_du_select *sel, oa_sort_key *k)
{
	switch (sel->sort) {
	case OA_DU_SORT_NAME: k->name = r->n_models ? s->models[r->models[0]].display : ""; break;
	case OA_DU_SORT_SIZE: k->num = (int64_t)r->allocated; break;
	case OA_DU_SORT_LAST_USED: {
		int64_t last;
		bool any = sel->lu.have_logs && oa_last_used_newest(&sel->lu, r->models, r->n_models, &last);
		k->num = any ? last : INT64_MIN;
		break;
	}
	case OA_DU_SORT_UNSERVABLE: { /* what the server refuses first, then by UNIQUE as by default */
		bool refused = false;
		for (size_t m = 0; m < r->n_models; m++)
			refused = refused || s->models[r->models[m]].unservable;
		k->num = (int64_t)(r->unique < (uint64_t)INT64_MAX / 2 ? r->unique : (uint64_t)INT64_MAX / 2 - 1) +
		         (refused ? INT64_MAX / 2 : 0);
		break;
	}
	case OA_DU_SORT_MODIFIED:
		k->num = INT64_MIN;
		for (size_t m = 0; m < r->n_models; m++)
			if (s->models[r->models[m]].st.mtime_ns > k->num)
				k->num = s->models[r->models[m]].st.mtime_ns;
		break;
	case OA_DU_SORT_UNIQUE: break;
	}
}

/* A copy of d whose rows are the ones sel keeps, in its order. */
static void shown(const oa_store *s, const oa_du_store *d, const oa_du_select *sel, oa_du_store *out)
{
	*out = *d;
	out->du.rows = oa_xcalloc(d->du.n_rows ? d->du.n_rows : 1, sizeof *out->du.rows);
	size_t n = 0;
	for (size_t i = 0; i < d->du.n_rows; i++)
		if ((!sel->unused || row_unused(s, &d->du.rows[i], sel)) && row_filtered(s, &d->du.rows[i], sel))
			out->du.rows[n++] = d->du.rows[i];
	out->du.n_rows = n;
	if (n > 1 && (sel->sort != OA_DU_SORT_UNIQUE || sel->reverse)) { /* oa_du_compute sorts by UNIQUE */
		oa_sort_key *k = oa_xcalloc(n, sizeof *k);
		for (size_t i = 0; i < n; i++) {
			k[i].idx = i;
			if (sel->sort == OA_DU_SORT_UNIQUE)
				k[i].num = -(int64_t)i; /* du's own order, kept */
			else
				sort_key(s, &out->du.rows[i], sel, &k[i]);
		}
		oa_sort_keys(k, n);
		oa_du_row *v = oa_xcalloc(n, sizeof *v);
		for (size_t i = 0; i < n; i++)
			v[i] = out->du.rows[k[sel->reverse ? n - 1 - i : i].idx];
		memcpy(out->du.rows, v, n * sizeof *v);
		free(v);
		free(k);
	}
	if (sel->limit && sel->limit < n)
		out->du.n_rows = sel->limit;
}

/* What rm plans for the selection, and what that frees. */
static void rm_selection(oa_store *s, const oa_du_select *sel, oa_du_view *out)
{
	if (!sel->rm)
		return;
	size_t *tags = oa_rm_select(sel->rm, s, NULL, 0, &out->rm_models);
	out->rm_frees = oa_rm_select_frees(s, tags, out->rm_models);
	out->rm_args = sel->rm_args;
	free(tags);
}

void oa_du_view_make(oa_store *s, double now, const oa_du_select *sel, const char *qdir,
                     const oa_quarantine_held *held, oa_du_view *out)
{
	memset(out, 0, sizeof *out);
	out->s = s;
	out->lu = sel->lu;
	oa_store_metrics_compute(s, now, &out->m);
	out->holds = held && oa_store_metrics_quarantine(&out->m, s, qdir, held);
	shown(s, &out->m.du, sel, &out->shown);
	rm_selection(s, sel, out);
}

void oa_du_view_free(oa_du_view *v)
{
	free(v->shown.du.rows); /* the rows' model lists are the metrics' */
	oa_store_metrics_free(&v->m);
	memset(v, 0, sizeof *v);
}
