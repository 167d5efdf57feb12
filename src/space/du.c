/* du.c - disk usage per model and for the store (du.h). */
#include "ollama_audit/du.h"
#include "ollama_audit/reclaim.h"
#include "ollama_audit/inode_ledger.h"
#include "base/platform.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What removing the blob frees: the file, or for a symlinked blob the link
 * itself (rm never removes a link's target). */
static void uses_add(const oa_store *s, oa_inode_ledger *u, const oa_blob *b, size_t row)
{
	struct stat lst;
	oa_file_info link;
	const oa_file_info *st;
	if (!b)
		return;
	if (b->is_symlink) {
		if (s->blobs_fd < 0 || fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISLNK(lst.st_mode))
			return;
		oa_file_info_set(&link, &lst);
		st = &link;
	} else {
		if (!b->stat_ok || b->dangling)
			return;
		st = &b->st;
	}
	oa_inode_ledger_add(u, (oa_inode_use){ .dev = st->dev, .ino = st->ino, .owner = row,
	                                       .allocated = (uint64_t)st->blocks * 512,
	                                       .apparent = (uint64_t)st->size, .what = b });
}

/* The blobs an unparseable manifest could reference: every digest in its bytes. */
static void scan_unparseable(const oa_store *s, const oa_model *m, oa_inode_ledger *u, size_t row)
{
	if (s->manifests_fd < 0 || !oa_str_has_prefix(m->rel_path, "manifests/"))
		return;
	uint8_t *bytes;
	size_t len;
	if (oa_read_file_at(s->manifests_fd, m->rel_path + 10, 64u << 20, &bytes, &len) < 0)
		return;
	oa_refset r = { 0 };
	oa_refset_scan(&r, bytes, len);
	oa_refset_sort(&r);
	free(bytes);
	for (size_t i = 0; i < r.n; i++) {
		oa_blob *b = oa_store_find_blob_hex(s, r.hex[i]);
		if (b && b->cls == OA_BLOB_VALID)
			uses_add(s, u, b, row);
	}
	oa_refset_free(&r);
}

static int cmp_row(const void *a, const void *b, const void *store)
{
	const oa_du_row *x = a, *y = b;
	const oa_store *sort_store = store;
	if (x->unique != y->unique)
		return x->unique > y->unique ? -1 : 1;
	if (x->allocated != y->allocated)
		return x->allocated > y->allocated ? -1 : 1;
	return strcmp(sort_store->models[x->models[0]].display, sort_store->models[y->models[0]].display);
}

/* The uses of one blob file, [first, end), sorted by row: rows >= 2 of them. */
static void add_shared(oa_du *d, const oa_inode_use *first, const oa_inode_use *end, size_t rows)
{
	size_t *models = oa_xcalloc(rows, sizeof *models), n = 0;
	for (const oa_inode_use *u = first; u < end; u++)
		if (u == first || u->owner != u[-1].owner)
			models[n++] = d->rows[u->owner].models[0];
	const oa_blob *b = first->what;
	d->shared = oa_xreallocarray(d->shared, d->n_shared + 1, sizeof *d->shared);
	d->shared[d->n_shared++] = (oa_du_shared){ b->name, first->allocated, first->apparent, models, n };
	d->shared_total += first->allocated;
}

static int cmp_shared(const void *a, const void *b)
{
	const oa_du_shared *x = a, *y = b;
	if (x->allocated != y->allocated)
		return x->allocated > y->allocated ? -1 : 1;
	return strcmp(x->blob, y->blob);
}

static int cmp_model_id(const void *a, const void *b, const void *store)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const oa_store *id_store = store;
	int c = strcmp(id_store->models[x].m.id, id_store->models[y].m.id);
	return c ? c : (x > y) - (x < y);
}

/* For each parseable model, the first model with the same manifest ID
 * (itself when it is the first): by sorting, not a scan of every row. */
static size_t *first_with_id(const oa_store *s)
{
	size_t *first = oa_xcalloc(s->n_models ? s->n_models : 1, sizeof *first);
	size_t *order = oa_xcalloc(s->n_models ? s->n_models : 1, sizeof *order), n = 0;
	for (size_t i = 0; i < s->n_models; i++) {
		first[i] = i;
		if (s->models[i].manifest_ok)
			order[n++] = i;
	}
	oa_sort(order, n, sizeof *order, cmp_model_id, s);
	for (size_t k = 1; k < n; k++)
		if (strcmp(s->models[order[k]].m.id, s->models[order[k - 1]].m.id) == 0)
			first[order[k]] = first[order[k - 1]];
	free(order);
	return first;
}

