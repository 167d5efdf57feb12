/* apply.c - applying a plan (prune.h: oa_plan_apply): its preconditions,
 * every entry re-checked just before it goes, blobs checked in batches
 * against a fresh reference cache (refs_current), removal or a move into
 * the quarantine, and the list rewrite of rm --child. */
#include "ollama_audit/apply.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/shared.h"
#include "base/platform.h"
#include "base/util.h"
#include "space/junk_private.h"
#include "space/listedit.h"
#include "space/plan_file_private.h"
#include "space/plan_path.h"
#include "space/prune_private.h"
#include "space/quarantine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Remove a directory tree, never following a symlink, never crossing a
 * mount point (EXDEV: it stays, and what is mounted there), and never
 * removing a name whose inode is in `protect` (what a symlinked blob in
 * use resolves through): such a tree is left in part, with EBUSY. */
static int remove_tree(int parent, const char *name, int depth, const oa_inode_ledger *protect)
{
	if (depth > 32) {
		errno = ELOOP;
		return -1;
	}
	struct stat top;
	if (fstatat(parent, name, &top, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(top.st_mode) &&
	    oa_is_mount_point(parent, name, &top)) {
		errno = EXDEV;
		return -1;
	}
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		names = oa_xreallocarray(names, n + 1, sizeof *names);
		names[n++] = oa_xstrdup(e->d_name);
	}
	int rc = 0, err = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		bool have = fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (have && oa_inode_ledger_has(protect, st.st_dev, st.st_ino)) {
			rc = -1;
			err = EBUSY;
		} else if (have && S_ISDIR(st.st_mode)) {
			if (remove_tree(fd, names[i], depth + 1, protect) < 0) {
				rc = -1;
				err = err ? err : errno;
			}
		} else if (unlinkat(fd, names[i], 0) < 0 && errno != ENOENT) {
			rc = -1;
			err = err ? err : errno;
		}
		free(names[i]);
	}
	free(names);
	closedir(d);
	if (rc < 0) {
		errno = err;
		return -1;
	}
	return unlinkat(parent, name, AT_REMOVEDIR);
}

/* R_UNSYNCED: done, but the directory sync that makes it last failed. */
typedef enum { R_DONE, R_SKIP, R_FAIL, R_UNSYNCED } outcome;

static void say(const oa_apply_opts *o, const char *verb, const oa_plan_entry *e, const char *why)
{
	if (!o->log)
		return;
	char *p = oa_escape(e->path, strlen(e->path));
	if (why)
		fprintf(o->log, "%s %s: %s\n", verb, p, why);
	else
		fprintf(o->log, "%s %s\n", verb, p);
	fflush(o->log);
	free(p);
}

/* What applying consults besides the entry itself: the store's reference
 * cache (built once, refreshed before each batch of blobs, see refs_current)
 * and the blob files the parseable manifests that stay reference by path. */
typedef struct apply_ctx {
	oa_store *s;
	const char *command;
	const oa_apply_opts *o;
	oa_refcache *refs;
	size_t since_refresh;   /* blobs checked against the last refresh */
	size_t refreshes;
	double refreshed_at, refresh_took; /* when the last refresh ended, and its cost (s) */
	bool refresh_due;       /* before the next blob check, whatever the count */
	bool blobs_linked;      /* blobs/ is a symlink: only names Ollama writes go */
	char **in_use;      /* sorted blob names */
	size_t n_in_use;
	oa_inode_ledger targets; /* what the symlinked blobs that stay resolve through */
	const oa_plan *plan;    /* its list rewrites (rm --child, rm DIGEST), by path */
	char halt[400];     /* why nothing more is removed (a failed directory sync), or "" */
	int sync_errno;     /* that sync's error */
} apply_ctx;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The manifests this plan removes, sorted: a search per model, where a
 * pass over the plan for every model cost models x entries (20,000 orphans
 * on a store of 100,000 models: 2e9 path parses before the first unlink). */
static const char **removed_manifests(const oa_plan *p, size_t *n)
{
	const char **v = oa_xcalloc(p->todo.n + 1, sizeof *v);
	*n = 0;
	for (size_t k = 0; k < p->todo.n; k++)
		if (plan_path_kind(p->command, p->todo.v[k].path, p->todo.v[k].type) == PK_MANIFEST)
			v[(*n)++] = p->todo.v[k].path;
	qsort(v, *n, sizeof *v, cmp_str);
	return v;
}

