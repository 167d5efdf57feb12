/* bundle_read.c - a bundle's members from a tar or a directory (bundle_read.h). */
#include "carry/bundle_read.h"
#include "carry/files.h"
#include "base/platform.h"
#include "base/util.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_BLOCK (1u << 20)
#define WALK_DEPTH 6   /* manifests-v2/host/ns/model/tag is 5 deep; one more shows what is too deep */

typedef struct walked {
	char *path;
	enum bundle_type type;
	int64_t size;
} walked;

struct bundle_in {
	struct archive *a;   /* a tar, or NULL */
	bool stream;
	int root_fd;         /* a directory */
	walked *v;           /* its members, in bundle order */
	size_t n, next, cap;
	int fd;              /* the directory member being read, or -1 */
};

/* ---- a directory ------------------------------------------------------------ */

static enum bundle_type type_of(const struct stat *st)
{
	return S_ISREG(st->st_mode) ? BT_FILE : S_ISDIR(st->st_mode) ? BT_DIR : S_ISLNK(st->st_mode) ? BT_SYMLINK
	                                                                                              : BT_OTHER;
}

static void walk(bundle_in *b, int dfd, const char *prefix, int depth)
{
	size_t n;
	int err;
	char **names = oa_list_dir(dfd, &n, &err);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		char *path = *prefix ? oa_xasprintf("%s/%s", prefix, names[i]) : oa_xstrdup(names[i]);
		enum bundle_type t = fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 ? type_of(&st) : BT_OTHER;
		OA_ALLOC_GROW(b->v, b->n + 1, b->cap);
		b->v[b->n++] = (walked){ path, t, t == BT_FILE ? (int64_t)st.st_size : 0 };
		if (t == BT_DIR && depth < WALK_DEPTH) {
			int sub = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				walk(b, sub, path, depth + 1);
				close(sub);
			}
		}
	}
	oa_free_names(names, n);
}

/* Bundle order: the index, SHA256SUMS, blobs, then the tags (and anything
 * else, which the caller refuses, where it sorts). */
static int rank(const char *p)
{
	if (strcmp(p, OA_BUNDLE_INDEX) == 0)
		return 0;
	if (strcmp(p, OA_BUNDLE_SUMS) == 0)
		return 1;
	if (strcmp(p, "blobs") == 0 || strncmp(p, "blobs/", 6) == 0)
		return 2;
	return 3;
}

static int cmp_walked(const void *x, const void *y)
{
	const walked *a = x, *b = y;
	int ra = rank(a->path), rb = rank(b->path);
	return ra != rb ? ra - rb : strcmp(a->path, b->path);
}

/* ---- either ------------------------------------------------------------------ */

static int open_tar(bundle_in *b, const char *src, int fd, char *err, size_t errlen)
{
	b->a = archive_read_new();
	if (!b->a) {
		oa_seterr(err, errlen, "out of memory");
		return -1;
	}
	archive_read_support_format_tar(b->a);
	archive_read_support_filter_none(b->a);
	archive_read_support_filter_gzip(b->a);
	archive_read_support_filter_bzip2(b->a);
	archive_read_support_filter_xz(b->a);
	archive_read_support_filter_zstd(b->a);
	int rc = b->stream ? archive_read_open_fd(b->a, fd, READ_BLOCK) : archive_read_open_filename(b->a, src, READ_BLOCK);
	if (rc != ARCHIVE_OK) {
		oa_seterr(err, errlen, "%s: %s", b->stream ? "standard input" : src, archive_error_string(b->a));
		return -2; /* the file was there to read: it is no tar */
	}
	return 0;
}

int bundle_in_open(bundle_in **out, const char *src, int fd, char *err, size_t errlen)
{
	bundle_in *b = oa_xcalloc(1, sizeof *b);
	b->root_fd = b->fd = -1;
	b->stream = strcmp(src, "-") == 0;
	struct stat st;
	int rc = 0;
	if (!b->stream && stat(src, &st) == 0 && S_ISDIR(st.st_mode)) {
		b->root_fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (b->root_fd < 0) {
			oa_seterr(err, errlen, "%s: %s", src, strerror(errno));
			rc = -1;
		} else {
			walk(b, b->root_fd, "", 1);
			if (b->n)
				qsort(b->v, b->n, sizeof *b->v, cmp_walked);
		}
	} else if (!b->stream && access(src, R_OK) < 0) {
		oa_seterr(err, errlen, "%s: %s", src, strerror(errno));
		rc = -1;
	} else {
		rc = open_tar(b, src, fd, err, errlen);
	}
	if (rc < 0) {
		bundle_in_close(b);
		b = NULL;
	}
	*out = b;
	return rc;
}

static enum bundle_type entry_type(struct archive_entry *e)
{
	if (archive_entry_hardlink(e))
		return BT_HARDLINK;
	switch (archive_entry_filetype(e)) {
	case AE_IFREG: return archive_entry_sparse_count(e) > 0 ? BT_OTHER : BT_FILE;
	case AE_IFDIR: return BT_DIR;
	case AE_IFLNK: return BT_SYMLINK;
	default: return BT_OTHER;
	}
}

int bundle_in_next(bundle_in *b, bundle_member *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	if (b->fd >= 0) {
		close(b->fd);
		b->fd = -1;
	}
	if (!b->a) {
		if (b->next == b->n)
			return 0;
		walked *w = &b->v[b->next++];
		m->type = w->type;
		m->size = w->size;
		m->raw = w->path;
		oa_bundle_member(w->path, w->type == BT_DIR, &m->n);
		return 1;
	}
	struct archive_entry *e;
	int rc = archive_read_next_header(b->a, &e);
	if (rc == ARCHIVE_EOF)
		return 0;
	if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
		oa_seterr(err, errlen, "the tar cannot be read on: %s", archive_error_string(b->a));
		return -1;
	}
	const char *raw = archive_entry_pathname(e);
	if (!raw)
		raw = archive_entry_pathname_utf8(e);
	m->raw = raw ? raw : "";
	m->type = entry_type(e);
	m->size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
	oa_bundle_member(m->raw, m->type == BT_DIR, &m->n);
	return 1;
}

ssize_t bundle_in_read(bundle_in *b, void *buf, size_t n, char *err, size_t errlen)
{
	if (b->a) {
		la_ssize_t got = archive_read_data(b->a, buf, n);
		if (got < 0)
			oa_seterr(err, errlen, "the tar cannot be read on: %s", archive_error_string(b->a));
		return got < 0 ? -1 : (ssize_t)got;
	}
	const walked *w = &b->v[b->next - 1];
	if (b->fd < 0) {
		const char *leaf;
		int pfd = carry_open_parent(b->root_fd, w->path, false, NULL, &leaf);
		b->fd = pfd < 0 ? -1 : openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		if (pfd >= 0)
			close(pfd);
		if (b->fd < 0) {
			oa_seterr(err, errlen, "%s: %s", w->path, strerror(e));
			return -1;
		}
	}
	ssize_t got = oa_read_some(b->fd, buf, n);
	if (got < 0)
		oa_seterr(err, errlen, "%s: %s", w->path, strerror(errno));
	return got;
}

bool bundle_in_is_stream(const bundle_in *b)
{
	return b->stream;
}

void bundle_in_close(bundle_in *b)
{
	if (!b)
		return;
	if (b->a)
		archive_read_free(b->a);
	if (b->fd >= 0)
		close(b->fd);
	if (b->root_fd >= 0)
		close(b->root_fd);
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].path);
	free(b->v);
	free(b);
}
