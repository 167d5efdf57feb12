/* restore.c - putting a quarantine back into its store (restore.h). */
#include "ollama_audit/restore.h"
#include "ollama_audit/humanize.h"
#include "base/jsonutil.h"
#include "base/platform.h"
#include "base/util.h"
#include "space/plan_path.h"
#include "space/quarantine.h"
#include "space/restore_select.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* An entry's st_size: "apparent_bytes" since plan/2 and quarantine/2,
 * "size" in a quarantine index an older version wrote (still restorable). */
static bool entry_apparent_bytes(json_t *x, int64_t *v)
{
	return oa_json_get_i64(x, "apparent_bytes", v) || oa_json_get_i64(x, "size", v);
}

/* mkdir name in pfd with the owner (as root) and mode of pfd: a restore run
 * as root into a service user's store leaves nothing the service cannot
 * write. 0, or -1 with errno (EEXIST when it is there). */
static int mkdir_like_parent(int pfd, const char *name)
{
	struct stat pst;
	if (fstat(pfd, &pst) < 0 || mkdirat(pfd, name, 0700) < 0)
		return -1;
	if (geteuid() == 0)
		fchownat(pfd, name, pst.st_uid, pst.st_gid, AT_SYMLINK_NOFOLLOW);
	fchmodat(pfd, name, pst.st_mode & 07777, 0);
	return 0;
}

/* mkdir -p of the directories above `path`, relative to root_fd, never
 * following symlinks. Returns the parent fd or -1. */
static int make_parents(int root_fd, const char *path, const char **leaf)
{
	const char *slash = strrchr(path, '/');
	int fd = dup(root_fd);
	if (!slash) {
		*leaf = path;
		return fd;
	}
	*leaf = slash + 1;
	const char *p = path;
	while (fd >= 0 && p < slash) {
		const char *e = strchr(p, '/');
		char *part = oa_xstrndup(p, (size_t)(e - p));
		if (mkdir_like_parent(fd, part) < 0 && errno != EEXIST) {
			free(part);
			close(fd);
			return -1;
		}
		int nfd = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		free(part);
		close(fd);
		fd = nfd;
		p = e + 1;
	}
	return fd;
}

