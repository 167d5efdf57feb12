/* dedupe.c - replace duplicate blobs by reflinks or hard links; see dedupe.h. */
#include "ollama_audit/dedupe.h"
#include "ollama_audit/platform.h"
#include "ollama_audit/util.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *oa_dedupe_how_name(oa_dedupe_how h)
{
	return h == OA_DEDUPE_HARDLINK ? "hardlink" : "reflink";
}

const char *oa_dedupe_status_name(oa_dedupe_status s)
{
	static const char *names[OA_DD_STATUS_COUNT] = {
		[OA_DD_PLANNED] = "planned",           [OA_DD_DONE] = "done",
		[OA_DD_REFUSED_OWNER] = "refused-owner", [OA_DD_OTHER_FS] = "other-filesystem",
		[OA_DD_UNSUPPORTED] = "reflink-unsupported", [OA_DD_CHANGED] = "changed",
		[OA_DD_MISMATCH] = "digest-mismatch",  [OA_DD_SERVER] = "server-running",
		[OA_DD_FAILED] = "failed",             [OA_DD_NOT_DONE] = "not-done",
	};
	return s < OA_DD_STATUS_COUNT ? names[s] : "failed";
}

/* ---- plan ----------------------------------------------------------------- */

static oa_dedupe_action *add_action(oa_dedupe_plan *p, const oa_dupe *d, const oa_dupe_copy *src,
                                    const oa_dupe_copy *dst, oa_dedupe_how how, oa_dedupe_status st)
{
	p->v = oa_xreallocarray(p->v, p->n + 1, sizeof *p->v);
	oa_dedupe_action *a = &p->v[p->n++];
	memset(a, 0, sizeof *a);
	memcpy(a->hex, d->hex, 65);
	a->src_store = src->store;
	a->dst_store = dst->store;
	a->src = src->blob;
	a->dst = dst->blob;
	a->how = how;
	a->status = st;
	a->bytes = dst->blob->st.st_nlink <= 1 ? dst->allocated : 0;
	if (st == OA_DD_PLANNED) {
		if (!a->bytes)
			snprintf(a->note, sizeof a->note,
			         "the duplicate has other hard links: replacing it frees nothing");
		p->bytes += a->bytes;
	}
	return a;
}

static bool same_owner(oa_store *const *stores, const oa_dupe_copy *x, const oa_dupe_copy *y)
{
	return stores[x->store]->root_st.st_uid == stores[y->store]->root_st.st_uid && x->uid == y->uid;
}

void oa_dedupe_plan_build(oa_store *const *stores, size_t n, const oa_dupes *d, oa_dedupe_how how,
                          oa_dedupe_plan *out)
{
	(void)n;
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < d->n; i++) {
		const oa_dupe *dp = &d->v[i];
		/* Copies worth replacing: own inode, not a symlink. */
		size_t nc = dp->n_copies;
		for (size_t j = 0; j < nc; j++) {
			const oa_dupe_copy *t = &dp->copies[j];
			if (t->same_inode_as >= 0 || t->symlink)
				continue;
			/* the first eligible copy on this filesystem is the group's keeper */
			const oa_dupe_copy *keeper = NULL, *first_elsewhere = NULL;
			for (size_t k = 0; k < nc; k++) {
				const oa_dupe_copy *o = &dp->copies[k];
				if (o->same_inode_as >= 0 || o->symlink)
					continue;
				if (o->dev == t->dev) {
					if (!keeper)
						keeper = o;
				} else if (!first_elsewhere) {
					first_elsewhere = o;
				}
			}
			if (keeper == t) {
				/* Alone on its filesystem: only a shared store would help. */
				bool alone = true;
				for (size_t k = 0; k < nc; k++)
					if (&dp->copies[k] != t && dp->copies[k].dev == t->dev &&
					    dp->copies[k].same_inode_as < 0 && !dp->copies[k].symlink)
						alone = false;
				if (alone && first_elsewhere && first_elsewhere < t) {
					oa_dedupe_action *a = add_action(out, dp, first_elsewhere, t, how, OA_DD_OTHER_FS);
					snprintf(a->note, sizeof a->note,
					         "on another filesystem: only a shared store (OLLAMA_MODELS) would save this");
				}
				continue;
			}
			if (how == OA_DEDUPE_REFLINK) {
				add_action(out, dp, keeper, t, how, OA_DD_PLANNED);
				continue;
			}
			/* Hard links: only to an earlier copy of the same owner. */
			const oa_dupe_copy *k2 = NULL;
			for (size_t k = 0; k < j; k++) {
				const oa_dupe_copy *o = &dp->copies[k];
				if (o->same_inode_as < 0 && !o->symlink && o->dev == t->dev &&
				    same_owner(stores, o, t)) {
					k2 = o;
					break;
				}
			}
			if (k2) {
				add_action(out, dp, k2, t, how, OA_DD_PLANNED);
			} else {
				oa_dedupe_action *a = add_action(out, dp, keeper, t, how, OA_DD_REFUSED_OWNER);
				snprintf(a->note, sizeof a->note,
				         "different owners (uid %lu and %lu): a hard link across users would let one "
				         "change the other's model; a reflink (without --hardlink) is safe",
				         (unsigned long)keeper->uid, (unsigned long)t->uid);
			}
		}
	}
}

