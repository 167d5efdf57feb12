/*
 * platform.h - the few operating-system calls that differ between Linux and
 * other POSIX systems (macOS, the BSDs). Each has a portable fallback, so a
 * port only touches platform.c.
 */
#ifndef OLLAMA_AUDIT_PLATFORM_H
#define OLLAMA_AUDIT_PLATFORM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Open a file read-only, close-on-exec, without updating its atime where the
 * kernel lets us (O_NOATIME needs ownership; we retry without it). */
int oa_open_ro(const char *path);
int oa_openat_ro(int dirfd, const char *name, int extra_flags);

/* Page-cache hints; no-ops where posix_fadvise does not exist. */
void oa_advise_sequential(int fd);
void oa_advise_dontneed(int fd, off_t offset, off_t len);

/* Start writing fd's dirty pages to disk without waiting (Linux
 * sync_file_range WRITE): a large file written then fsynced is on disk
 * soon after its last write, not a whole file's write later. Elsewhere a
 * no-op: the fsync does it all. */
void oa_writeback_start(int fd);

/* The read and write loops, each retrying what a signal interrupted (EINTR).
 * oa_read_some: one read(2) of at most len bytes; read's result.
 * oa_read_full, oa_pread_full: loop over short reads; the bytes read (< len
 * only at end of file), -1 with errno on error.
 * oa_write_all: all len bytes; 0, or -1 with errno (EIO for a write that
 * took nothing). */
ssize_t oa_read_some(int fd, void *buf, size_t len);
ssize_t oa_read_full(int fd, void *buf, size_t len);
ssize_t oa_pread_full(int fd, void *buf, size_t len, uint64_t offset);
int oa_write_all(int fd, const void *buf, size_t len);

/* Testing aid (tests/unit/test_base.c): the system calls the loops above
 * make, to feed them interruptions and short counts; NULL restores the
 * system's. */
typedef struct oa_io_calls {
	ssize_t (*read)(int fd, void *buf, size_t len);
	ssize_t (*write)(int fd, const void *buf, size_t len);
	ssize_t (*pread)(int fd, void *buf, size_t len, off_t offset);
} oa_io_calls;
void oa_io_set_calls(const oa_io_calls *calls);

/* Number of online CPUs, at least 1. */
int oa_online_cpus(void);

/* Monotonic clock in seconds. */
double oa_now(void);

/* Modification / status-change time of a stat result in nanoseconds since the
 * epoch (st_mtim on POSIX 2008, st_mtimespec on macOS, seconds elsewhere). */
struct stat;
int64_t oa_stat_mtime_ns(const struct stat *st);
int64_t oa_stat_ctime_ns(const struct stat *st);

/* Total and available system memory in bytes: Linux /proc/meminfo,
 * elsewhere sysconf where it knows (available may be unknown: -1). */
int oa_memory_info(uint64_t *total, uint64_t *available);

/* Wall clock (CLOCK_REALTIME) in seconds since the epoch, with a fraction. */
double oa_wall_now(void);
/* The same clock in whole nanoseconds, for ages compared with oa_stat_mtime_ns. */
int64_t oa_wall_now_ns(void);

/* Is [offset, offset+len) of fd in the page cache? 1 = at least 90% of its
 * pages are resident, 0 = fewer, -1 = cannot tell (no mincore, an error,
 * offset not a multiple of the page size, or len == 0). Keep the range
 * within the file: on Linux pages past its end count as not resident. A
 * yes/no summary; verify decides page by page with oa_range_residency. */
int oa_range_cached(int fd, uint64_t offset, size_t len);

/* The system's page size. */
size_t oa_page_size(void);

/* Which pages of [offset, offset+len) of fd are in the page cache: vec[i] is
 * 1 or 0 for page i. offset must be page-aligned, len > 0, and the range
 * must fit in vec_len pages. It maps the range (address space only: nothing
 * is read or faulted in). Returns the number of pages, or -1 when it cannot
 * tell (no mincore, or an error). */
long oa_range_residency(int fd, uint64_t offset, size_t len, unsigned char *vec, size_t vec_len);

