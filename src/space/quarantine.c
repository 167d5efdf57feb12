/* quarantine.c - the quarantine directory an apply moves into (quarantine.h). */
#include "space/quarantine.h"
#include "ollama_audit/humanize.h"
#include "base/jsonutil.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A quarantine's DIR, DIR/files and DIR/index.json must be ours and writable
 * by us alone: anyone else who can write there could swap the index or the
 * files, and make a restore (often run as root) link their files into a
 * store. 0, or -1 with err. */
int quarantine_check_private(int fd, const char *dir, const char *what, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot stat %s%s: %s", dir, what, strerror(errno));
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "quarantine %s%s is owned by uid %lu, not by this user (uid %lu): "
		         "another user could swap what it holds; use a directory of your own (it is created "
		         "0700 if missing)", dir, what, (unsigned long)st.st_uid, (unsigned long)geteuid());
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "quarantine %s%s is writable by its group or others (mode %04o): "
		         "another user could swap what it holds; chmod go-w it, or use a new directory", dir,
		         what, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

static int read_all_fd(int fd, size_t max, uint8_t **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = oa_xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				free(buf);
				errno = EFBIG;
				return -1;
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = oa_xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

json_t *quarantine_load_index(int qfd, const char *dir, char *err, size_t errlen, bool *exists)
{
	uint8_t *bytes;
	size_t len;
	*exists = false;
	int fd = openat(qfd, "index.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return NULL;
	*exists = true;
	if (fd < 0) {
		snprintf(err, errlen, "cannot read %s/index.json: %s", dir, strerror(errno));
		return NULL;
	}
	if (quarantine_check_private(fd, dir, "/index.json", err, errlen) < 0) {
		close(fd);
		return NULL;
	}
	int rc = read_all_fd(fd, 256u << 20, &bytes, &len);
	int e = errno;
	close(fd);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read %s/index.json: %s", dir, strerror(e));
		return NULL;
	}
	json_error_t jerr;
	json_t *o = json_loadb((const char *)bytes, len, 0, &jerr);
	free(bytes);
	const char *schema = o ? json_string_value(json_object_get(o, "schema")) : NULL;
	if (!schema || (strcmp(schema, OA_QUARANTINE_SCHEMA) != 0 && strcmp(schema, OA_QUARANTINE_SCHEMA_1) != 0) ||
	    !json_is_array(json_object_get(o, "entries"))) {
		snprintf(err, errlen, "index.json is not a quarantine index (%s)",
		         o ? "wrong schema" : jerr.text);
		json_decref(o);
		return NULL;
	}
	return o;
}

static bool inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Where `dir` is (or would be, once created): realpath of it, or of its
 * parent plus its last component. false with errno when neither resolves. */
static bool resolve_dir(const char *dir, char out[PATH_MAX])
{
	if (realpath(dir, out))
		return true;
	if (errno != ENOENT)
		return false;
	char *copy = oa_xstrdup(dir);
	size_t len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	char *slash = strrchr(copy, '/');
	const char *base = slash ? slash + 1 : copy;
	const char *parent = slash ? (slash == copy ? "/" : copy) : ".";
	if (slash && slash != copy)
		*slash = '\0';
	bool ok = false;
	char rp[PATH_MAX];
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		errno = EINVAL;
	} else if (realpath(parent, rp)) {
		ok = (size_t)snprintf(out, PATH_MAX, "%s%s%s", rp, strcmp(rp, "/") == 0 ? "" : "/", base) <
		     PATH_MAX;
		if (!ok)
			errno = ENAMETOOLONG;
	}
	free(copy);
	return ok;
}

/* Refuse a quarantine anywhere inside the store: its root, or what root/blobs,
 * root/manifests or root/manifests-v2 resolve to. Nothing is created before. */
static int quarantine_check(const oa_store *s, const char *dir, char rq[PATH_MAX], char *err,
                            size_t errlen)
{
	if (!resolve_dir(dir, rq)) {
		snprintf(err, errlen, "cannot resolve quarantine directory %s: %s", dir, strerror(errno));
		return -1;
	}
	char rroot[PATH_MAX];
	if (!realpath(s->root, rroot)) {
		snprintf(err, errlen, "cannot resolve the store %s: %s", s->root, strerror(errno));
		return -1;
	}
	if (inside(rq, rroot)) {
		snprintf(err, errlen, "quarantine directory %s (%s) is inside the store %s: choose a directory "
		         "outside it on the same filesystem (e.g. next to the store)", dir, rq, s->root);
		return -1;
	}
	static const char *subs[] = { "blobs", "manifests", "manifests-v2" };
	for (size_t i = 0; i < 3; i++) {
		char *sub = oa_path_join(s->root, subs[i]);
		char rs[PATH_MAX];
		bool bad = realpath(sub, rs) && inside(rq, rs);
		free(sub);
		if (bad) {
			snprintf(err, errlen, "quarantine directory %s (%s) is inside the store's %s/ (%s)", dir, rq,
			         subs[i], rs);
			return -1;
		}
	}
	return 0;
}