/* Blob names used by every parseable model whose manifest this plan does not remove. */
static void in_use_build(apply_ctx *c, const oa_plan *p)
{
	oa_store *s = c->s;
	size_t cap = 0, n_removed;
	const char **removed_v = removed_manifests(p, &n_removed);
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		const char *key = m->rel_path;
		bool removed = n_removed && key && bsearch(&key, removed_v, n_removed, sizeof *removed_v, cmp_str);
		const oa_plan_rewrite *rw = removed ? plan_rewrite_at(p, m->rel_path) : NULL;
		if (removed && !(rw && (m->sibling || m->is_list) && !row_is_child(m, rw->child)))
			continue;
		oa_blob **reach;
		/* a rewritten list's rows: each child it keeps, with what that names */
		size_t n_reach = removed ? row_child_reach(s, m, &reach) : oa_model_reach(s, m, &reach);
		for (size_t k = 0; k < n_reach; k++) {
			OA_ALLOC_GROW(c->in_use, c->n_in_use + 1, cap);
			c->in_use[c->n_in_use++] = reach[k]->name;
		}
		free(reach);
	}
	free(removed_v);
	if (c->n_in_use)
		qsort(c->in_use, c->n_in_use, sizeof *c->in_use, cmp_str);
}

/* Everything a symlinked blob that stays resolves through, re-stat'ed now:
 * the blobs/ symlinks that a manifest which stays uses by path, or whose
 * digest a file under manifests/ (but the ones this plan removes) mentions. */
static void targets_build(apply_ctx *c, const oa_plan *p)
{
	oa_store *s = c->s;
	if (s->blobs_fd < 0)
		return;
	oa_refcache_update(c->refs);
	size_t n_skip;
	const char **skip = removed_manifests(p, &n_skip);
	oa_refset refs;
	oa_refcache_refset(c->refs, skip, n_skip, &refs);
	free(skip);
	for (size_t i = 0; i < s->n_blobs; i++) {
		const oa_blob *b = &s->blobs[i];
		struct stat lst;
		if (fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode))
			continue;
		const char *name = b->name;
		oa_digest_hex hex;
		char *path = oa_xasprintf("blobs/%s", b->name);
		plan_path_hex(path, hex);
		free(path);
		if ((hex[0] && oa_refset_has(&refs, hex)) ||
		    (c->n_in_use && bsearch(&name, c->in_use, c->n_in_use, sizeof *c->in_use, cmp_str)))
			oa_symlink_chain(s->blobs_fd, b->name, &c->targets);
	}
	oa_refset_free(&refs);
	oa_inode_ledger_unique(&c->targets);
}

/* How long the blobs checked against one refresh of the reference cache
 * may go on: until as much time has passed as the refresh took (so
 * refreshing is at most half of the apply, linear in manifests + entries,
 * and a slow apply refreshes before every blob), and never more than
 * REFS_BATCH blobs, or one per REFS_BATCH_SHARE files and directories the
 * refresh stats in a larger store. A pull that lands during the apply is
 * seen within one batch. */
#define REFS_BATCH 64
#define REFS_BATCH_SHARE 16

/* Refresh the reference cache when a batch is over, or when a manifest was
 * removed (rm: the blobs it used must see it gone). */
static void refs_current(apply_ctx *c)
{
	size_t size = oa_refcache_size(c->refs);
	size_t batch = size / REFS_BATCH_SHARE > REFS_BATCH ? size / REFS_BATCH_SHARE : REFS_BATCH;
	double now = oa_now();
	if (c->refresh_due || c->since_refresh >= batch || now - c->refreshed_at >= c->refresh_took) {
		oa_test_pause(c->o->pause_dir, "refresh", c->refreshes++, c->o->stop);
		double t0 = oa_now();
		oa_refcache_update(c->refs);
		c->refreshed_at = oa_now();
		c->refresh_took = c->refreshed_at - t0;
		c->refresh_due = false;
		c->since_refresh = 0;
	}
	c->since_refresh++;
}

/* 1. Nothing may reference a blob: by path, and by its digest in any file
 * under manifests/ as of the last refresh (refs_current). False (why set)
 * when something does. */
