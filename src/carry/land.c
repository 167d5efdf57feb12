/* land.c - blobs and tags arriving in a store (land.h). */
#include "carry/land.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int land_open(land *l, int root_fd, bool make, volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	memset(l, 0, sizeof *l);
	l->root_fd = root_fd;
	l->stop = stop;
	carry_owner_of(root_fd, &l->tag_owner);
	int mfd = openat(root_fd, "manifests", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd >= 0) {
		carry_owner_of(mfd, &l->tag_owner);
		close(mfd);
	}
	l->blobs_fd = carry_open_dir(root_fd, "blobs", make, &l->tag_owner);
	if (l->blobs_fd < 0 && (make || errno != ENOENT)) {
		oa_seterr(err, errlen, "blobs/: %s", strerror(errno));
		return -1;
	}
	l->blob_owner = l->tag_owner;
	if (l->blobs_fd >= 0)
		carry_owner_of(l->blobs_fd, &l->blob_owner);
	l->hp = hashpipe_new();
	return 0;
}

char *land_close(land *l)
{
	oa_buf left;
	oa_buf_init(&left);
	for (size_t i = 0; i < l->n_temps; i++) {
		if (l->blobs_fd >= 0 && unlinkat(l->blobs_fd, l->temps[i], 0) < 0 && errno != ENOENT)
			oa_buf_printf(&left, "%scannot remove the temporary blobs/%s: %s", left.len ? "; " : "", l->temps[i],
			              strerror(errno));
		free(l->temps[i]);
	}
	free(l->temps);
	if (l->blobs_fd >= 0)
		close(l->blobs_fd);
	hashpipe_free(l->hp);
	memset(l, 0, sizeof *l);
	l->blobs_fd = -1;
	if (!left.len) {
		oa_buf_free(&left);
		return NULL;
	}
	return oa_buf_take(&left);
}

static void forget(land *l, const char *tmp)
{
	for (size_t i = 0; i < l->n_temps; i++)
		if (strcmp(l->temps[i], tmp) == 0) {
			free(l->temps[i]);
			l->temps[i] = l->temps[--l->n_temps];
			return;
		}
}

void land_drop(land *l, const char *tmp)
{
	/* one that cannot be removed now stays listed: land_close tries again and says so */
	if (unlinkat(l->blobs_fd, tmp, 0) == 0 || errno == ENOENT)
		forget(l, tmp);
}

