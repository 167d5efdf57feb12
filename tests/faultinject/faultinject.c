/* faultinject.c - an LD_PRELOAD shim that makes one call of a chosen libc
 * function fail, so tests can see what the tool does when a disk fills up,
 * a file vanishes or a read fails half-way (tests/cli/test_faults.py).
 *
 *   OA_FAULT=renameat:3:ENOSPC[,read:1:EIO...]
 *       the 3rd call of renameat fails with ENOSPC (and nothing else does);
 *       functions: open openat read pread rename renameat unlink unlinkat
 *       fsync linkat ficlone (ioctl FICLONE) flock (LOCK_EX or LOCK_SH
 *       asked: a filesystem without locks); errors: EIO ENOSPC EACCES
 *       ENOENT EPERM EROFS ENOLCK EINVAL EOPNOTSUPP ENOSYS. The count `*`
 *       fails every call (flock:*:ENOLCK: NFS without its lock service).
 *   OA_FAULT_LOG=FILE
 *       append one line per injected fault: "function N errno path", and at
 *       exit one line "calls function N" per function called at least once
 *       (the test uses it to size its matrix).
 *
 * Linux/glibc only: it wraps the symbols the binary imports (see `nm -D`:
 * on 64-bit glibc open/openat/pread are the LFS symbols themselves). The
 * real function is found with dlsym(RTLD_NEXT); a failed call does nothing
 * but set errno. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef FICLONE
#define FICLONE _IOW(0x94, 9, int)
#endif

enum fn {
	F_OPEN, F_OPENAT, F_READ, F_PREAD, F_RENAME, F_RENAMEAT, F_UNLINK, F_UNLINKAT, F_FSYNC,
	F_LINKAT, F_FICLONE, F_FLOCK, F_COUNT
};

static const char *const fn_names[F_COUNT] = {
	"open", "openat", "read", "pread", "rename", "renameat", "unlink", "unlinkat", "fsync",
	"linkat", "ficlone", "flock",
};

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EACCES", EACCES }, { "ENOENT", ENOENT },
	{ "EPERM", EPERM }, { "EROFS", EROFS }, { "ENOLCK", ENOLCK }, { "EINVAL", EINVAL },
	{ "EOPNOTSUPP", EOPNOTSUPP }, { "ENOSYS", ENOSYS },
};

/* One fault per function at most: which call (0 = none, EVERY_CALL) and
 * what errno. */
#define EVERY_CALL (-1L)
static long fault_at[F_COUNT];
static int fault_errno[F_COUNT];
static atomic_long calls[F_COUNT];
static const char *log_path;

static void log_line(const char *s)
{
	if (!log_path)
		return;
	/* Raw syscalls: the wrapped open/write must not count themselves. */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	                      0644);
	if (fd < 0)
		return;
	(void)syscall(SYS_write, fd, s, strlen(s));
	(void)syscall(SYS_close, fd);
}

static void parse_one(const char *spec)
{
	char name[32], err[32];
	long n;
	if (sscanf(spec, "%31[a-z]:*:%31[A-Z]", name, err) == 2)
		n = EVERY_CALL;
	else if (sscanf(spec, "%31[a-z]:%ld:%31[A-Z]", name, &n, err) != 3 || n < 1)
		return;
	for (int f = 0; f < F_COUNT; f++) {
		if (strcmp(name, fn_names[f]) != 0)
			continue;
		for (size_t e = 0; e < sizeof errnos / sizeof errnos[0]; e++)
			if (strcmp(err, errnos[e].name) == 0) {
				fault_at[f] = n;
				fault_errno[f] = errnos[e].value;
			}
	}
}

static void report_calls(void)
{
	char line[96];
	for (int f = 0; f < F_COUNT; f++) {
		long n = atomic_load(&calls[f]);
		if (n) {
			snprintf(line, sizeof line, "calls %s %ld\n", fn_names[f], n);
			log_line(line);
		}
	}
}

__attribute__((constructor)) static void faultinject_init(void)
{
	log_path = getenv("OA_FAULT_LOG");
	const char *spec = getenv("OA_FAULT");
	if (spec) {
		char buf[512];
		snprintf(buf, sizeof buf, "%s", spec);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
			parse_one(t);
	}
	if (log_path)
		atexit(report_calls);
}