static bool blob_unreferenced(apply_ctx *c, const oa_plan_entry *e, char *why, size_t whylen)
{
	const char *name = e->path + strlen("blobs/");
	if (c->n_in_use && bsearch(&name, c->in_use, c->n_in_use, sizeof *c->in_use, cmp_str)) {
		snprintf(why, whylen, "a manifest references it now (by path)");
		return false;
	}
	oa_digest_hex hex;
	plan_path_hex(e->path, hex);
	if (!hex[0])
		return true;
	refs_current(c);
	const char *inc = oa_refcache_incomplete(c->refs);
	if (oa_refcache_has(c->refs, hex)) {
		snprintf(why, whylen, "a manifest references it now");
		return false;
	}
	/* --force never overrides this: only a partial download or a
	 * temp file, which no manifest can name, may go. */
	if (inc && oa_digest_parse(name, hex, NULL)) {
		snprintf(why, whylen, "cannot re-read every manifest (%s): no complete blob can be "
		         "proven unreferenced", inc);
		return false;
	}
	/* Links this store does not explain may be another store's names for it. */
	struct stat st;
	if (oa_digest_parse(name, hex, NULL) && fstatat(c->s->blobs_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode) && st.st_nlink > 1 &&
	    (size_t)st.st_nlink > oa_store_names_of(c->s, st.st_dev, st.st_ino)) {
		snprintf(why, whylen, "it has hard links outside this store, which may be another store's: "
		         "it cannot be proven unreferenced");
		return false;
	}
	return true;
}

/* A tree holds a name a symlinked blob in use resolves through (or cannot
 * be read completely, so it might). */
static bool tree_holds_target(apply_ctx *c, int pfd, const char *leaf)
{
	int tfd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	oa_usage u;
	oa_usage_walk(tfd, &u);
	bool hit = tfd < 0 || u.incomplete;
	for (size_t i = 0; i < u.names.n && !hit; i++)
		hit = oa_inode_ledger_has(&c->targets, u.names.v[i].dev, u.names.v[i].ino);
	oa_usage_free(&u);
	if (tfd >= 0)
		close(tfd);
	return hit;
}

/* 2. Still the same file: same type, device, inode, size and mtime; and
 * not what a symlinked blob in use resolves through (its target, a
 * directory on the way there), nor a tree holding such a name. 3. Old
 * enough (empty directories are exempt). False with *oc and why set. */
static bool still_removable(apply_ctx *c, const oa_plan_entry *e, const oa_apply_opts *o, path_kind kind,
                            int pfd, const char *leaf, outcome *oc, char *why, size_t whylen)
{
	struct stat st;
	*oc = R_SKIP;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int err = errno;
		snprintf(why, whylen, err == ENOENT ? "gone already" : "cannot stat: %s", strerror(err));
		*oc = err == ENOENT ? R_SKIP : R_FAIL;
		return false;
	}
	char type = S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'f';
	if (type != e->type || (uint64_t)st.st_dev != e->dev || (uint64_t)st.st_ino != e->ino ||
	    (type != 'd' && ((int64_t)st.st_size != e->size || oa_stat_mtime_ns(&st) != e->mtime_ns))) {
		snprintf(why, whylen, "changed since it was planned");
		return false;
	}
	if (oa_inode_ledger_has(&c->targets, st.st_dev, st.st_ino)) {
		snprintf(why, whylen, "a symlinked blob that a manifest uses resolves to it");
		return false;
	}
	if (kind == PK_BLOB_TREE && oa_str_has_prefix(leaf, OA_SPLIT_DIR_PREFIX) && junk_tree_unnamed(c->s, pfd, leaf)) {
		snprintf(why, whylen, "a file in it has no name in blobs/: perhaps the last link to a blob's bytes");
		return false;
	}
	if ((kind == PK_BLOB_TREE || kind == PK_ROOT_TREE) && c->targets.n && tree_holds_target(c, pfd, leaf)) {
		snprintf(why, whylen, "holds the target of a symlinked blob that a manifest uses (or "
		         "cannot be read completely)");
		return false;
	}
	if (kind != PK_MANIFEST_DIR && o->min_age > 0 &&
	    oa_wall_now() - (double)oa_stat_mtime_ns(&st) / 1e9 < (double)o->min_age) {
		snprintf(why, whylen, "younger than --min-age");
		return false;
	}
	return true;
}

