/* bundle_read.h - the members of a bundle one after the other, whatever
 * holds it: a tar file, a tar stream (standard input), or a directory the
 * bundle was unpacked in (walked without following a symlink). The tar is
 * read by libarchive (plain, or gzip/bzip2/xz/zstd compressed); its
 * members are listed as they are, the caller judges them (bundle.h).
 * Private to src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_BUNDLE_READ_H
#define OLLAMA_AUDIT_CARRY_BUNDLE_READ_H

#include "ollama_audit/bundle.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct bundle_in bundle_in;

/* What a member is on the medium: a regular file, a directory, a
 * symbolic link, a hard link to another member, anything else (a device,
 * a FIFO, a sparse file). */
enum bundle_type { BT_FILE, BT_DIR, BT_SYMLINK, BT_HARDLINK, BT_OTHER };

typedef struct bundle_member {
	oa_member_name n;      /* what its path is in the grammar */
	enum bundle_type type;
	int64_t size;          /* a file's */
	const char *raw;       /* its path as the medium spells it (valid until the next member) */
} bundle_member;

/* Open src: "-" reads fd (standard input), a directory is walked, any
 * other path is a tar. 0, -1 with err (it cannot be read), or -2 with err
 * (what is there is not a tar libarchive reads). */
int bundle_in_open(bundle_in **b, const char *src, int fd, char *err, size_t errlen);
/* The next member: 1, 0 at the end, -1 when the bundle cannot be read on
 * (a truncated or corrupt tar, an I/O error; err says so). */
int bundle_in_next(bundle_in *b, bundle_member *m, char *err, size_t errlen);
/* Up to n bytes of the current member's data: the count, 0 at its end,
 * -1 with err. */
ssize_t bundle_in_read(bundle_in *b, void *buf, size_t n, char *err, size_t errlen);
/* Whether the medium is a stream (read once: no second pass). */
bool bundle_in_is_stream(const bundle_in *b);
void bundle_in_close(bundle_in *b);

#endif
