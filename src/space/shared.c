/* shared.c - the other stores that reach this store's blob files (shared.h). */
#include "ollama_audit/shared.h"
#include "ollama_audit/discover.h"
#include "base/keyed.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PEER_TAG_DEPTH 8

/* How a store of the index reaches a directory: its blobs/ is it, or a tag
 * of it is a symlink into it. */
typedef struct reach {
	size_t store;  /* into oa_peer_index.stores, discovery's order */
	char *tag;     /* NULL: the store's blobs/ is the directory; else the tag (relative to its root) */
} reach;

struct oa_peer_index {
	char **named;          /* the stores named besides discovery's (the command line's --store) */
	size_t n_named;
	pthread_mutex_t lock;  /* the first oa_peers_find looks; the others wait for it */
	bool looked;
	struct indexed {       /* every store discovery found, opened once when looked: */
		char *root;    /* the path discovery gives it */
		dev_t dev;     /* what its root was then */
		ino_t ino;
	} *stores;
	size_t n_stores;
	reach *reach;          /* in the order met: by store, its blobs/ first, then its tags as walked */
	size_t n_reach;
	oa_keyed *keys;        /* (device, inode) of a directory -> its reach; sorted, one per store */
	size_t n_keys;
};

oa_peer_index *oa_peer_index_new(char *const *named, size_t n_named)
{
	oa_peer_index *x = oa_xcalloc(1, sizeof *x);
	pthread_mutex_init(&x->lock, NULL);
	x->named = n_named ? oa_xcalloc(n_named, sizeof *x->named) : NULL;
	x->n_named = n_named;
	for (size_t i = 0; i < n_named; i++)
		x->named[i] = oa_xstrdup(named[i]);
	return x;
}

/* What x holds but its lock. */
static void index_release(oa_peer_index *x)
{
	for (size_t i = 0; i < x->n_named; i++)
		free(x->named[i]);
	free(x->named);
	for (size_t i = 0; i < x->n_stores; i++)
		free(x->stores[i].root);
	free(x->stores);
	for (size_t i = 0; i < x->n_reach; i++)
		free(x->reach[i].tag);
	free(x->reach);
	free(x->keys);
}