/* blobs: the walk of blobs/ its totals come from. */
static void du_compute(oa_store *s, const oa_usage *blobs, oa_du *d)
{
	memset(d, 0, sizeof *d);
	d->rows = oa_xcalloc(s->n_models ? s->n_models : 1, sizeof *d->rows);
	size_t *row_of = oa_xcalloc(s->n_models ? s->n_models : 1, sizeof *row_of);
	size_t *first = first_with_id(s);
	/* Rows: one per distinct manifest ID (parseable), one per unparseable file. */
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		size_t r = first[i] != i ? row_of[first[i]] : d->n_rows;
		if (r == d->n_rows) {
			oa_du_row *nr = &d->rows[d->n_rows++];
			memcpy(nr->id, m->m.id, sizeof nr->id);
			nr->manifest_ok = m->manifest_ok;
		}
		oa_du_row *row = &d->rows[r];
		row->models = oa_xreallocarray(row->models, row->n_models + 1, sizeof *row->models);
		row->models[row->n_models++] = i;
		row_of[i] = r;
	}
	oa_inode_ledger u = { 0 };
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		size_t r = row_of[i];
		if (!m->manifest_ok) {
			scan_unparseable(s, m, &u, r);
			continue;
		}
		if (d->rows[r].models[0] != i)
			continue; /* same manifest as an earlier tag */
		d->rows[r].missing = m->missing_blobs;
		uses_add(s, &u, m->config_blob, r);
		for (size_t k = 0; m->layer_blobs && k < m->m.n_layers; k++)
			uses_add(s, &u, m->layer_blobs[k], r);
	}
	oa_inode_ledger_sort(&u);
	for (size_t i = 0, j; i < u.n; i = j) {
		j = oa_inode_ledger_run(&u, i);
		size_t rows = 0;
		bool parseable = false;
		for (size_t k = i; k < j; k++) {
			if (k == i || u.v[k].owner != u.v[k - 1].owner)
				rows++;
			parseable |= d->rows[u.v[k].owner].manifest_ok;
		}
		uint64_t alloc = u.v[i].allocated, size = u.v[i].apparent;
		if (parseable) {
			d->referenced += alloc;
			d->referenced_apparent += size;
		}
		for (size_t k = i; k < j; k++) {
			if (k > i && u.v[k].owner == u.v[k - 1].owner)
				continue;
			oa_du_row *row = &d->rows[u.v[k].owner];
			row->blobs++;
			row->allocated += alloc;
			row->apparent += size;
			if (rows == 1) {
				row->unique += alloc;
				row->unique_apparent += size;
			} else {
				row->shared += alloc;
			}
		}
		if (rows > 1)
			add_shared(d, &u.v[i], &u.v[j], rows);
	}
	oa_inode_ledger_free(&u);
	free(row_of);
	free(first);
	/* blobs/ and everything under it, each inode once, as `du -s` counts it. */
	d->blobs_total = blobs->allocated;
	d->blobs_total_apparent = blobs->apparent;
	oa_sort(d->rows, d->n_rows, sizeof *d->rows, cmp_row, s);
	if (d->n_shared)
		qsort(d->shared, d->n_shared, sizeof *d->shared, cmp_shared);
}

void oa_du_compute(oa_store *s, oa_du *d)
{
	oa_usage bu;
	oa_usage_blobs(s, &bu);
	du_compute(s, &bu, d);
	oa_usage_free(&bu);
}

void oa_du_free(oa_du *d)
{
	for (size_t i = 0; i < d->n_rows; i++)
		free(d->rows[i].models);
	free(d->rows);
	for (size_t i = 0; i < d->n_shared; i++)
		free(d->shared[i].models);
	free(d->shared);
	memset(d, 0, sizeof *d);
}

void oa_du_store_compute(oa_store *s, double now, oa_du_store *out)
{
	oa_usage bu;
	oa_usage_blobs(s, &bu);
	oa_du_store_compute_usage(s, &bu, now, out);
	oa_usage_free(&bu);
}

void oa_du_store_compute_usage(oa_store *s, const oa_usage *blobs, double now, oa_du_store *out)
{
	du_compute(s, blobs, &out->du);
	oa_reclaim r;
	oa_reclaim_plan(s, OA_JUNK_DEFAULT, OA_SERVER_GRACE_SECONDS, now, &r);
	out->reclaimable = r.plan.freed;
	out->reclaimable_entries = r.plan.todo.n;
	out->junk = r.junk; /* kept for the junk table; the plan is not */
	oa_plan_free(&r.plan);
	out->quarantine = NULL; /* the caller's to set (du --quarantine) */
	out->quarantine_entries = 0;
	out->quarantine_bytes = 0;
}

void oa_du_store_free(oa_du_store *d)
{
	oa_du_free(&d->du);
	oa_junk_free(&d->junk);
}

void oa_du_total_add(oa_du_total *t, const oa_du_store *d)
{
	t->stores++;
	t->models += d->du.n_rows;
	t->referenced += d->du.referenced;
	t->referenced_apparent += d->du.referenced_apparent;
	t->reclaimable += d->reclaimable;
	t->blobs += d->du.blobs_total;
	t->blobs_apparent += d->du.blobs_total_apparent;
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		t->junk_count[k] += d->junk.count[k];
		t->junk_bytes[k] += d->junk.allocated[k];
	}
}
