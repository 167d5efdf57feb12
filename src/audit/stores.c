/* stores.c - every store on the machine as a row of `stores`: opened,
 * scanned and measured once, and the totals and duplicates of the rows
 * (stores.h). */
#include "ollama_audit/stores.h"
#include "ollama_audit/scan.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

const char *oa_stores_row_root(const oa_stores_row *r)
{
	const oa_candidate *k = r->cand;
	return r->opened ? r->s.root : k->root ? k->root : k->path;
}

static bool owned_by(const oa_stores_row *r, const char *user)
{
	return !user || (r->cand->user && strcmp(r->cand->user, user) == 0);
}

static bool is_store(const oa_stores_row *r)
{
	return r->cand->state == OA_CAND_STORE || r->cand->state == OA_CAND_DENIED;
}

static bool shown(const oa_candidate *k, bool all)
{
	if (all)
		return true;
	if (k->state == OA_CAND_STORE || k->state == OA_CAND_DENIED || k->state == OA_CAND_UNKNOWN)
		return true; /* unknown: a private directory hides whether a store is there: say so */
	return oa_candidate_configured(k); /* configured somewhere: say what is (not) there */
}

/* Allocated and apparent bytes of blobs/ (the directory and everything in
 * it, as `du -s`) of the opened rows whose user is `user` (NULL = every
 * row), each inode once. */
static void sum_unique(const oa_stores_row *r, size_t n, const char *user, uint64_t *alloc,
                       uint64_t *apparent)
{
	const oa_usage **v = oa_xcalloc(n ? n : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (r[i].opened && owned_by(&r[i], user))
			v[k++] = &r[i].metrics.usage;
	oa_usage_sum(v, k, apparent, alloc);
	free(v);
}

/* A found (or denied) store: open and scan it, then measure it once. */
static void open_row(oa_stores_row *r, const oa_open_options *o, double now)
{
	const oa_candidate *k = r->cand;
	char err[512];
	double t0 = oa_now();
	if (oa_open_candidate(&r->s, k->root, oa_store_source_of(k->found[0].source), k, o, err, sizeof err) < 0) {
		oa_store_close(&r->s);
		r->state = "permission-denied";
		r->error = oa_xstrdup(err);
		return;
	}
	oa_store_scan(&r->s);
	r->seconds = oa_now() - t0;
	r->opened = true;
	for (size_t j = 0; j < r->s.findings.n; j++)
		r->unreadable += oa_finding_is(&r->s.findings.v[j], OA_FC_IO);
	r->state = r->unreadable ? "incomplete" : "ok";
	oa_store_metrics_compute(&r->s, now, &r->metrics);
	sum_unique(r, 1, NULL, &r->bytes, &r->apparent);
}

static void read_row(oa_stores_row *r, const oa_candidate *k, const oa_open_options *o, double now)
{
	r->cand = k;
	switch (k->state) {
	case OA_CAND_STORE:
	case OA_CAND_DENIED: open_row(r, o, now); return;
	case OA_CAND_MISSING: r->state = "missing"; return;
	case OA_CAND_NOT_STORE: r->state = "not-a-store"; return;
	case OA_CAND_UNKNOWN:
		r->state = "unknown";
		r->error = oa_xasprintf("cannot tell whether a store is there: %s", strerror(k->err));
		return;
	}
}

oa_stores_row *oa_stores_read(const oa_discovery *d, bool all, const oa_open_options *o, double now, size_t *n)
{
	oa_stores_row *rows = oa_xcalloc(d->n ? d->n : 1, sizeof *rows);
	*n = 0;
	for (size_t i = 0; i < d->n; i++)
		if (shown(&d->v[i], all)) /* (an unknown candidate is always shown: its row says why) */
			read_row(&rows[(*n)++], &d->v[i], o, now);
	return rows;
}

void oa_stores_rows_free(oa_stores_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (rows[i].opened) {
			oa_store_metrics_free(&rows[i].metrics);
			oa_store_close(&rows[i].s);
		}
		free(rows[i].error);
	}
	free(rows);
}

void oa_stores_dupes_find(oa_stores_row *rows, size_t n, oa_stores_can_free *can_free, oa_stores_dupes *d)
{
	oa_store **sv = oa_xcalloc(n ? n : 1, sizeof *sv);
	for (size_t i = 0; i < n; i++)
		sv[i] = rows[i].opened ? &rows[i].s : NULL;
	oa_dupes_find(sv, n, &d->dupes);
	d->by_hardlink = false;
	d->dedupe_bytes = d->dupes.n ? can_free(sv, &d->dupes, &d->by_hardlink) : 0;
	free(sv);
}

/* user NULL: every row, the stores counted among found or denied ones. */
static void tally(const oa_stores_row *rows, size_t n, const char *user, oa_stores_tally *t)
{
	memset(t, 0, sizeof *t);
	t->user = user;
	for (size_t i = 0; i < n; i++) {
		if (user && !(rows[i].cand->user && is_store(&rows[i]) && owned_by(&rows[i], user)))
			continue;
		t->stores += is_store(&rows[i]);
		t->models += rows[i].opened ? oa_store_listed_models(&rows[i].s) : 0;
	}
	sum_unique(rows, n, user, &t->disk_bytes, &t->apparent_bytes);
}

void oa_stores_totals_compute(const oa_stores_row *rows, size_t n, oa_stores_totals *out)
{
	memset(out, 0, sizeof *out);
	out->users = oa_xcalloc(n ? n : 1, sizeof *out->users);
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].cand->user || !is_store(&rows[i]))
			continue;
		size_t j = 0;
		while (j < out->n_users && strcmp(out->users[j].user, rows[i].cand->user) != 0)
			j++;
		if (j == out->n_users)
			out->users[out->n_users++].user = rows[i].cand->user;
	}
	for (size_t j = 0; j < out->n_users; j++)
		tally(rows, n, out->users[j].user, &out->users[j]);
	tally(rows, n, NULL, &out->all);
}

void oa_stores_totals_free(oa_stores_totals *t)
{
	free(t->users);
	memset(t, 0, sizeof *t);
}