int quarantine_open(const oa_store *s, const char *dir, quarantine *q, char *err, size_t errlen)
{
	memset(q, 0, sizeof *q);
	q->fd = q->files_fd = -1;
	char rq[PATH_MAX];
	if (quarantine_check(s, dir, rq, err, errlen) < 0)
		return -1;
	/* A refused quarantine leaves nothing behind: what we created is
	 * removed again on failure (rmdir: only while still empty). */
	bool created = mkdir(dir, 0700) == 0;
	if (!created && errno != EEXIST) {
		snprintf(err, errlen, "cannot create quarantine directory %s: %s", dir, strerror(errno));
		return -1;
	}
	q->fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (q->fd < 0) {
		snprintf(err, errlen, "cannot open quarantine directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	struct stat qst, bst, rst;
	if (fstat(q->fd, &qst) < 0) {
		snprintf(err, errlen, "cannot stat quarantine directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (quarantine_check_private(q->fd, dir, "", err, errlen) < 0)
		goto fail;
	if (stat(rq, &rst) < 0 || rst.st_dev != qst.st_dev || rst.st_ino != qst.st_ino) {
		snprintf(err, errlen, "quarantine directory %s changed while it was opened", dir);
		goto fail;
	}
	bool same = qst.st_dev == s->root_st.st_dev;
	if (s->blobs_fd >= 0 && fstat(s->blobs_fd, &bst) == 0 && bst.st_dev != qst.st_dev)
		same = false;
	if (s->manifests_fd >= 0 && fstat(s->manifests_fd, &bst) == 0 && bst.st_dev != qst.st_dev)
		same = false;
	if (!same) {
		snprintf(err, errlen,
		         "quarantine directory %s is on a different filesystem from the store %s: moving "
		         "would mean copying; choose a directory on the same filesystem (e.g. next to the store)",
		         dir, s->root);
		goto fail;
	}
	bool exists;
	q->index = quarantine_load_index(q->fd, dir, err, errlen, &exists);
	if (!q->index && exists)
		goto fail;
	if (q->index) {
		/* Entries are added in this version's words: an older index
		 * (quarantine/1, "size") becomes /2, which restore reads both ways. */
		json_object_set_new(q->index, "schema", json_string(OA_QUARANTINE_SCHEMA));
		uint64_t dev = 0, ino = 0;
		if (!oa_json_get_u64(q->index, "store_dev", &dev) || !oa_json_get_u64(q->index, "store_ino", &ino) ||
		    dev != (uint64_t)s->root_st.st_dev || ino != (uint64_t)s->root_st.st_ino) {
			snprintf(err, errlen, "quarantine %s holds files of another store (%s)", dir,
			         json_string_value(json_object_get(q->index, "store")) ? json_string_value(json_object_get(q->index, "store")) : "?");
			goto fail;
		}
	} else {
		q->index = json_object();
		json_object_set_new(q->index, "schema", json_string(OA_QUARANTINE_SCHEMA));
		json_object_set_new(q->index, "store", json_string(s->root));
		json_object_set_new(q->index, "store_dev", json_integer((json_int_t)s->root_st.st_dev));
		json_object_set_new(q->index, "store_ino", json_integer((json_int_t)s->root_st.st_ino));
		json_object_set_new(q->index, "entries", json_array());
	}
	q->entries = json_object_get(q->index, "entries");
	size_t i;
	json_t *x;
	json_array_foreach(q->entries, i, x) {
		json_int_t id = json_integer_value(json_object_get(x, "id"));
		if (id >= 0 && (size_t)id >= q->next_id)
			q->next_id = (size_t)id + 1;
	}
	if (q->next_id == 0)
		q->next_id = 1;
	if (mkdirat(q->fd, "files", 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s/files: %s", dir, strerror(errno));
		goto fail;
	}
	q->files_fd = openat(q->fd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (q->files_fd < 0) {
		snprintf(err, errlen, "cannot open %s/files: %s", dir, strerror(errno));
		goto fail;
	}
	if (quarantine_check_private(q->files_fd, dir, "/files", err, errlen) < 0)
		goto fail;
	return 0;
fail:
	if (q->files_fd >= 0)
		close(q->files_fd);
	if (created && q->fd >= 0)
		unlinkat(q->fd, "files", AT_REMOVEDIR);
	if (q->fd >= 0)
		close(q->fd);
	if (created)
		rmdir(dir);
	json_decref(q->index);
	q->index = NULL;
	q->fd = q->files_fd = -1;
	return -1;
}

void quarantine_close(quarantine *q)
{
	if (q->files_fd >= 0)
		close(q->files_fd);
	if (q->fd >= 0)
		close(q->fd);
	json_decref(q->index);
	memset(q, 0, sizeof *q);
	q->fd = q->files_fd = -1;
}

int quarantine_save(quarantine *q, char *err, size_t errlen)
{
	char ts[40];
	oa_iso8601((time_t)oa_wall_now(), 0, ts, sizeof ts);
	json_object_set_new(q->index, "updated", json_string(ts));
	return oa_json_write_at(q->fd, "index.json", q->index, err, errlen);
}

/* The file name inside DIR/files/: id, then the path with '/' as '%'. */
char *quarantine_stored_name(size_t id, const char *path)
{
	oa_buf b;
	oa_buf_init(&b);
	oa_buf_printf(&b, "%06zu-", id);
	for (const char *p = path; *p && b.len < 200; p++)
		oa_buf_addc(&b, *p == '/' ? '%' : *p);
	return oa_buf_take(&b);
}
