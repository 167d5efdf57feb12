/* platform.c - see platform.h. The only file with #ifdef __linux__ style switches. */
#ifdef __linux__
/* O_TMPFILE (the reflink probe) is a GNU extension of <fcntl.h>. */
#define _GNU_SOURCE 1
#endif
#include "base/platform.h"
#include "base/util.h"

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

static const oa_pagecache_ops *pagecache_ops;

void oa_pagecache_set_ops(const oa_pagecache_ops *ops)
{
	pagecache_ops = ops;
}

void oa_advise_dontneed(int fd, off_t offset, off_t len)
{
	if (pagecache_ops && pagecache_ops->dontneed) {
		pagecache_ops->dontneed(pagecache_ops->ctx, fd, offset, len);
		return;
	}
#if defined(POSIX_FADV_DONTNEED) && !defined(__APPLE__)
	(void)posix_fadvise(fd, offset, len, POSIX_FADV_DONTNEED);
#else
	(void)fd; (void)offset; (void)len;
#endif
}

void oa_writeback_start(int fd)
{
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
	(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
	(void)fd; /* the final fsync does it all */
#endif
}

/* ---- reads and writes a signal may interrupt --------------------------------- */

static const oa_io_calls system_io = { read, write, pread };
static oa_io_calls io = { read, write, pread };

void oa_io_set_calls(const oa_io_calls *calls)
{
	io = calls ? *calls : system_io;
}

ssize_t oa_read_some(int fd, void *buf, size_t len)
{
	ssize_t n;
	do
		n = io.read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Read until len bytes or the end: at the file offset (offset NULL), or
 * from *offset on (pread). */
static ssize_t read_until(int fd, void *buf, size_t len, const uint64_t *offset)
{
	size_t done = 0;
	while (done < len) {
		char *at = (char *)buf + done;
		ssize_t n = offset ? io.pread(fd, at, len - done, (off_t)(*offset + done)) : io.read(fd, at, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t oa_read_full(int fd, void *buf, size_t len)
{
	return read_until(fd, buf, len, NULL);
}

ssize_t oa_pread_full(int fd, void *buf, size_t len, uint64_t offset)
{
	return read_until(fd, buf, len, &offset);
}

int oa_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = io.write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO; /* a write that takes nothing would never end */
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
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

int64_t oa_wall_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

size_t oa_page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	return pg > 0 ? (size_t)pg : 4096;
}

long oa_range_residency(int fd, uint64_t offset, size_t len, unsigned char *vec, size_t vec_len)
{
	if (pagecache_ops && pagecache_ops->residency)
		return pagecache_ops->residency(pagecache_ops->ctx, fd, offset, len, vec, vec_len);
#ifdef OA_HAVE_MINCORE
	size_t pg = oa_page_size();
	if (len == 0 || offset % pg)
		return -1;
	size_t pages = (len + pg - 1) / pg;
	if (pages > vec_len)
		return -1;
	void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)offset);
	if (map == MAP_FAILED)
		return -1;
	/* macOS declares the vector as char *, Linux as unsigned char *. */
	int rc = mincore(map, len, (void *)vec);
	munmap(map, len);
	if (rc != 0)
		return -1;
	for (size_t i = 0; i < pages; i++)
		vec[i] &= 1;
	return (long)pages;
#else
	(void)fd; (void)offset; (void)len; (void)vec; (void)vec_len;
	return -1;
#endif
}

int oa_range_cached(int fd, uint64_t offset, size_t len)
{
	size_t pg = oa_page_size();
	size_t resident = 0, pages = 0;
	unsigned char vec[1024];
	if (len == 0)
		return -1; /* nothing to tell about */
	while (len > 0) {
		size_t chunk = len < sizeof vec * pg ? len : sizeof vec * pg;
		long n = oa_range_residency(fd, offset, chunk, vec, sizeof vec);
		if (n < 0)
			return -1;
		for (long i = 0; i < n; i++)
			resident += vec[i];
		pages += (size_t)n;
		offset += chunk;
		len -= chunk;
	}
	return resident * 10 >= pages * 9 ? 1 : 0;
}

/* ---- processes using a store (prune/rm safety) ------------------------------ */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __linux__
/* Read a whole small /proc file; returns length or -1. */
static ssize_t proc_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = oa_read_full(fd, buf, cap);
	close(fd);
	return n;
}

static const char *base_name(const char *p, size_t n, size_t *blen)
{
	const char *b = p;
	for (size_t i = 0; i < n; i++)
		if (p[i] == '/')
			b = p + i + 1;
	*blen = n - (size_t)(b - p);
	return b;
}

static bool tok_is(const char *t, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(t, w, n) == 0;
}

/* Is this command line an Ollama server or runner? Looks at the first two
 * words (argv[0] may hold both, as `exec -a "ollama serve"` makes it). */
static bool is_ollama_server(char *cmd, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	const char *w[2];
	size_t wl[2];
	int nw = 0;
	size_t i = 0;
	while (nw < 2 && i < len) {
		while (i < len && isspace((unsigned char)cmd[i]))
			i++;
		size_t st = i;
		while (i < len && !isspace((unsigned char)cmd[i]))
			i++;
		if (i > st) {
			w[nw] = cmd + st;
			wl[nw++] = i - st;
		}
	}
	if (nw == 0)
		return false;
	size_t bl;
	const char *b = base_name(w[0], wl[0], &bl);
	if (tok_is(b, bl, "llama-server") || tok_is(b, bl, "ollama_llama_server") ||
	    tok_is(b, bl, "ollama-runner"))
		return true;
	if ((tok_is(b, bl, "ollama") || tok_is(b, bl, "ollama.exe")) && nw == 2)
		return tok_is(w[1], wl[1], "serve") || tok_is(w[1], wl[1], "runner");
	return false;
}

static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* "working directory /x/y": a description for a message, cut if too long. */
static void describe(char *how, size_t howlen, const char *what, const char *path)
{
	if (snprintf(how, howlen, "%s %s", what, path) < 0 && howlen)
		how[0] = '\0';
}

/* 1 = uses root (how filled), 0 = no, -1 = cannot tell. */
static int proc_uses(long pid, const char *root, char *how, size_t howlen)
{
	char p[64], link[PATH_MAX];
	bool readable = false;
	snprintf(p, sizeof p, "/proc/%ld/cwd", pid);
	ssize_t n = readlink(p, link, sizeof link - 1);
	if (n >= 0) {
		readable = true;
		link[n] = '\0';
		if (under(link, root)) {
			describe(how, howlen, "working directory", link);
			return 1;
		}
	}
	snprintf(p, sizeof p, "/proc/%ld/fd", pid);
	DIR *d = opendir(p);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char fp[320];
			snprintf(fp, sizeof fp, "/proc/%ld/fd/%s", pid, e->d_name);
			n = readlink(fp, link, sizeof link - 1);
			if (n < 0)
				continue;
			readable = true;
			link[n] = '\0';
			if (under(link, root)) {
				describe(how, howlen, "open file", link);
				closedir(d);
				return 1;
			}
		}
		closedir(d);
	}
	snprintf(p, sizeof p, "/proc/%ld/maps", pid);
	FILE *f = fopen(p, "re");
	if (f) {
		char line[PATH_MAX + 128];
		while (fgets(line, sizeof line, f)) {
			char *slash = strchr(line, '/');
			if (!slash)
				continue;
			slash[strcspn(slash, "\n")] = '\0';
			if (under(slash, root)) {
				snprintf(how, howlen, "mapped file %s", slash);
				fclose(f);
				return 1;
			}
		}
		fclose(f);
	}
	/* The store its environment names: OLLAMA_MODELS, else $HOME/.ollama/models. */
	static char env[1 << 16];
	snprintf(p, sizeof p, "/proc/%ld/environ", pid);
	ssize_t len = proc_read(p, env, sizeof env - 1);
	if (len < 0)
		return readable ? 0 : -1;
	env[len] = '\0';
	const char *models = NULL, *home = NULL;
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(env + i) + 1) {
		if (strncmp(env + i, "OLLAMA_MODELS=", 14) == 0)
			models = env + i + 14;
		else if (strncmp(env + i, "HOME=", 5) == 0)
			home = env + i + 5;
	}
	char want[PATH_MAX], real[PATH_MAX];
	if (models && *models) {
		/* As the server reads it; a relative path is relative to its cwd. */
		char *v = oa_env_trim(models);
		if (!v)
			return 0;
		if (*v == '/')
			snprintf(want, sizeof want, "%s", v);
		else
			snprintf(want, sizeof want, "/proc/%ld/cwd/%s", pid, v);
		free(v);
	} else if (home && *home) {
		snprintf(want, sizeof want, "%s/.ollama/models", home);
	} else {
		return 0;
	}
	if (realpath(want, real) && strcmp(real, root) == 0) {
		describe(how, howlen, "its store is", real);
		return 1;
	}
	return 0;
}
#endif