static bool same_content(int afd, const char *a, int bfd, const char *b)
{
	int x = openat(afd, a, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int y = openat(bfd, b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool same = x >= 0 && y >= 0;
	char *bx = oa_xmalloc(2 << 16), *by = bx + (1 << 16); /* not static: callers may be threads */
	while (same) {
		ssize_t nx = oa_read_full(x, bx, 1 << 16), ny = oa_read_full(y, by, 1 << 16);
		if (nx < 0 || ny < 0 || nx != ny || memcmp(bx, by, (size_t)nx) != 0)
			same = false;
		if (nx <= 0)
			break;
	}
	if (x >= 0)
		close(x);
	if (y >= 0)
		close(y);
	free(bx);
	return same;
}

/* What restoring one index entry came to; the caller tallies it. */
typedef enum restore_outcome {
	RS_SKIPPED,   /* not something a command removed, or never moved */
	RS_RESTORED,
	RS_ALREADY,   /* it was back in place already */
	RS_CONFLICT,  /* a different file is there */
	RS_MISSING,   /* gone from the quarantine */
	RS_FAILED,
	RS_UNSYNCED   /* put back, but the directory sync that makes it last failed: stop */
} restore_outcome;

typedef struct restore_ctx {
	const char *dir;  /* the quarantine directory */
	int root_fd;      /* the store */
	int files_fd;     /* dir/files */
	int blobs_fd;     /* the store's blobs/ when a real directory, else -1 */
	FILE *log;
	const char *pause_dir; /* testing aid: OA_TEST_RESTORE_PAUSE */
	size_t puts;      /* moves so far (the pause before each) */
} restore_ctx;

__attribute__((format(printf, 2, 3)))
static void restore_log(const restore_ctx *c, const char *fmt, ...)
{
	if (!c->log)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(c->log, fmt, ap);
	va_end(ap);
}

/* A file put back whose directory sync failed (err): it stays "moved" in
 * the index (a run again finds it in place), and nothing more goes back,
 * since after a crash a blob could be back without its manifest. */
static restore_outcome unsynced(const restore_ctx *c, const char *ep, int err)
{
	restore_log(c, "FAILED %s: put back, but syncing its directory failed (%s): nothing after it is "
	            "restored; run restore again\n", ep, strerror(err));
	return RS_UNSYNCED;
}

/* A directory rm or prune removed: made again (empty). */
static restore_outcome restore_dir(const restore_ctx *c, json_t *x, const char *path, const char *ep)
{
	const char *leaf;
	restore_outcome out;
	int pfd = make_parents(c->root_fd, path, &leaf);
	if (pfd >= 0 && (mkdir_like_parent(pfd, leaf) == 0 || errno == EEXIST)) {
		json_object_set_new(x, "state", json_string("restored"));
		out = RS_RESTORED;
		restore_log(c, "restored %s/\n", ep);
	} else {
		out = RS_FAILED;
		restore_log(c, "FAILED %s/: %s\n", ep, strerror(errno));
	}
	if (pfd >= 0)
		close(pfd);
	return out;
}

/* The entry's file is not in the quarantine: never moved, moved back by a
 * restore killed before it saved the index, or lost. */
static restore_outcome restore_gone(const restore_ctx *c, json_t *x, const char *state,
                                    const char *path, const char *stored, const char *ep)
{
	if (strcmp(state, "planned") == 0) {
		/* The move never happened (a crash or a skip before it): nothing to do. */
		json_object_set_new(x, "state", json_string("not-moved"));
		return RS_SKIPPED;
	}
	uint64_t want_ino = 0;
	int64_t want_size = -1;
	const char *lf;
	int ppfd;
	if (oa_json_get_u64(x, "ino", &want_ino) && entry_apparent_bytes(x, &want_size) &&
	    (ppfd = make_parents(c->root_fd, path, &lf)) >= 0) {
		/* A restore killed after moving this file back but before it
		 * saved the index: the file is home, under its own inode. */
		struct stat home;
		bool back = fstatat(ppfd, lf, &home, AT_SYMLINK_NOFOLLOW) == 0 &&
		            (uint64_t)home.st_ino == want_ino && home.st_size == want_size;
		close(ppfd);
		if (back) {
			json_object_set_new(x, "state", json_string("restored"));
			restore_log(c, "already in place %s (restored by an earlier run)\n", ep);
			return RS_ALREADY;
		}
	}
	restore_log(c, "MISSING %s: %s is not in the quarantine any more\n", ep, stored);
	return RS_MISSING;
}

/* Whether the tag at pfd/leaf is the list `rm --child` wrote in place of
 * the quarantined one (the entry's "rewritten_to"): a symlink to that blob
 * or a file with those bytes. Only that is ever replaced by a restore. */
static bool is_our_rewrite(json_t *x, int pfd, const char *leaf, const struct stat *dst)
{
	oa_digest_hex want, hex;
	const char *to = json_string_value(json_object_get(x, "rewritten_to"));
	if (!to || !oa_digest_parse(to, want, NULL))
		return false;
	if (S_ISLNK(dst->st_mode)) {
		char target[OA_PATH_MAX], name[80];
		ssize_t n = readlinkat(pfd, leaf, target, sizeof target - 1);
		target[n > 0 ? n : 0] = '\0';
		const char *base = strrchr(target, '/');
		snprintf(name, sizeof name, "sha256-%s", want);
		return n > 0 && strcmp(base ? base + 1 : target, name) == 0;
	}
	uint8_t *bytes;
	size_t len;
	if (!S_ISREG(dst->st_mode) || oa_read_file_at(pfd, leaf, OA_MANIFEST_MAX, &bytes, &len) < 0)
		return false;
	oa_sha256_hex(bytes, len, hex);
	free(bytes);
	return strcmp(hex, want) == 0;
}

/* Something is at the entry's path already: the same file (nothing to do
 * but drop the quarantined copy), the list rm --child rewrote (the old one
 * goes back over it), or a conflict, left alone. */
static restore_outcome restore_occupied(const restore_ctx *c, json_t *x, int pfd, const char *leaf,
                                        const struct stat *dst, const struct stat *sst,
                                        const char *stored, const char *ep, bool keep)
{
	const char *sname = stored + 6;
	bool same_inode = dst->st_dev == sst->st_dev && dst->st_ino == sst->st_ino;
	bool same = same_inode || (S_ISREG(dst->st_mode) && S_ISREG(sst->st_mode) &&
	                           dst->st_size == sst->st_size &&
	                           same_content(pfd, leaf, c->files_fd, sname));
	if (same && keep) {
		restore_log(c, "already in place %s (its copy stays in %s for a model still there)\n", ep, c->dir);
		return RS_ALREADY;
	}
	if (same && !S_ISDIR(sst->st_mode)) {
		unlinkat(c->files_fd, sname, 0);
		json_object_set_new(x, "state", json_string("restored"));
		restore_log(c, "already in place %s (identical)\n", ep);
		return RS_ALREADY;
	}
	if (!S_ISDIR(sst->st_mode) && is_our_rewrite(x, pfd, leaf, dst)) {
		if (renameat(c->files_fd, sname, pfd, leaf) < 0) {
			restore_log(c, "FAILED %s: %s\n", ep, strerror(errno));
			return RS_FAILED;
		}
		if (fsync(pfd) < 0)
			return unsynced(c, ep, errno);
		json_object_set_new(x, "state", json_string("restored"));
		restore_log(c, "restored %s (the list as it was before rm --child)\n", ep);
		return RS_RESTORED;
	}
	restore_log(c, "CONFLICT %s: a different file exists there; left in %s/%s\n", ep, c->dir, stored);
	return RS_CONFLICT;
}

/* Put files/<sname> at pfd/leaf, where nothing was a moment ago, never over
 * what appeared meanwhile (EEXIST then). A file is linked, then unlinked
 * from DIR unless keep (a model still in DIR needs it too); anything else
 * is renamed without replacing. */
static int put_back(restore_ctx *c, const char *sname, const struct stat *sst, int pfd, const char *leaf,
                    bool keep)
{
	oa_test_pause(c->pause_dir, "put", ++c->puts, NULL);
	if (S_ISREG(sst->st_mode) || (keep && !S_ISDIR(sst->st_mode))) {
		if (linkat(c->files_fd, sname, pfd, leaf, 0) < 0)
			return -1;
		if (!keep)
			(void)unlinkat(c->files_fd, sname, 0);
		return 0;
	}
	return oa_renameat_noreplace(c->files_fd, sname, pfd, leaf);
}

/* Move the quarantined file files/<name> back to path, as the type it was. */
static restore_outcome restore_file(restore_ctx *c, json_t *x, const char *path, const char *stored,
                                    const struct stat *sst, const char *type, const char *ep, bool keep)
{
	const char *sname = stored + 6, *leaf;
	int pfd = make_parents(c->root_fd, path, &leaf);
	if (pfd < 0) {
		restore_log(c, "FAILED %s: cannot create its directory: %s\n", ep, strerror(errno));
		return RS_FAILED;
	}
	restore_outcome out;
	char have_type = S_ISDIR(sst->st_mode) ? 'd' : S_ISLNK(sst->st_mode) ? 'l' : 'f';
	struct stat dst;
	if (have_type != plan_type_char(type)) {
		/* Something else was put in the quarantine under this name. */
		restore_log(c, "FAILED %s: %s is a %s, the index says %s; left in %s\n", ep, stored,
		            plan_type_name(have_type), type, c->dir);
		out = RS_FAILED;
	} else if (fstatat(pfd, leaf, &dst, AT_SYMLINK_NOFOLLOW) == 0) {
		out = restore_occupied(c, x, pfd, leaf, &dst, sst, stored, ep, keep);
	} else if (put_back(c, sname, sst, pfd, leaf, keep) == 0) {
		if (fsync(pfd) < 0) {
			out = unsynced(c, ep, errno);
		} else {
			if (!keep)
				json_object_set_new(x, "state", json_string("restored"));
			restore_log(c, keep ? "restored %s (a copy stays in %s for a model still there)\n" : "restored %s%s\n",
			            ep, keep ? c->dir : "");
			out = RS_RESTORED;
		}
	} else if (errno == EEXIST && fstatat(pfd, leaf, &dst, AT_SYMLINK_NOFOLLOW) == 0) {
		/* it appeared between the look and the move: never replaced */
		out = restore_occupied(c, x, pfd, leaf, &dst, sst, stored, ep, keep);
	} else {
		restore_log(c, "FAILED %s: %s\n", ep, strerror(errno));
		out = RS_FAILED;
	}
	close(pfd);
	return out;
}

/* Put one index entry back (keep: link it, its file stays in DIR). Only
 * what the command could have removed goes back, as what it was. */
static restore_outcome restore_entry(restore_ctx *c, json_t *x, bool keep)
{
	const char *state = json_string_value(json_object_get(x, "state"));
	const char *path = json_string_value(json_object_get(x, "path"));
	const char *stored = json_string_value(json_object_get(x, "stored"));
	const char *type = json_string_value(json_object_get(x, "type"));
	const char *command = json_string_value(json_object_get(x, "command"));
	char want_type = plan_type_char(type);
	if (!state || !path || !want_type || plan_path_kind(command, path, want_type) == PK_BAD)
		return RS_SKIPPED;
	bool removed_dir = strcmp(state, "removed-dir") == 0, failed = strcmp(state, "failed") == 0;
	if (!removed_dir && !failed && strcmp(state, "moved") && strcmp(state, "planned"))
		return RS_SKIPPED;
	if (!removed_dir && !quarantine_stored_name(x))
		return RS_SKIPPED;
	char *ep = oa_escape(path, strlen(path));
	restore_outcome out;
	struct stat sst;
	if (removed_dir)
		out = restore_dir(c, x, path, ep);
	else if (fstatat(c->files_fd, stored + 6, &sst, AT_SYMLINK_NOFOLLOW) < 0)
		/* a failed entry left nothing in DIR: nothing to do */
		out = failed ? RS_SKIPPED : restore_gone(c, x, state, path, stored, ep);
	else
		out = restore_file(c, x, path, stored, &sst, type, ep, keep);
	free(ep);
	return out;
}

static void restore_tally(oa_restore_result *r, restore_outcome out)
{
	switch (out) {
	case RS_RESTORED: r->restored++; break;
	case RS_ALREADY: r->already++; break;
	case RS_CONFLICT: r->conflicts++; break;
	case RS_MISSING: r->missing++; break;
	case RS_FAILED:
	case RS_UNSYNCED: r->failed++; break;
	case RS_SKIPPED: break;
	}
}

/* Open the store a quarantine goes back to and its files/ directory: the
 * store the index names must still be that store (same device and inode)
 * unless the caller names one. */
static int restore_open(const char *dir, const char *store, int qfd, json_t *index, restore_ctx *c,
                        char *err, size_t errlen)
{
	const char *root = store ? store : json_string_value(json_object_get(index, "store"));
	c->root_fd = root ? open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	c->files_fd = openat(qfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	uint64_t dev = 0, ino = 0;
	struct stat rst;
	if (c->root_fd < 0 || fstat(c->root_fd, &rst) < 0) {
		snprintf(err, errlen, "cannot open the store %s: %s", root ? root : "(none in index)",
		         strerror(errno));
		return -1;
	}
	if (!store && (!oa_json_get_u64(index, "store_dev", &dev) || !oa_json_get_u64(index, "store_ino", &ino) ||
	               dev != (uint64_t)rst.st_dev || ino != (uint64_t)rst.st_ino)) {
		snprintf(err, errlen, "%s is no longer the store this quarantine came from (device/inode "
		         "differ); pass --store to restore into it anyway", root);
		return -1;
	}
	if (c->files_fd < 0) {
		snprintf(err, errlen, "cannot open %s/files: %s", dir, strerror(errno));
		return -1;
	}
	c->blobs_fd = openat(c->root_fd, "blobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return quarantine_check_private(c->files_fd, dir, "/files", err, errlen);
}

/* The entries p takes, manifests first (no blob of theirs is ever back
 * without them: prune, or the server's own start-up prune, would take it
 * for an orphan), then the rest, each newest first (directories before
 * their files); stops between entries when asked to. */
static void restore_all(restore_ctx *c, json_t *entries, const restore_pick *p, const oa_restore_opts *o,
                        oa_restore_result *r)
{
	size_t step = 0;
	for (int manifests = 1; manifests >= 0; manifests--) {
		for (size_t k = json_array_size(entries); k-- > 0;) {
			json_t *x = json_array_get(entries, k);
			if (k >= p->n || !p->take[k] || restore_entry_is_manifest(x) != (manifests == 1))
				continue;
			oa_test_pause(c->pause_dir, "entry", ++step, o->stop);
			if (o->stop && *o->stop) {
				r->interrupted = true;
				return;
			}
			restore_outcome out = restore_entry(c, x, p->keep[k]);
			restore_tally(r, out);
			if (out == RS_UNSYNCED)
				return;
		}
	}
}

/* The index (its journal replayed) to restore from, read again once both
 * locks are held: what an apply appended meanwhile is in it. */
static json_t *index_load(int qfd, const char *dir, char *err, size_t errlen)
{
	bool exists;
	json_t *index = quarantine_load_index(qfd, dir, err, errlen, &exists);
	if (!index && !exists)
		snprintf(err, errlen, "%s has no index.json: not a quarantine directory", dir);
	return index;
}

/* Choose what goes back (o's operations, or one model), what of it stays
 * in DIR too, put it back, and say what the operations still hold. */
static int pick_and_restore(restore_ctx *c, json_t *index, const oa_restore_opts *o, restore_pick *p,
                            oa_restore_result *r, char *err, size_t errlen)
{
	json_t *entries = json_object_get(index, "entries");
	const restore_source src = { .root_fd = c->root_fd, .blobs_fd = c->blobs_fd, .files_fd = c->files_fd };
	int rc = o->model ? restore_pick_model(&src, index, o->model, p, err, errlen)
	                  : restore_pick_ops(&src, index, o->last, o->op, p, err, errlen);
	if (rc < 0)
		return rc == RESTORE_PICK_AMBIGUOUS ? OA_RESTORE_AMBIGUOUS : -1;
	restore_pick_keep(&src, entries, p);
	r->operations = json_object_size(p->ops);
	snprintf(r->first_op, sizeof r->first_op, "%s", p->newest);
	snprintf(r->model, sizeof r->model, "%s", p->model);
	restore_all(c, entries, p, o, r);
	restore_pick_hand_over(entries, p);
	restore_rest rest = { .names = r->rest_names, .names_len = sizeof r->rest_names };
	restore_pick_rest(&src, entries, p, &rest);
	r->rest_entries = rest.entries;
	r->rest_models = rest.models;
	r->rest_bytes = rest.bytes;
	return 0;
}

int oa_quarantine_restore(const char *dir, const oa_restore_opts *o, oa_restore_result *r, char *err,
                          size_t errlen)
{
	memset(r, 0, sizeof *r);
	int qfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (qfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (quarantine_check_private(qfd, dir, "", err, errlen) < 0) {
		close(qfd);
		return -1;
	}
	json_t *index = index_load(qfd, dir, err, errlen);
	if (!index) {
		close(qfd);
		return -1;
	}
	restore_ctx c = { .dir = dir, .log = o->log, .blobs_fd = -1, .pause_dir = getenv("OA_TEST_RESTORE_PAUSE") };
	/* The store first, as an apply takes them: one transaction against
	 * prune, rm and dedupe --apply, and against another restore. */
	int ret = restore_open(dir, o->store, qfd, index, &c, err, errlen);
	const char *root = o->store ? o->store : json_string_value(json_object_get(index, "store"));
	int store_lock = ret == 0 ? apply_lock(c.root_fd, root, o->no_lock, err, errlen) : -1;
	int dir_lock = store_lock >= 0 ? apply_lock(qfd, dir, o->no_lock, err, errlen) : -1;
	if (dir_lock < 0)
		ret = -1;
	r->unlocked = store_lock > 0 || dir_lock > 0;
	if (ret == 0) {
		json_decref(index);
		index = index_load(qfd, dir, err, errlen);
		ret = index ? 0 : -1;
	}
	restore_pick pick = { 0 };
	if (ret == 0)
		ret = pick_and_restore(&c, index, o, &pick, r, err, errlen);
	if (ret == 0)
		ret = quarantine_compact(qfd, dir, index, err, errlen);
	restore_pick_free(&pick);
	if (c.blobs_fd >= 0)
		close(c.blobs_fd);
	if (c.files_fd >= 0)
		close(c.files_fd);
	if (c.root_fd >= 0)
		close(c.root_fd); /* and the locks go */
	close(qfd);
	json_decref(index);
	return ret == OA_RESTORE_AMBIGUOUS ? ret : ret < 0 ? -1 : 0;
}

int oa_quarantine_held_read(const char *dir, oa_quarantine_held *q, char *err, size_t errlen)
{
	memset(q, 0, sizeof *q);
	/* Only counted, never acted on: no ownership rule as for restore. */
	int files_fd;
	json_t *o = quarantine_peek_index(dir, &files_fd, err, errlen);
	if (!o)
		return -1;
	int rc = 0;
	if (!oa_json_get_u64(o, "store_dev", &q->store_dev) || !oa_json_get_u64(o, "store_ino", &q->store_ino)) {
		snprintf(err, errlen, "%s/index.json is not a quarantine index", dir);
		rc = -1;
	} else {
		quarantine_held(files_fd, json_object_get(o, "entries"), &q->entries, &q->disk_bytes);
	}
	if (files_fd >= 0)
		close(files_fd);
	json_decref(o);
	return rc;
}