static void *real(const char *sym)
{
	void *p = dlsym(RTLD_NEXT, sym);
	if (!p)
		abort(); /* the shim is useless without the real call */
	return p;
}

/* Count this call of f; true (errno set, logged) when it is the one to fail. */
static int inject(enum fn f, int dirfd, const char *path, int fd)
{
	long n = atomic_fetch_add(&calls[f], 1) + 1;
	if (fault_at[f] != n && fault_at[f] != EVERY_CALL)
		return 0;
	char what[4096] = "";
	if (path && (path[0] == '/' || dirfd == AT_FDCWD)) {
		snprintf(what, sizeof what, "%s", path);
	} else {
		/* Name the file behind the descriptor (fd, or dirfd + path). */
		char proc[64], target[4000];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", path ? dirfd : fd);
		long k = syscall(SYS_readlinkat, AT_FDCWD, proc, target, sizeof target - 1);
		target[k > 0 ? k : 0] = '\0';
		snprintf(what, sizeof what, "%s%s%s", target, path ? "/" : "", path ? path : "");
	}
	char line[4200];
	snprintf(line, sizeof line, "fault %s %ld %d %s\n", fn_names[f], n, fault_errno[f], what);
	log_line(line);
	errno = fault_errno[f];
	return 1;
}

/* The mode argument exists only when the call creates a file. */
static mode_t open_mode(int flags, va_list *ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(*ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	static int (*r)(const char *, int, ...);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, &ap);
	va_end(ap);
	if (inject(F_OPEN, AT_FDCWD, path, -1))
		return -1;
	if (!r)
		r = real("open");
	return r(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*r)(int, const char *, int, ...);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, &ap);
	va_end(ap);
	if (inject(F_OPENAT, dirfd, path, -1))
		return -1;
	if (!r)
		r = real("openat");
	return r(dirfd, path, flags, mode);
}

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*r)(int, void *, size_t);
	if (inject(F_READ, AT_FDCWD, NULL, fd))
		return -1;
	if (!r)
		r = real("read");
	return r(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*r)(int, void *, size_t, off_t);
	if (inject(F_PREAD, AT_FDCWD, NULL, fd))
		return -1;
	if (!r)
		r = real("pread");
	return r(fd, buf, n, off);
}

int rename(const char *from, const char *to)
{
	static int (*r)(const char *, const char *);
	if (inject(F_RENAME, AT_FDCWD, from, -1))
		return -1;
	if (!r)
		r = real("rename");
	return r(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	static int (*r)(int, const char *, int, const char *);
	if (inject(F_RENAMEAT, fromfd, from, -1))
		return -1;
	if (!r)
		r = real("renameat");
	return r(fromfd, from, tofd, to);
}

int unlink(const char *path)
{
	static int (*r)(const char *);
	if (inject(F_UNLINK, AT_FDCWD, path, -1))
		return -1;
	if (!r)
		r = real("unlink");
	return r(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	static int (*r)(int, const char *, int);
	if (inject(F_UNLINKAT, dirfd, path, -1))
		return -1;
	if (!r)
		r = real("unlinkat");
	return r(dirfd, path, flags);
}

int fsync(int fd)
{
	static int (*r)(int);
	if (inject(F_FSYNC, AT_FDCWD, NULL, fd))
		return -1;
	if (!r)
		r = real("fsync");
	return r(fd);
}

int linkat(int fromfd, const char *from, int tofd, const char *to, int flags)
{
	static int (*r)(int, const char *, int, const char *, int);
	if (inject(F_LINKAT, fromfd, from, -1))
		return -1;
	if (!r)
		r = real("linkat");
	return r(fromfd, from, tofd, to, flags);
}

/* Only FICLONE is counted and failed; every other request passes through. */
int ioctl(int fd, unsigned long req, ...)
{
	static int (*r)(int, unsigned long, ...);
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (req == (unsigned long)FICLONE && inject(F_FICLONE, AT_FDCWD, NULL, fd))
		return -1;
	if (!r)
		r = real("ioctl");
	return r(fd, req, arg);
}

/* Only asking for a lock is counted and failed; LOCK_UN passes through. */
int flock(int fd, int op)
{
	static int (*r)(int, int);
	if ((op & (LOCK_EX | LOCK_SH)) && inject(F_FLOCK, AT_FDCWD, NULL, fd))
		return -1;
	if (!r)
		r = real("flock");
	return r(fd, op);
}
