/* files.c - file operations of export, import and repair (files.h). */
#include "carry/files.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void carry_owner_of(int fd, carry_owner *o)
{
	struct stat st;
	o->set = geteuid() == 0 && fstat(fd, &st) == 0;
	o->uid = o->set ? st.st_uid : 0;
	o->gid = o->set ? st.st_gid : 0;
}

static int open_component(int at, const char *name, bool make, const carry_owner *o)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT || !make)
		return fd < 0 && errno == ELOOP ? (errno = ENOTDIR, -1) : fd;
	if (mkdirat(at, name, 0755) < 0 && errno != EEXIST)
		return -1;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && o && o->set)
		(void)fchown(fd, o->uid, o->gid);
	return fd;
}

int carry_open_dir(int root_fd, const char *rel, bool make, const carry_owner *o)
{
	int fd = dup(root_fd);
	char *copy = oa_xstrdup(rel), *save = NULL;
	for (char *p = strtok_r(copy, "/", &save); p && fd >= 0; p = strtok_r(NULL, "/", &save)) {
		int next = open_component(fd, p, make, o);
		int e = errno;
		close(fd);
		fd = next;
		errno = e;
	}
	free(copy);
	return fd;
}

int carry_open_parent(int root_fd, const char *rel, bool make, const carry_owner *o, const char **leaf)
{
	const char *slash = strrchr(rel, '/');
	*leaf = slash ? slash + 1 : rel;
	if (!slash)
		return dup(root_fd);
	char *dir = oa_xstrndup(rel, (size_t)(slash - rel));
	int fd = carry_open_dir(root_fd, dir, make, o);
	int e = errno;
	free(dir);
	errno = e;
	return fd;
}

void carry_temp_name(char *name, size_t len)
{
	/* digits only: sha256-<digits> is the temp class (spec: NewLayer's CreateTemp) */
	snprintf(name, len, "sha256-%ld%llu", (long)getpid(), oa_run_sequence());
}

int carry_temp_create(int dirfd, char *name, size_t len)
{
	for (int tries = 0; tries < 100; tries++) {
		carry_temp_name(name, len);
		int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int carry_temp_seal(int fd, const carry_owner *o)
{
	if (o->set && fchown(fd, o->uid, o->gid) < 0)
		return -1;
	if (fchmod(fd, 0644) < 0 || futimens(fd, NULL) < 0)
		return -1;
	return fsync(fd);
}

int carry_place(int from_fd, const char *tmp, int to_fd, const char *name)
{
	if (linkat(from_fd, tmp, to_fd, name, 0) < 0)
		return errno == EEXIST ? 1 : -1;
	return 0;
}

void carry_remove_tree(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		(void)unlinkat(dirfd, name, 0);
		return;
	}
	size_t n;
	int err;
	char **names = oa_list_dir(fd, &n, &err);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
			carry_remove_tree(fd, names[i]);
		else
			(void)unlinkat(fd, names[i], 0);
	}
	oa_free_names(names, n);
	close(fd);
	(void)unlinkat(dirfd, name, AT_REMOVEDIR);
}