int oa_find_store_users(const char *root, oa_proc_user *out, int max, char *why, size_t whylen)
{
#ifdef __linux__
	char real[PATH_MAX];
	if (!realpath(root, real))
		snprintf(real, sizeof real, "%s", root);
	DIR *d = opendir("/proc");
	if (!d) {
		snprintf(why, whylen, "cannot read /proc: %s", strerror(errno));
		return -1;
	}
	int found = 0;
	long self = (long)getpid();
	/* Testing aid: the test suite's own fake servers are always visible to
	 * it; a server it cannot look into (another user's, such as the
	 * machine's own ollama service) must not decide its results. */
	bool ignore_hidden = getenv("OA_TEST_IGNORE_HIDDEN_SERVERS") != NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		char p[64], cmd[4096];
		snprintf(p, sizeof p, "/proc/%ld/cmdline", pid);
		ssize_t n = proc_read(p, cmd, sizeof cmd - 1);
		if (n <= 0)
			continue;
		cmd[n] = '\0';
		if (!is_ollama_server(cmd, (size_t)n))
			continue;
		char how[160];
		int u = proc_uses(pid, real, how, sizeof how);
		if (u == 0 || (u < 0 && ignore_hidden))
			continue;
		if (u < 0)
			snprintf(how, sizeof how, "cannot see which store it uses (another user's process?)");
		if (found < max) {
			out[found].pid = pid;
			size_t k = 0;
			for (ssize_t i = 0; i < n && k + 1 < sizeof out[found].cmd; i++)
				out[found].cmd[k++] = isprint((unsigned char)cmd[i]) ? cmd[i] : '?';
			while (k > 0 && out[found].cmd[k - 1] == ' ')
				k--;
			out[found].cmd[k] = '\0';
			snprintf(out[found].how, sizeof out[found].how, "%s", how);
		}
		found++;
	}
	closedir(d);
	return found;