void oa_dedupe_plan_free(oa_dedupe_plan *p)
{
	free(p->v);
	free(p->verified);
	memset(p, 0, sizeof *p);
}

/* ---- apply ---------------------------------------------------------------- */

/* sha256 of an open file; 0 = ok, -1 = error (errno), 1 = interrupted. */
static int sha256_fd(int fd, char hex[65], volatile sig_atomic_t *interrupt)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		errno = ENOMEM;
		return -1;
	}
	oa_advise_sequential(fd);
	size_t cap = 1u << 20;
	unsigned char *buf = oa_xmalloc(cap);
	uint64_t off = 0;
	int rc = 0;
	for (;;) {
		if (interrupt && *interrupt) {
			rc = 1;
			break;
		}
		ssize_t got = oa_pread_full(fd, buf, cap, off);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)got);
		off += (uint64_t)got;
		if ((size_t)got < cap)
			break;
	}
	if (rc == 0) {
		unsigned char md[32];
		unsigned int mdlen = 0;
		EVP_DigestFinal_ex(ctx, md, &mdlen);
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
	}
	int e = errno;
	free(buf);
	EVP_MD_CTX_free(ctx);
	errno = e;
	return rc;
}

static bool stat_same(const struct stat *a, const struct stat *b, bool ctime_too)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       oa_stat_mtime_ns(a) == oa_stat_mtime_ns(b) &&
	       (!ctime_too || oa_stat_ctime_ns(a) == oa_stat_ctime_ns(b));
}

static bool already_verified(const oa_dedupe_plan *p, const struct stat *st)
{
	for (size_t i = 0; i < p->n_verified; i++)
		if (p->verified[i].dev == st->st_dev && p->verified[i].ino == st->st_ino &&
		    p->verified[i].size == st->st_size && p->verified[i].mtime == oa_stat_mtime_ns(st))
			return true;
	return false;
}

static void remember_verified(oa_dedupe_plan *p, const struct stat *st)
{
	p->verified = oa_xreallocarray(p->verified, p->n_verified + 1, sizeof *p->verified);
	p->verified[p->n_verified++] =
		(struct oa_dd_verified){ st->st_dev, st->st_ino, st->st_size, oa_stat_mtime_ns(st) };
}

static int fail(oa_dedupe_action *a, oa_dedupe_status st, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(oa_dedupe_action *a, oa_dedupe_status st, int err, const char *fmt, ...)
{
	a->status = st;
	a->err = err;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->note, sizeof a->note, fmt, ap);
	va_end(ap);
	return -1;
}

/* Open a blob (never through a symlink) and check it is the file the scan
 * saw. Returns the fd, or -1 with the action failed. */
