/* dupes.c - the same blob in several stores; see dupes.h. */
#include "ollama_audit/dupes.h"
#include "ollama_audit/refs.h"
#include "base/keyed.h"
#include "base/platform.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct entry {
	const char *hex;
	size_t store;
	oa_blob *blob;
} entry;

static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = strcmp(x->hex, y->hex);
	if (c)
		return c;
	return x->store < y->store ? -1 : x->store > y->store;
}

static int cmp_dupe(const void *a, const void *b)
{
	const oa_dupe *x = a, *y = b;
	if (x->saving != y->saving)
		return x->saving > y->saving ? -1 : 1;
	return strcmp(x->hex, y->hex);
}

static void add_model(oa_dupe_copy *c, const char *display)
{
	for (size_t i = 0; i < c->n_models; i++)
		if (strcmp(c->models[i], display) == 0)
			return;
	c->models = oa_xreallocarray(c->models, c->n_models + 1, sizeof *c->models);
	c->models[c->n_models++] = display;
}

static void fill_models(const oa_store *s, oa_dupe_copy *c)
{
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *m = &s->models[j];
		if (!m->manifest_ok)
			continue;
		if (m->config_blob == c->blob)
			add_model(c, m->display);
		for (size_t k = 0; k < m->m.n_layers; k++)
			if (m->layer_blobs && m->layer_blobs[k] == c->blob)
				add_model(c, m->display);
	}
}

static int open_copy(oa_store *const *stores, const oa_dupe_copy *c)
{
	const oa_store *s = stores[c->store];
	if (s->blobs_fd < 0)
		return -1;
	int fd = openat(s->blobs_fd, c->blob->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != c->dev ||
	                st.st_ino != c->ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A copy whose data another may share (an earlier one: only a copy with
 * data of its own is then said to share it). */
static bool extents_candidate(const oa_dupe_copy *c)
{
	return c->same_inode_as < 0 && !c->symlink;
}

/* The copies v[0..n) (one filesystem) whose extents can be read, keyed by
 * them (ext: per copy), sorted first. Returns how many. */
static size_t read_extents(oa_store *const *stores, const oa_dupe *d, oa_keyed *v, size_t n, oa_extents *ext)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int fd = open_copy(stores, &d->copies[v[i].i]);
		if (fd >= 0 && oa_extents_read(fd, &ext[v[i].i]) == 1)
			v[k++] = (oa_keyed){ v[i].a, ext[v[i].i].hash, v[i].i };
		if (fd >= 0)
			close(fd);
	}
	oa_keyed_sort(v, k);
	return k;
}

/* Copies on one filesystem whose data all lives in an earlier copy's
 * extents (a reflink made by an earlier dedupe): shared_with = the first
 * of them. Each copy's extents are read once, and compared only with the
 * copies whose extents have the same key. */
static void find_shared_extents(oa_store *const *stores, oa_dupe *d)
{
	oa_keyed *v = oa_xcalloc(d->n_copies ? d->n_copies : 1, sizeof *v);
	oa_extents *ext = oa_xcalloc(d->n_copies ? d->n_copies : 1, sizeof *ext);
	size_t n = 0;
	for (size_t i = 0; i < d->n_copies; i++)
		if (extents_candidate(&d->copies[i]))
			v[n++] = (oa_keyed){ d->copies[i].dev, 0, i };
	oa_keyed_sort(v, n);
	for (size_t a = 0, e; a < n; a = e) {
		e = oa_keyed_run(v, n, a);
		if (e - a < 2)
			continue; /* alone on its filesystem */
		oa_keyed *fs = v + a;
		size_t k = read_extents(stores, d, fs, e - a, ext);
		for (size_t g = 0, end; g < k; g = end) {
			end = oa_keyed_run(fs, k, g);
			for (size_t i = g; i < end; i++) {
				oa_dupe_copy *c = &d->copies[fs[i].i];
				for (size_t j = g; j < i && c->allocated && c->shared_with < 0; j++)
					if (d->copies[fs[j].i].shared_with < 0 && oa_extents_same(&ext[fs[j].i], &ext[fs[i].i]))
						c->shared_with = (long)fs[j].i;
			}
		}
	}
	for (size_t i = 0; i < d->n_copies; i++)
		oa_extents_free(&ext[i]);
	free(ext);
	free(v);
}

/* Each store's reference set, built the first time one of its copies is
 * asked about. */
