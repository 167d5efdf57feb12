/* dedupe.c - replace duplicate blobs by reflinks or hard links; see dedupe.h. */
#include "ollama_audit/dedupe.h"
#include "ollama_audit/guard.h"
#include "base/keyed.h"
#include "base/platform.h"
#include "base/util.h"

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
	static const char *const names[OA_DD_STATUS_COUNT] = {
		[OA_DD_PLANNED] = "planned",           [OA_DD_DONE] = "done",
		[OA_DD_REFUSED_OWNER] = "refused-owner", [OA_DD_OTHER_FS] = "other-filesystem",
		[OA_DD_UNSUPPORTED] = "reflink-unsupported", [OA_DD_CHANGED] = "changed",
		[OA_DD_MISMATCH] = "digest-mismatch",  [OA_DD_SERVER] = "server-running",
		[OA_DD_FAILED] = "failed",             [OA_DD_NOT_DONE] = "not-done",
		[OA_DD_JUNK] = "junk",
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
	memcpy(a->hex, d->hex, sizeof(oa_digest_hex));
	a->src_store = src->store;
	a->dst_store = dst->store;
	a->src = src->blob;
	a->dst = dst->blob;
	a->how = how;
	a->group = d;
	a->status = st;
	a->bytes = dst->blob->st.nlink <= 1 ? dst->allocated : 0;
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

/* A copy dedupe leaves alone: another name of an inode already counted, a
 * symlink, or a file all of whose extents it already shares with an earlier
 * copy (an earlier reflink). */
static bool not_eligible(const oa_dupe_copy *c)
{
	return c->same_inode_as >= 0 || c->symlink || c->shared_with >= 0 || c->unreferenced;
}

/* Who a digest's copies are planned against, found once for the digest
 * (sorting, not comparing each copy with each). Per eligible copy: the
 * keeper of its filesystem (its first eligible copy), whether it is alone
 * there, and the first eligible copy there of the same owner; and the
 * first eligible copy of all, and the first on another filesystem than
 * that one's. */
typedef struct copy_roles {
	size_t *keeper, *owner_first, *on_fs;
	long first, first_other;
} copy_roles;

/* Each copy of v[0..n) (sorted), the first of its run. */
static void firsts(const oa_keyed *v, size_t n, size_t *first_of, size_t *count_of)
{
	for (size_t g = 0, end; g < n; g = end) {
		end = oa_keyed_run(v, n, g);
		for (size_t i = g; i < end; i++) {
			first_of[v[i].i] = v[g].i;
			if (count_of)
				count_of[v[i].i] = end - g;
		}
	}
}

static void roles_find(oa_store *const *stores, const oa_dupe *dp, copy_roles *r)
{
	size_t nc = dp->n_copies ? dp->n_copies : 1;
	r->keeper = oa_xcalloc(nc, sizeof *r->keeper);
	r->owner_first = oa_xcalloc(nc, sizeof *r->owner_first);
	r->on_fs = oa_xcalloc(nc, sizeof *r->on_fs);
	r->first = r->first_other = -1;
	oa_keyed *fs = oa_xcalloc(nc, sizeof *fs), *owner = oa_xcalloc(nc, sizeof *owner);
	size_t n = 0;
	for (size_t k = 0; k < dp->n_copies; k++) {
		const oa_dupe_copy *o = &dp->copies[k];
		if (not_eligible(o))
			continue;
		if (r->first < 0)
			r->first = (long)k;
		else if (r->first_other < 0 && o->dev != dp->copies[r->first].dev)
			r->first_other = (long)k;
		uint64_t who = (uint64_t)stores[o->store]->root_st.st_uid << 32 ^ (uint64_t)o->uid;
		fs[n] = (oa_keyed){ o->dev, 0, k };
		owner[n++] = (oa_keyed){ o->dev, who, k };
	}
	oa_keyed_sort(fs, n);
	oa_keyed_sort(owner, n);
	firsts(fs, n, r->keeper, r->on_fs);
	firsts(owner, n, r->owner_first, NULL);
	free(fs);
	free(owner);
}

static void roles_free(copy_roles *r)
{
	free(r->keeper);
	free(r->owner_first);
	free(r->on_fs);
}

/* Junk: a copy that stays (referenced), else any other. */
static const oa_dupe_copy *junk_source(const oa_dupe *dp, const copy_roles *r, size_t j)
{
	if (r->first >= 0)
		return &dp->copies[r->first];
	return dp->n_copies > 1 ? &dp->copies[j == 0 ? 1 : 0] : &dp->copies[j];
}

/* Hard links: only to an earlier copy of the same owner, on t's filesystem. */
static const oa_dupe_copy *earlier_of_owner(oa_store *const *stores, const oa_dupe *dp, const copy_roles *r,
                                            size_t j)
{
	const oa_dupe_copy *t = &dp->copies[j];
	const oa_dupe_copy *o = &dp->copies[r->owner_first[j]];
	if (r->owner_first[j] == j)
		return NULL; /* one owner, one key: none before it */
	if (o->dev == t->dev && same_owner(stores, o, t))
		return o;
	for (size_t k = 0; k < j; k++) { /* (two owners with the same key: ids wider than 32 bits) */
		o = &dp->copies[k];
		if (!not_eligible(o) && o->dev == t->dev && same_owner(stores, o, t))
			return o;
	}
	return NULL;
}

/* The action for the eligible copy j of dp. */
static void plan_copy(oa_store *const *stores, const oa_dupe *dp, const copy_roles *r, size_t j,
                      oa_dedupe_how how, oa_dedupe_plan *out)
{
	const oa_dupe_copy *t = &dp->copies[j];
	const oa_dupe_copy *keeper = &dp->copies[r->keeper[j]];
	if (keeper == t) {
		/* Alone on its filesystem: only a shared store would help. */
		long other = r->first >= 0 && dp->copies[r->first].dev != t->dev ? r->first : r->first_other;
		if (r->on_fs[j] == 1 && other >= 0 && (size_t)other < j) {
			oa_dedupe_action *a = add_action(out, dp, &dp->copies[other], t, how, OA_DD_OTHER_FS);
			snprintf(a->note, sizeof a->note,
			         "on another filesystem: only a shared store (OLLAMA_MODELS) would save this");
		}
		return;
	}
	if (how == OA_DEDUPE_REFLINK) {
		add_action(out, dp, keeper, t, how, OA_DD_PLANNED);
		return;
	}
	const oa_dupe_copy *k2 = earlier_of_owner(stores, dp, r, j);
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

void oa_dedupe_plan_build(oa_store *const *stores, const oa_dupes *d, oa_dedupe_how how,
                          oa_dedupe_plan *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < d->n; i++) {
		const oa_dupe *dp = &d->v[i];
		copy_roles r;
		roles_find(stores, dp, &r);
		/* Copies worth replacing: own inode, not a symlink, extents not shared yet. */
		for (size_t j = 0; j < dp->n_copies; j++) {
			const oa_dupe_copy *t = &dp->copies[j];
			if (t->unreferenced && t->same_inode_as < 0 && !t->symlink && t->shared_with < 0) {
				/* junk: removing it frees it all, sharing it would keep it */
				oa_dedupe_action *a = add_action(out, dp, junk_source(dp, &r, j), t, how, OA_DD_JUNK);
				snprintf(a->note, sizeof a->note,
				         "nothing in this store references it: `prune` removes it, freeing all of it");
			} else if (!not_eligible(t)) {
				plan_copy(stores, dp, &r, j, how, out);
			}
		}
		roles_free(&r);
	}
}

/* Where the reflink probe may put its unnamed scratch file: the store
 * root's real parent (~/.ollama for ~/.ollama/models), found through the
 * root's own descriptor, not its spelling (`--store S/blobs/..` names S).
 * Never inside the store: a dry run writes nothing there. -1 when the
 * parent is on another filesystem than blobs/ or cannot be opened: the
 * filesystem type answers then. */
static int scratch_dir(const oa_store *s)
{
	if (s->root_fd < 0)
		return -1;
	int fd = openat(s->root_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat a, b;
	if (fd >= 0 && (fstat(fd, &a) < 0 || fstat(s->blobs_fd, &b) < 0 || a.st_dev != b.st_dev ||
	                (a.st_dev == s->root_st.st_dev && a.st_ino == s->root_st.st_ino))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void oa_dedupe_plan_probe(oa_dedupe_plan *p, oa_store *const *stores, bool may_write_scratch)
{
	/* one answer per target filesystem */
	struct { dev_t dev; int can; char fs[48]; int err; } seen[16];
	size_t n_seen = 0;
	for (size_t i = 0; i < p->n; i++) {
		oa_dedupe_action *a = &p->v[i];
		if (a->status != OA_DD_PLANNED || a->how != OA_DEDUPE_REFLINK)
			continue;
		size_t k = 0;
		while (k < n_seen && seen[k].dev != a->dst->st.dev)
			k++;
		if (k == n_seen) {
			int can = -1, err = ENOENT;
			char fs[48] = "";
			int sfd = openat(stores[a->src_store]->blobs_fd, a->src->name,
			                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			/* Testing aid: OA_TEST_REFLINK=yes|no answers for every
			 * filesystem, so outputs that must not depend on the test
			 * machine's /tmp (golden files) are the same everywhere. */
			const char *forced = getenv("OA_TEST_REFLINK");
			if (forced && (strcmp(forced, "yes") == 0 || strcmp(forced, "no") == 0)) {
				can = strcmp(forced, "yes") == 0;
				snprintf(fs, sizeof fs, "the filesystem");
			} else if (sfd >= 0) {
				int scratch = may_write_scratch ? scratch_dir(stores[a->dst_store]) : -1;
				can = oa_reflink_probe(sfd, stores[a->dst_store]->blobs_fd, scratch, fs, sizeof fs);
				err = errno;
				if (scratch >= 0)
					close(scratch);
			}
			if (sfd >= 0)
				close(sfd);
			if (n_seen == sizeof seen / sizeof seen[0])
				k = n_seen - 1; /* more filesystems than that: the last slot is reused */
			else
				n_seen++;
			seen[k].dev = a->dst->st.dev;
			seen[k].can = can;
			seen[k].err = err;
			snprintf(seen[k].fs, sizeof seen[k].fs, "%s", fs[0] ? fs : "its filesystem");
		}
		if (seen[k].can == 0) {
			a->status = OA_DD_UNSUPPORTED;
			p->bytes -= a->bytes;
			snprintf(a->note, sizeof a->note,
			         "%s cannot reflink (tested): --hardlink works between stores of one owner",
			         seen[k].fs);
		} else if (seen[k].can < 0 && !a->note[0]) {
			snprintf(a->note, sizeof a->note, "could not test whether %s can reflink (%s)", seen[k].fs,
			         strerror(seen[k].err));
		}
	}
}

void oa_dedupe_plan_free(oa_dedupe_plan *p)
{
	free(p->v);
	free(p->verified);
	free(p->subst);
	free(p->busy);
	memset(p, 0, sizeof *p);
}

/* ---- apply ---------------------------------------------------------------- */

/* sha256 of an open file; 0 = ok, -1 = error (errno), 1 = interrupted. */
static int sha256_fd(int fd, oa_digest_hex hex, volatile sig_atomic_t *interrupt)
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

/* st is the file the scan saw as fi (ctime_too: with the same ctime). */
static bool is_as_scanned(const struct stat *st, const oa_file_info *fi, bool ctime_too)
{
	return (uint64_t)st->st_dev == fi->dev && (uint64_t)st->st_ino == fi->ino && st->st_size == fi->size &&
	       oa_stat_mtime_ns(st) == fi->mtime_ns && (!ctime_too || oa_stat_ctime_ns(st) == fi->ctime_ns);
}

static bool already_verified(const oa_dedupe_plan *p, const struct stat *st)
{
	for (size_t i = 0; i < p->n_verified; i++)
		if (p->verified[i].dev == st->st_dev && p->verified[i].ino == st->st_ino &&
		    p->verified[i].size == st->st_size && p->verified[i].mtime == oa_stat_mtime_ns(st) &&
		    p->verified[i].ctime == oa_stat_ctime_ns(st))
			return true;
	return false;
}

static void remember_verified(oa_dedupe_plan *p, const struct stat *st)
{
	p->verified = oa_xreallocarray(p->verified, p->n_verified + 1, sizeof *p->verified);
	p->verified[p->n_verified++] = (struct oa_dd_verified){
		st->st_dev, st->st_ino, st->st_size, oa_stat_mtime_ns(st), oa_stat_ctime_ns(st)
	};
}

static int fail(oa_dedupe_action *a, oa_dedupe_status st, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Append text to an action's note (truncated to fit). */
static void note_add(oa_dedupe_action *a, const char *sep, const char *text)
{
	size_t n = strlen(a->note), cap = sizeof a->note - 1;
	if (n && sep)
		for (; *sep && n < cap; sep++)
			a->note[n++] = *sep;
	for (; *text && n < cap; text++)
		a->note[n++] = *text;
	a->note[n] = '\0';
}

static int fail(oa_dedupe_action *a, oa_dedupe_status st, int err, const char *fmt, ...)
{
	a->status = st;
	a->err = err;
	if (!a->keeper_bad) /* else keep what was said about the corrupt kept copy */
		a->note[0] = '\0';
	char msg[sizeof a->note];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	note_add(a, "; ", msg);
	return -1;
}

/* Open a blob read-only, never through a symlink and without blocking on a
 * FIFO, and check it is the regular file the scan saw (ctime_too: its ctime
 * as well). Returns the fd, or -1 with *err = the errno, or 0 when the file
 * is not the one scanned. */
static int open_blob(const oa_store *s, const oa_blob *b, bool ctime_too, struct stat *st, int *err)
{
	int fd = openat(s->blobs_fd, b->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || !is_as_scanned(st, &b->st, ctime_too)) {
		close(fd);
		*err = 0;
		return -1;
	}
	return fd;
}

static int open_checked(const oa_store *s, const oa_blob *b, bool ctime_too, oa_dedupe_action *a,
                        const char *side, struct stat *st)
{
	int e;
	int fd = open_blob(s, b, ctime_too, st, &e);
	if (fd >= 0)
		return fd;
	if (e == 0 || e == ENOENT || e == ELOOP)
		fail(a, OA_DD_CHANGED, e, "%s %s/blobs/%s changed since the scan: skipped", side, s->root,
		     b->name);
	else
		fail(a, OA_DD_FAILED, e, "%s %s/blobs/%s: %s", side, s->root, b->name, strerror(e));
	return -1;
}

/* Hash an open file and compare with the digest; the file must not change
 * (size, mtime, ctime) while it is read. 0 = matches, 1 = another digest
 * (in got), 2 = it changed while read, 3 = interrupted, -1 = read error. */
enum { H_OK = 0, H_MISMATCH = 1, H_CHANGED = 2, H_INTERRUPTED = 3 };
static int hash_is(int fd, const char *want, oa_digest_hex got, struct stat *before,
                   volatile sig_atomic_t *interrupt)
{
	if (fstat(fd, before) < 0)
		return -1;
	int rc = sha256_fd(fd, got, interrupt);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return H_INTERRUPTED;
	struct stat after;
	if (fstat(fd, &after) < 0 || !stat_same(before, &after, true))
		return H_CHANGED;
	return strcmp(got, want) == 0 ? H_OK : H_MISMATCH;
}

/* A blob is good when its content is its digest. Cached by (dev, ino, size,
 * mtime, ctime) for this run: only to choose a kept copy. 0 good, 1 bad,
 * -1 error (action failed). */
static int blob_good(oa_dedupe_plan *p, const oa_store *s, const oa_blob *b, int fd,
                     oa_dedupe_action *a, const char *side, volatile sig_atomic_t *interrupt, oa_digest_hex got)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && already_verified(p, &st))
		return 0;
	int rc = hash_is(fd, b->hex, got, &st, interrupt);
	switch (rc) {
	case H_OK:
		remember_verified(p, &st);
		return 0;
	case H_MISMATCH:
		return 1;
	case H_CHANGED:
		return fail(a, OA_DD_CHANGED, 0, "%s %s/blobs/%s changed while it was hashed: skipped", side,
		            s->root, b->name);
	case H_INTERRUPTED:
		return fail(a, OA_DD_NOT_DONE, 0, "interrupted");
	default: {
		int e = errno;
		return fail(a, OA_DD_FAILED, e, "reading %s %s/blobs/%s: %s", side, s->root, b->name, strerror(e));
	}
	}
}

/* Testing aid (tests/cli/test_dedupe.py): with OA_TEST_DEDUPE_PAUSE=DIR,
 * apply stops at named points (oa_test_pause): open (before the files are
 * opened), clone (before the FICLONE), rename (before the rename). */
static void test_pause(const char *point, size_t idx, volatile sig_atomic_t *interrupt)
{
	oa_test_pause(getenv("OA_TEST_DEDUPE_PAUSE"), point, idx, interrupt);
}

static struct oa_dd_subst *find_subst(const oa_dedupe_plan *p, const oa_blob *b)
{
	for (size_t i = 0; i < p->n_subst; i++)
		if (p->subst[i].bad == b)
			return &p->subst[i];
	return NULL;
}

static void add_subst(oa_dedupe_plan *p, const oa_blob *bad, size_t store, oa_blob *good)
{
	if (find_subst(p, bad))
		return;
	p->subst = oa_xreallocarray(p->subst, p->n_subst + 1, sizeof *p->subst);
	p->subst[p->n_subst++] = (struct oa_dd_subst){ bad, store, good, false };
}

/* The next copy of the group (store order) that hashes to its digest, for
 * a kept copy that does not; NULL when there is none. -1 with the action
 * failed on an error. */
static int find_good_copy(oa_dedupe_plan *p, oa_store *const *stores, oa_dedupe_action *a,
                          const oa_blob *bad, size_t *store, oa_blob **good,
                          volatile sig_atomic_t *interrupt)
{
	const oa_dupe *g = a->group;
	const oa_store *ds = stores[a->dst_store];
	*good = NULL;
	for (size_t k = 0; g && k < g->n_copies; k++) {
		const oa_dupe_copy *o = &g->copies[k];
		if (o->same_inode_as >= 0 || o->symlink || o->dev != a->dst->st.dev || o->blob == bad ||
		    find_subst(p, o->blob))
			continue;
		const oa_store *os = stores[o->store];
		if (a->how == OA_DEDUPE_HARDLINK &&
		    (o->uid != a->dst->st.uid || os->root_st.st_uid != ds->root_st.st_uid))
			continue;
		struct stat st;
		int e;
		int fd = open_blob(os, o->blob, false, &st, &e);
		if (fd < 0)
			continue; /* replaced already, or gone: not a candidate */
		oa_digest_hex got;
		int rc = blob_good(p, os, o->blob, fd, a, "copy", interrupt, got);
		close(fd);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			add_subst(p, o->blob, 0, NULL);
			continue;
		}
		*store = o->store;
		*good = o->blob;
		return 0;
	}
	return 0;
}

/* a->src is known not to hash to its digest: take its replacement (found
 * on first need). 0 with a->src updated, 1 when the replacement is the
 * duplicate itself (nothing to do: it becomes the kept copy), -1 with the
 * action failed. */
static int fall_back(oa_dedupe_plan *p, oa_store *const *stores, oa_dedupe_action *a,
                     volatile sig_atomic_t *interrupt)
{
	for (size_t hop = 0; hop <= p->n_subst; hop++) {
		struct oa_dd_subst *sb = find_subst(p, a->src);
		if (!sb)
			return 0;
		if (!sb->searched) {
			size_t store = 0;
			oa_blob *good = NULL;
			if (find_good_copy(p, stores, a, sb->bad, &store, &good, interrupt) < 0)
				return -1;
			sb = find_subst(p, a->src); /* (the array may have moved) */
			sb->searched = true;
			sb->store = store;
			sb->good = good;
		}
		if (!sb->good)
			break;
		if (sb->good == a->dst) {
			a->status = OA_DD_MISMATCH;
			note_add(a, "; ", "this copy, which verifies, is kept instead");
			return 1;
		}
		a->src_store = sb->store;
		a->src = sb->good;
	}
	fail(a, OA_DD_MISMATCH, 0, "no other copy on this filesystem hashes to its digest");
	return -1;
}

/* Mark the kept copy bad and say so in the note (kept in front of later notes). */
static void keeper_is_bad(oa_dedupe_plan *p, oa_store *const *stores, oa_dedupe_action *a, const char *got)
{
	const oa_store *ss = stores[a->src_store];
	add_subst(p, a->src, 0, NULL);
	if (!a->keeper_bad)
		snprintf(a->note, sizeof a->note, "the kept copy %s/blobs/%.19s... is corrupt (sha256:%.12s...)",
		         ss->root, a->src->name, got);
	a->keeper_bad = true;
}

/* One attempt to replace a duplicate, shared by its steps. Each step returns
 * 0 to go on, -1 failed (status set), 1 the kept copy does not hash to its
 * digest (a fallback may help). */
typedef struct attempt {
	oa_dedupe_plan *p;
	oa_dedupe_action *a;
	const oa_store *ss, *ds;  /* the kept copy's store, the duplicate's */
	volatile sig_atomic_t *interrupt;
	size_t idx;
	int sfd, dfd, tfd;
	struct stat sst, dst;     /* kept copy and duplicate as opened */
	struct stat hst;          /* the duplicate as hashed */
	bool tmp_made;
	char tmp[96];
	oa_digest_hex got;
} attempt;

/* The duplicate may be replaced: same filesystem, owners a hard link may
 * join, and its content is its digest (a copy that is not is left alone). */
static int check_duplicate(attempt *t)
{
	oa_dedupe_action *a = t->a;
	if (t->sst.st_dev != t->dst.st_dev)
		return fail(a, OA_DD_OTHER_FS, EXDEV, "different filesystems");
	if (a->how == OA_DEDUPE_HARDLINK &&
	    (t->sst.st_uid != t->dst.st_uid || t->ss->root_st.st_uid != t->ds->root_st.st_uid))
		return fail(a, OA_DD_REFUSED_OWNER, 0, "different owners: no hard link across users");
	int rc = hash_is(t->dfd, a->dst->hex, t->got, &t->hst, t->interrupt);
	if (rc == H_OK)
		return 0;
	int e = errno;
	if (rc == H_MISMATCH)
		return fail(a, OA_DD_MISMATCH, 0, "duplicate %s/blobs/%s hashes to sha256:%s, not its name: left alone",
		            t->ds->root, a->dst->name, t->got);
	if (rc == H_CHANGED)
		return fail(a, OA_DD_CHANGED, 0, "duplicate %s/blobs/%s changed while it was hashed: skipped",
		            t->ds->root, a->dst->name);
	if (rc == H_INTERRUPTED)
		return fail(a, OA_DD_NOT_DONE, 0, "interrupted");
	return fail(a, OA_DD_FAILED, e, "reading duplicate %s/blobs/%s: %s", t->ds->root, a->dst->name,
	            strerror(e));
}

/* Clone the kept copy into the temporary name and make it look like the
 * file it replaces (owner, mode, mtime), durably. */
static int clone_to_tmp(attempt *t, bool *gid_kept)
{
	oa_dedupe_action *a = t->a;
	t->tfd = openat(t->ds->blobs_fd, t->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (t->tfd < 0) {
		int e = errno;
		return fail(a, OA_DD_FAILED, e, "cannot create %s/blobs/%s: %s", t->ds->root, t->tmp, strerror(e));
	}
	t->tmp_made = true;
	test_pause("clone", t->idx, t->interrupt);
	int rc = oa_reflink(t->sfd, t->tfd);
	int e = errno;
	*gid_kept = true;
	if (rc == 0) {
		int64_t mt = oa_stat_mtime_ns(&t->dst);
		struct timespec ts[2] = { { 0, UTIME_OMIT },
		                          { (time_t)(mt / 1000000000), (long)(mt % 1000000000) } };
		/* never hand another user's blob over to us: keep its owner or fail */
		if (fchown(t->tfd, t->dst.st_uid, t->dst.st_gid) < 0) {
			if (t->dst.st_uid != geteuid()) {
				rc = -1;
				e = errno;
			} else {
				*gid_kept = false; /* our own file: only its group could not be kept */
			}
		}
		if (rc == 0 && (fchmod(t->tfd, t->dst.st_mode & 07777) < 0 || futimens(t->tfd, ts) < 0 ||
		                fsync(t->tfd) < 0)) {
			rc = -1;
			e = errno;
		}
	}
	if (rc == 0)
		return 0;
	if (e == EOPNOTSUPP || e == ENOTSUP || e == EINVAL || e == ENOTTY || e == EXDEV)
		return fail(a, OA_DD_UNSUPPORTED, e,
		            "this filesystem cannot reflink (%s); --hardlink works between stores of one owner",
		            strerror(e));
	return fail(a, OA_DD_FAILED, e, "reflink into %s/blobs: %s", t->ds->root, strerror(e));
}

/* The reflink step: a good kept copy, cloned; the clone is final
 * (copy-on-write), so it is what gets hashed, not the kept copy, whose owner
 * may rewrite it at any moment. */
static int reflink_step(attempt *t)
{
	oa_dedupe_action *a = t->a;
	/* Choose a good kept copy (cached per run); the clone is what counts. */
	int good = blob_good(t->p, t->ss, a->src, t->sfd, a, "kept copy", t->interrupt, t->got);
	if (good != 0)
		return good > 0 ? 1 : -1;
	bool gid_kept = true;
	if (clone_to_tmp(t, &gid_kept) < 0)
		return -1;
	struct stat tst;
	int rc = hash_is(t->tfd, a->hex, t->got, &tst, t->interrupt);
	if (rc != H_OK) {
		int e2 = errno;
		if (rc == H_MISMATCH) {
			add_subst(t->p, a->src, 0, NULL); /* never use it again in this run */
			return fail(a, OA_DD_MISMATCH, 0,
			            "the clone of %s/blobs/%s hashes to sha256:%s: the kept copy changed while it was "
			            "cloned: nothing replaced",
			            t->ss->root, a->src->name, t->got);
		}
		if (rc == H_INTERRUPTED)
			return fail(a, OA_DD_NOT_DONE, 0, "interrupted");
		if (rc == H_CHANGED)
			return fail(a, OA_DD_CHANGED, 0, "the clone changed while it was hashed: skipped");
		return fail(a, OA_DD_FAILED, e2, "reading the clone %s/blobs/%s: %s", t->ds->root, t->tmp,
		            strerror(e2));
	}
	if (!gid_kept && tst.st_gid != t->dst.st_gid) {
		char m[160];
		snprintf(m, sizeof m, "the replacement's group is gid %lu: changing it to gid %lu was not allowed",
		         (unsigned long)tst.st_gid, (unsigned long)t->dst.st_gid);
		note_add(a, "; ", m);
	}
	test_pause("rename", t->idx, t->interrupt);
	/* Last re-check: the clone is unchanged since it was hashed and still
	 * under its temporary name. */
	struct stat now_t, name_t;
	if (fstat(t->tfd, &now_t) < 0 || !stat_same(&now_t, &tst, true) ||
	    fstatat(t->ds->blobs_fd, t->tmp, &name_t, AT_SYMLINK_NOFOLLOW) < 0 ||
	    name_t.st_dev != tst.st_dev || name_t.st_ino != tst.st_ino)
		return fail(a, OA_DD_CHANGED, 0, "the clone changed before the switch: skipped");
	return 0;
}

/* The hard-link step: link the kept copy under the temporary name, then
 * hash it (the owner of both is one user: only they could change it later). */
static int hardlink_step(attempt *t)
{
	oa_dedupe_action *a = t->a;
	const oa_store *ss = t->ss;
	if (linkat(ss->blobs_fd, a->src->name, t->ds->blobs_fd, t->tmp, 0) < 0) {
		int e = errno;
		return fail(a, OA_DD_FAILED, e, "hard link into %s/blobs: %s", t->ds->root, strerror(e));
	}
	t->tmp_made = true;
	/* the link must be the file we opened */
	struct stat lst;
	if (fstatat(t->ds->blobs_fd, t->tmp, &lst, AT_SYMLINK_NOFOLLOW) < 0 ||
	    lst.st_ino != t->sst.st_ino || lst.st_dev != t->sst.st_dev)
		return fail(a, OA_DD_CHANGED, 0, "kept copy was replaced while linking: skipped");
	struct stat kst;
	int rc = hash_is(t->sfd, a->hex, t->got, &kst, t->interrupt);
	if (rc == H_MISMATCH)
		return 1;
	if (rc != H_OK) {
		int e = errno;
		if (rc == H_INTERRUPTED)
			return fail(a, OA_DD_NOT_DONE, 0, "interrupted");
		if (rc == H_CHANGED)
			return fail(a, OA_DD_CHANGED, 0, "kept copy %s/blobs/%s changed while it was hashed: skipped",
			            ss->root, a->src->name);
		return fail(a, OA_DD_FAILED, e, "reading kept copy %s/blobs/%s: %s", ss->root, a->src->name,
		            strerror(e));
	}
	test_pause("rename", t->idx, t->interrupt);
	struct stat now_k;
	if (fstat(t->sfd, &now_k) < 0 || !stat_same(&now_k, &kst, true) ||
	    fstatat(t->ds->blobs_fd, t->tmp, &lst, AT_SYMLINK_NOFOLLOW) < 0 || lst.st_ino != kst.st_ino ||
	    lst.st_dev != kst.st_dev)
		return fail(a, OA_DD_CHANGED, 0, "the kept copy changed before the switch: skipped");
	return 0;
}

/* Rename the temporary file over the duplicate, if the duplicate's name
 * still names the verified, unchanged file. */
static int switch_in(attempt *t)
{
	oa_dedupe_action *a = t->a;
	const oa_store *ds = t->ds;
	struct stat now_d, fd_d;
	if (fstatat(ds->blobs_fd, a->dst->name, &now_d, AT_SYMLINK_NOFOLLOW) < 0 || fstat(t->dfd, &fd_d) < 0 ||
	    !stat_same(&now_d, &t->dst, true) || !stat_same(&fd_d, &t->hst, true))
		return fail(a, OA_DD_CHANGED, 0, "the duplicate changed just before the switch: skipped");
	if (t->interrupt && *t->interrupt)
		return fail(a, OA_DD_NOT_DONE, 0, "interrupted");
	if (renameat(ds->blobs_fd, t->tmp, ds->blobs_fd, a->dst->name) < 0) {
		int e = errno;
		return fail(a, OA_DD_FAILED, e, "rename over %s/blobs/%s: %s", ds->root, a->dst->name, strerror(e));
	}
	t->tmp_made = false;
	(void)fsync(ds->blobs_fd);
	a->status = OA_DD_DONE;
	a->err = 0;
	return 0;
}

/* One attempt with the current a->src. 0 done, -1 failed (status set),
 * 1 the kept copy does not hash to its digest (a fallback may help). */
static int apply_once(oa_dedupe_plan *p, oa_store *const *stores, oa_dedupe_action *a,
                      volatile sig_atomic_t *interrupt)
{
	attempt t = { .p = p, .a = a, .ss = stores[a->src_store], .ds = stores[a->dst_store],
	              .interrupt = interrupt, .idx = (size_t)(a - p->v), .tfd = -1 };
	test_pause("open", t.idx, interrupt);
	t.sfd = open_checked(t.ss, a->src, false, a, "kept copy", &t.sst);
	if (t.sfd < 0)
		return -1;
	t.dfd = open_checked(t.ds, a->dst, true, a, "duplicate", &t.dst);
	if (t.dfd < 0) {
		close(t.sfd);
		return -1;
	}
	snprintf(t.tmp, sizeof t.tmp, ".oa-dedupe.%ld.%.16s", (long)getpid(), a->hex);
	int ret = check_duplicate(&t);
	if (ret == 0) {
		(void)unlinkat(t.ds->blobs_fd, t.tmp, 0); /* a leftover of this very pid: ours */
		ret = a->how == OA_DEDUPE_REFLINK ? reflink_step(&t) : hardlink_step(&t);
	}
	if (ret == 0)
		ret = switch_in(&t);
	if (ret == 1)
		keeper_is_bad(p, stores, a, t.got);
	if (t.tmp_made && unlinkat(t.ds->blobs_fd, t.tmp, 0) < 0 && errno != ENOENT) {
		/* Say where it is: it is ours, and nothing else will remove it. */
		char why[600];
		snprintf(why, sizeof why, "left the temporary file %s/blobs/%s: %s", t.ds->root, t.tmp,
		         strerror(errno));
		note_add(a, "; ", why);
	}
	if (t.tfd >= 0)
		close(t.tfd);
	close(t.sfd);
	close(t.dfd);
	return ret;
}

/* Whether an Ollama server uses store i (asked once). Cannot tell: no. */
static bool store_busy(oa_dedupe_plan *p, oa_store *const *stores, size_t i)
{
	if (i >= p->n_busy) {
		p->busy = oa_xreallocarray(p->busy, i + 1, sizeof *p->busy);
		memset(p->busy + p->n_busy, 0, i + 1 - p->n_busy);
		p->n_busy = i + 1;
	}
	if (!p->busy[i]) {
		oa_store_user u[1];
		char why[256];
		p->busy[i] = oa_store_in_use(stores[i], u, 1, why, sizeof why) > 0 ? 1 : -1;
	}
	return p->busy[i] == 1;
}

int oa_dedupe_apply(oa_dedupe_plan *p, oa_store *const *stores, oa_dedupe_action *a,
                    volatile sig_atomic_t *interrupt)
{
	if (a->status != OA_DD_PLANNED)
		return -1;
	if (interrupt && *interrupt)
		return fail(a, OA_DD_NOT_DONE, 0, "interrupted");
	for (int k = 0; k < 2 && !p->force; k++) {
		size_t i = k ? a->dst_store : a->src_store;
		if (store_busy(p, stores, i))
			return fail(a, OA_DD_SERVER, 0, "an Ollama server uses %s", stores[i]->root);
	}
	if (stores[a->src_store]->blobs_fd < 0 || stores[a->dst_store]->blobs_fd < 0)
		return fail(a, OA_DD_FAILED, EBADF, "blobs/ is not open");
	/* at most one attempt per copy of the digest */
	size_t tries = a->group ? a->group->n_copies + 1 : 1;
	for (size_t t = 0; t < tries; t++) {
		if (find_subst(p, a->src)) {
			if (!a->keeper_bad) {
				a->keeper_bad = true;
				snprintf(a->note, sizeof a->note, "the kept copy %s/blobs/%.19s... is corrupt",
				         stores[a->src_store]->root, a->src->name);
			}
			int fb = fall_back(p, stores, a, interrupt);
			if (fb != 0)
				return -1;
			char *m = oa_xasprintf("kept %s's copy instead", stores[a->src_store]->root);
			note_add(a, "; ", m);
			free(m);
		}
		int rc = apply_once(p, stores, a, interrupt);
		if (rc <= 0)
			return rc;
	}
	return fail(a, OA_DD_MISMATCH, 0, "no copy of it hashes to its digest");
}