#else
	(void)root; (void)out; (void)max;
	snprintf(why, whylen, "cannot tell on this OS whether an Ollama server uses the store");
	return -1;
#endif
}

/* ---- reflinks (issue 6: dedupe) ------------------------------------------- */
#ifdef __linux__
#include <sys/ioctl.h>
#ifndef FICLONE
#define FICLONE _IOW(0x94, 9, int) /* linux/fs.h */
#endif
int oa_reflink(int src_fd, int dst_fd)
{
	return ioctl(dst_fd, FICLONE, src_fd) < 0 ? -1 : 0;
}
#else
int oa_reflink(int src_fd, int dst_fd)
{
	(void)src_fd; (void)dst_fd;
	errno = ENOTSUP;
	return -1;
}
#endif

/* ---- shared extents (dedupe: copies an earlier reflink already shares) ---- */
#ifdef __linux__
#include <linux/fiemap.h>
#include <linux/fs.h>

/* Every extent of fd (at most max). Returns the count, or -1. */
static long extent_map(int fd, oa_ext **out, size_t max)
{
	enum { BATCH = 128 };
	size_t sz = sizeof(struct fiemap) + BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = oa_xmalloc(sz);
	oa_ext *v = NULL;
	size_t n = 0;
	uint64_t start = 0;
	long ret = -1;
	for (;;) {
		memset(fm, 0, sz);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0)
			goto out;
		if (fm->fm_mapped_extents == 0)
			break;
		bool last = false;
		for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];
			if (n == max)
				goto out;
			v = oa_xreallocarray(v, n + 1, sizeof *v);
			v[n++] = (oa_ext){ e->fe_logical, e->fe_physical, e->fe_length, e->fe_flags };
			start = e->fe_logical + e->fe_length;
			last |= (e->fe_flags & FIEMAP_EXTENT_LAST) != 0;
		}
		if (last)
			break;
	}
	ret = (long)n;
