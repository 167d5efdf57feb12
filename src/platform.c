/* platform.c - see platform.h. The only file with #ifdef __linux__ style switches. */
#include "ollama_audit/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

int oa_openat_ro(int dirfd, const char *name, int extra_flags)
{
	int flags = O_RDONLY | O_CLOEXEC | extra_flags;
#ifdef O_NOATIME
	int fd = openat(dirfd, name, flags | O_NOATIME);
	/* EPERM: O_NOATIME is allowed only to the file's owner (or CAP_FOWNER). */
	if (fd >= 0 || errno != EPERM)
		return fd;
#endif
	return openat(dirfd, name, flags);
}

int oa_open_ro(const char *path)
{
	return oa_openat_ro(AT_FDCWD, path, 0);
}

void oa_advise_sequential(int fd)
{
#if defined(POSIX_FADV_SEQUENTIAL) && !defined(__APPLE__)
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#else
	(void)fd;
#endif
}

void oa_advise_dontneed(int fd, off_t offset, off_t len)
{
#if defined(POSIX_FADV_DONTNEED) && !defined(__APPLE__)
	(void)posix_fadvise(fd, offset, len, POSIX_FADV_DONTNEED);
#else
	(void)fd; (void)offset; (void)len;
#endif
}

ssize_t oa_pread_full(int fd, void *buf, size_t len, uint64_t offset)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(offset + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int oa_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

double oa_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- stat times, wall clock, page-cache residency (used by verify.c) ---- */
#include <sys/stat.h>
#if defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) \
	|| defined(__NetBSD__)
#include <sys/mman.h>
#define OA_HAVE_MINCORE 1
#endif

int64_t oa_stat_mtime_ns(const struct stat *st)
{
#if defined(__APPLE__)
	return (int64_t)st->st_mtimespec.tv_sec * 1000000000 + st->st_mtimespec.tv_nsec;
#elif (_POSIX_C_SOURCE >= 200809L) || defined(__linux__)
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
#else
	return (int64_t)st->st_mtime * 1000000000;
#endif
}

int64_t oa_stat_ctime_ns(const struct stat *st)
{
#if defined(__APPLE__)
	return (int64_t)st->st_ctimespec.tv_sec * 1000000000 + st->st_ctimespec.tv_nsec;
#elif (_POSIX_C_SOURCE >= 200809L) || defined(__linux__)
	return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
#else
	return (int64_t)st->st_ctime * 1000000000;
#endif
}

double oa_wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int oa_range_cached(int fd, uint64_t offset, size_t len)
{
#ifdef OA_HAVE_MINCORE
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0 || len == 0 || offset % (uint64_t)pg)
		return -1;
	void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)offset);
	if (map == MAP_FAILED)
		return -1;
	size_t pages = (len + (size_t)pg - 1) / (size_t)pg, resident = 0, done = 0;
	int rc = 0;
	/* The vector is one byte a page; check 4096 pages at a time. */
#if defined(__APPLE__)
	char vec[4096];
#else
	unsigned char vec[4096];
#endif
	while (done < pages) {
		size_t n = pages - done < sizeof vec ? pages - done : sizeof vec;
		size_t bytes = n * (size_t)pg;
		if (done * (size_t)pg + bytes > len)
			bytes = len - done * (size_t)pg;
		if (mincore((char *)map + done * (size_t)pg, bytes, vec) != 0) {
			rc = -1;
			break;
		}
		for (size_t i = 0; i < n; i++)
			resident += vec[i] & 1;
		done += n;
	}
	munmap(map, len);
	if (rc < 0)
		return -1;
	return resident * 10 >= pages * 9 ? 1 : 0;
#else
	(void)fd; (void)offset; (void)len;
	return -1;
#endif
}
