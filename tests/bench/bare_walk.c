/* bare_walk.c - the floor for bench_scale.py: what find+cat+stat of a store
 * costs without process start-ups. Reads every file under manifests/ and
 * every blob smaller than 64 KiB, lstats every blob. Prints the files read.
 *
 *     cc -O2 -o bare_walk bare_walk.c && ./bare_walk STORE
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long files;

static void slurp(int dirfd, const char *name)
{
	char buf[65536];
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (read(fd, buf, sizeof buf) > 0)
		;
	close(fd);
	files++;
}

/* Every regular file under dirfd: lstat it, and read it when small (or always). */
static void walk(int dirfd, int always_read)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sub >= 0)
				walk(sub, always_read);
		} else if (S_ISREG(st.st_mode) && (always_read || st.st_size < 65536)) {
			slurp(dirfd, e->d_name);
		}
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bare_walk STORE\n");
		return 2;
	}
	int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		perror(argv[1]);
		return 1;
	}
	int m = openat(root, "manifests", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m >= 0)
		walk(m, 1);
	int b = openat(root, "blobs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b >= 0)
		walk(b, 0);
	printf("%lu files read\n", files);
	return 0;
}