out:
	free(fm);
	if (ret < 0) {
		free(v);
		v = NULL;
	}
	*out = v;
	return ret;
}

/* FNV-1a over one more 64-bit word. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 1099511628211u;
	}
	return h;
}

int oa_extents_read(int fd, oa_extents *e)
{
	memset(e, 0, sizeof *e);
	oa_ext *v = NULL;
	long n = extent_map(fd, &v, 1u << 20);
	if (n < 0)
		return -1;
	const uint32_t vague = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC;
	int ret = 1;
	uint64_t h = 14695981039346656037u;
	for (long i = 0; i < n && ret != -1; i++) {
		bool in_metadata = (v[i].flags & FIEMAP_EXTENT_DATA_INLINE) != 0;
		if (v[i].flags & vague)
			ret = -1;
		else if (!in_metadata && !(v[i].flags & FIEMAP_EXTENT_SHARED))
			ret = 0;
		/* stored in metadata: no extent to share, nothing to save */
		v[i].physical = in_metadata ? UINT64_MAX : v[i].physical;
		v[i].flags = 0;
		h = mix(mix(mix(h, v[i].logical), v[i].length), v[i].physical);
	}
	if (ret != 1) {
		free(v);
		return ret;
	}
	e->v = v;
	e->n = (size_t)n;
	e->hash = mix(h, (uint64_t)n);
	return 1;
}

bool oa_extents_same(const oa_extents *a, const oa_extents *b)
{
	if (a->hash != b->hash || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].logical != b->v[i].logical || a->v[i].length != b->v[i].length ||
		    a->v[i].physical != b->v[i].physical)
			return false;
	return true;
}
#else
int oa_extents_read(int fd, oa_extents *e)
{
	(void)fd;
	memset(e, 0, sizeof *e);
	return -1;
}

bool oa_extents_same(const oa_extents *a, const oa_extents *b)
{
	(void)a; (void)b;
	return false;
}
#endif

void oa_extents_free(oa_extents *e)
{
	free(e->v);
	memset(e, 0, sizeof *e);
}

int oa_memory_info(uint64_t *total, uint64_t *available)
{
#if defined(_SC_PHYS_PAGES) && defined(_SC_AVPHYS_PAGES)
	long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || avail < 0 || size <= 0)
		return -1;
	*total = (uint64_t)pages * (uint64_t)size;
	*available = (uint64_t)avail * (uint64_t)size;
	return 0;
#else
	(void)total;
	(void)available;
	return -1;
#endif
}

/* ---- terminal width (tables that fit) ------------------------------------ */
#include <sys/ioctl.h>
int oa_terminal_columns(int fd)
{
#ifdef TIOCGWINSZ
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
#else
	(void)fd;
#endif
	return 0;
}