typedef struct refs_by_store {
	oa_refset *refs;
	bool *built;
} refs_by_store;

/* Whether nothing of its store reaches a copy. */
static bool unreferenced(oa_store *const *stores, refs_by_store *r, size_t store, const char *hex,
                         oa_dupes *out)
{
	if (!r->built[store]) {
		oa_refset_build(stores[store], NULL, 0, &r->refs[store]);
		r->built[store] = true;
		if (r->refs[store].incomplete && !out->refs_incomplete[0])
			snprintf(out->refs_incomplete, sizeof out->refs_incomplete, "%s: %s", stores[store]->root,
			         r->refs[store].why);
	}
	return !r->refs[store].incomplete && !oa_refset_has(&r->refs[store], hex);
}

/* Every store of v[0..n) but the first of each directory is again. */
static void mark_again(oa_keyed *v, size_t n, bool *again)
{
	oa_keyed_sort(v, n);
	for (size_t i = 1; i < n; i++)
		if (v[i].a == v[i - 1].a && v[i].b == v[i - 1].b)
			again[v[i].i] = true;
}

/* Per store: an earlier one is the same store (its root given by two
 * paths) or has the same blobs/ directory (a symlink, a bind mount), so
 * its blobs are already counted: such stores hold one copy of each blob,
 * not two (shared.h). Each directory is looked at once, then sorted. */
static bool *seen_before(oa_store *const *stores, size_t n)
{
	bool *again = oa_xcalloc(n ? n : 1, sizeof *again);
	oa_keyed *roots = oa_xcalloc(n ? n : 1, sizeof *roots), *blobs = oa_xcalloc(n ? n : 1, sizeof *blobs);
	size_t nr = 0, nb = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (!stores[i])
			continue;
		roots[nr++] = (oa_keyed){ stores[i]->root_st.st_dev, stores[i]->root_st.st_ino, i };
		if (stores[i]->blobs_fd >= 0 && fstat(stores[i]->blobs_fd, &st) == 0)
			blobs[nb++] = (oa_keyed){ st.st_dev, st.st_ino, i };
	}
	mark_again(roots, nr, again);
	mark_again(blobs, nb, again);
	free(roots);
	free(blobs);
	return again;
}

/* Every complete regular blob of every store, once per store root (one
 * store given by two paths counts once), sorted by digest then store. */
static entry *collect_blobs(oa_store *const *stores, size_t n, size_t *out_k)
{
	size_t total = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		if (stores[i])
			total += stores[i]->n_blobs;
	*out_k = 0;
	if (!total)
		return NULL;
	entry *v = oa_xcalloc(total, sizeof *v);
	bool *again = seen_before(stores, n);
	for (size_t i = 0; i < n; i++) {
		if (!stores[i])
			continue;
		if (again[i])
			continue;
		for (size_t j = 0; j < stores[i]->n_blobs; j++) {
			oa_blob *b = &stores[i]->blobs[j];
			if (b->cls != OA_BLOB_VALID || !b->stat_ok || !S_ISREG(b->st.mode))
				continue;
			v[k++] = (entry){ b->hex, i, b };
		}
	}
	free(again);
	if (k)
		qsort(v, k, sizeof *v, cmp_entry);
	*out_k = k;
	return v;
}

/* same_inode_as: the first copy with the same (dev, ino), found by sorting. */
static void find_same_inodes(oa_dupe *d)
{
	oa_keyed *v = oa_xcalloc(d->n_copies ? d->n_copies : 1, sizeof *v);
	for (size_t i = 0; i < d->n_copies; i++)
		v[i] = (oa_keyed){ d->copies[i].dev, d->copies[i].ino, i };
	oa_keyed_sort(v, d->n_copies);
	for (size_t g = 0, end; g < d->n_copies; g = end) {
		end = oa_keyed_run(v, d->n_copies, g);
		for (size_t i = g; i < end; i++)
			d->copies[v[i].i].same_inode_as = i == g ? -1 : (long)v[g].i;
	}
	free(v);
}

/* One copy per store of the digest's entries v[0..n), with the models that
 * use it and which earlier copy it is the same inode as. */
