/* shared.c - the other stores that reach this store's blob files (shared.h). */
#include "ollama_audit/shared.h"
#include "ollama_audit/discover.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PEER_TAG_DEPTH 8

static char **named;
static size_t n_named;

void oa_peers_name(char *const *paths, size_t n)
{
	for (size_t i = 0; i < n_named; i++)
		free(named[i]);
	free(named);
	named = n ? oa_xcalloc(n, sizeof *named) : NULL;
	n_named = n;
	for (size_t i = 0; i < n; i++)
		named[i] = oa_xstrdup(paths[i]);
}

/* What the store's blobs/ is, followed: its device and inode. */
static bool blobs_id(const oa_store *s, struct stat *st)
{
	return s->blobs_fd >= 0 && fstat(s->blobs_fd, st) == 0;
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

/* Whether the tag at root/rel is a symlink into the directory `blobs`. */
static bool links_into(const oa_store *o, const char *rel, const struct stat *blobs)
{
	char *full = oa_path_join(o->root, rel);
	char real[PATH_MAX];
	bool hit = false;
	if (realpath(full, real)) {
		char *slash = strrchr(real, '/');
		struct stat st;
		if (slash && slash != real) {
			*slash = '\0';
			hit = stat(real, &st) == 0 && st.st_dev == blobs->st_dev && st.st_ino == blobs->st_ino;
		}
	}
	free(full);
	return hit;
}

/* The first tag symlink under dirfd (label, relative to o's root) that
 * leads into `blobs`, or NULL. Directories are entered without following
 * symlinks; the walk stops at PEER_TAG_DEPTH. */
static char *tag_link_into(const oa_store *o, int dirfd, const char *label, const struct stat *blobs,
                           int depth)
{
	size_t n;
	int err;
	char **names = oa_list_dir(dirfd, &n, &err);
	char *found = NULL;
	for (size_t i = 0; names && i < n && !found; i++) {
		struct stat lst;
		if (fstatat(dirfd, names[i], &lst, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		char *rel = oa_xasprintf("%s/%s", label, names[i]);
		if (S_ISLNK(lst.st_mode) && links_into(o, rel, blobs)) {
			found = rel;
			continue;
		}
		if (S_ISDIR(lst.st_mode) && depth < PEER_TAG_DEPTH) {
			int cfd = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0) {
				found = tag_link_into(o, cfd, rel, blobs, depth + 1);
				close(cfd);
			}
		}
		free(rel);
	}
	oa_free_names(names, n);
	return found;
}

/* Why o reaches s's blob files, or NULL when it does not. A peer whose
 * tags link into s's blobs/ gets that directory as a bound of its own. */
static char *reaches(const oa_store *s, oa_store *o, bool *links_here)
{
	struct stat mine, theirs;
	if (!blobs_id(s, &mine))
		return NULL;
	if (blobs_id(o, &theirs) && theirs.st_dev == mine.st_dev && theirs.st_ino == mine.st_ino)
		return blobs_how(s, o, links_here);
	static const char *tops[] = { "manifests", "manifests-v2" };
	for (size_t t = 0; t < 2; t++) {
		int fd = openat(o->root_fd, tops[t], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		char *tag = tag_link_into(o, fd, tops[t], &mine, 1);
		close(fd);
		if (!tag)
			continue;
		char *how = oa_xasprintf("its tag %s is a symlink into this store's blobs/", tag);
		free(tag);
		if (s->blobs_real && o->n_bounds < sizeof o->bounds / sizeof o->bounds[0])
			o->bounds[o->n_bounds++] = oa_xstrdup(s->blobs_real);
		return how;
	}
	return NULL;
}

static bool known(const oa_store *s, const oa_peers *p, const struct stat *root)
{
	if (root->st_dev == s->root_st.st_dev && root->st_ino == s->root_st.st_ino)
		return true;
	for (size_t i = 0; i < p->n; i++)
		if (root->st_dev == p->v[i].s.root_st.st_dev && root->st_ino == p->v[i].s.root_st.st_ino)
			return true;
	return false;
}

/* Open the candidate store at path and keep it when it reaches s's blobs. */
static void consider(const oa_store *s, const char *path, oa_peers *out)
{
	oa_peer x = { 0 };
	char err[256];
	if (oa_store_open(&x.s, path, "shared", err, sizeof err) < 0) {
		oa_store_release(&x.s);
		return;
	}
	if (!known(s, out, &x.s.root_st) && (x.how = reaches(s, &x.s, &x.links_here))) {
		out->v = oa_xreallocarray(out->v, out->n + 1, sizeof *out->v);
		out->v[out->n++] = x;
		return;
	}
	oa_store_release(&x.s);
}

/* A blobs/ that is a symlink into another store's blobs/ shares it with
 * that store wherever it is, found by discovery or not: the directory
 * holding each hop of the link chain (a -> b/blobs -> c/blobs: b and c). */
static void consider_link_owners(const oa_store *s, oa_peers *out)
{
	char *link = oa_path_join(s->root, "blobs");
	for (int hop = 0; hop < 8; hop++) {
		char target[PATH_MAX];
		struct stat lst;
		ssize_t len = lstat(link, &lst) == 0 && S_ISLNK(lst.st_mode) ?
		              readlink(link, target, sizeof target - 1) : -1;
		if (len <= 0)
			break;
		while (len > 1 && target[len - 1] == '/')
			len--; /* b/blobs/ is b's blobs/ */
		target[len] = '\0';
		char *dir = oa_xstrdup(link);
		char *slash = strrchr(dir, '/');
		*slash = '\0';
		char *next = target[0] == '/' ? oa_xstrdup(target) : oa_path_join(dir, target);
		free(dir);
		free(link);
		link = next;
		char *owner = oa_xstrdup(link);
		slash = strrchr(owner, '/');
		if (slash && slash != owner) {
			*slash = '\0';
			char real[PATH_MAX];
			consider(s, realpath(owner, real) ? real : owner, out);
		}
		free(owner);
	}
	free(link);
}

void oa_peers_find(const oa_store *s, oa_peers *out)
{
	memset(out, 0, sizeof *out);
	struct stat mine;
	if (!blobs_id(s, &mine))
		return;
	consider_link_owners(s, out);
	oa_discovery d;
	oa_discover(&d, named, n_named);
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].state == OA_CAND_STORE && d.v[i].root)
			consider(s, d.v[i].root, out);
	oa_discovery_free(&d);
}

void oa_peers_free(oa_peers *p)
{
	for (size_t i = 0; i < p->n; i++) {
		oa_store_release(&p->v[i].s);
		free(p->v[i].how);
	}
	free(p->v);
	memset(p, 0, sizeof *p);
}