/* Test seam: while set, oa_range_residency and oa_advise_dontneed call these
 * instead of the kernel, so a test can script what mincore reports and record
 * which ranges verify drops (the kernel's real answer depends on memory
 * pressure and cannot be asserted). NULL restores the kernel. Set it before
 * starting a verify, not during one. */
typedef struct oa_pagecache_ops {
	void *ctx;
	long (*residency)(void *ctx, int fd, uint64_t offset, size_t len, unsigned char *vec,
	                  size_t vec_len);
	void (*dontneed)(void *ctx, int fd, off_t offset, off_t len);
} oa_pagecache_ops;
void oa_pagecache_set_ops(const oa_pagecache_ops *ops);

/* Ollama server or runner processes (`ollama serve`, `ollama runner`,
 * `llama-server`, `ollama_llama_server`) that use the store whose real path
 * is `root`: their cwd, an open file or a mapping under it, or the store
 * their OLLAMA_MODELS (or $HOME/.ollama/models) names. A matching process
 * whose files and environment we may not read counts too: we cannot rule it
 * out. Fills up to `max` entries; returns how many were found (may exceed
 * max), or -1 when this cannot be told on this OS (`why` says so).
 * Linux reads /proc; elsewhere the answer is always -1. */
typedef struct oa_proc_user {
	long pid;
	char cmd[96];   /* the command line, printable, truncated */
	char how[160];  /* why it counts: "cwd /x/models", "open file ..." */
} oa_proc_user;
int oa_find_store_users(const char *root, oa_proc_user *out, int max, char *why, size_t whylen);

/* Make dst_fd (an empty regular file opened for writing) a copy-on-write
 * clone of all of src_fd (Linux FICLONE: btrfs, XFS with reflink=1,
 * bcachefs, OCFS2, ZFS >= 2.2). The two stay separate inodes: writing one
 * never changes the other. Returns 0, or -1 with errno: EOPNOTSUPP or EINVAL
 * when the filesystem cannot, EXDEV across filesystems, ENOTSUP where the OS
 * has no such call (issue 6, dedupe). */
int oa_reflink(int src_fd, int dst_fd);
/* Can the filesystem of directory fs_fd reflink src_fd (a file on it)?
 * 1 yes, 0 no, -1 cannot tell (errno). Linux: a little of src_fd is cloned
 * into an unnamed O_TMPFILE of scratch_fd (a directory on the same
 * filesystem, or -1 for none), which is gone on close: no name ever appears.
 * When that cannot be made (no scratch directory, no write access, a
 * read-only or O_TMPFILE-less filesystem) the filesystem type decides for
 * the types that always (btrfs, bcachefs, OCFS2) or never (ext2/3/4, tmpfs,
 * FAT, ...) reflink. Elsewhere -1 (ENOTSUP). `fs` gets the type's name. */
int oa_reflink_probe(int src_fd, int fs_fd, int scratch_fd, char *fs, size_t fslen);
/* The width in columns of the terminal open at fd; 0 when unknown. */
int oa_terminal_columns(int fd);

/* Rename from (in from_fd) to to (in to_fd) only if nothing is there:
 * -1 with EEXIST when something is. Linux: renameat2(RENAME_NOREPLACE).
 * Elsewhere, and on filesystems without it: link + unlink for anything but
 * a directory (the old name may stay beside the new one if the unlink
 * fails: the same inode twice); a directory is renamed after a look at the
 * target, which can then only replace an empty directory that appeared in
 * between. 0, or -1 with errno. */
int oa_renameat_noreplace(int from_fd, const char *from, int to_fd, const char *to);

/* Where a file's data lies, to tell files that already share all of it
 * (an earlier reflink) without comparing each with each. Linux FIEMAP: two
 * files share it when they have the same extents (logical offset, length
 * and physical address), each flagged shared; data small enough to live
 * inline in metadata counts as shared (there is nothing to save). */
typedef struct oa_ext { uint64_t logical, physical, length; uint32_t flags; } oa_ext;
typedef struct oa_extents {
	oa_ext *v;
	size_t n;
	uint64_t hash;  /* equal for files that share their data (a key to group them by) */
} oa_extents;
/* 1: e holds fd's extents, every one shared; 0: some extent is not shared,
 * so fd shares its data with no other file; -1: cannot tell (no FIEMAP, an
 * error, delayed allocation, or not Linux). e holds something only for 1. */