void oa_peer_index_free(oa_peer_index *x)
{
	if (!x)
		return;
	index_release(x);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

/* What the store's blobs/ is, followed: its device and inode. */
static bool blobs_id(const oa_store *s, struct stat *st)
{
	return s->blobs_fd >= 0 && fstat(s->blobs_fd, st) == 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static bool is_symlink_at(int dirfd, const char *name)
{
	struct stat lst;
	return fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode);
}

/* Why two stores whose blobs/ is one directory share it. */
static char *blobs_how(const oa_store *s, const oa_store *o, bool *links_here)
{
	*links_here = is_symlink_at(o->root_fd, "blobs");
	if (*links_here)
		return oa_xstrdup("its blobs/ is a symlink to this store's blobs/");
	if (is_symlink_at(s->root_fd, "blobs"))
		return oa_xstrdup("this store's blobs/ is a symlink to its blobs/");
	return oa_xstrdup("its blobs/ is this store's blobs/ (the same directory: a bind mount)");
}

/* The directory the tag symlink at root/rel leads into (its target's). */
static bool link_dir(const oa_store *o, const char *rel, struct stat *dir)
{
	char *full = oa_path_join(o->root, rel);
	char real[PATH_MAX];
	bool ok = false;
	if (realpath(full, real)) {
		char *slash = strrchr(real, '/');
		if (slash && slash != real) {
			*slash = '\0';
			ok = stat(real, dir) == 0;
		}
	}
	free(full);
	return ok;
}

static void key_add(oa_peer_index *x, const struct stat *dir, size_t store, char *tag)
{
	x->reach = oa_xreallocarray(x->reach, x->n_reach + 1, sizeof *x->reach);
	x->reach[x->n_reach] = (reach){ store, tag };
	x->keys = oa_xreallocarray(x->keys, x->n_keys + 1, sizeof *x->keys);
	x->keys[x->n_keys++] = (oa_keyed){ dir->st_dev, dir->st_ino, x->n_reach++ };
}

/* Note the directory each tag symlink under dirfd (label, relative to o's
 * root) leads into, but o's own blobs/. Directories are entered without
 * following symlinks; the walk stops at PEER_TAG_DEPTH. */
static void note_tag_links(oa_peer_index *x, size_t store, const oa_store *o, const struct stat *own, int dirfd,
                           const char *label, int depth)
{
	size_t n;
	int err;
	char **names = oa_list_dir(dirfd, &n, &err);
	for (size_t i = 0; names && i < n; i++) {
		struct stat lst, dir;
		if (fstatat(dirfd, names[i], &lst, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		char *rel = oa_xasprintf("%s/%s", label, names[i]);
		if (S_ISLNK(lst.st_mode) && link_dir(o, rel, &dir) && !(own && same_file(&dir, own))) {
			key_add(x, &dir, store, rel);
			continue;
		}
		if (S_ISDIR(lst.st_mode) && depth < PEER_TAG_DEPTH) {
			int cfd = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0) {
				note_tag_links(x, store, o, own, cfd, rel, depth + 1);
				close(cfd);
			}
		}
		free(rel);
	}
	oa_free_names(names, n);
}

/* Note the opened store o (found at root) and the directories it reaches. */
static void note_store(oa_peer_index *x, const oa_store *o, const char *root)
{
	size_t store = x->n_stores;
	x->stores = oa_xreallocarray(x->stores, x->n_stores + 1, sizeof *x->stores);
	x->stores[x->n_stores++] = (struct indexed){ oa_xstrdup(root), o->root_st.st_dev, o->root_st.st_ino };
	struct stat own;
	bool has_blobs = blobs_id(o, &own);
	if (has_blobs)
		key_add(x, &own, store, NULL);
	static const char *const tops[] = { "manifests", "manifests-v2" };
	for (size_t t = 0; t < 2; t++) {
		int fd = openat(o->root_fd, tops[t], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		note_tag_links(x, store, o, has_blobs ? &own : NULL, fd, tops[t], 1);
		close(fd);
	}
}

/* Sort the keys and keep the first of each directory and store: a store's
 * blobs/ before its tags, its first tag before the others. */
static void keys_sort(oa_peer_index *x)
{
	oa_keyed_sort(x->keys, x->n_keys);
	size_t k = 0;
	for (size_t i = 0; i < x->n_keys; i++) {
		const oa_keyed *p = k ? &x->keys[k - 1] : NULL;
		if (!p || p->a != x->keys[i].a || p->b != x->keys[i].b ||
		    x->reach[p->i].store != x->reach[x->keys[i].i].store)
			x->keys[k++] = x->keys[i];
	}
	x->n_keys = k;
}

/* Every store discovery finds (with the named ones), each opened once and
 * its tags walked once. Each is kept by the path discovery gives it, and
 * opened again, as it is then, when it turns out to be a peer. */
static void look(oa_peer_index *x)
{
	oa_discovery d;
	oa_discover(&d, x->named, x->n_named);
	for (size_t i = 0; i < d.n; i++) {
		if (d.v[i].state != OA_CAND_STORE || !d.v[i].root)
			continue;
		oa_store o;
		char err[256];
		if (oa_store_open(&o, d.v[i].root, "shared", err, sizeof err) == 0)
			note_store(x, &o, d.v[i].root);
		oa_store_release(&o);
	}
	oa_discovery_free(&d);
	keys_sort(x);
	x->looked = true;
}

static bool known(const oa_store *s, const oa_peers *p, const struct stat *root)
{
	if (same_file(root, &s->root_st))
		return true;
	for (size_t i = 0; i < p->n; i++)
		if (same_file(root, &p->v[i].s.root_st))
			return true;
	return false;
}

/* Why o reaches s's blob files, as r says (its blobs/, or a tag of it
 * that links into them). A peer whose tags link into s's blobs/ gets that
 * directory as a bound of its own. */
static char *reach_how(const oa_store *s, oa_store *o, const reach *r, bool *links_here)
{
	if (!r->tag)
		return blobs_how(s, o, links_here);
	if (s->blobs_real && o->n_bounds < sizeof o->bounds / sizeof o->bounds[0])
		o->bounds[o->n_bounds++] = oa_xstrdup(s->blobs_real);
	return oa_xasprintf("its tag %s is a symlink into this store's blobs/", r->tag);
}

/* The store at path, opened: kept as a peer of s (r says how it reaches
 * s's blob files) unless it is s or already one. */
static void consider(const oa_store *s, const char *path, const reach *r, oa_peers *out)
{
	oa_peer x = { 0 };
	char err[256];
	if (oa_store_open(&x.s, path, "shared", err, sizeof err) == 0 && !known(s, out, &x.s.root_st)) {
		x.how = reach_how(s, &x.s, r, &x.links_here);
		out->v = oa_xreallocarray(out->v, out->n + 1, sizeof *out->v);
		out->v[out->n++] = x;
		return;
	}
	oa_store_release(&x.s);
}

/* Every store of x that reaches s's blob files (mine), in x's order. */
static void consider_index(const oa_store *s, const oa_peer_index *x, const struct stat *mine, oa_peers *out)
{
	uint64_t dev = mine->st_dev, ino = mine->st_ino;
	for (size_t i = oa_keyed_find(x->keys, x->n_keys, dev, ino);
	     i < x->n_keys && x->keys[i].a == dev && x->keys[i].b == ino; i++) {
		const reach *r = &x->reach[x->keys[i].i];
		const struct indexed *o = &x->stores[r->store];
		if (o->dev != s->root_st.st_dev || o->ino != s->root_st.st_ino) /* (s itself) */
			consider(s, o->root, r, out);
	}
}

/* How many symlinks one lookup may follow: Linux's limit (MAXSYMLINKS). */
#define LINK_HOPS_MAX 40

/* The first reason the owner of a linked blobs/ or a store on its way
 * cannot be found (the later ones add nothing). */
__attribute__((format(printf, 2, 3)))
static void unfound(oa_peers *out, const char *fmt, ...)
{
	if (out->unfound)
		return;
	va_list ap;
	va_start(ap, fmt);
	out->unfound = oa_xvasprintf(fmt, ap);
	va_end(ap);
}

/* The directories holding a symlink named blobs met on the way. */
typedef struct hop_dirs {
	char **v;
	size_t n;
} hop_dirs;

/* The next component of *p (a path) into name, advancing past it: 1, 0 at
 * the end, -1 (ENAMETOOLONG) when it is longer than a name can be. */
static int next_name(const char **p, char name[NAME_MAX + 1])
{
	while (**p == '/')
		(*p)++;
	size_t n = strcspn(*p, "/");
	if (n > NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(name, *p, n);
	name[n] = '\0';
	*p += n;
	return n > 0;
}

/* real without its last component ("/" stays "/"). */
static void go_up(char real[PATH_MAX])
{
	char *slash = strrchr(real, '/');
	if (slash == real)
		real[1] = '\0';
	else
		*slash = '\0';
}

/* One step of follow_blobs(): cand (real/name) is a symlink; its target,
 * then the rest, become what is left to resolve (todo), from "/" when the
 * target is absolute. -1 with errno. */
static int take_link(char real[PATH_MAX], const char *cand, const char *rest, char *todo, size_t todolen)
{
	char target[PATH_MAX];
	ssize_t len = readlink(cand, target, sizeof target - 1);
	if (len <= 0) {
		if (len == 0)
			errno = ENOENT;
		return -1;
	}
	target[len] = '\0';
	char *next = oa_xasprintf("%s/%s", target, rest);
	bool fits = strlen(next) < todolen;
	if (fits)
		memcpy(todo, next, strlen(next) + 1);
	free(next);
	if (!fits) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (target[0] == '/')
		strcpy(real, "/");
	return 0;
}

/* Follow root/blobs as the kernel does, one component at a time, to the
 * directory it is (real: absolute, no symlink, no . or ..), counting the
 * symlinks followed against the kernel's limit. Each directory holding a
 * symlink named blobs on the way goes into hops. 0, or -1 with errno
 * (ELOOP past the limit). */
static int follow_blobs(const char *root, char real[PATH_MAX], hop_dirs *hops)
{
	if (!realpath(root, real))
		return -1;
	char todo[2 * PATH_MAX] = "blobs";
	const char *p = todo;
	char name[NAME_MAX + 1];
	int links = 0, more;
	while ((more = next_name(&p, name)) > 0) {
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			go_up(real);
			continue;
		}
		char *cand = oa_xasprintf("%s/%s", strcmp(real, "/") ? real : "", name);
		struct stat lst;
		int rc = strlen(cand) >= PATH_MAX ? (errno = ENAMETOOLONG, -1) : lstat(cand, &lst);
		if (rc == 0 && S_ISLNK(lst.st_mode)) {
			if (++links > LINK_HOPS_MAX) {
				errno = ELOOP;
				rc = -1;
			} else if (strcmp(name, "blobs") == 0) {
				hops->v = oa_xreallocarray(hops->v, hops->n + 1, sizeof *hops->v);
				hops->v[hops->n++] = oa_xstrdup(real);
			}
			if (rc == 0) {
				char rest[2 * PATH_MAX];
				snprintf(rest, sizeof rest, "%s", p);
				rc = take_link(real, cand, rest, todo, sizeof todo);
				p = todo;
			}
		} else if (rc == 0 && !S_ISDIR(lst.st_mode) && p[strspn(p, "/")]) {
			errno = ENOTDIR;
			rc = -1;
		} else if (rc == 0) {
			strcpy(real, cand);
		}
		free(cand);
		if (rc < 0)
			return -1;
	}
	return more;
}

/* A store the link chain says shares these blob files (dir holds a blobs/
 * on the way, or the blobs/ it leads to, as `role` says): kept when it
 * reaches them; one that cannot be opened is unfound. */
static void consider_on_the_way(const oa_store *s, const struct stat *mine, const char *dir, const char *role,
                                oa_peers *out)
{
	struct stat st;
	if (stat(dir, &st) == 0 && same_file(&st, &s->root_st))
		return;
	oa_store o;
	char err[256];
	if (oa_store_open(&o, dir, "shared", err, sizeof err) < 0) {
		char *e = oa_escape(err, strlen(err));
		unfound(out, "cannot open %s: %s", role, e);
		free(e);
	} else {
		oa_peer_index one = { 0 };
		note_store(&one, &o, dir);
		keys_sort(&one);
		consider_index(s, &one, mine, out);
		index_release(&one);
	}
	oa_store_release(&o);
}

/* A blobs/ that is a symlink shares the directory it leads to with the
 * store that holds it there, wherever that is, and with each store whose
 * blobs/ is a link on the way (a -> b/blobs -> c/blobs: b and c). They are
 * found by following the link, never by its text, and the directory
 * reached must be the very one the store opened (device and inode); when
 * that cannot be told, out->unfound says why. */
static void consider_link_owners(const oa_store *s, oa_peers *out)
{
	struct stat lst, st, mine, parent;
	if (fstatat(s->root_fd, "blobs", &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode))
		return;
	hop_dirs hops = { 0 };
	char real[PATH_MAX];
	char *root = oa_escape(s->root, strlen(s->root));
	if (follow_blobs(s->root, real, &hops) < 0) {
		unfound(out, "cannot follow %s/blobs to the directory it leads to: %s", root, strerror(errno));
	} else if (!blobs_id(s, &mine)) {
		unfound(out, "%s/blobs leads to a directory that cannot be opened", root);
	} else if (stat(real, &st) < 0 || !same_file(&st, &mine)) {
		unfound(out, "%s/blobs no longer leads to the directory the store opened", root);
	} else {
		for (size_t i = 0; i < hops.n; i++)
			consider_on_the_way(s, &mine, hops.v[i], "a store whose blobs/ symlink it leads through", out);
		char *slash = strrchr(real, '/');
		bool named_blobs = strcmp(slash + 1, "blobs") == 0 && slash != real;
		if (named_blobs) {
			*slash = '\0';
			/* the directory really holding it, not one a link names */
			if (fstatat(s->blobs_fd, "..", &parent, 0) == 0 && stat(real, &st) == 0 && same_file(&st, &parent))
				consider_on_the_way(s, &mine, real, "the store holding the directory its blobs/ leads to", out);
			else
				unfound(out, "the directory holding %s/blobs's target changed while it was looked at", root);
		}
	}
	free(root);
	for (size_t i = 0; i < hops.n; i++)
		free(hops.v[i]);
	free(hops.v);
}

void oa_peers_find(oa_peer_index *x, const oa_store *s, oa_peers *out)
{
	if (!x) {
		oa_peers_find_now(NULL, s, out);
		return;
	}
	memset(out, 0, sizeof *out);
	consider_link_owners(s, out);
	struct stat mine;
	if (!blobs_id(s, &mine))
		return;
	pthread_mutex_lock(&x->lock);
	if (!x->looked)
		look(x);
	pthread_mutex_unlock(&x->lock);
	consider_index(s, x, &mine, out);
}

void oa_peers_find_now(const oa_peer_index *x, const oa_store *s, oa_peers *out)
{
	oa_peer_index *now = x ? oa_peer_index_new(x->named, x->n_named) : oa_peer_index_new(NULL, 0);
	oa_peers_find(now, s, out);
	oa_peer_index_free(now);
}

bool oa_peers_unfound(const oa_store *s, char *why, size_t whylen)
{
	oa_peers p = { 0 };
	consider_link_owners(s, &p);
	if (p.unfound)
		snprintf(why, whylen, "%s", p.unfound);
	bool missing = p.unfound != NULL;
	oa_peers_free(&p);
	return missing;
}

void oa_peers_free(oa_peers *p)
{
	for (size_t i = 0; i < p->n; i++) {
		oa_store_release(&p->v[i].s);
		free(p->v[i].how);
	}
	free(p->v);
	free(p->unfound);
	memset(p, 0, sizeof *p);
}