static int open_checked(const oa_store *s, const oa_blob *b, oa_dedupe_action *a, const char *side,
                        struct stat *st)
{
	int fd = openat(s->blobs_fd, b->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		fail(a, e == ENOENT || e == ELOOP ? OA_DD_CHANGED : OA_DD_FAILED, e, "%s %s/blobs/%s: %s",
		     side, s->root, b->name, strerror(e));
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || !stat_same(st, &b->st, false)) {
		close(fd);
		fail(a, OA_DD_CHANGED, 0, "%s %s/blobs/%s changed since the scan: skipped", side, s->root,
		     b->name);
		return -1;
	}
	return fd;
}

/* sha256 of an opened blob must be its name, and the file must not change
 * while it is read. 0, or -1 with the action failed. */
static int verify_checked(oa_dedupe_plan *p, const oa_store *s, const oa_blob *b, int fd,
                          const struct stat *st, oa_dedupe_action *a, const char *side,
                          volatile sig_atomic_t *interrupt)
{
	if (already_verified(p, st))
		return 0;
	/* (a hard link just made changes the source's ctime: compare from here) */
	struct stat before;
	if (fstat(fd, &before) < 0 || !stat_same(&before, st, false))
		return fail(a, OA_DD_CHANGED, 0, "%s %s/blobs/%s changed since the scan: skipped", side,
		            s->root, b->name);
	char hex[65];
	int rc = sha256_fd(fd, hex, interrupt);
	if (rc != 0) {
		int e = errno;
		if (rc > 0)
			return fail(a, OA_DD_NOT_DONE, 0, "interrupted");
		return fail(a, OA_DD_FAILED, e, "reading %s %s/blobs/%s: %s", side, s->root, b->name,
		            strerror(e));
	}
	if (strcmp(hex, b->hex) != 0)
		return fail(a, OA_DD_MISMATCH, 0, "%s %s/blobs/%s hashes to sha256:%s, not its name: left alone",
		            side, s->root, b->name, hex);
	struct stat after;
	if (fstat(fd, &after) < 0 || !stat_same(&before, &after, true))
		return fail(a, OA_DD_CHANGED, 0, "%s %s/blobs/%s changed while it was hashed: skipped", side,
		            s->root, b->name);
	remember_verified(p, st);
	return 0;
}