int oa_extents_read(int fd, oa_extents *e);
/* Whether two files oa_extents_read said 1 of share all their data. */
bool oa_extents_same(const oa_extents *a, const oa_extents *b);
void oa_extents_free(oa_extents *e);

/* A directory's entries as one read gives them: each name with the type
 * readdir reported (OA_DT_UNKNOWN where the file system does not say, or
 * the system has no d_type: lstat it). A type is a hint taken at read time,
 * never a reason to follow or trust a name: a walk that skips an lstat on
 * OA_DT_DIR still opens with O_NOFOLLOW. */
enum { OA_DT_UNKNOWN, OA_DT_DIR, OA_DT_REG, OA_DT_LNK, OA_DT_OTHER };
typedef struct oa_dirent {
	const char *name;
	unsigned char type;
} oa_dirent;
typedef struct oa_dir_list {
	oa_dirent *v;  /* sorted by name (strcmp), as oa_list_dir sorts */
	size_t n;
	char *names;   /* the one block the names live in */
} oa_dir_list;
/* List the directory open at fd, which was just opened (its offset is at
 * the start): every name but "." and "..". fd stays open and usable for
 * *at calls. Linux reads it with getdents64 on fd itself (no dup, no
 * rewind); elsewhere through fdopendir on a dup. Returns 0, or an errno
 * value with l empty. Free with oa_dir_list_free. */
int oa_dir_read(int fd, oa_dir_list *l);
void oa_dir_list_free(oa_dir_list *l);

/* Read a whole regular file of at most `max` bytes. Returns 0, or -1 with
 * errno set (EFBIG when larger than max). */
int oa_read_file_at(int dirfd, const char *name, size_t max, uint8_t **out, size_t *len);
/* The same for a name a stat has just shown to be a regular file: no second
 * look before opening (O_NONBLOCK and the fstat after it still cover a swap). */
int oa_read_regular_at(int dirfd, const char *name, size_t max, uint8_t **out, size_t *len);
/* The same for a file already open at fd (a regular file, judged by fstat
 * of that fd), read from its start. */
int oa_read_fd_whole(int fd, size_t max, uint8_t **out, size_t *len);

/* Testing aid: with `dir` set (a test's OA_TEST_*_PAUSE), stop at a named
 * point: create dir/<point>-<idx> (holding the pid) and wait (up to 60 s, or
 * until *interrupt) until the test removes it, so a test can change files or
 * send a signal at an exact moment. NULL or "": nothing. Used by dedupe
 * (OA_TEST_DEDUPE_PAUSE), restore (OA_TEST_RESTORE_PAUSE), prune/rm
 * apply (OA_TEST_APPLY_PAUSE, through oa_apply_opts.pause_dir) and repair
 * (OA_TEST_REPAIR_PAUSE, through oa_repair_opts.pause_dir). */
void oa_test_pause(const char *dir, const char *point, size_t idx, volatile sig_atomic_t *interrupt);

/* An exclusive advisory lock (flock) on fd, an open directory: it needs no
 * file of its own. Waits up to timeout_ms. 0 locked; -1 with errno:
 * EWOULDBLOCK another holder kept it, anything else (ENOLCK, EINVAL,
 * EOPNOTSUPP, ...) the filesystem cannot lock it. Released by oa_unlock or
 * when the last fd of that open goes. */
int oa_lock_wait(int fd, unsigned timeout_ms);
void oa_unlock(int fd);

/* Whether name in the directory dirfd (st: its lstat) is a mount point,
 * the root of another mount than dirfd's: another device, or (where the
 * kernel tells the mount: Linux statx) another mount of the same one, a
 * bind mount. Tree removals never cross one. */
bool oa_is_mount_point(int dirfd, const char *name, const struct stat *st);
/* What a tree removal that met one (EXDEV) says. */
#define OA_MOUNT_POINT_KEPT "a file system is mounted in it: the mount point and what is under it are left " \
	"alone (no removal crosses a mount point)"

#endif
