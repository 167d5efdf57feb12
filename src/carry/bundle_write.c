/* bundle_write.c - `export`: a carry written as a bundle (bundle_write.h). */
#include "ollama_audit/bundle_write.h"
#include "ollama_audit/bundle.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/outfile.h"
#include "carry/files.h"
#include "carry/hashpipe.h"
#include "base/platform.h"
#include "base/util.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where members go: a tar (libarchive) or a directory. */
typedef struct sink {
	struct archive *a;   /* tar */
	int dir_fd;          /* the directory's temporary, or -1 */
	int file_fd;         /* the member being written into the directory, or -1 */
	int sync_fd;         /* a file the tar goes to (its writeback started as it grows), or -1 */
	char *err;
	size_t errlen;
} sink;

static int sink_begin(sink *k, const char *path, int64_t size, int64_t mtime_ns)
{
	if (k->a) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, path);
		archive_entry_set_size(e, size);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_mtime(e, (time_t)(mtime_ns / 1000000000), (long)(mtime_ns % 1000000000));
		int rc = archive_write_header(k->a, e);
		archive_entry_free(e);
		if (rc != ARCHIVE_OK) {
			oa_seterr(k->err, k->errlen, "writing %s: %s", path, archive_error_string(k->a));
			return -1;
		}
		return 0;
	}
	const char *leaf;
	int pfd = carry_open_parent(k->dir_fd, path, true, NULL, &leaf);
	k->file_fd = pfd < 0 ? -1 : openat(pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	int e = errno;
	if (pfd >= 0)
		close(pfd);
	if (k->file_fd < 0) {
		oa_seterr(k->err, k->errlen, "writing %s: %s", path, strerror(e));
		return -1;
	}
	return 0;
}

