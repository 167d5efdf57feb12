/* land.h - blobs and tags arriving in a store (import, repair): a blob is
 * copied under a temporary name in blobs/ while it is hashed, and put in
 * place only when it hashes to its name; a tag is written whole under a
 * temporary name and linked into place; nothing that exists is ever
 * replaced, except by repair's explicit swap. Private to src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_LAND_H
#define OLLAMA_AUDIT_CARRY_LAND_H

#include "ollama_audit/digest.h"
#include "carry/files.h"
#include "carry/hashpipe.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct land {
	int root_fd;           /* the store (borrowed) */
	int blobs_fd;          /* its blobs/, or -1 when there is none (yet) */
	carry_owner blob_owner;
	carry_owner tag_owner;
	hashpipe *hp;
	volatile sig_atomic_t *stop;
	char **temps;          /* temporary names in blobs/ made and not yet placed or removed */
	size_t n_temps;
} land;

/* The store open at root_fd; with `make`, blobs/ is created when missing.
 * 0, or -1 with err. */
int land_open(land *l, int root_fd, bool make, volatile sig_atomic_t *stop, char *err, size_t errlen);
/* Remove every temporary still here, then release l. NULL, or (a new
 * string) the temporaries that could not be removed, and why. */
char *land_close(land *l);

/* Where a blob stands in the store: absent (0), a file of `size` bytes (1),
 * a file of another size, or not a regular file (2: damaged here). */
enum land_blob { LB_ABSENT, LB_PRESENT, LB_OTHER };
enum land_blob land_blob_state(const land *l, const char *hex, int64_t size, int64_t *have);

/* Where the source of a copy comes from: up to n bytes, 0 at its end, -1 with err. */
typedef ssize_t (*land_read_fn)(void *ctx, void *buf, size_t n, char *err, size_t errlen);

/* Copy `size` bytes from read into a new temporary in blobs/, hashing
 * them; sealed (0644, owner, fresh mtime, fsync) when they hash to hex.
 * tmp (40 bytes) gets its name, which l remembers; on any answer but 0
 * nothing is kept and tmp is empty. 0 good, 1 the bytes are not what hex
 * names (or not `size` of them: err says which), -1 error (err). */
int land_copy(land *l, const char *hex, int64_t size, land_read_fn read, void *ctx, char tmp[40], char *err,
              size_t errlen);
/* The same, keeping nothing: 0 good, 1 not what hex names, -1 error. */
int land_hash(land *l, const char *hex, int64_t size, land_read_fn read, void *ctx, char *err, size_t errlen);
/* land_hash of the file open at fd, from its start (the offset put back). */
int land_hash_fd(land *l, const char *hex, int64_t size, int fd, char *err, size_t errlen);
/* The same as land_copy for bytes already in memory. */
int land_copy_bytes(land *l, const char *hex, const void *bytes, size_t len, char tmp[40], char *err,
                    size_t errlen);
/* A blob of another store on this machine (src_fd open on it; src_dir_fd
 * and src_name its directory and name there) under a new temporary: a
 * reflink where the file system can, else (with `link`) a hard link when
 * both are on one file system and the file has the owner and mode blobs/
 * gives, else a copy;
 * what lands is hashed either way (a reflink once made, a link's source
 * before linking: a link shares its bytes). *how: "reflink", "hardlink" or
 * "copy" (NULL unless 0). 0, 1 not what hex names, -1 error (err). A hard
 * link keeps the source's mtime: touching it would write to the other
 * store. */
int land_clone(land *l, const char *hex, int64_t size, int src_fd, int src_dir_fd, const char *src_name, bool link,
               char tmp[40], const char **how, char *err, size_t errlen);
/* Put temporary tmp in place as blobs/sha256-<hex> (never replacing: a file
 * there already stays, and the answer is 1). 0 placed, 1 already there, -1
 * errno. The temporary name goes but on error. */
int land_place(land *l, const char *tmp, const char *hex);
/* repair's swap: temporary tmp renamed over blobs/sha256-<hex>, which the
 * caller has just found to be the damaged regular file (or nothing). 0, or
 * -1 with err. */
int land_swap(land *l, const char *tmp, const char *hex, char *err, size_t errlen);
/* Remove a temporary now. */
void land_drop(land *l, const char *tmp);

/* The tag file `path` (store-relative) against `bytes`: absent (0), the same
 * bytes (1), something else there (2). */
enum land_tag { LT_ABSENT, LT_SAME, LT_OTHER };
enum land_tag land_tag_state(const land *l, const char *path, const uint8_t *bytes, size_t len);
/* Write the tag file `path` (its directories made as needed) with exactly
 * `bytes`, never over anything: LT_ABSENT written, LT_SAME it was there
 * already, LT_OTHER something else took the name; -1 error (err). */
int land_tag_write(land *l, const char *path, const uint8_t *bytes, size_t len, char *err, size_t errlen);

#endif