/* ---- a rename that never replaces (restore) ----------------------------- */
#include <sys/syscall.h>
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
int oa_renameat_noreplace(int from_fd, const char *from, int to_fd, const char *to)
{
#if defined(__linux__) && defined(SYS_renameat2)
	if (syscall(SYS_renameat2, from_fd, from, to_fd, to, RENAME_NOREPLACE) == 0)
		return 0;
	/* ENOSYS: an older kernel; EINVAL: a filesystem without the flag */
	if (errno != ENOSYS && errno != EINVAL)
		return -1;
#endif
	struct stat st;
	if (fstatat(from_fd, from, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		/* link() never replaces; a symlink is linked as itself (POSIX.1-2008) */
		if (linkat(from_fd, from, to_fd, to, 0) < 0)
			return -1;
		(void)unlinkat(from_fd, from, 0);
		return 0;
	}
	/* A directory cannot be hard-linked: look, then rename. What appears in
	 * between can only be replaced when it is an empty directory (rename
	 * refuses a file and a directory with anything in it). */
	if (fstatat(to_fd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(from_fd, from, to_fd, to);
}

/* ---- can this filesystem reflink? (dedupe's dry run) ---------------------- */
#ifdef __linux__
#include <sys/vfs.h>
#ifndef FICLONERANGE
struct file_clone_range {
	int64_t src_fd;
	uint64_t src_offset, src_length, dest_offset;
};
#define FICLONERANGE _IOW(0x94, 13, struct file_clone_range) /* linux/fs.h */
#endif

/* 1 always reflinks, 0 never, -1 depends (XFS reflink=1, ZFS block cloning,
 * NFS 4.2, overlayfs: its upper filesystem, ...). */
static int fs_type_reflinks(int fd, char *fs, size_t fslen)
{
	static const struct { unsigned long magic; const char *name; int reflinks; } types[] = {
		{ 0x9123683EUL, "btrfs", 1 },   { 0xCA451A4EUL, "bcachefs", 1 }, { 0x7461636FUL, "ocfs2", 1 },
		{ 0xEF53UL, "ext2/3/4", 0 },    { 0x01021994UL, "tmpfs", 0 },    { 0x858458F6UL, "ramfs", 0 },
		{ 0x4D44UL, "fat", 0 },         { 0x2011BAB0UL, "exfat", 0 },    { 0x5346544EUL, "ntfs", 0 },
		{ 0xF2F52010UL, "f2fs", 0 },    { 0x58465342UL, "xfs", -1 },     { 0x2FC12FC1UL, "zfs", -1 },
		{ 0x6969UL, "nfs", -1 },        { 0x794C7630UL, "overlayfs", -1 },
	};
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return -1;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if ((unsigned long)sf.f_type == types[i].magic) {
			snprintf(fs, fslen, "%s", types[i].name);
			return types[i].reflinks;
		}
	snprintf(fs, fslen, "filesystem type 0x%lx", (unsigned long)sf.f_type);
	return -1;
}

int oa_reflink_probe(int src_fd, int fs_fd, int scratch_fd, char *fs, size_t fslen)
{
	int by_type = fs_type_reflinks(fs_fd, fs, fslen);
#ifdef O_TMPFILE
	int tfd = scratch_fd >= 0 ? openat(scratch_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
	if (tfd >= 0) {
		struct stat st;
		/* A small head of the file is enough to know: a whole multi-GB
		 * blob would cost the filesystem work for nothing. Past EOF the
		 * length must be block-aligned; 1 MiB is, on every filesystem. */
		uint64_t len = fstat(src_fd, &st) == 0 && st.st_size > (1 << 20) ? (1u << 20) : 0;
		struct file_clone_range r = { src_fd, 0, len, 0 };
		int rc = ioctl(tfd, FICLONERANGE, &r);
		int e = errno;
		close(tfd);
		if (rc == 0)
			return 1;
		if (e == EOPNOTSUPP || e == ENOTSUP || e == EINVAL || e == ENOTTY || e == EXDEV)
			return 0;
		errno = e;
		return by_type;
	}
#endif
	if (by_type < 0)
		errno = ENOTSUP;
	return by_type;
}
#else
int oa_reflink_probe(int src_fd, int fs_fd, int scratch_fd, char *fs, size_t fslen)
{
	(void)src_fd; (void)fs_fd; (void)scratch_fd;
	snprintf(fs, fslen, "this system");
	errno = ENOTSUP;
	return -1;
}
#endif

int oa_read_file_at(int dirfd, const char *name, size_t max, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	/* Look before opening: opening a FIFO for reading blocks until a writer
	 * comes, and opening a device node can have side effects. O_NONBLOCK
	 * covers the race where the name is swapped for a FIFO in between. */
	struct stat pre;
	if (fstatat(dirfd, name, &pre, 0) < 0)
		return -1;
	if (S_ISDIR(pre.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(pre.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	return oa_read_regular_at(dirfd, name, max, out, len);
}

int oa_read_regular_at(int dirfd, const char *name, size_t max, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	int fd = oa_openat_ro(dirfd, name, O_NONBLOCK);
	if (fd < 0)
		return -1;
	int rc = oa_read_fd_whole(fd, max, out, len);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

int oa_read_fd_whole(int fd, size_t max, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode))
		return errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL, -1;
	if ((uint64_t)st.st_size > max)
		return errno = EFBIG, -1;
	size_t n = (size_t)st.st_size;
	uint8_t *buf = oa_xmalloc(n + 1);
	ssize_t got = oa_pread_full(fd, buf, n, 0);
	if (got < 0) {
		int e = errno;
		free(buf);
		errno = e;
		return -1;
	}
	buf[got] = 0;
	*out = buf;
	*len = (size_t)got;
	return 0;
}

void oa_test_pause(const char *dir, const char *point, size_t idx, volatile sig_atomic_t *interrupt)
{
	if (!dir || !*dir)
		return;
	char *f = oa_xasprintf("%s/%s-%zu", dir, point, idx);
	char *tmp = oa_xasprintf("%s/.%s-%zu", dir, point, idx);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		/* written under another name first: the test sees the pid or nothing */
		char pid[32];
		int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
		bool ok = oa_write_all(fd, pid, (size_t)len) == 0;
		close(fd);
		if (!ok || rename(tmp, f) < 0) {
			unlink(tmp);
			free(tmp);
			free(f);
			return;
		}
		struct stat st;
		for (int i = 0; i < 6000 && stat(f, &st) == 0 && !(interrupt && *interrupt); i++) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	free(tmp);
	free(f);
}

/* ---- an advisory lock on an open directory ------------------------------------ */

#include <sys/file.h>

int oa_lock_wait(int fd, unsigned timeout_ms)
{
	for (unsigned waited = 0;; waited += 20) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -1; /* no such locks here (NFS without its lock service: ENOLCK) */
		if (waited >= timeout_ms)
			return -1;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

void oa_unlock(int fd)
{
	if (fd >= 0)
		flock(fd, LOCK_UN);
}

/* ---- mount points ---------------------------------------------------------- */

/* The mount a name (or dirfd itself, name "") is on, where the kernel says
 * (Linux 5.8's statx STATX_MNT_ID); false when it cannot be told. */
static bool mount_id(int dirfd, const char *name, uint64_t *id)
{
#if defined(__linux__) && defined(STATX_MNT_ID)
	struct statx sx;
	int flags = AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH);
	if (statx(dirfd, name, flags, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID)) {
		*id = sx.stx_mnt_id;
		return true;
	}
#else
	(void)dirfd;
	(void)name;
	(void)id;
#endif
	return false;
}

bool oa_is_mount_point(int dirfd, const char *name, const struct stat *st)
{
	struct stat dst;
	if (fstat(dirfd, &dst) < 0 || dst.st_dev != st->st_dev)
		return true; /* another file system, or the directory cannot be told */
	uint64_t here, there;
	return mount_id(dirfd, "", &here) && mount_id(dirfd, name, &there) && here != there;
}

/* ---- directory listings (oa_dir_read) ------------------------------------ */

typedef struct dir_acc {
	oa_dirent *v;
	size_t n, cap;
	size_t *off;           /* each name's offset in names, until the block stops moving */
	size_t cap_off;
	oa_buf names;
} dir_acc;

static void dir_acc_add(dir_acc *a, const char *name, unsigned char type)
{
	if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
		return;
	OA_ALLOC_GROW(a->v, a->n + 1, a->cap);
	OA_ALLOC_GROW(a->off, a->n + 1, a->cap_off);
	a->off[a->n] = a->names.len;
	a->v[a->n++].type = type;
	oa_buf_add(&a->names, name, strlen(name) + 1);
}

static int cmp_dirent(const void *a, const void *b)
{
	return strcmp(((const oa_dirent *)a)->name, ((const oa_dirent *)b)->name);
}

static unsigned char dir_type(unsigned d_type)
{
#ifdef DT_DIR
	switch (d_type) {
	case DT_DIR:
		return OA_DT_DIR;
	case DT_REG:
		return OA_DT_REG;
	case DT_LNK:
		return OA_DT_LNK;
	case DT_UNKNOWN:
		return OA_DT_UNKNOWN;
	default:
		return OA_DT_OTHER;
	}
#else
	(void)d_type;
	return OA_DT_UNKNOWN;
#endif
}

#ifdef __linux__
#include <sys/syscall.h>

/* The kernel's record (linux_dirent64), read straight from getdents64. */
struct oa_linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int dir_fill(int fd, dir_acc *a)
{
	/* aligned for the records the kernel writes into it */
	union {
		char b[32768];
		uint64_t align;
	} buf;
	for (;;) {
		long got = syscall(SYS_getdents64, fd, buf.b, sizeof buf.b);
		if (got < 0)
			return errno;
		if (got == 0)
			return 0;
		for (long at = 0; at < got;) {
			const struct oa_linux_dirent64 *e = (const void *)(buf.b + at);
			dir_acc_add(a, e->d_name, dir_type(e->d_type));
			at += e->d_reclen;
		}
	}
}
#else
static int dir_fill(int fd, dir_acc *a)
{
	int dupfd = dup(fd);
	DIR *d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
	if (!d) {
		int e = errno;
		if (dupfd >= 0)
			close(dupfd);
		return e;
	}
	rewinddir(d); /* the dup shares its offset with fd */
	struct dirent *e;
	int err = 0;
	for (;;) {
		errno = 0;
		if (!(e = readdir(d))) {
			err = errno;
			break;
		}
#ifdef DT_DIR
		dir_acc_add(a, e->d_name, dir_type(e->d_type));
#else
		dir_acc_add(a, e->d_name, dir_type(0));
#endif
	}
	closedir(d);
	return err;
}
#endif

int oa_dir_read(int fd, oa_dir_list *l)
{
	dir_acc a = { 0 };
	oa_buf_init(&a.names);
	int err = dir_fill(fd, &a);
	memset(l, 0, sizeof *l);
	if (err) {
		free(a.v);
		free(a.off);
		oa_buf_free(&a.names);
		return err;
	}
	l->names = oa_buf_take(&a.names);
	for (size_t i = 0; i < a.n; i++)
		a.v[i].name = l->names + a.off[i];
	free(a.off);
	if (a.n > 1)
		qsort(a.v, a.n, sizeof *a.v, cmp_dirent);
	l->v = a.v;
	l->n = a.n;
	return 0;
}

void oa_dir_list_free(oa_dir_list *l)
{
	free(l->v);
	free(l->names);
	memset(l, 0, sizeof *l);
}