static int sink_data(sink *k, const void *p, size_t n)
{
	if (k->a) {
		while (n) {
			la_ssize_t w = archive_write_data(k->a, p, n);
			if (w <= 0) {
				oa_seterr(k->err, k->errlen, "writing the bundle: %s", archive_error_string(k->a));
				return -1;
			}
			p = (const char *)p + w;
			n -= (size_t)w;
		}
		return 0;
	}
	if (oa_write_all(k->file_fd, p, n) < 0) {
		oa_seterr(k->err, k->errlen, "writing the bundle: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int sink_end(sink *k)
{
	if (k->a)
		return archive_write_finish_entry(k->a) == ARCHIVE_OK ? 0 : -1;
	int rc = fsync(k->file_fd) < 0 || close(k->file_fd) < 0 ? -1 : 0;
	k->file_fd = -1;
	if (rc < 0)
		oa_seterr(k->err, k->errlen, "writing the bundle: %s", strerror(errno));
	return rc;
}

static int put_small(sink *k, const char *path, const void *p, size_t n, int64_t mtime_ns)
{
	if (sink_begin(k, path, (int64_t)n, mtime_ns) < 0 || sink_data(k, p, n) < 0)
		return -1;
	return sink_end(k);
}

/* ---- the index and SHA256SUMS ------------------------------------------------ */

char *oa_bundle_index_json(const oa_carry *c, const char *tool)
{
	char when[48];
	oa_iso8601((time_t)oa_wall_now(), 0, when, sizeof when);
	json_t *models = json_array(), *blobs = json_array(), *tags = json_array();
	for (size_t i = 0; i < c->n_models; i++) {
		const oa_carry_model *cm = &c->models[i];
		json_t *mt = json_array(), *mb = json_array();
		for (size_t t = 0; t < c->n_tags; t++)
			if (c->tags[t].model == i)
				json_array_append_new(mt, json_string(c->tags[t].path));
		for (size_t b = 0; b < cm->n_blobs; b++)
			json_array_append_new(mb, json_sprintf("sha256:%s", c->blobs[cm->blobs[b]].hex));
		json_array_append_new(models, json_pack("{s:s, s:s%, s:I, s:I, s:o, s:o}", "name", cm->m->display, "id",
		                                        cm->m->m.id, (size_t)12, "size", (json_int_t)cm->m->m.size,
		                                        "blob_bytes", (json_int_t)cm->bytes, "tags", mt, "blobs", mb));
	}
	for (size_t b = 0; b < c->n_blobs; b++)
		json_array_append_new(blobs, json_pack("{s:s+, s:I}", "digest", "sha256:", c->blobs[b].hex, "size",
		                                       (json_int_t)c->blobs[b].size));
	for (size_t t = 0; t < c->n_tags; t++)
		json_array_append_new(tags, json_pack("{s:s, s:s, s:I}", "path", c->tags[t].path, "sha256",
		                                      c->tags[t].sha256, "size", (json_int_t)c->tags[t].len));
	json_t *doc = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:I}", "schema", OA_BUNDLE_SCHEMA, "tool", tool,
	                        "created", when, "models", models, "blobs", blobs, "tags", tags, "blob_bytes",
	                        (json_int_t)c->bytes);
	char *text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	char *out = oa_xasprintf("%s\n", text);
	free(text);
	return out;
}

static char *sums_text(const oa_carry *c, size_t *len)
{
	char *s = oa_xmalloc(c->n_blobs * (OA_BUNDLE_SUMS_LINE - 1) + 1);
	*len = 0;
	for (size_t b = 0; b < c->n_blobs; b++) {
		oa_bundle_sums_line(c->blobs[b].hex, s + *len);
		*len += OA_BUNDLE_SUMS_LINE - 1;
	}
	s[*len] = '\0';
	return s;
}

/* ---- blobs ------------------------------------------------------------------- */

typedef struct writer {
	const oa_store *s;
	const oa_carry *c;
	const oa_export_opts *o;
	oa_export_result *r;
	sink k;
	hashpipe *hp;
	char *err;
	size_t errlen;
} writer;

static void stamp_of(const struct stat *st, oa_file_stamp *fs)
{
	*fs = (oa_file_stamp){ (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
	                       oa_stat_mtime_ns(st), oa_stat_ctime_ns(st) };
}

/* The verify cache vouches for this very file: a good entry with its stamp,
 * taken far enough after its last change (verify's racy-window rule). */
static bool cache_vouches(const writer *w, const char *hex, const struct stat *st)
{
	oa_file_stamp now;
	oa_verify_cache_entry e;
	if (!w->o->cache)
		return false;
	stamp_of(st, &now);
	return oa_verify_cache_judge(w->o->cache, hex, &now, &e) == OA_VSTATE_VERIFIED &&
	       (double)now.ctime_ns / 1e9 + w->o->racy_window < e.verified_at;
}

/* Copy the open blob file into the current member, hashing it on the way
 * unless trusted. 0, or -1 with err. */
static int copy_blob(writer *w, int fd, const oa_carry_blob *cb, bool trusted)
{
	const char *name = w->c->models[cb->model].m->display;
	uint64_t done = 0;
	for (;;) {
		if (w->o->stop && *w->o->stop) {
			w->r->interrupted = true;
			oa_seterr(w->err, w->errlen, "interrupted");
			return -1;
		}
		size_t cap;
		unsigned char *slot = hashpipe_slot(w->hp, &cap);
		ssize_t got = oa_read_some(fd, slot, cap);
		if (got < 0) {
			oa_seterr(w->err, w->errlen, "%s: reading blob sha256:%s: %s", name, cb->hex, strerror(errno));
			return -1;
		}
		if (got == 0)
			break;
		if (done + (uint64_t)got > (uint64_t)cb->size) {
			oa_seterr(w->err, w->errlen, "%s: blob sha256:%s grew while it was read", name, cb->hex);
			return -1;
		}
		if (!trusted)
			hashpipe_push(w->hp, (size_t)got);
		if (sink_data(&w->k, slot, (size_t)got) < 0)
			return -1;
		done += (uint64_t)got;
		int out = w->k.a ? w->k.sync_fd : w->k.file_fd;
		if (out >= 0 && done % CARRY_WRITEBACK_EVERY < (uint64_t)got) /* commit's fsync then has little left */
			oa_writeback_start(out);
	}
	oa_digest_hex got_hex = "";
	if (done != (uint64_t)cb->size)
		oa_seterr(w->err, w->errlen, "%s: blob sha256:%s has %llu bytes, not the %lld it had when the store "
		          "was read", name, cb->hex, (unsigned long long)done, (long long)cb->size);
	else if (!trusted && hashpipe_finish(w->hp, got_hex) < 0)
		oa_seterr(w->err, w->errlen, "%s: blob sha256:%s: sha256 failed (OpenSSL)", name, cb->hex);
	else if (!trusted && strcmp(got_hex, cb->hex) != 0 && (w->r->corrupt = true))
		oa_seterr(w->err, w->errlen, "%s: blob sha256:%s does not hash to its name (its content hashes to "
		          "sha256:%s): the export stops; mend it first: ollama-audit repair %s", name, cb->hex, got_hex, name);
	else
		return 0;
	return -1;
}

static int write_blob(writer *w, const oa_carry_blob *cb)
{
	int fd = oa_store_open_blob(w->s, cb->b);
	struct stat st;
	bool opened = fd >= 0 && fstat(fd, &st) == 0;
	if (!opened || !S_ISREG(st.st_mode)) {
		oa_seterr(w->err, w->errlen, "%s: cannot read blob sha256:%s: %s", w->c->models[cb->model].m->display,
		          cb->hex, opened ? "not a regular file" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	oa_advise_sequential(fd);
	bool trusted = cache_vouches(w, cb->hex, &st);
	char path[80];
	snprintf(path, sizeof path, "blobs/sha256-%s", cb->hex);
	int rc = sink_begin(&w->k, path, cb->size, oa_stat_mtime_ns(&st));
	if (rc == 0)
		rc = copy_blob(w, fd, cb, trusted);
	close(fd);
	if (rc == 0 && (rc = sink_end(&w->k)) == 0) {
		w->r->blobs++;
		w->r->bytes += (uint64_t)cb->size;
		if (trusted)
			w->r->trusted++;
		else
			w->r->hashed++;
	}
	return rc;
}

/* Every member, in order. */
static int write_members(writer *w)
{
	const oa_carry *c = w->c;
	int64_t now = oa_wall_now_ns();
	char *index = oa_bundle_index_json(c, w->o->tool);
	size_t slen;
	char *sums = sums_text(c, &slen);
	int rc = put_small(&w->k, OA_BUNDLE_INDEX, index, strlen(index), now);
	if (rc == 0)
		rc = put_small(&w->k, OA_BUNDLE_SUMS, sums, slen, now);
	free(index);
	free(sums);
	for (size_t b = 0; rc == 0 && b < c->n_blobs; b++)
		rc = write_blob(w, &c->blobs[b]);
	for (size_t t = 0; rc == 0 && t < c->n_tags; t++) {
		const oa_carry_tag *ct = &c->tags[t];
		rc = put_small(&w->k, ct->path, ct->bytes, ct->len, c->models[ct->model].m->st.mtime_ns);
		w->r->tags += rc == 0;
	}
	return rc;
}

/* ---- destinations ------------------------------------------------------------- */

static struct archive *tar_open(int fd, char *err, size_t errlen)
{
	struct archive *a = archive_write_new();
	/* pax headers only where ustar cannot say it (a size of 8 GiB or more);
	 * no blocking: each slot read goes out as it is, not copied into
	 * libarchive's own blocks first */
	if (!a || archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(a) != ARCHIVE_OK || archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		oa_seterr(err, errlen, "cannot start the tar: %s", a ? archive_error_string(a) : "out of memory");
		if (a)
			archive_write_free(a);
		return NULL;
	}
	return a;
}

/* The tar into fd; its end-of-archive blocks only when everything was written. */
static int export_tar(writer *w, int fd)
{
	w->k.a = tar_open(fd, w->err, w->errlen);
	if (!w->k.a)
		return -1;
	int rc = write_members(w);
	if (rc == 0 && archive_write_close(w->k.a) != ARCHIVE_OK) {
		oa_seterr(w->err, w->errlen, "finishing the tar: %s", archive_error_string(w->k.a));
		rc = -1;
	}
	if (rc < 0)
		archive_write_fail(w->k.a); /* no end-of-archive: the stream is visibly cut */
	archive_write_free(w->k.a);
	return rc;
}

static int export_file(writer *w)
{
	oa_outfile out;
	if (oa_outfile_open(&out, w->o->path, 0644, 0, w->err, w->errlen) < 0)
		return -1;
	w->k.sync_fd = out.tmp ? out.fd : -1; /* a file, not a FIFO written through */
	int rc = export_tar(w, out.fd);
	if (rc < 0)
		oa_outfile_abort(&out);
	else if (oa_outfile_commit(&out, w->err, w->errlen) < 0)
		rc = -1;
	return rc;
}

/* An unpacked bundle: made as a hidden sibling, renamed to DIR at the end
 * (DIR may exist only as an empty directory, which the rename replaces). */
static int export_dir(writer *w)
{
	char *path = oa_xstrdup(w->o->path);
	for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
		path[n - 1] = '\0';
	char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *parent = slash ? (slash == path ? oa_xstrdup("/") : oa_xstrndup(path, (size_t)(slash - path)))
	                     : oa_xstrdup(".");
	char tmp[300];
	snprintf(tmp, sizeof tmp, ".%.200s.%ld.tmp", base, (long)getpid());
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = -1;
	if (pfd < 0)
		oa_seterr(w->err, w->errlen, "%s: %s", parent, strerror(errno));
	else if (mkdirat(pfd, tmp, 0755) < 0 || (w->k.dir_fd = openat(pfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	                                                             O_CLOEXEC)) < 0)
		oa_seterr(w->err, w->errlen, "%s/%s: %s", parent, tmp, strerror(errno));
	else if ((rc = write_members(w)) == 0 && (fsync(w->k.dir_fd) < 0 || renameat(pfd, tmp, pfd, base) < 0)) {
		oa_seterr(w->err, w->errlen, "%s: %s (only a new or empty directory is written)", path,
		          strerror(errno));
		rc = -1;
	}
	if (w->k.file_fd >= 0)
		close(w->k.file_fd);
	if (w->k.dir_fd >= 0)
		close(w->k.dir_fd);
	if (rc < 0 && pfd >= 0)
		carry_remove_tree(pfd, tmp);
	if (pfd >= 0) {
		fsync(pfd);
		close(pfd);
	}
	free(parent);
	free(path);
	return rc;
}

int oa_export_write(const oa_store *s, const oa_carry *c, const oa_export_opts *o, oa_export_result *r,
                    char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	writer w = { .s = s, .c = c, .o = o, .r = r,
	             .k = { .dir_fd = -1, .file_fd = -1, .sync_fd = -1, .err = err, .errlen = errlen },
	             .hp = hashpipe_new(), .err = err, .errlen = errlen };
	int rc = o->dest == OA_DEST_DIR ? export_dir(&w) : o->dest == OA_DEST_FILE ? export_file(&w)
	                                                                           : export_tar(&w, o->fd);
	hashpipe_free(w.hp);
	return rc;
}