enum land_blob land_blob_state(const land *l, const char *hex, int64_t size, int64_t *have)
{
	char name[80];
	struct stat st;
	snprintf(name, sizeof name, "sha256-%s", hex);
	*have = -1;
	if (l->blobs_fd < 0 || fstatat(l->blobs_fd, name, &st, 0) < 0) {
		struct stat lst; /* a dangling symlink is not nothing */
		return l->blobs_fd >= 0 && fstatat(l->blobs_fd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 ? LB_OTHER : LB_ABSENT;
	}
	*have = S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
	return S_ISREG(st.st_mode) && st.st_size == size ? LB_PRESENT : LB_OTHER;
}

/* A new temporary, remembered. */
static int temp_open(land *l, char tmp[40], char *err, size_t errlen)
{
	tmp[0] = '\0';
	int fd = l->blobs_fd < 0 ? (errno = ENOENT, -1) : carry_temp_create(l->blobs_fd, tmp, 40);
	if (fd < 0) {
		oa_seterr(err, errlen, "cannot make the temporary blobs/%s: %s", tmp, strerror(errno));
		return -1;
	}
	l->temps = oa_xreallocarray(l->temps, l->n_temps + 1, sizeof *l->temps);
	l->temps[l->n_temps++] = oa_xstrdup(tmp);
	return fd;
}

/* Whether what was read (got bytes hashing to sha) is `size` bytes of hex:
 * 0 yes, 1 no (err says how). */
static int judge(const char *hex, int64_t size, uint64_t got, const char *sha, char *err, size_t errlen)
{
	if (got != (uint64_t)size)
		oa_seterr(err, errlen, "blob sha256:%s: %llu bytes where %lld were announced", hex,
		          (unsigned long long)got, (long long)size);
	else if (strcmp(sha, hex) != 0)
		oa_seterr(err, errlen, "blob sha256:%s does not hash to its name (its bytes hash to sha256:%s)", hex,
		          *sha ? sha : "?");
	else
		return 0;
	return 1;
}

/* The temporary written and hashed: keep it (0) when it is `size` bytes of
 * hex, else drop it (1); -1 on an error. */
static int temp_finish(land *l, int fd, const char *tmp, const char *hex, int64_t size, uint64_t got,
                       const char *sha, char *err, size_t errlen)
{
	int rc = judge(hex, size, got, sha, err, errlen);
	if (rc == 0 && carry_temp_seal(fd, &l->blob_owner) < 0) {
		oa_seterr(err, errlen, "blobs/%s (a copy of sha256:%s): %s", tmp, hex, strerror(errno));
		rc = -1;
	}
	if (close(fd) < 0 && rc == 0) {
		oa_seterr(err, errlen, "blobs/%s (a copy of sha256:%s): %s", tmp, hex, strerror(errno));
		rc = -1;
	}
	if (rc)
		land_drop(l, tmp);
	return rc;
}

/* Read the source to its end through the hasher, writing it to fd (-1:
 * nowhere) up to `size` bytes. 0 (got, sha: what was read), -1 with err. */
static int pump(land *l, int fd, int64_t size, land_read_fn read, void *ctx, uint64_t *got, oa_digest_hex sha,
                char *err, size_t errlen)
{
	int rc = 0;
	*got = 0;
	for (;;) {
		if (l->stop && *l->stop) {
			oa_seterr(err, errlen, "interrupted");
			rc = -1;
			break;
		}
		size_t cap;
		unsigned char *slot = hashpipe_slot(l->hp, &cap);
		ssize_t n = read(ctx, slot, cap, err, errlen);
		if (n <= 0) {
			rc = n < 0 ? -1 : 0;
			break;
		}
		hashpipe_push(l->hp, (size_t)n);
		*got += (uint64_t)n;
		if (fd < 0 || *got > (uint64_t)size)
			continue; /* more than announced: hashed to the end, refused by the caller */
		if (oa_write_all(fd, slot, (size_t)n) < 0) {
			oa_seterr(err, errlen, "writing a temporary in blobs/: %s", strerror(errno));
			rc = -1;
			break;
		}
		if (*got % CARRY_WRITEBACK_EVERY < (uint64_t)n) /* the fsync at the end finds it mostly on disk */
			oa_writeback_start(fd);
	}
	if (hashpipe_finish(l->hp, sha) < 0 && rc == 0) {
		oa_seterr(err, errlen, "sha256 failed (OpenSSL)");
		rc = -1;
	}
	return rc;
}

/* The temporary tmp names is kept only on success: any other answer
 * leaves tmp empty, so that no caller puts a name in place that is gone
 * (or, were it reused, someone else's). */
static int kept_if(int rc, char tmp[40])
{
	if (rc)
		tmp[0] = '\0';
	return rc;
}

int land_copy(land *l, const char *hex, int64_t size, land_read_fn read, void *ctx, char tmp[40], char *err,
              size_t errlen)
{
	int fd = temp_open(l, tmp, err, errlen);
	if (fd < 0)
		return kept_if(-1, tmp);
	uint64_t got;
	oa_digest_hex sha = "";
	if (pump(l, fd, size, read, ctx, &got, sha, err, errlen) < 0) {
		close(fd);
		land_drop(l, tmp);
		return kept_if(-1, tmp);
	}
	return kept_if(temp_finish(l, fd, tmp, hex, size, got, sha, err, errlen), tmp);
}

int land_hash(land *l, const char *hex, int64_t size, land_read_fn read, void *ctx, char *err, size_t errlen)
{
	uint64_t got;
	oa_digest_hex sha = "";
	if (pump(l, -1, size, read, ctx, &got, sha, err, errlen) < 0)
		return -1;
	return judge(hex, size, got, sha, err, errlen);
}

static ssize_t read_fd(void *ctx, void *buf, size_t n, char *err, size_t errlen)
{
	ssize_t got = oa_read_some(*(int *)ctx, buf, n);
	if (got < 0)
		oa_seterr(err, errlen, "reading the source: %s", strerror(errno));
	return got;
}

int land_hash_fd(land *l, const char *hex, int64_t size, int fd, char *err, size_t errlen)
{
	if (lseek(fd, 0, SEEK_SET) < 0) {
		oa_seterr(err, errlen, "reading the source: %s", strerror(errno));
		return -1;
	}
	int rc = land_hash(l, hex, size, read_fd, &fd, err, errlen);
	(void)lseek(fd, 0, SEEK_SET);
	return rc;
}

static int try_reflink(land *l, const char *hex, int64_t size, int src_fd, char tmp[40], char *err, size_t errlen)
{
	int fd = temp_open(l, tmp, err, errlen);
	if (fd < 0)
		return -1;
	if (oa_reflink(src_fd, fd) < 0) {
		close(fd);
		land_drop(l, tmp);
		return 2; /* not here: try the next way */
	}
	/* Testing aid (tests/cli/test_review_safety.py): OA_TEST_LAND_PAUSE=DIR
	 * stops here, between the clone and its hashing. */
	oa_test_pause(getenv("OA_TEST_LAND_PAUSE"), "reflinked", 0, l->stop);
	/* The clone is hashed, not the source: what the source holds by then
	 * (its owner may rewrite it meanwhile) says nothing of the clone's bytes. */
	int rc = land_hash_fd(l, hex, size, fd, err, errlen);
	if (rc == 0)
		return temp_finish(l, fd, tmp, hex, size, (uint64_t)size, hex, err, errlen);
	close(fd);
	land_drop(l, tmp);
	return rc;
}

/* A hard link, when the source is on blobs/'s file system and has the
 * owner its files get, of the very file hashed. 2: it is not. */
static int try_hardlink(land *l, const char *hex, int64_t size, int src_fd, int src_dir_fd, const char *src_name,
                        char tmp[40], char *err, size_t errlen)
{
	struct stat src, dir;
	if (fstat(src_fd, &src) < 0 || fstat(l->blobs_fd, &dir) < 0 || src.st_dev != dir.st_dev ||
	    src.st_uid != (l->blob_owner.set ? l->blob_owner.uid : geteuid()) || (src.st_mode & 07777) != 0644)
		return 2; /* the link would not be owned and moded as the store's files */
	int rc = land_hash_fd(l, hex, size, src_fd, err, errlen);
	if (rc)
		return rc;
	for (int tries = 0; tries < 100; tries++) {
		carry_temp_name(tmp, 40);
		if (linkat(src_dir_fd, src_name, l->blobs_fd, tmp, 0) == 0) {
			l->temps = oa_xreallocarray(l->temps, l->n_temps + 1, sizeof *l->temps);
			l->temps[l->n_temps++] = oa_xstrdup(tmp);
			/* The name links what it names now: a symlink (linkat does not
			 * follow it) or a file swapped in since the hashing is not the
			 * file hashed. */
			struct stat got;
			if (fstatat(l->blobs_fd, tmp, &got, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(got.st_mode) &&
			    got.st_dev == src.st_dev && got.st_ino == src.st_ino)
				return 0;
			land_drop(l, tmp);
			tmp[0] = '\0';
			return 2;
		}
		if (errno != EEXIST)
			return 2;
	}
	return 2;
}

int land_clone(land *l, const char *hex, int64_t size, int src_fd, int src_dir_fd, const char *src_name, bool link,
               char tmp[40], const char **how, char *err, size_t errlen)
{
	int rc = try_reflink(l, hex, size, src_fd, tmp, err, errlen);
	*how = "reflink";
	if (rc == 2 && link) {
		rc = try_hardlink(l, hex, size, src_fd, src_dir_fd, src_name, tmp, err, errlen);
		*how = "hardlink";
	}
	if (rc == 2) {
		(void)lseek(src_fd, 0, SEEK_SET);
		rc = land_copy(l, hex, size, read_fd, &src_fd, tmp, err, errlen);
		*how = "copy";
	}
	if (rc)
		*how = NULL;
	return kept_if(rc, tmp);
}

int land_copy_bytes(land *l, const char *hex, const void *bytes, size_t len, char tmp[40], char *err, size_t errlen)
{
	oa_digest_hex sha;
	oa_sha256_hex(bytes, len, sha);
	int fd = temp_open(l, tmp, err, errlen);
	if (fd < 0)
		return kept_if(-1, tmp);
	if (strcmp(sha, hex) == 0 && oa_write_all(fd, bytes, len) < 0) {
		oa_seterr(err, errlen, "writing blobs/%s: %s", tmp, strerror(errno));
		close(fd);
		land_drop(l, tmp);
		return kept_if(-1, tmp);
	}
	return kept_if(temp_finish(l, fd, tmp, hex, (int64_t)len, len, sha, err, errlen), tmp);
}

int land_swap(land *l, const char *tmp, const char *hex, char *err, size_t errlen)
{
	char name[80];
	snprintf(name, sizeof name, "sha256-%s", hex);
	if (renameat(l->blobs_fd, tmp, l->blobs_fd, name) < 0) {
		oa_seterr(err, errlen, "cannot rename blobs/%s over blobs/%s: %s", tmp, name, strerror(errno));
		return -1;
	}
	forget(l, tmp);
	if (fsync(l->blobs_fd) < 0) {
		oa_seterr(err, errlen, "blobs/ (after blobs/%s was put in place): %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

int land_place(land *l, const char *tmp, const char *hex)
{
	char name[80];
	snprintf(name, sizeof name, "sha256-%s", hex);
	int rc = carry_place(l->blobs_fd, tmp, l->blobs_fd, name);
	if (rc >= 0)
		land_drop(l, tmp);
	return rc;
}

/* ---- tags -------------------------------------------------------------------- */

/* Read the tag file at most len+1 bytes deep: a symlink is followed only
 * to a blob of this store. */
static enum land_tag compare_tag(const land *l, int pfd, const char *leaf, const uint8_t *bytes, size_t len)
{
	struct stat lst;
	if (fstatat(pfd, leaf, &lst, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? LT_ABSENT : LT_OTHER;
	int fd = -1;
	if (S_ISLNK(lst.st_mode)) {
		char target[512];
		ssize_t n = readlinkat(pfd, leaf, target, sizeof target - 1);
		const char *base = n > 0 ? (target[n] = '\0', strrchr(target, '/')) : NULL;
		/* 0.40's tag symlink: a relative path ending in blobs/sha256-<hex> */
		if (base && strncmp(target, "../", 3) == 0 && strstr(target, "/blobs/sha256-") == base - 6 &&
		    strlen(base + 1) == 71 && oa_is_hex(base + 8, 64))
			fd = openat(l->blobs_fd, base + 1, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	} else if (S_ISREG(lst.st_mode)) {
		fd = openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return LT_OTHER;
	uint8_t *buf = oa_xmalloc(len + 1);
	ssize_t got = oa_read_full(fd, buf, len + 1);
	close(fd);
	bool same = got == (ssize_t)len && memcmp(buf, bytes, len) == 0;
	free(buf);
	return same ? LT_SAME : LT_OTHER;
}

enum land_tag land_tag_state(const land *l, const char *path, const uint8_t *bytes, size_t len)
{
	const char *leaf;
	int pfd = carry_open_parent(l->root_fd, path, false, NULL, &leaf);
	if (pfd < 0)
		return errno == ENOENT ? LT_ABSENT : LT_OTHER;
	enum land_tag st = compare_tag(l, pfd, leaf, bytes, len);
	close(pfd);
	return st;
}

/* The tag's bytes straight into its name, when a hard link from blobs/
 * cannot be made (blobs/ on another file system). */
static int write_direct(land *l, int pfd, const char *leaf, const uint8_t *bytes, size_t len)
{
	int fd = openat(pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EEXIST ? 1 : -1;
	int rc = oa_write_all(fd, bytes, len) < 0 || carry_temp_seal(fd, &l->tag_owner) < 0 ? -1 : 0;
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

int land_tag_write(land *l, const char *path, const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
	const char *leaf;
	if (errlen)
		*err = '\0';
	int pfd = carry_open_parent(l->root_fd, path, true, &l->tag_owner, &leaf);
	if (pfd < 0) {
		oa_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char tmp[40];
	int fd = temp_open(l, tmp, err, errlen), rc = -1;
	if (fd >= 0) {
		rc = oa_write_all(fd, bytes, len) < 0 || carry_temp_seal(fd, &l->tag_owner) < 0 ? -1 : 0;
		rc = close(fd) < 0 ? -1 : rc;
		rc = rc < 0 ? -1 : carry_place(l->blobs_fd, tmp, pfd, leaf);
		if (rc < 0 && errno == EXDEV)
			rc = write_direct(l, pfd, leaf, bytes, len);
		land_drop(l, tmp);
	}
	int e = errno;
	if (rc == 1)
		rc = compare_tag(l, pfd, leaf, bytes, len) == LT_SAME ? LT_SAME : LT_OTHER;
	else if (rc == 0)
		rc = fsync(pfd) < 0 ? -1 : LT_ABSENT;
	if (rc < 0 && !*err)
		oa_seterr(err, errlen, "%s: %s", path, strerror(e));
	close(pfd);
	return rc;
}