int oa_dedupe_apply(oa_dedupe_plan *p, oa_store *const *stores, oa_dedupe_action *a,
                    volatile sig_atomic_t *interrupt)
{
	if (a->status != OA_DD_PLANNED)
		return -1;
	if (interrupt && *interrupt)
		return fail(a, OA_DD_NOT_DONE, 0, "interrupted");
	const oa_store *ss = stores[a->src_store], *ds = stores[a->dst_store];
	if (ss->blobs_fd < 0 || ds->blobs_fd < 0)
		return fail(a, OA_DD_FAILED, EBADF, "blobs/ is not open");
	struct stat sst, dst;
	int sfd = open_checked(ss, a->src, a, "source", &sst);
	if (sfd < 0)
		return -1;
	int dfd = open_checked(ds, a->dst, a, "duplicate", &dst);
	if (dfd < 0) {
		close(sfd);
		return -1;
	}
	if (sst.st_dev != dst.st_dev) {
		close(sfd);
		close(dfd);
		return fail(a, OA_DD_OTHER_FS, EXDEV, "different filesystems");
	}
	if (a->how == OA_DEDUPE_HARDLINK && (sst.st_uid != dst.st_uid ||
	                                     ss->root_st.st_uid != ds->root_st.st_uid)) {
		close(sfd);
		close(dfd);
		return fail(a, OA_DD_REFUSED_OWNER, 0, "different owners: no hard link across users");
	}

	char tmp[96];
	snprintf(tmp, sizeof tmp, ".oa-dedupe.%ld.%.16s", (long)getpid(), a->hex);
	(void)unlinkat(ds->blobs_fd, tmp, 0); /* a leftover of this very pid: ours */
	if (a->how == OA_DEDUPE_REFLINK) {
		int tfd = openat(ds->blobs_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (tfd < 0) {
			int e = errno;
			close(sfd);
			close(dfd);
			return fail(a, OA_DD_FAILED, e, "cannot create %s/blobs/%s: %s", ds->root, tmp, strerror(e));
		}
		int rc = oa_reflink(sfd, tfd);
		int e = errno;
		if (rc == 0) {
			/* the replacement looks like the file it replaces */
			int64_t mt = oa_stat_mtime_ns(&dst);
			struct timespec ts[2] = { { 0, UTIME_OMIT },
			                          { (time_t)(mt / 1000000000), (long)(mt % 1000000000) } };
			/* never hand another user's blob over to us: keep its owner or fail */
			if ((fchown(tfd, dst.st_uid, dst.st_gid) < 0 && dst.st_uid != geteuid()) ||
			    fchmod(tfd, dst.st_mode & 07777) < 0 || futimens(tfd, ts) < 0) {
				rc = -1;
				e = errno;
			}
		}
		struct stat tst;
		if (rc == 0 && (fstat(tfd, &tst) < 0 || tst.st_size != sst.st_size)) {
			rc = -1;
			e = EIO;
		}
		close(tfd);
		if (rc < 0) {
			unlinkat(ds->blobs_fd, tmp, 0);
			close(sfd);
			close(dfd);
			if (e == EOPNOTSUPP || e == ENOTSUP || e == EINVAL || e == ENOTTY || e == EXDEV)
				return fail(a, OA_DD_UNSUPPORTED, e,
				            "this filesystem cannot reflink (%s); --hardlink works between stores of one owner",
				            strerror(e));
			return fail(a, OA_DD_FAILED, e, "reflink into %s/blobs: %s", ds->root, strerror(e));
		}
	} else {
		if (linkat(ss->blobs_fd, a->src->name, ds->blobs_fd, tmp, 0) < 0) {
			int e = errno;
			close(sfd);
			close(dfd);
			return fail(a, OA_DD_FAILED, e, "hard link into %s/blobs: %s", ds->root, strerror(e));
		}
		/* the link must be the file we verified */
		struct stat lst;
		if (fstatat(ds->blobs_fd, tmp, &lst, AT_SYMLINK_NOFOLLOW) < 0 || lst.st_ino != sst.st_ino ||
		    lst.st_dev != sst.st_dev) {
			unlinkat(ds->blobs_fd, tmp, 0);
			close(sfd);
			close(dfd);
			return fail(a, OA_DD_CHANGED, 0, "source was replaced while linking: skipped");
		}
	}
	/* The clone or link is in place under a temporary name (cheap: a reflink
	 * shares extents); now the content of both sides must be the digest. */
	if (verify_checked(p, ss, a->src, sfd, &sst, a, "source", interrupt) < 0 ||
	    verify_checked(p, ds, a->dst, dfd, &dst, a, "duplicate", interrupt) < 0) {
		unlinkat(ds->blobs_fd, tmp, 0);
		close(sfd);
		close(dfd);
		return -1;
	}
	/* Last re-check: both names still name the verified, unchanged files. */
	struct stat now_s, now_d, fd_s, fd_d;
	bool ok = fstatat(ss->blobs_fd, a->src->name, &now_s, AT_SYMLINK_NOFOLLOW) == 0 &&
	          fstatat(ds->blobs_fd, a->dst->name, &now_d, AT_SYMLINK_NOFOLLOW) == 0 &&
	          fstat(sfd, &fd_s) == 0 && fstat(dfd, &fd_d) == 0 &&
	          stat_same(&now_s, &sst, false) && stat_same(&now_d, &dst, false) &&
	          stat_same(&fd_d, &dst, true);
	close(sfd);
	close(dfd);
	if (!ok) {
		unlinkat(ds->blobs_fd, tmp, 0);
		return fail(a, OA_DD_CHANGED, 0, "a file changed just before the switch: skipped");
	}
	if (renameat(ds->blobs_fd, tmp, ds->blobs_fd, a->dst->name) < 0) {
		int e = errno;
		unlinkat(ds->blobs_fd, tmp, 0);
		return fail(a, OA_DD_FAILED, e, "rename over %s/blobs/%s: %s", ds->root, a->dst->name,
		            strerror(e));
	}
	(void)fsync(ds->blobs_fd);
	a->status = OA_DD_DONE;
	a->err = 0;
	return 0;
}
