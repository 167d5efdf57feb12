/* listedit.c - a manifest list tag rewritten without one child (listedit.h).
 *
 * What 0.40 does when a child goes (manifest/manifest.go at PR #16590's
 * head: removeDigestFromManifestLists, writeManifestData, linkManifest):
 * the list is re-marshalled without it, stored as the blob of its sha256,
 * and the tag is pointed at that blob: a relative symlink, else a hard
 * link, else a copy, made under a .manifest-* name and renamed over the
 * tag. We keep the kind the tag already has. */
#include "space/listedit.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *list_without_child(const uint8_t *bytes, size_t len, const char *child, size_t *out_len, size_t *left,
                         size_t *removed_out, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *o = json_loadb((const char *)bytes, len, JSON_DISABLE_EOF_CHECK, &jerr);
	json_t *v = json_object_get(o, "manifests");
	char *out = NULL;
	if (!json_is_object(o) || !json_is_array(v)) {
		snprintf(err, errlen, "the tag is not a manifest list");
		goto done;
	}
	size_t removed = 0;
	for (size_t i = json_array_size(v); i-- > 0;) {
		oa_digest_hex hex;
		const char *d = json_string_value(json_object_get(json_array_get(v, i), "digest"));
		if (d && oa_digest_parse(d, hex, NULL) && strcmp(hex, child) == 0) {
			json_array_remove(v, i);
			removed++;
		}
	}
	if (!removed) {
		snprintf(err, errlen, "no entry of the list names sha256:%s", child);
		goto done;
	}
	*left = json_array_size(v);
	*removed_out = removed;
	out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	*out_len = out ? strlen(out) : 0;
done:
	json_decref(o);
	return out;
}

uint8_t *list_tag_read(const oa_store *s, int pfd, const char *leaf, const list_new *rw, size_t *len,
                          char *why, size_t whylen)
{
	uint8_t *bytes = NULL;
	struct stat lst;
	if (fstatat(pfd, leaf, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(why, whylen, "cannot stat the tag: %s", strerror(errno));
		return NULL;
	}
	if (S_ISLNK(lst.st_mode) && rw->kind == 'l' && s->blobs_fd >= 0) {
		char target[OA_PATH_MAX], want[80];
		ssize_t n = readlinkat(pfd, leaf, target, sizeof target - 1);
		target[n > 0 ? n : 0] = '\0';
		snprintf(want, sizeof want, "sha256-%s", rw->old_hex);
		const char *base = strrchr(target, '/');
		if (strcmp(base ? base + 1 : target, want) != 0 ||
		    oa_read_file_at(s->blobs_fd, want, OA_MANIFEST_MAX, &bytes, len) < 0) {
			snprintf(why, whylen, "the tag no longer links to the list it was planned with");
			return NULL;
		}
	} else if (S_ISREG(lst.st_mode) && rw->kind != 'l') {
		if (oa_read_file_at(pfd, leaf, OA_MANIFEST_MAX, &bytes, len) < 0) {
			snprintf(why, whylen, "cannot read the tag: %s", strerror(errno));
			return NULL;
		}
	} else {
		snprintf(why, whylen, "the tag is no longer a %s", rw->kind == 'l' ? "symlink" : "regular file");
	}
	return bytes;
}

int list_tag_check(const oa_store *s, int pfd, const char *leaf, const list_new *rw, char *why,
                   size_t whylen)
{
	size_t len;
	uint8_t *bytes = list_tag_read(s, pfd, leaf, rw, &len, why, whylen);
	if (!bytes)
		return -1;
	oa_digest_hex hex;
	oa_sha256_hex(bytes, len, hex);
	free(bytes);
	if (strcmp(hex, rw->old_hex) != 0) {
		snprintf(why, whylen, "the list changed since it was planned");
		return -1;
	}
	return 0;
}

static bool same_bytes_at(int dirfd, const char *name, const char *bytes, size_t len)
{
	uint8_t *have;
	size_t n;
	if (oa_read_file_at(dirfd, name, len + 1, &have, &n) < 0)
		return false;
	bool same = n == len && memcmp(have, bytes, len) == 0;
	free(have);
	return same;
}

/* A new regular file dirfd/name (O_EXCL) holding bytes, synced, with the
 * given mode and (run as root) owner. 0, or -1 with errno (nothing left). */
static int write_new(int dirfd, const char *name, const char *bytes, size_t len, mode_t mode,
                     const struct stat *owner)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int rc = oa_write_all(fd, bytes, len);
	if (rc == 0 && geteuid() == 0 && fchown(fd, owner->st_uid, owner->st_gid) < 0)
		rc = -1;
	if (rc == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0))
		rc = -1;
	int e = errno;
	close(fd);
	if (rc < 0) {
		unlinkat(dirfd, name, 0);
		errno = e;
	}
	return rc;
}