/* 4. Remove or move. Under manifests/ a directory is only ever rmdir'ed;
 * only the two kinds of temp directory are removed recursively. */
static outcome remove_entry(apply_ctx *c, path_kind kind, quarantine *q, json_t *qe, int pfd,
                            const char *leaf, char *why, size_t whylen)
{
	int rc;
	if (kind == PK_MANIFEST_DIR) {
		rc = unlinkat(pfd, leaf, AT_REMOVEDIR);
		if (rc < 0 && (errno == ENOTEMPTY || errno == EEXIST)) {
			snprintf(why, whylen, "no longer empty");
			return R_SKIP;
		}
		if (rc == 0 && qe)
			quarantine_set_state(q, qe, "removed-dir");
	} else if (q) {
		const char *stored = json_string_value(json_object_get(qe, "stored")) + strlen("files/");
		rc = renameat(pfd, leaf, q->files_fd, stored);
		if (rc == 0)
			quarantine_set_state(q, qe, "moved");
	} else if (kind == PK_BLOB_TREE || kind == PK_ROOT_TREE) {
		rc = remove_tree(pfd, leaf, 0, &c->targets);
	} else {
		rc = unlinkat(pfd, leaf, 0);
	}
	int err = errno;
	if (rc == 0 && kind == PK_MANIFEST) {
		c->refresh_due = true;
		/* the manifest is gone for good before any of its blobs goes */
		if (fsync(pfd) < 0) {
			c->sync_errno = errno;
			return R_UNSYNCED;
		}
	}
	if (rc < 0 && err == EXDEV)
		snprintf(why, whylen, "%s", OA_MOUNT_POINT_KEPT);
	else if (rc < 0)
		snprintf(why, whylen, "%s", strerror(err));
	return rc < 0 ? R_FAIL : R_DONE;
}

/* rm --child: the tag, still the list planned, gets its new bytes (a new
 * list blob and a tag of the same kind, made beside it), then replaces the
 * old tag by rename, re-checked just before: only the planned symlink or
 * regular file is ever replaced. With a quarantine the old tag is first
 * hard-linked into it, so restore puts the list back (restore.c). */
