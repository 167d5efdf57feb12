/* outfile.c - see outfile.h. */
#include "ollama_audit/outfile.h"
#include "base/platform.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket"
	       : S_ISLNK(m) ? "a symlink" : "not a regular file";
}

static bool write_through(mode_t m)
{
	return S_ISFIFO(m) || S_ISCHR(m);
}

/* The file that replaces an existing one keeps its permissions (a 0600
 * report stays private) and, when we may (root), its owner and group. The
 * owner goes first: chown() may clear mode bits. Set-id bits are dropped. */
static void keep_owner_mode(int fd, const struct stat *old)
{
	if (geteuid() == 0)
		(void)fchown(fd, old->st_uid, old->st_gid);
	(void)fchmod(fd, old->st_mode & 0777);
}

/* Close and free everything; the temporary file, if any, is removed. */
static void outfile_done(oa_outfile *o, bool remove_tmp)
{
	if (o->fd >= 0)
		close(o->fd);
	if (remove_tmp && o->tmp && o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->own_dir && o->dirfd >= 0)
		close(o->dirfd);
	free(o->name);
	free(o->tmp);
	memset(o, 0, sizeof *o);
	o->fd = o->dirfd = -1;
}

int oa_outfile_openat(oa_outfile *o, int dirfd, const char *name, mode_t mode, int flags, char *err,
                      size_t errlen)
{
	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->dirfd = dirfd;
	o->name = oa_xstrdup(name);
	struct stat st, target;
	bool exists = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!exists && errno != ENOENT) {
		oa_seterr(err, errlen, "%s: %s", name, strerror(errno));
		outfile_done(o, false);
		return -1;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		bool through = write_through(st.st_mode) ||
		               (S_ISLNK(st.st_mode) && fstatat(dirfd, name, &target, 0) == 0 &&
		                write_through(target.st_mode));
		if (!through) {
			oa_seterr(err, errlen, "%s is %s%s: refusing to replace it (name a regular file, a "
			          "FIFO or a character device)", name, kind_of(st.st_mode),
			          S_ISLNK(st.st_mode) ? " to something else than a FIFO or a device" : "");
			outfile_done(o, false);
			return -1;
		}
		int nowait = flags & OA_OUT_NOWAIT ? O_NONBLOCK : 0;
		o->fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC | nowait);
		if (o->fd < 0) {
			oa_seterr(err, errlen, "cannot open %s: %s", name,
			          errno == ENXIO ? "a FIFO that no one reads" : strerror(errno));
			outfile_done(o, false);
			return -1;
		}
		if (nowait)
			(void)fcntl(o->fd, F_SETFL, fcntl(o->fd, F_GETFL) & ~O_NONBLOCK);
		return 0;
	}
	/* node_exporter reads *.prom only: the temporary name must not end in .prom */
	o->tmp = oa_xasprintf(".%s.%ld.tmp", name, (long)getpid());
	o->fd = openat(dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (o->fd < 0 && errno == EEXIST && unlinkat(dirfd, o->tmp, 0) == 0) /* a crashed run's */
		o->fd = openat(dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (o->fd < 0) {
		oa_seterr(err, errlen, "cannot create %s: %s", o->tmp, strerror(errno));
		outfile_done(o, false);
		return -1;
	}
	if (flags & OA_OUT_FRESH)
		(void)fchmod(o->fd, mode & 0777); /* exactly mode, whatever the umask left */
	else if (exists)
		keep_owner_mode(o->fd, &st);
	return 0;
}

int oa_outfile_open(oa_outfile *o, const char *path, mode_t mode, int flags, char *err, size_t errlen)
{
	char *dir = oa_xstrdup(path);
	char *slash = strrchr(dir, '/');
	const char *name = slash ? path + (slash - dir) + 1 : path;
	if (slash)
		*slash = '\0';
	memset(o, 0, sizeof *o);
	o->fd = o->dirfd = -1;
	int dfd = *name ? open(slash ? (*dir ? dir : "/") : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int e = errno;
	free(dir);
	if (!*name) {
		oa_seterr(err, errlen, "%s names a directory, not a file", path);
		return -1;
	}
	if (dfd < 0) {
		oa_seterr(err, errlen, "%s: cannot open its directory: %s", path, strerror(e));
		return -1;
	}
	if (oa_outfile_openat(o, dfd, name, mode, flags, err, errlen) < 0) {
		close(dfd);
		return -1;
	}
	o->own_dir = true;
	return 0;
}

int oa_outfile_commit(oa_outfile *o, char *err, size_t errlen)
{
	if (!o->tmp) {
		int rc = close(o->fd);
		o->fd = -1;
		if (rc < 0)
			oa_seterr(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
		outfile_done(o, false);
		return rc < 0 ? -1 : 0;
	}
	if (fsync(o->fd) < 0 || close(o->fd) < 0) {
		o->fd = -1;
		oa_seterr(err, errlen, "cannot write %s: %s", o->tmp, strerror(errno));
		outfile_done(o, true);
		return -1;
	}
	o->fd = -1;
	/* Re-checked just before the rename: whatever took the name meanwhile,
	 * only a regular file is ever replaced. */
	struct stat st;
	if (fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
		oa_seterr(err, errlen, "%s became %s: not replaced; the output stays in %s", o->name,
		          kind_of(st.st_mode), o->tmp);
		outfile_done(o, false);
		return -1;
	}
	if (renameat(o->dirfd, o->tmp, o->dirfd, o->name) < 0) {
		oa_seterr(err, errlen, "cannot rename %s to %s: %s", o->tmp, o->name, strerror(errno));
		outfile_done(o, true);
		return -1;
	}
	(void)fsync(o->dirfd); /* make the rename durable; not worth a failure */
	outfile_done(o, false);
	return 0;
}

void oa_outfile_abort(oa_outfile *o)
{
	outfile_done(o, true);
}

int oa_outfile_write_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                        char *err, size_t errlen)
{
	oa_outfile o;
	if (oa_outfile_openat(&o, dirfd, name, mode, 0, err, errlen) < 0)
		return -1;
	if (oa_write_all(o.fd, data, len) < 0) {
		oa_seterr(err, errlen, "cannot write %s: %s", o.tmp ? o.tmp : name, strerror(errno));
		outfile_done(&o, true);
		return -1;
	}
	return oa_outfile_commit(&o, err, errlen);
}

/* ---- inside a store -------------------------------------------------------- */

/* Device and inode of every directory of a store: the ones a bind mount or
 * a symlink elsewhere can show under another path. */
typedef struct dir_ids {
	struct stat *v;
	size_t n, cap;
} dir_ids;

enum { STORE_DEPTH_MAX = 64 }; /* manifests/ nests 4 deep; a deeper tree is not walked further */

/* Adds dfd's directory and, not following symlinks, every directory below
 * it; dfd is closed. */
static void collect_dirs(int dfd, dir_ids *ids, int depth)
{
	struct stat st;
	if (fstat(dfd, &st) < 0) {
		close(dfd);
		return;
	}
	OA_ALLOC_GROW(ids->v, ids->n + 1, ids->cap);
	ids->v[ids->n++] = st;
	DIR *d = depth < STORE_DEPTH_MAX ? fdopendir(dfd) : NULL;
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			collect_dirs(sub, ids, depth + 1);
	}
	closedir(d);
}

/* The nearest directory of path that exists, resolved (realpath). */
static bool nearest_dir(const char *path, char dir[PATH_MAX])
{
	char *copy = oa_xstrdup(path);
	char *slash = strrchr(copy, '/');
	if (slash)
		*slash = '\0';
	const char *start = slash ? (*copy ? copy : "/") : ".";
	bool ok = realpath(start, dir) != NULL;
	while (!ok && slash) {
		slash = strrchr(copy, '/');
		if (slash)
			*slash = '\0';
		ok = realpath(slash ? (*copy ? copy : "/") : ".", dir) != NULL;
	}
	free(copy);
	return ok;
}

bool oa_outfile_inside(const char *path, const char *root)
{
	char dir[PATH_MAX];
	if (!nearest_dir(path, dir))
		return false;
	/* The root, and its top directories even where they are symlinks; below
	 * them no symlink is followed (it leads out of the store). */
	dir_ids ids = { NULL, 0, 0 };
	static const char *tops[] = { "", "blobs", "manifests", "manifests-v2" };
	for (size_t i = 0; i < sizeof tops / sizeof tops[0]; i++) {
		char *p = *tops[i] ? oa_path_join(root, tops[i]) : oa_xstrdup(root);
		int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(p);
		if (fd >= 0)
			collect_dirs(fd, &ids, *tops[i] ? 1 : STORE_DEPTH_MAX);
	}
	/* The target's directory and every directory above it, up to "/". */
	bool found = false;
	while (!found) {
		struct stat st;
		if (stat(dir, &st) == 0)
			for (size_t i = 0; i < ids.n && !found; i++)
				found = st.st_dev == ids.v[i].st_dev && st.st_ino == ids.v[i].st_ino;
		char *up = strrchr(dir, '/');
		if (!up || (up == dir && !dir[1]))
			break;
		up[up == dir] = '\0';
	}
	free(ids.v);
	return found;
}
