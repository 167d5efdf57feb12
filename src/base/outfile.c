/* outfile.c - see outfile.h. */
#include "ollama_audit/outfile.h"
#include "base/util.h"

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
	const char *p = data;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(o.fd, p + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			oa_seterr(err, errlen, "cannot write %s: %s", o.tmp ? o.tmp : name, strerror(errno));
			outfile_done(&o, true);
			return -1;
		}
		off += (size_t)w;
	}
	return oa_outfile_commit(&o, err, errlen);
}

/* ---- inside a store -------------------------------------------------------- */

bool oa_outfile_inside(const char *path, const char *root)
{
	static const char *subs[] = { "", "blobs", "manifests", "manifests-v2" };
	struct stat in[4];
	bool have[4];
	for (size_t i = 0; i < 4; i++) {
		char *p = *subs[i] ? oa_path_join(root, subs[i]) : oa_xstrdup(root);
		have[i] = stat(p, &in[i]) == 0 && S_ISDIR(in[i].st_mode);
		free(p);
	}
	/* The directory that will hold the file: the nearest one that exists. */
	char dir[PATH_MAX];
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
	if (!ok)
		return false;
	/* It and every directory above it, up to "/". */
	for (;;) {
		struct stat st;
		if (stat(dir, &st) == 0)
			for (size_t i = 0; i < 4; i++)
				if (have[i] && st.st_dev == in[i].st_dev && st.st_ino == in[i].st_ino)
					return true;
		char *up = strrchr(dir, '/');
		if (!up || (up == dir && !dir[1]))
			return false;
		up[up == dir] = '\0';
	}
}