/* A temporary name no other call uses: prefix, this process's id, sep, then
 * a number that changes with the time and with each call in this process
 * (a kill leaves the name of a dead process, which may come back with the
 * same id). */
static void temp_name(char *buf, size_t size, const char *prefix, const char *sep)
{
	long long stamp = (long long)(oa_wall_now_ns() % 1000000000000LL);
	snprintf(buf, size, "%s%ld%s%lld", prefix, (long)getpid(), sep, stamp + (long long)oa_run_sequence());
}

#define TEMP_ATTEMPTS 16u

/* write_new under a fresh temp_name of prefix in dirfd (tmp gets it),
 * another name while one is taken. */
static int write_new_temp(int dirfd, const char *prefix, char *tmp, size_t tmplen, const char *bytes, size_t len,
                          mode_t mode, const struct stat *owner)
{
	int rc = -1;
	for (unsigned i = 0; i < TEMP_ATTEMPTS; i++) {
		temp_name(tmp, tmplen, prefix, "");
		if ((rc = write_new(dirfd, tmp, bytes, len, mode, owner)) == 0 || errno != EEXIST)
			break;
	}
	return rc;
}

/* blobs/sha256-<new_list>: there with these bytes already, or written. */
static int blob_write(const oa_store *s, const list_new *rw, const struct stat *owner, char *why,
                      size_t whylen)
{
	char name[80], tmp[96];
	snprintf(name, sizeof name, "sha256-%s", rw->hex);
	struct stat st;
	for (int tries = 0; tries < 2; tries++) {
		if (fstatat(s->blobs_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISREG(st.st_mode) && same_bytes_at(s->blobs_fd, name, rw->bytes, rw->len))
				return 0;
			snprintf(why, whylen, "blobs/%s is there with other bytes: not replaced", name);
			return -1;
		}
		if (tries)
			break;
		/* create's temp form, sha256-<digits>: prune removes one a kill
		 * leaves after the grace period, and no two runs share it */
		if (write_new_temp(s->blobs_fd, "sha256-", tmp, sizeof tmp, rw->bytes, rw->len, 0644, owner) < 0) {
			snprintf(why, whylen, "cannot write blobs/%s: %s", tmp, strerror(errno));
			return -1;
		}
		/* link, never rename: a blob that appeared meanwhile is compared, not replaced */
		int rc = linkat(s->blobs_fd, tmp, s->blobs_fd, name, 0);
		int e = errno;
		unlinkat(s->blobs_fd, tmp, 0);
		if (rc == 0) {
			(void)fsync(s->blobs_fd);
			return 0;
		}
		if (e != EEXIST) {
			snprintf(why, whylen, "cannot link blobs/%s: %s", name, strerror(e));
			return -1;
		}
	}
	snprintf(why, whylen, "cannot write blobs/%s", name);
	return -1;
}

/* The new tag as pfd/tmp, of the old one's kind. 0, or -1 with errno
 * (EEXIST: the name is taken). */
static int tag_temp_make(const oa_store *s, int pfd, const list_new *rw, const struct stat *old, const char *tmp)
{
	if (rw->kind == 'l') {
		if (symlinkat(rw->link_target, pfd, tmp) < 0)
			return -1;
		if (geteuid() == 0)
			(void)fchownat(pfd, tmp, old->st_uid, old->st_gid, AT_SYMLINK_NOFOLLOW);
		return 0;
	}
	if (rw->kind == 'h') {
		char blob[80];
		snprintf(blob, sizeof blob, "sha256-%s", rw->hex);
		return linkat(s->blobs_fd, blob, pfd, tmp, 0);
	}
	return write_new(pfd, tmp, rw->bytes, rw->len, old->st_mode & 07777, old);
}

int list_tag_prepare(const oa_store *s, int pfd, const list_new *rw, const struct stat *old, char tmp[64],
                     char *why, size_t whylen)
{
	if (rw->kind != 'f' && (s->blobs_fd < 0 || blob_write(s, rw, old, why, whylen) < 0)) {
		if (s->blobs_fd < 0)
			snprintf(why, whylen, "the store has no blobs/");
		return -1;
	}
	int rc = -1;
	for (unsigned i = 0; i < TEMP_ATTEMPTS; i++) {
		temp_name(tmp, 64, OA_TAG_REWRITE_TEMP, "-");
		if ((rc = tag_temp_make(s, pfd, rw, old, tmp)) == 0 || errno != EEXIST)
			break;
	}
	if (rc < 0) {
		snprintf(why, whylen, "cannot make the new tag %s: %s", tmp, strerror(errno));
		return -1;
	}
	return 0;
}