static void add_copies(oa_store *const *stores, oa_dupe *d, const entry *v, size_t n, refs_by_store *r,
                       oa_dupes *out)
{
	d->copies = oa_xcalloc(n, sizeof *d->copies);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && v[i].store == v[i - 1].store)
			continue;
		oa_dupe_copy *c = &d->copies[d->n_copies];
		c->store = v[i].store;
		c->blob = v[i].blob;
		c->dev = v[i].blob->st.dev;
		c->ino = v[i].blob->st.ino;
		c->uid = v[i].blob->st.uid;
		c->allocated = (uint64_t)v[i].blob->st.blocks * 512u;
		c->symlink = v[i].blob->is_symlink;
		c->shared_with = -1;
		c->unreferenced = unreferenced(stores, r, c->store, d->hex, out);
		fill_models(stores[c->store], c);
		d->n_copies++;
	}
	find_same_inodes(d);
}

/* A copy dedupe could replace: its own inode and extents, not a symlink. */
static bool own_copy(const oa_dupe_copy *c)
{
	return c->same_inode_as < 0 && !c->symlink && c->shared_with < 0;
}

/* What sharing every copy would save (all but the largest distinct one),
 * and what is shared already. */
static void tally_saving(oa_dupe *d)
{
	uint64_t largest = 0, sum = 0;
	for (size_t i = 0; i < d->n_copies; i++) {
		const oa_dupe_copy *c = &d->copies[i];
		if (c->same_inode_as >= 0 || c->shared_with >= 0) {
			d->already_shared += c->allocated;
			d->n_inodes += c->same_inode_as < 0;
		} else {
			d->n_inodes++;
			sum += c->allocated;
			if (c->allocated > largest)
				largest = c->allocated;
		}
	}
	d->saving = sum - largest;
}

/* Per filesystem: every distinct inode but the largest one could become a
 * link. Symlinked copies and copies that already share their extents are
 * left out: dedupe never touches them. */
static void tally_linkable(oa_dupe *d)
{
	oa_keyed *v = oa_xcalloc(d->n_copies ? d->n_copies : 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < d->n_copies; i++)
		if (own_copy(&d->copies[i]))
			v[n++] = (oa_keyed){ d->copies[i].dev, 0, i };
	oa_keyed_sort(v, n);
	for (size_t g = 0, end; g < n; g = end) {
		end = oa_keyed_run(v, n, g);
		uint64_t dsum = 0, dmax = 0;
		for (size_t i = g; i < end; i++) {
			uint64_t bytes = d->copies[v[i].i].allocated;
			dsum += bytes;
			dmax = bytes > dmax ? bytes : dmax;
		}
		if (end - g >= 2)
			d->linkable += dsum - dmax;
	}
	free(v);
}

void oa_dupes_find(oa_store *const *stores, size_t n, oa_dupes *out)
{
	memset(out, 0, sizeof *out);
	size_t k;
	entry *v = collect_blobs(stores, n, &k);
	refs_by_store r = { oa_xcalloc(n ? n : 1, sizeof *r.refs), oa_xcalloc(n ? n : 1, sizeof *r.built) };
	for (size_t a = 0; a < k;) {
		size_t e = a + 1;
		while (e < k && strcmp(v[e].hex, v[a].hex) == 0)
			e++;
		/* the same store twice (a store given by two paths) is not a duplicate */
		size_t stores_in = 0;
		for (size_t i = a; i < e; i++)
			stores_in += i == a || v[i].store != v[i - 1].store;
		if (stores_in < 2) {
			a = e;
			continue;
		}
		out->v = oa_xreallocarray(out->v, out->n + 1, sizeof *out->v);
		oa_dupe *d = &out->v[out->n++];
		memset(d, 0, sizeof *d);
		memcpy(d->hex, v[a].hex, sizeof(oa_digest_hex));
		d->size = (uint64_t)v[a].blob->st.size;
		add_copies(stores, d, v + a, e - a, &r, out);
		find_shared_extents(stores, d);
		tally_saving(d);
		tally_linkable(d);
		out->saving += d->saving;
		out->linkable += d->linkable;
		out->already_shared += d->already_shared;
		a = e;
	}
	for (size_t i = 0; i < n; i++)
		if (r.built[i])
			oa_refset_free(&r.refs[i]);
	free(r.refs);
	free(r.built);
	free(v);
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, cmp_dupe);
}

void oa_dupes_free(oa_dupes *d)
{
	for (size_t i = 0; i < d->n; i++) {
		for (size_t j = 0; j < d->v[i].n_copies; j++)
			free(d->v[i].copies[j].models);
		free(d->v[i].copies);
	}
	free(d->v);
	memset(d, 0, sizeof *d);
}
