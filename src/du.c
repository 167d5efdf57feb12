/* du.c - disk usage per model and for the store (du.h). */
#include "ollama_audit/du.h"
#include "ollama_audit/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct use {
	dev_t dev;
	ino_t ino;
	size_t row;
	const struct stat *st;
} use;

static int cmp_use(const void *a, const void *b)
{
	const use *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return 0;
}

typedef struct uses {
	use *v;
	size_t n, cap;
} uses;

static void uses_add(uses *u, const oa_blob *b, size_t row)
{
	if (!b || !b->stat_ok || b->dangling)
		return;
	if (u->n == u->cap) {
		u->cap = u->cap ? u->cap * 2 : 256;
		u->v = oa_xreallocarray(u->v, u->cap, sizeof *u->v);
	}
	u->v[u->n++] = (use){ b->st.st_dev, b->st.st_ino, row, &b->st };
}

static oa_blob *blob_by_hex(const oa_store *s, const char *hex)
{
	char name[7 + 64 + 1];
	snprintf(name, sizeof name, "sha256-%s", hex);
	for (size_t i = 0; i < s->n_blobs; i++)
		if (strcmp(s->blobs[i].name, name) == 0)
			return &s->blobs[i];
	return NULL;
}

/* The blobs an unparseable manifest could reference: every digest in its bytes. */
static void scan_unparseable(const oa_store *s, const oa_model *m, uses *u, size_t row)
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
		oa_blob *b = blob_by_hex(s, r.hex[i]);
		if (b && b->cls == OA_BLOB_VALID)
			uses_add(u, b, row);
	}
	oa_refset_free(&r);
}

typedef struct fileuse {
	dev_t dev;
	ino_t ino;
	uint64_t size, alloc;
} fileuse;

static int cmp_fileuse(const void *a, const void *b)
{
	const fileuse *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

static void walk_files(int dirfd, fileuse **v, size_t *n, size_t *cap, int depth)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int cfd = depth < 32 ? openat(dirfd, e->d_name,
			                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
			if (cfd >= 0) {
				walk_files(cfd, v, n, cap, depth + 1);
				close(cfd);
			}
			continue;
		}
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*v = oa_xreallocarray(*v, *cap, sizeof **v);
		}
		(*v)[(*n)++] = (fileuse){ st.st_dev, st.st_ino, (uint64_t)st.st_size,
		                          (uint64_t)st.st_blocks * 512 };
	}
	closedir(d);
}

static const oa_store *sort_store;
static int cmp_row(const void *a, const void *b)
{
	const oa_du_row *x = a, *y = b;
	if (x->unique != y->unique)
		return x->unique > y->unique ? -1 : 1;
	if (x->allocated != y->allocated)
		return x->allocated > y->allocated ? -1 : 1;
	return strcmp(sort_store->models[x->models[0]].display, sort_store->models[y->models[0]].display);
}

void oa_du_compute(oa_store *s, oa_du *d)
{
	memset(d, 0, sizeof *d);
	d->rows = oa_xcalloc(s->n_models ? s->n_models : 1, sizeof *d->rows);
	size_t *row_of = oa_xcalloc(s->n_models ? s->n_models : 1, sizeof *row_of);
	/* Rows: one per distinct manifest ID (parseable), one per unparseable file. */
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		size_t r = d->n_rows;
		if (m->manifest_ok)
			for (size_t k = 0; k < d->n_rows; k++)
				if (d->rows[k].manifest_ok && strcmp(d->rows[k].id, m->m.id) == 0)
					r = k;
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
	uses u = { 0 };
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
		uses_add(&u, m->config_blob, r);
		for (size_t k = 0; m->layer_blobs && k < m->m.n_layers; k++)
			uses_add(&u, m->layer_blobs[k], r);
	}
	if (u.n)
		qsort(u.v, u.n, sizeof *u.v, cmp_use);
	for (size_t i = 0; i < u.n;) {
		size_t j = i;
		size_t rows = 0;
		bool parseable = false;
		while (j < u.n && u.v[j].dev == u.v[i].dev && u.v[j].ino == u.v[i].ino) {
			if (j == i || u.v[j].row != u.v[j - 1].row)
				rows++;
			parseable |= d->rows[u.v[j].row].manifest_ok;
			j++;
		}
		uint64_t alloc = (uint64_t)u.v[i].st->st_blocks * 512, size = (uint64_t)u.v[i].st->st_size;
		if (parseable) {
			d->referenced += alloc;
			d->referenced_apparent += size;
		}
		for (size_t k = i; k < j; k++) {
			if (k > i && u.v[k].row == u.v[k - 1].row)
				continue;
			oa_du_row *row = &d->rows[u.v[k].row];
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
		i = j;
	}
	free(u.v);
	free(row_of);
	/* Everything under blobs/, each inode once, as du counts it. */
	fileuse *fv = NULL;
	size_t fn = 0, fcap = 0;
	if (s->blobs_fd >= 0)
		walk_files(s->blobs_fd, &fv, &fn, &fcap, 0);
	if (fn)
		qsort(fv, fn, sizeof *fv, cmp_fileuse);
	for (size_t i = 0; i < fn; i++) {
		if (i > 0 && cmp_fileuse(&fv[i], &fv[i - 1]) == 0)
			continue;
		d->blobs_total += fv[i].alloc;
		d->blobs_total_apparent += fv[i].size;
	}
	free(fv);
	sort_store = s;
	if (d->n_rows)
		qsort(d->rows, d->n_rows, sizeof *d->rows, cmp_row);
	sort_store = NULL;
}

void oa_du_free(oa_du *d)
{
	for (size_t i = 0; i < d->n_rows; i++)
		free(d->rows[i].models);
	free(d->rows);
	memset(d, 0, sizeof *d);
}