static outcome rewrite_one(apply_ctx *c, const oa_plan_entry *e, const oa_apply_opts *o, quarantine *q,
                           json_t *qe, int pfd, const char *leaf, char *why, size_t whylen)
{
	const oa_plan_rewrite *rw = plan_rewrite_at(c->plan, e->path);
	const list_new n = { .kind = rw->kind, .old_hex = rw->old_list, .hex = rw->new_list, .bytes = rw->bytes,
	                     .len = rw->len, .link_target = rw->link_target };
	outcome oc;
	struct stat old, now;
	if (!still_removable(c, e, o, PK_MANIFEST, pfd, leaf, &oc, why, whylen))
		return oc;
	if (list_tag_check(c->s, pfd, leaf, &n, why, whylen) < 0 || fstatat(pfd, leaf, &old, AT_SYMLINK_NOFOLLOW) < 0)
		return R_SKIP;
	char tmp[64];
	if (list_tag_prepare(c->s, pfd, &n, &old, tmp, why, whylen) < 0)
		return R_FAIL;
	if (fstatat(pfd, leaf, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_ino != old.st_ino || now.st_dev != old.st_dev ||
	    (now.st_mode & S_IFMT) != (old.st_mode & S_IFMT) || !(S_ISREG(now.st_mode) || S_ISLNK(now.st_mode))) {
		unlinkat(pfd, tmp, 0);
		snprintf(why, whylen, "the tag changed just before the rewrite: not replaced");
		return R_SKIP;
	}
	const char *stored = q ? quarantine_stored_name(qe) : NULL;
	if (q) {
		if (!stored || linkat(pfd, leaf, q->files_fd, stored, 0) < 0) {
			snprintf(why, whylen, "cannot keep the old tag in the quarantine: %s", strerror(errno));
			unlinkat(pfd, tmp, 0);
			return R_FAIL;
		}
		quarantine_set_state(q, qe, "moved");
	}
	if (renameat(pfd, tmp, pfd, leaf) < 0) {
		snprintf(why, whylen, "cannot rename the new tag over it: %s", strerror(errno));
		unlinkat(pfd, tmp, 0);
		/* the old tag stays: its link in the quarantine has nothing to
		 * restore (one that cannot go is counted and emptied as held) */
		if (q)
			(void)unlinkat(q->files_fd, stored, 0);
		return R_FAIL;
	}
	c->refresh_due = true;
	/* the list no longer names the child before any of its blobs goes */
	if (fsync(pfd) < 0) {
		c->sync_errno = errno;
		return R_UNSYNCED;
	}
	return R_DONE;
}

/* The entry went but the sync that makes that last failed (c->sync_errno):
 * nothing after it goes, since a crash could bring it back without what it
 * needs. why becomes what is said of the entry. */
static void halt_after(apply_ctx *c, const oa_plan_entry *e, bool moved, char *why, size_t whylen)
{
	const char *err = strerror(c->sync_errno);
	char *p = oa_escape(e->path, strlen(e->path));
	snprintf(c->halt, sizeof c->halt, "not removed: syncing the directory of %s failed after it went (%s), "
	         "so a crash could bring it back without what this removes", p, err);
	free(p);
	snprintf(why, whylen, "%s, but syncing its directory failed (%s): nothing after it is removed",
	         plan_is_rewrite(e) ? "rewritten" : moved ? "moved" : "removed", err);
}

static outcome apply_one(apply_ctx *c, const oa_plan_entry *e, const oa_apply_opts *o, quarantine *q,
                         json_t *qe, char *why, size_t whylen)
{
	if (c->halt[0]) {
		snprintf(why, whylen, "%s", c->halt);
		return R_SKIP;
	}
	/* What may be done is decided from the path alone, whatever the plan says. */
	path_kind kind = plan_path_kind(c->command, e->path, e->type);
	if (kind == PK_BAD) {
		snprintf(why, whylen, "not something `%s` removes", c->command);
		return R_FAIL;
	}
	if (kind == PK_BLOB && !blob_unreferenced(c, e, why, whylen))
		return R_SKIP;
	if (kind == PK_BLOB && c->blobs_linked && oa_blob_name_class(e->path + strlen("blobs/")) == OA_BLOB_FOREIGN) {
		snprintf(why, whylen, "%s", OA_LINKED_FOREIGN_KEEP);
		return R_SKIP;
	}
	const char *leaf;
	int pfd = plan_open_parent(c->s, e->path, &leaf);
	if (pfd < 0) {
		snprintf(why, whylen, errno == ENOENT ? "gone already" : "cannot open its directory: %s",
		         strerror(errno));
		return errno == ENOENT ? R_SKIP : R_FAIL;
	}
	outcome oc;
	if (kind == PK_MANIFEST && plan_is_rewrite(e) && plan_rewrite_at(c->plan, e->path))
		oc = rewrite_one(c, e, o, q, qe, pfd, leaf, why, whylen);
	else if (still_removable(c, e, o, kind, pfd, leaf, &oc, why, whylen))
		oc = remove_entry(c, kind, q, qe, pfd, leaf, why, whylen);
	close(pfd);
	if (oc == R_UNSYNCED)
		halt_after(c, e, q != NULL, why, whylen);
	return oc;
}

static void apply_ctx_free(apply_ctx *c)
{
	oa_refcache_free(c->refs);
	free(c->in_use);
	oa_inode_ledger_free(&c->targets);
}

/* A plan that touches manifests/ through a symlink would fail on every
 * entry (they are opened with O_NOFOLLOW): refuse once, up front. A
 * symlinked blobs/ is used as the store opened it (open_parent). */
static int check_top_dirs(const oa_store *s, const oa_plan *p, bool to_quarantine, char *err, size_t errlen)
{
	/* restore puts files back without following symlinks: nothing is
	 * quarantined from a symlinked blobs/ it could not put back */
	static const char *const tops[] = { "manifests", "manifests-v2", "blobs" };
	for (size_t t = 0; t < (to_quarantine ? 3u : 2u); t++) {
		size_t n = strlen(tops[t]);
		bool used = false;
		for (size_t i = 0; i < p->todo.n && !used; i++)
			used = strncmp(p->todo.v[i].path, tops[t], n) == 0 && p->todo.v[i].path[n] == '/';
		struct stat lst;
		if (!used || fstatat(s->root_fd, tops[t], &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode))
			continue;
		char target[PATH_MAX];
		ssize_t len = readlinkat(s->root_fd, tops[t], target, sizeof target - 1);
		target[len > 0 ? len : 0] = '\0';
		char *et = oa_escape(target, strlen(target));
		if (t == 2)
			snprintf(err, errlen, "blobs/ is a symlink to %s; --quarantine does not work through it "
			         "(restore never follows a symlink): prune without --quarantine", et);
		else
			snprintf(err, errlen, "%s/ is a symlink to %s; run against the target store (nothing is "
			         "removed through a symlink)", tops[t], et);
		free(et);
		return -1;
	}
	return 0;
}

__attribute__((format(printf, 3, 4)))
static void refusal_add(char ***v, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	*v = oa_xreallocarray(*v, *n + 1, sizeof **v);
	(*v)[(*n)++] = oa_xvasprintf(fmt, ap);
	va_end(ap);
}

/* Refusal 1: a manifest that cannot be parsed or read (guard.h). */
static bool refused_for_blockers(const oa_store *s, const oa_plan *p, bool force, oa_apply_refusal *r)
{
	oa_blocker *b;
	size_t nb = oa_plan_blockers(s, p, &b);
	if (nb && force)
		refusal_add(&r->notes, &r->n_notes, "%zu manifest%s cannot be parsed or read; going on because of "
		            "--force", nb, nb == 1 ? "" : "s");
	if (nb && !force) {
		snprintf(r->why, sizeof r->why, "refusing to %s: %zu manifest%s cannot be parsed or read (the server "
		         "skips its prune too); fix or remove %s, or pass --force:",
		         p->command, nb, nb == 1 ? "" : "s", nb == 1 ? "it" : "them");
		for (size_t i = 0; i < nb; i++)
			refusal_add(&r->lines, &r->n_lines, "  %s: %s", b[i].path, b[i].message);
	}
	free(b);
	return nb && !force;
}

/* Refusal 2: an Ollama server or runner using the store (guard.h). */
static bool refused_for_servers(const oa_store *s, const oa_plan *p, bool force, oa_apply_refusal *r)
{
	oa_store_user users[8];
	char why[256] = "";
	int nu = oa_store_in_use(s, users, 8, why, sizeof why);
	if (nu < 0)
		refusal_add(&r->notes, &r->n_notes, "%s; make sure no Ollama server uses the store", why);
	if (nu <= 0)
		return false;
	if (force) {
		refusal_add(&r->notes, &r->n_notes, "an Ollama server or runner uses the store; going on because of "
		            "--force");
		return false;
	}
	snprintf(r->why, sizeof r->why, "refusing to %s: %d Ollama server/runner process%s use%s the store (stop "
	         "%s, or pass --force):", p->command, nu, nu == 1 ? "" : "es", nu == 1 ? "s" : "",
	         nu == 1 ? "it" : "them");
	for (int k = 0; k < nu && k < 8; k++)
		refusal_add(&r->lines, &r->n_lines, "  pid %ld (%s): %s", users[k].pid, users[k].cmd, users[k].how);
	return true;
}

/* Refusal 3: blobs/ is a symlink whose owner, or a store on the way,
 * cannot be found (shared.h). With force, a note. */
static bool refused_for_unfound(const oa_store *s, const oa_plan *p, bool force, char *why, size_t whylen,
                                oa_apply_refusal *r)
{
	char unfound[400];
	if (!oa_peers_unfound(s, unfound, sizeof unfound))
		return false;
	if (force && r)
		refusal_add(&r->notes, &r->n_notes, "%s; going on because of --force: no complete blob is removed",
		            unfound);
	if (!force)
		snprintf(why, whylen, "refusing to %s: %s, so what the stores sharing its blob files reference "
		         "cannot be told; pass --force to go on without removing any complete blob", p->command,
		         unfound);
	return !force;
}

bool oa_plan_refusal(oa_store *s, const oa_plan *p, bool force, oa_apply_refusal *r)
{
	*r = (oa_apply_refusal){ 0 };
	/* then what --force never passes (a store without manifests) */
	r->refused = refused_for_blockers(s, p, force, r) || refused_for_servers(s, p, force, r) ||
	             refused_for_unfound(s, p, force, r->why, sizeof r->why, r) ||
	             oa_plan_check(s, p, true, r->why, sizeof r->why) < 0;
	return r->refused;
}

void oa_apply_refusal_free(oa_apply_refusal *r)
{
	for (size_t i = 0; i < r->n_lines; i++)
		free(r->lines[i]);
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	free(r->lines);
	free(r->notes);
}

int oa_plan_check(oa_store *s, const oa_plan *p, bool force, char *err, size_t errlen)
{
	if (oa_store_unowned(s)) {
		oa_refcache *rc = oa_refcache_new(s);
		oa_refcache_update(rc);
		const char *why = oa_refcache_incomplete(rc);
		snprintf(err, errlen, "refusing to %s: %s", p->command, why ? why : "no manifests/ here");
		oa_refcache_free(rc);
		return -1;
	}
	if (force)
		return 0;
	if (refused_for_unfound(s, p, false, err, errlen, NULL))
		return -1;
	oa_blocker *b;
	size_t nb = oa_plan_blockers(s, p, &b);
	free(b);
	if (nb) {
		snprintf(err, errlen, "refusing to %s: %zu manifest%s cannot be parsed or read (the server "
		         "skips its prune too); fix or remove %s, or pass --force", p->command, nb,
		         nb == 1 ? "" : "s", nb == 1 ? "it" : "them");
		return -1;
	}
	oa_store_user u[1];
	char why[256] = "";
	int nu = oa_store_in_use(s, u, 1, why, sizeof why);
	if (nu > 0) {
		snprintf(err, errlen, "refusing to %s: %d Ollama server/runner process%s use%s the store (pid "
		         "%ld: %s); stop %s, or pass --force", p->command, nu, nu == 1 ? "" : "es",
		         nu == 1 ? "s" : "", u[0].pid, u[0].how, nu == 1 ? "it" : "them");
		return -1;
	}
	return 0;
}

#define QUARANTINE_BATCH 64

/* An entry as the quarantine records it; the list tag rm --child rewrites
 * says what replaced it, so restore may put the old one back over that
 * (and over nothing else). */
static json_t *quarantine_entry_json(const oa_plan *p, const oa_plan_entry *e)
{
	json_t *x = plan_entry_json(e);
	const oa_plan_rewrite *rw = plan_is_rewrite(e) ? plan_rewrite_at(p, e->path) : NULL;
	if (rw) {
		json_object_set_new(x, "rewritten_to", json_sprintf("sha256:%s", rw->new_list));
		json_object_set_new(x, "child_removed", json_sprintf("sha256:%s", rw->child));
	}
	return x;
}

/* The quarantine operation of this apply: its command, the models whose
 * manifests it removes (rm), what it plans. */
static void begin_operation(quarantine *q, const oa_plan *p)
{
	json_t *models = json_array();
	for (size_t i = 0; i < p->todo.n; i++) {
		const oa_plan_entry *e = &p->todo.v[i];
		if (!e->model || plan_path_kind(p->command, e->path, e->type) != PK_MANIFEST)
			continue;
		bool seen = false;
		for (size_t k = 0; k < json_array_size(models) && !seen; k++)
			seen = strcmp(json_string_value(json_array_get(models, k)), e->model) == 0;
		if (!seen)
			json_array_append_new(models, json_string(e->model));
	}
	quarantine_begin_op(q, p->command, p->rewrite ? p->rewrite->runner : NULL, models, p->todo.n, p->allocated);
}

/* Count and say what became of one entry. */
static void tally(oa_apply_result *r, const oa_apply_opts *o, const oa_plan_entry *e, size_t i, outcome oc,
                  quarantine *q, json_t *qe, const char *why)
{
	/* A move frees nothing until the quarantine is deleted. */
	if ((oc == R_DONE || oc == R_UNSYNCED) && q && !e->empty_dir) {
		r->moved += e->allocated;
	} else if (oc == R_DONE || oc == R_UNSYNCED) {
		r->freed += e->freed;
		if (o->freed_each)
			o->freed_each[i] = e->freed;
	}
	if (oc == R_DONE) {
		r->done++;
		say(o, plan_is_rewrite(e) ? "rewrote" : q ? (e->empty_dir ? "removed" : "moved") : "removed", e, NULL);
		return;
	}
	if (oc == R_SKIP)
		r->skipped++;
	else
		r->failed++;
	/* an unsynced entry did move: the quarantine holds it */
	if (q && oc != R_UNSYNCED)
		quarantine_set_state(q, qe, oc == R_SKIP ? "skipped" : "failed");
	say(o, oc == R_SKIP ? "skipped" : "FAILED", e, why);
}

static int apply_plan(oa_store *s, const oa_plan *p, const oa_apply_opts *o, oa_apply_result *r,
                      char *err, size_t errlen)
{
	apply_ctx ctx = { .s = s, .command = p->command, .o = o, .refs = oa_refcache_new(s), .refresh_due = true,
	                  .plan = p };
	quarantine q;
	bool use_q = o->quarantine != NULL;
	if (oa_plan_check(s, p, o->force, err, errlen) < 0 ||
	    (use_q && quarantine_open(s, o->quarantine, o->no_lock, &q, err, errlen) < 0)) {
		apply_ctx_free(&ctx);
		return -1;
	}
	if (use_q) {
		r->unlocked |= q.unlocked;
		begin_operation(&q, p);
	}
	struct stat blst;
	ctx.blobs_linked = fstatat(s->root_fd, "blobs", &blst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(blst.st_mode);
	in_use_build(&ctx, p);
	targets_build(&ctx, p);
	json_t **qes = oa_xcalloc(p->todo.n ? p->todo.n : 1, sizeof *qes);
	for (size_t start = 0; start < p->todo.n; start += QUARANTINE_BATCH) {
		size_t end = start + QUARANTINE_BATCH < p->todo.n ? start + QUARANTINE_BATCH : p->todo.n;
		if (o->stop && *o->stop) {
			r->interrupted = true;
			break;
		}
		if (use_q) {
			/* Record the batch as planned before anything moves. */
			for (size_t i = start; i < end; i++)
				qes[i] = quarantine_add(&q, quarantine_entry_json(p, &p->todo.v[i]), p->todo.v[i].path,
				                        p->command);
			if (quarantine_flush(&q, err, errlen) < 0) {
				free(qes);
				quarantine_close(&q);
				apply_ctx_free(&ctx);
				return -1;
			}
		}
		for (size_t i = start; i < end; i++) {
			if (o->stop && *o->stop) {
				r->interrupted = true;
				break;
			}
			if (o->delay_us)
				usleep(o->delay_us);
			const oa_plan_entry *e = &p->todo.v[i];
			char why[512] = "";
			outcome oc = apply_one(&ctx, e, o, use_q ? &q : NULL, qes[i], why, sizeof why);
			tally(r, o, e, i, oc, use_q ? &q : NULL, qes[i], why);
		}
		if (use_q && quarantine_flush(&q, err, errlen) < 0) {
			free(qes);
			quarantine_close(&q);
			apply_ctx_free(&ctx);
			return -1;
		}
		if (r->interrupted)
			break;
	}
	if (o->stop && *o->stop)
		r->interrupted = true;
	free(qes);
	int rc = use_q ? quarantine_commit(&q, err, errlen) : 0;
	if (use_q) {
		snprintf(r->operation, sizeof r->operation, "%s", q.op);
		quarantine_held(q.files_fd, q.entries, &r->quarantine_entries, &r->quarantine_bytes);
		quarantine_close(&q);
	}
	apply_ctx_free(&ctx);
	return rc;
}

int oa_store_write_lock(const oa_store *s, bool no_lock, char *err, size_t errlen)
{
	return apply_lock(s->root_fd, s->root, no_lock, err, errlen);
}

void oa_store_write_unlock(const oa_store *s)
{
	oa_unlock(s->root_fd);
}

/* Under the store's lock, which restore takes too: a restore is never seen
 * half done. */
int oa_plan_apply(oa_store *s, const oa_plan *p, const oa_apply_opts *o, oa_apply_result *r,
                  char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	if (o->freed_each)
		memset(o->freed_each, 0, p->todo.n * sizeof *o->freed_each);
	r->freed_each = o->freed_each;
	int locked = check_top_dirs(s, p, o->quarantine != NULL, err, errlen) < 0 ? -1 :
	             oa_store_write_lock(s, o->no_lock, err, errlen);
	if (locked < 0)
		return -1;
	r->unlocked = locked > 0;
	int rc = apply_plan(s, p, o, r, err, errlen);
	oa_store_write_unlock(s);
	return rc;
}
