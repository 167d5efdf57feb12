/* outfile.h - every file the tool writes for itself (--output, --plan,
 * --cache, a quarantine's index.json) goes through here, so one set of
 * rules holds everywhere:
 *   - a missing name or a regular file is replaced atomically: a temporary
 *     file beside it (".NAME.PID.tmp", O_EXCL|O_NOFOLLOW), fsync, rename;
 *     the rename is refused if something else than a regular file took the
 *     name meanwhile; the new file keeps the permission bits of the one it
 *     replaces, and its owner and group when run as root (not with
 *     OA_OUT_FRESH);
 *   - a FIFO or a character device (/dev/null, a terminal) is written
 *     through (opened O_WRONLY, never replaced);
 *   - a symlink is written through only when it leads to a FIFO or a
 *     character device (/dev/stdout on a pipe); any other symlink is refused,
 *     as are directories, block devices and sockets: we never rename over
 *     anything that is not a regular file, nor over a symlink's target.
 * oa_outfile_inside() tells whether a path lies in a store (docs:
 * disk-space.md, "What the tool writes"). */
#ifndef OLLAMA_AUDIT_OUTFILE_H
#define OLLAMA_AUDIT_OUTFILE_H

#include "ollama_audit/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct oa_outfile {
	int fd;        /* write here */
	int dirfd;     /* the directory holding the name */
	char *name;    /* the final component */
	char *tmp;     /* the temporary name, NULL when writing through */
	bool own_dir;  /* dirfd was opened by oa_outfile_open() */
} oa_outfile;

/* Open `path` (or `name` in dirfd, which stays the caller's) for writing
 * under the rules above. 0, or -1 with err. OA_OUT_NOWAIT: a FIFO that no
 * one reads is an error at once (ENXIO), not a wait; for files we also read
 * back (the verify cache), where a FIFO is never what the user meant.
 * OA_OUT_FRESH: the new file has exactly `mode` and the writer's owner,
 * whatever the file it replaces had (a verify cache someone else could
 * write is replaced by one of ours, never kept as theirs). */
enum { OA_OUT_NOWAIT = 1, OA_OUT_FRESH = 2 };
OA_EXPORT int oa_outfile_open(oa_outfile *o, const char *path, mode_t mode, int flags, char *err, size_t errlen);
OA_EXPORT int oa_outfile_openat(oa_outfile *o, int dirfd, const char *name, mode_t mode, int flags, char *err,
                      size_t errlen);
/* fsync and rename into place (or just close a written-through file). */
OA_EXPORT int oa_outfile_commit(oa_outfile *o, char *err, size_t errlen);
/* Drop what was written: the temporary file is removed, the old file kept. */
OA_EXPORT void oa_outfile_abort(oa_outfile *o);

/* Write `len` bytes to `name` in dirfd under the rules above. */
OA_EXPORT int oa_outfile_write_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                        char *err, size_t errlen);

/* Whether `path` (which need not exist yet) is inside the store rooted at
 * `root`: its nearest existing directory, or any directory above that, is
 * the root, what root/blobs, root/manifests or root/manifests-v2 resolve to,
 * or any directory below those (compared by device and inode, so symlinks
 * and bind mounts of a directory deep in manifests/ count). */
OA_EXPORT bool oa_outfile_inside(const char *path, const char *root);

#endif
