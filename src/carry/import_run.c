/* import_run.c - an import from a bundle or another store, from the
 * target's opening and lock to its last temporary removed (import_run.h). */
#include "ollama_audit/import_run.h"
#include "ollama_audit/apply.h"
#include "ollama_audit/carry.h"
#include "carry/import_plan.h"
#include "carry/import_read.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* ---- the target store ----------------------------------------------------------- */

/* The store imported into: opened, or (a dry run into an empty directory)
 * only that directory. */
typedef struct target {
	oa_store s;
	bool open;
	int fresh_fd;
} target;

/* An existing empty directory is a store to be: with `make` it gets blobs/
 * and manifests/ (owned as the directory), else t->fresh_fd is it, open. */
static int open_target(const char *path, bool make, target *t, char *err, size_t errlen)
{
	char oerr[512];
	if (oa_store_open(&t->s, path, "--store", oerr, sizeof oerr) == 0)
		return (t->open = true), 0;
	oa_store_release(&t->s);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0;
	int e = 0;
	char **names = fd < 0 ? NULL : oa_list_dir(fd, &n, &e);
	oa_free_names(names, n);
	if (fd < 0 || !names || n) {
		oa_seterr(err, errlen, "%s", fd < 0 ? strerror(errno) : oerr);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!make) {
		t->fresh_fd = fd;
		return 0;
	}
	struct stat st;
	bool chown_them = geteuid() == 0 && fstat(fd, &st) == 0;
	for (int i = 0; i < 2; i++) {
		const char *d = i ? "manifests" : "blobs";
		if (mkdirat(fd, d, 0755) < 0 && errno != EEXIST) {
			oa_seterr(err, errlen, "%s/%s: %s", path, d, strerror(errno));
			close(fd);
			return -1;
		}
		if (chown_them)
			(void)fchownat(fd, d, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
	}
	close(fd);
	if (oa_store_open(&t->s, path, "--store", err, errlen) < 0) {
		oa_store_release(&t->s);
		return -1;
	}
	t->open = true;
	return 0;
}

static void free_space(imp *m)
{
	struct statvfs v;
	int fd = m->l.blobs_fd >= 0 ? m->l.blobs_fd : m->l.root_fd;
	m->r->free_known = fstatvfs(fd, &v) == 0;
	m->r->free_bytes = m->r->free_known ? (uint64_t)v.f_bavail * (uint64_t)v.f_frsize : 0;
}

/* Open the target, its landing, its lock and free space: 0, or -1 (err). */
static int begin(imp *m, const char *store_path, target *t)
{
	t->open = false;
	t->fresh_fd = m->l.blobs_fd = -1;
	if (open_target(store_path, m->o->apply, t, m->err, m->errlen) < 0)
		return -1;
	m->r->store = oa_xstrdup(t->open ? t->s.root : store_path);
	if (land_open(&m->l, t->open ? t->s.root_fd : t->fresh_fd, m->o->apply, m->o->stop, m->err, m->errlen) < 0)
		return -1;
	if (m->o->apply) {
		int got = oa_store_write_lock(&t->s, m->o->no_lock, m->err, m->errlen);
		if (got < 0)
			return -1;
		m->r->unlocked = got > 0;
		m->lock = &t->s;
	}
	free_space(m);
	return 0;
}

static void end(imp *m, target *t)
{
	m->r->leftover = land_close(&m->l);
	if (m->lock)
		oa_store_write_unlock(m->lock);
	if (t->fresh_fd >= 0)
		close(t->fresh_fd);
	if (t->open)
		oa_store_release(&t->s);
	oa_bundle_promise_free(&m->promise);
	m->r->applied = m->o->apply;
	if (m->o->stop && *m->o->stop)
		m->r->interrupted = true;
}

int oa_import_bundle(const char *store_path, const char *src, int fd, const oa_import_opts *o,
                     oa_import_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->source = src;
	imp m = { .r = r, .o = o, .err = err, .errlen = errlen };
	target t;
	int rc = begin(&m, store_path, &t);
	if (rc == 0) {
		import_read(&m, src, fd);
		if (!r->refused)
			import_check_promise(&m);
		*err = '\0';
		import_plan(&m, NULL);
	}
	end(&m, &t);
	return rc;
}

/* ---- from another store --------------------------------------------------------- */

/* The source store's blob into a temporary here (the plan's fetch). */
static int fetch_from_store(imp *m, size_t i)
{
	oa_import_blob *b = &m->r->blobs[i];
	const oa_blob *sb = b->src;
	int fd = oa_store_open_blob(m->from, sb);
	if (fd < 0) {
		oa_seterr(m->err, m->errlen, "cannot read it in %s: %s", m->from->root, strerror(errno));
		return -1;
	}
	const char *how = NULL;
	int rc = land_clone(&m->l, b->hex, b->size, fd, m->from->blobs_fd, sb->name, true, b->tmp, &how, m->err,
	                    m->errlen);
	close(fd);
	b->hashed = rc == 0;
	if (rc == 0)
		b->how = oa_xstrdup(how);
	return rc == 0 ? 0 : -1;
}

/* A carried blob small enough to be a manifest: its bytes, hashed. */
static void read_small_blob(imp *m, oa_import_blob *b)
{
	int fd = oa_store_open_blob(m->from, b->src);
	uint8_t *bytes = oa_xmalloc((size_t)b->size + 1);
	ssize_t n = fd < 0 ? -1 : oa_pread_full(fd, bytes, (size_t)b->size + 1, 0);
	if (fd >= 0)
		close(fd);
	oa_digest_hex sha = "";
	if (n == b->size)
		oa_sha256_hex(bytes, (size_t)n, sha);
	if (strcmp(sha, b->hex) != 0) {
		imp_refuse(m, true, "%s: blob sha256:%s is not what its name says", m->from->root, b->hex);
		free(bytes);
		return;
	}
	b->bytes = bytes;
	b->hashed = true;
}

static void take_carry(imp *m, const oa_carry *k)
{
	uint64_t need = 0;
	for (size_t i = 0; i < k->n_blobs && !m->r->refused; i++) {
		size_t bi = imp_blob_add(m->r, k->blobs[i].hex, k->blobs[i].size);
		oa_import_blob *b = &m->r->blobs[bi];
		b->in_source = true;
		b->src = k->blobs[i].b;
		int64_t have;
		enum land_blob st = land_blob_state(&m->l, b->hex, b->size, &have);
		b->state = st == LB_PRESENT ? OA_IMP_PRESENT : st == LB_OTHER ? OA_IMP_CONFLICT : OA_IMP_NEW;
		b->size_here = st == LB_OTHER ? have : -1;
		if (b->state == OA_IMP_NEW && b->size <= (int64_t)IMPORT_SMALL_BLOB)
			read_small_blob(m, b);
		need += b->state == OA_IMP_NEW ? (uint64_t)b->size : 0;
	}
	for (size_t t = 0; t < k->n_tags; t++) {
		oa_member_name n;
		oa_bundle_member(k->tags[t].path, false, &n);
		uint8_t *bytes = oa_xmalloc(k->tags[t].len + 1);
		memcpy(bytes, k->tags[t].bytes, k->tags[t].len);
		imp_tag_add(m->r, &n, bytes, k->tags[t].len);
	}
	imp_check_room(m, need);
}

int oa_import_store(const char *store_path, oa_store *from, const size_t *models, size_t n, const oa_import_opts *o,
                    oa_import_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->source = from->root;
	oa_carry k;
	if (oa_carry_collect(from, models, n, &k, err, errlen) < 0)
		return -1;
	imp m = { .r = r, .o = o, .from = from, .err = err, .errlen = errlen };
	target t;
	int rc = begin(&m, store_path, &t);
	if (rc == 0 && t.open && t.s.root_st.st_dev == from->root_st.st_dev && t.s.root_st.st_ino == from->root_st.st_ino) {
		oa_seterr(err, errlen, "%s is the store itself", from->root);
		rc = -1;
	}
	if (rc == 0) {
		take_carry(&m, &k);
		*err = '\0';
		import_plan(&m, fetch_from_store);
	}
	end(&m, &t);
	oa_carry_free(&k);
	return rc;
}
