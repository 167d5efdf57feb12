/* refs.c - the conservative reference set and its cache (refs.h). */
#include "ollama_audit/refs.h"
#include "space/refs_private.h"
#include "ollama_audit/manifest.h"
#include "ollama_audit/shared.h"
#include "base/hash_index.h"
#include "base/platform.h"
#include "base/strset.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REFS_DEPTH_MAX 16
/* Files are scanned in windows, so no manifest is too large to be read; the
 * overlap is longer than any spelling of a digest, escaped or not. */
#define REFS_WINDOW (1u << 20)
#define REFS_OVERLAP 1024u
/* Files whose ctime is this close to the moment they were read may have
 * changed again within the timestamp granularity: they are re-read. */
#define REFS_RACY_NS (2 * 1000000000LL)

/* ---- the set ------------------------------------------------------------- */

static int cmp_hex(const void *a, const void *b)
{
	return memcmp(a, b, 64);
}

static void refset_add(void *ctx, const oa_digest_hex hex)
{
	oa_refset *r = ctx;
	OA_ALLOC_GROW(r->hex, r->n + 1, r->cap);
	for (int k = 0; k < 64; k++)
		r->hex[r->n][k] = (char)tolower((unsigned char)hex[k]);
	r->hex[r->n][64] = '\0';
	r->n++;
}

static void refset_add_all(oa_refset *r, oa_digest_hex *hex, size_t n)
{
	for (size_t i = 0; i < n; i++)
		refset_add(r, hex[i]);
}

void oa_refset_scan(oa_refset *r, const uint8_t *p, size_t len)
{
	oa_digest_scan(p, len, refset_add, r);
}

void oa_refset_sort(oa_refset *r)
{
	if (r->n)
		qsort(r->hex, r->n, sizeof *r->hex, cmp_hex);
	size_t w = 0;
	for (size_t i = 0; i < r->n; i++)
		if (w == 0 || memcmp(r->hex[w - 1], r->hex[i], 64) != 0)
			memcpy(r->hex[w++], r->hex[i], sizeof(oa_digest_hex));
	r->n = w;
}

static bool sorted_has(oa_digest_hex *hex, size_t n, const char *h)
{
	oa_digest_hex key;
	for (int k = 0; k < 64; k++)
		key[k] = (char)tolower((unsigned char)h[k]);
	key[64] = '\0';
	return n && bsearch(key, hex, n, sizeof *hex, cmp_hex) != NULL;
}

bool oa_refset_has(const oa_refset *r, const char *hex)
{
	return sorted_has(r->hex, r->n, hex);
}

void oa_refset_free(oa_refset *r)
{
	free(r->hex);
	for (size_t i = 0; i < r->n_shared; i++) {
		free(r->shared_store[i]);
		free(r->shared_how[i]);
	}
	free(r->shared_store);
	free(r->shared_how);
	memset(r, 0, sizeof *r);
}

/* Mark the set incomplete; the first reason is "<before><path><after>[: <errno>]". */
static void refset_fail(oa_refset *r, const char *before, const char *path, const char *after, int e)
{
	if (!r->incomplete) {
		char *what = oa_escape(path, strlen(path));
		int n = snprintf(r->why, sizeof r->why, "%s%s%s%s%s", before, what, after, e ? ": " : "",
		                 e ? strerror(e) : "");
		if (n >= (int)sizeof r->why) /* a path that long: say the reason was cut */
			memcpy(r->why + sizeof r->why - 4, "...", 4);
		free(what);
	}
	r->incomplete = true;
}

/* ---- reading one file ------------------------------------------------------ */

/* What the bytes of one file say. */
typedef struct scan_result {
	oa_refset digests;      /* every digest mentioned */
	oa_digest_hex self;          /* sha256 of all its bytes */
	bool list;              /* it mentions a "manifests" key: the digests may be manifests to follow */
} scan_result;

/* Whether the file open at fd starts like a JSON object (a manifest or a
 * list does; weights never): a blob that is not is never read further. */
static bool starts_like_json(int fd)
{
	uint8_t head[4096];
	off_t off = 0;
	ssize_t got;
	while ((got = oa_pread_full(fd, head, sizeof head, (uint64_t)off)) > 0) {
		for (ssize_t i = 0; i < got; i++) {
			if (head[i] == '{')
				return true;
			/* Go's decoder skips any amount of JSON whitespace first */
			if (head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && head[i] != '\r')
				return false;
		}
		off += got;
	}
	return got < 0; /* unreadable: let the read that follows say so */
}

/* Read the regular file open at fd in windows. 0, or -1 with errno. */
static int scan_fd(int fd, scan_result *out)
{
	memset(out, 0, sizeof *out);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(md);
		errno = ENOMEM;
		return -1;
	}
	uint8_t *buf = oa_xmalloc(REFS_WINDOW + REFS_OVERLAP);
	size_t carry = 0;
	int rc = 0;
	for (;;) {
		ssize_t got = oa_read_some(fd, buf + carry, REFS_WINDOW);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		EVP_DigestUpdate(md, buf + carry, (size_t)got);
		size_t n = carry + (size_t)got;
		oa_refset_scan(&out->digests, buf, n);
		if (out->digests.n > 4096)
			oa_refset_sort(&out->digests); /* memory bounded by distinct digests */
		out->list |= oa_mentions_manifests_key(buf, n);
		carry = n < REFS_OVERLAP ? n : REFS_OVERLAP;
		memmove(buf, buf + n - carry, carry);
	}
	int err = errno;
	unsigned char digest[32];
	unsigned int dl = 0;
	if (rc == 0 && EVP_DigestFinal_ex(md, digest, &dl) && dl == 32)
		for (int i = 0; i < 32; i++)
			snprintf(out->self + 2 * i, 3, "%02x", digest[i]);
	EVP_MD_CTX_free(md);
	free(buf);
	oa_refset_sort(&out->digests);
	errno = err;
	return rc;
}

/* Open a regular file without blocking on a FIFO and check it is the one
 * that was stat'ed. */
static int open_checked(int dirfd, const char *name, const struct stat *st)
{
	if (!S_ISREG(st->st_mode)) {
		errno = EINVAL;
		return -1;
	}
	int fd = oa_openat_ro(dirfd, name, O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat now;
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/* ---- the cache -------------------------------------------------------------- */

typedef struct rc_file {
	char *label;            /* "manifests/...", "manifests-v2/..." or "blobs/sha256-<hex>" */
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns, ctime_ns, read_ns;
	oa_digest_hex *hex;        /* the digests its bytes mention, sorted */
	size_t n_hex;
	oa_digest_hex self;          /* sha256 of its bytes, "" until read */
	oa_digest_hex link;          /* tag: the blob its symlink resolves to, or "" */
	oa_digest_hex *alias;      /* tag: blobs that are hard links of it */
	size_t n_alias;
	bool list;              /* mentions "manifests": its digests are followed */
	bool is_blob;           /* a manifest blob reached through a tag, not a tag */
	bool hardlinked;        /* tag: a regular file with other links */
	unsigned gen;           /* the update that last saw it */
} rc_file;

typedef struct dir_id {
	dev_t dev;
	ino_t ino;
} dir_id;

struct oa_refcache {
	const oa_store *s;      /* its fds and bounds */
	int root_fd, blobs_fd;
	bool blobs_physical;    /* root/blobs is a directory, not a symlink (this update) */
	rc_file *v;
	size_t n, cap;
	oa_hash_index index;    /* of v, by label */
	unsigned gen;
	dir_id *dirs;           /* directories read by the current update */
	size_t n_dirs, cap_dirs;
	oa_hash_index dir_index; /* of dirs */
	oa_refset status;       /* only incomplete, why, files are used */
	oa_refset all;          /* everything reached by the last update */
	unsigned long changes;  /* tags added, re-read or re-linked since `all` was computed */
	size_t all_tags;        /* tag files `all` was computed from */
	size_t all_followed;    /* blobs it followed through lists (they are re-checked each time) */
	bool own_only;          /* a peer's cache: its own tags only */
	bool peers_now;         /* look for the peers afresh (a deletion), not in the store's index */
	bool peers_found;
	oa_peers peers;         /* the stores that reach these blob files (shared.h) */
	oa_refcache **peer;     /* their caches */
	oa_refset shared;       /* what they reach, as of the last update */
};

static bool same_label(const void *ctx, size_t entry, const void *key)
{
	const rc_file *v = ctx;
	return strcmp(v[entry].label, key) == 0;
}

static rc_file *rc_find(const oa_refcache *c, const char *label, uint64_t h)
{
	size_t i = oa_hash_index_find(&c->index, h, same_label, c->v, label);
	return i == OA_HASH_NONE ? NULL : &c->v[i];
}

static rc_file *rc_add(oa_refcache *c, char *label, uint64_t h)
{
	OA_ALLOC_GROW(c->v, c->n + 1, c->cap);
	rc_file *f = &c->v[c->n];
	memset(f, 0, sizeof *f);
	f->label = label;
	oa_hash_index_add(&c->index, h, c->n++);
	return f;
}

/* The entry for label (taken), found or new. */
static rc_file *rc_get(oa_refcache *c, char *label)
{
	uint64_t h = oa_str_hash(label);
	rc_file *f = rc_find(c, label, h);
	if (f) {
		free(label);
		return f;
	}
	c->changes++;
	return rc_add(c, label, h);
}

static bool same_dir(const void *ctx, size_t entry, const void *key)
{
	const dir_id *v = ctx, *k = key;
	return v[entry].dev == k->dev && v[entry].ino == k->ino;
}

/* Remember a directory for this update; false if it was read already. */
static bool rc_dir_first(oa_refcache *c, dev_t dev, ino_t ino)
{
	dir_id key = { dev, ino };
	uint64_t h = (uint64_t)ino * 2654435761u ^ (uint64_t)dev;
	if (oa_hash_index_find(&c->dir_index, h, same_dir, c->dirs, &key) != OA_HASH_NONE)
		return false;
	OA_ALLOC_GROW(c->dirs, c->n_dirs + 1, c->cap_dirs);
	c->dirs[c->n_dirs] = key;
	oa_hash_index_add(&c->dir_index, h, c->n_dirs++);
	return true;
}

/* Still the file last read: no need to read it again. */
static bool rc_fresh(const rc_file *f, const struct stat *st)
{
	return f->read_ns && f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
	       f->mtime_ns == oa_stat_mtime_ns(st) && f->ctime_ns == oa_stat_ctime_ns(st) &&
	       f->ctime_ns + REFS_RACY_NS < f->read_ns;
}

/* (Re)read f from dirfd/name when it changed. false when it cannot be read.
 * A blob (is_blob) that does not start like JSON is not read further. */
static bool rc_read(oa_refcache *c, rc_file *f, int dirfd, const char *name, const struct stat *st)
{
	f->gen = c->gen;
	if (rc_fresh(f, st))
		return true;
	c->changes++;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime_ns = oa_stat_mtime_ns(st);
	f->ctime_ns = oa_stat_ctime_ns(st);
	f->read_ns = 0;
	free(f->hex);
	f->hex = NULL;
	f->n_hex = 0;
	f->self[0] = '\0';
	f->list = false;
	int64_t now = (int64_t)(oa_wall_now() * 1e9);
	int fd = open_checked(dirfd, name, st);
	if (fd >= 0 && f->is_blob && !starts_like_json(fd)) {
		close(fd);
		f->read_ns = now;
		return true;
	}
	scan_result sr;
	if (fd < 0 || scan_fd(fd, &sr) < 0) {
		int e = errno;
		if (fd >= 0) {
			oa_refset_free(&sr.digests);
			close(fd);
		}
		errno = e;
		return false;
	}
	close(fd);
	f->hex = sr.digests.hex;
	f->n_hex = sr.digests.n;
	memcpy(f->self, sr.self, sizeof f->self);
	f->list = sr.list;
	f->read_ns = now;
	return true;
}

static void rc_tag_seen(oa_refcache *c, int dirfd, const char *name, char *label, const struct stat *st,
                        const char *link_hex)
{
	rc_file *f = rc_get(c, label); /* takes label */
	if (memcmp(f->link, link_hex, sizeof f->link) != 0 || f->hardlinked != (st->st_nlink > 1) || f->n_alias)
		c->changes++;
	memcpy(f->link, link_hex, sizeof f->link);
	f->hardlinked = st->st_nlink > 1;
	f->n_alias = 0;
	c->status.files++;
	if (!rc_read(c, f, dirfd, name, st))
		refset_fail(&c->status, "cannot read ", f->label, "", errno);
}

static void rc_walk(oa_refcache *c, int dirfd, const char *label, int depth, bool physical);

/* A directory under manifests*: each once (a symlink back to one already read
 * adds nothing), never deeper than REFS_DEPTH_MAX. */
static void rc_dir(oa_refcache *c, int dirfd, const char *name, char *sub, const struct stat *st, int depth,
                   bool physical)
{
	if (!rc_dir_first(c, st->st_dev, st->st_ino))
		return;
	if (depth >= REFS_DEPTH_MAX) {
		refset_fail(&c->status, "too deep: ", sub, "", 0);
		return;
	}
	int cfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cfd < 0) {
		refset_fail(&c->status, "cannot open ", sub, "", errno);
		return;
	}
	rc_walk(c, cfd, sub, depth + 1, physical);
	close(cfd);
}

/* The fast, exact case of a tag symlink: its text is depth times "../"
 * then "blobs/sha256-<64 hex>" and the directories on the way to it were
 * reached without a symlink (`physical`), so it names root/blobs/<name>;
 * blobs/ is a real directory of the store and <name> a regular file in it.
 * Anything else is resolved with realpath. */
static bool link_to_blob(const oa_refcache *c, int dirfd, const char *name, int depth, oa_digest_hex hex)
{
	char text[512];
	ssize_t n = readlinkat(dirfd, name, text, sizeof text - 1);
	if (n < 0 || c->blobs_fd < 0 || !c->blobs_physical)
		return false;
	text[n] = '\0';
	const char *p = text;
	for (int i = 0; i < depth; i++, p += 3)
		if (strncmp(p, "../", 3) != 0)
			return false;
	struct stat st;
	if (strncmp(p, "blobs/", 6) != 0 || strlen(p + 6) != 7 + 64 || !oa_digest_parse(p + 6, hex, NULL) ||
	    p[6 + 6] != '-' || fstatat(c->blobs_fd, p + 6, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return false;
	return true;
}

static void rc_entry(oa_refcache *c, int dirfd, const char *name, char *sub, int depth, bool physical)
{
	struct stat lst, st;
	if (fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
		refset_fail(&c->status, "cannot stat ", sub, "", errno);
		free(sub);
		return;
	}
	oa_digest_hex link_hex = "";
	if (S_ISLNK(lst.st_mode) && physical && link_to_blob(c, dirfd, name, depth, link_hex)) {
		/* 0.40's usual tag: ../../../../blobs/sha256-<hex>, a regular file */
	} else if (S_ISLNK(lst.st_mode)) {
		link_hex[0] = '\0';
		char resolved[OA_PATH_MAX];
		int in = oa_store_resolve_path(c->s, sub, resolved);
		if (in < 0 && (errno == ENOENT || errno == ENOTDIR)) {
			free(sub); /* dangling: it references nothing */
			return;
		}
		if (in < 0) {
			refset_fail(&c->status, "cannot resolve the symlink ", sub, "", errno);
			free(sub);
			return;
		}
		if (in == 0) {
			/* Never followed out of the store: what it leads to may name any blob. */
			refset_fail(&c->status, "", sub, " is a symlink out of the store (not followed)", 0);
			free(sub);
			return;
		}
		oa_store_blob_path_hex(c->s, resolved, link_hex);
	}
	if (!S_ISLNK(lst.st_mode))
		st = lst;
	else if (fstatat(dirfd, name, &st, 0) < 0) {
		refset_fail(&c->status, "cannot stat ", sub, "", errno);
		free(sub);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		rc_dir(c, dirfd, name, sub, &st, depth, physical && !S_ISLNK(lst.st_mode));
		free(sub);
	} else if (S_ISREG(st.st_mode)) {
		rc_tag_seen(c, dirfd, name, sub, &st, link_hex); /* takes sub */
	} else {
		free(sub); /* a FIFO or a device names nothing */
	}
}

/* `physical`: every directory from the root down to this one was reached
 * without a symlink, so ".." in a link under it means what it says. */
static void rc_walk(oa_refcache *c, int dirfd, const char *label, int depth, bool physical)
{
	size_t n;
	int err;
	char **names = oa_list_dir(dirfd, &n, &err);
	if (!names && err) {
		refset_fail(&c->status, "cannot list ", label, "", err);
		return;
	}
	for (size_t i = 0; i < n; i++)
		rc_entry(c, dirfd, names[i], oa_xasprintf("%s/%s", label, names[i]), depth, physical);
	oa_free_names(names, n);
}

/* Tags that are hard links of blobs: find those blobs (only when some tag
 * has other links, so a legacy store never lists blobs/ here). */
static void rc_aliases(oa_refcache *c)
{
	bool any = false;
	for (size_t i = 0; i < c->n && !any; i++)
		any = c->v[i].gen == c->gen && !c->v[i].is_blob && c->v[i].hardlinked;
	if (!any || c->blobs_fd < 0)
		return;
	size_t n;
	int err;
	char **names = oa_list_dir(c->blobs_fd, &n, &err);
	if (!names && err) {
		refset_fail(&c->status, "cannot list ", "blobs", "", err);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		oa_digest_hex hex;
		struct stat st;
		if (!oa_digest_parse(names[i], hex, NULL) || names[i][6] != '-' ||
		    fstatat(c->blobs_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_nlink < 2)
			continue;
		for (size_t k = 0; k < c->n; k++) {
			rc_file *f = &c->v[k];
			if (f->gen != c->gen || f->is_blob || !f->hardlinked || f->dev != st.st_dev ||
			    f->ino != st.st_ino)
				continue;
			f->alias = oa_xreallocarray(f->alias, f->n_alias + 1, sizeof *f->alias);
			memcpy(f->alias[f->n_alias++], hex, sizeof(oa_digest_hex));
		}
	}
	oa_free_names(names, n);
}

/* A blob that a list names: read it (it may be a child manifest, or another
 * list). NULL when it is absent (a child that was not pulled), not a regular
 * file, or leads out of the store. */
/* blobs/sha256-<hex> in lower case, or (upper) in upper case: the server
 * keeps the case a digest is written in, and the set holds lower case. */
static void blob_name(const char *hex, bool upper, char name[7 + 64 + 1])
{
	snprintf(name, 7 + 64 + 1, "sha256-%s", hex);
	for (int k = 7; upper && k < 7 + 64; k++)
		name[k] = (char)toupper((unsigned char)name[k]);
}

static rc_file *rc_blob_named(oa_refcache *c, const char *name)
{
	char *label = oa_xasprintf("blobs/%s", name);
	struct stat lst, st;
	if (fstatat(c->blobs_fd, name, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			refset_fail(&c->status, "cannot stat ", label, "", errno);
		free(label);
		return NULL;
	}
	if (S_ISLNK(lst.st_mode)) {
		char resolved[OA_PATH_MAX];
		int in = oa_store_resolve_path(c->s, label, resolved);
		if (in == 0) /* never read out of the store, and never assume it names nothing */
			refset_fail(&c->status, "", label, " (a manifest a list names) is a symlink out of the "
			            "store (not followed)", 0);
		if (in != 1) {
			free(label);
			return NULL;
		}
	}
	if (fstatat(c->blobs_fd, name, &st, 0) < 0 || !S_ISREG(st.st_mode)) {
		free(label);
		return NULL;
	}
	rc_file *f = rc_get(c, label); /* takes label */
	f->is_blob = true;
	if (!rc_read(c, f, c->blobs_fd, name, &st)) {
		refset_fail(&c->status, "cannot read ", f->label, "", errno);
		return NULL;
	}
	return f;
}

/* A blob that a list names: read it (it may be a child manifest, or another
 * list). NULL when it is absent (a child that was not pulled), not a regular
 * file, or leads out of the store (the set is then incomplete). */
static rc_file *rc_blob(oa_refcache *c, const char *hex)
{
	if (c->blobs_fd < 0)
		return NULL;
	char name[7 + 64 + 1];
	rc_file *f = NULL;
	for (int upper = 0; upper < 2 && !f; upper++) {
		blob_name(hex, upper, name);
		f = rc_blob_named(c, name);
	}
	return f;
}

/* The cached entry of that blob, read by this update, or NULL. */
static rc_file *rc_blob_cached(const oa_refcache *c, const char *hex)
{
	for (int upper = 0; upper < 2; upper++) {
		char name[7 + 64 + 1], label[7 + 7 + 64 + 1];
		blob_name(hex, upper, name);
		snprintf(label, sizeof label, "blobs/%s", name);
		rc_file *f = rc_find(c, label, oa_str_hash(label));
		if (f && f->gen == c->gen)
			return f;
	}
	return NULL;
}

/* The paths a closure leaves out, sorted once: an rm of many models on a
 * big store asks for every file of the cache (files x paths when scanned). */
typedef struct skip_list {
	const char **v;
	size_t n;
} skip_list;

static int cmp_skip(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static skip_list skip_list_make(const char *const *skip, size_t n_skip)
{
	skip_list l = { oa_xcalloc(n_skip + 1, sizeof *l.v), 0 };
	for (size_t k = 0; k < n_skip; k++)
		if (skip[k])
			l.v[l.n++] = skip[k];
	if (l.n > 1)
		qsort(l.v, l.n, sizeof *l.v, cmp_skip);
	return l;
}

static bool skipped(const rc_file *f, const skip_list *l)
{
	const char *label = f->label;
	return l->n && bsearch(&label, l->v, l->n, sizeof *l->v, cmp_skip) != NULL;
}

/* A small set of digests already followed. */
typedef struct hex_set {
	oa_digest_hex *v;
	size_t n, cap;
	oa_hash_index index;    /* of v */
} hex_set;

static bool same_hex(const void *ctx, size_t entry, const void *key)
{
	const oa_digest_hex *v = ctx;
	return memcmp(v[entry], key, 64) == 0;
}

static bool hex_set_add(hex_set *s, const char *hex)
{
	uint64_t h = oa_str_hash(hex);
	if (oa_hash_index_find(&s->index, h, same_hex, s->v, hex) != OA_HASH_NONE)
		return false;
	OA_ALLOC_GROW(s->v, s->n + 1, s->cap);
	memcpy(s->v[s->n], hex, sizeof(oa_digest_hex));
	oa_hash_index_add(&s->index, h, s->n++);
	return true;
}

/* What the tags (but those at skip) reach. `read` is NULL when only what is
 * cached may be consulted, else the cache that may read blobs now. */
static size_t rc_closure(const oa_refcache *c, oa_refcache *read, const char *const *skip, size_t n_skip,
                         oa_refset *r)
{
	memset(r, 0, sizeof *r);
	oa_refset todo = { 0 };
	skip_list skips = skip_list_make(skip, n_skip);
	for (size_t i = 0; i < c->n; i++) {
		const rc_file *f = &c->v[i];
		if (f->gen != c->gen || f->is_blob || skipped(f, &skips))
			continue;
		r->files++;
		refset_add_all(r, f->hex, f->n_hex);
		refset_add_all(r, f->alias, f->n_alias);
		if (f->self[0])
			refset_add(r, f->self);
		if (f->link[0])
			refset_add(r, f->link);
		if (f->list)
			refset_add_all(&todo, f->hex, f->n_hex);
	}
	hex_set done = { 0 };
	while (todo.n) {
		oa_digest_hex hex;
		memcpy(hex, todo.hex[--todo.n], sizeof(oa_digest_hex));
		if (!hex_set_add(&done, hex))
			continue;
		rc_file *b = read ? rc_blob(read, hex) : rc_blob_cached(c, hex);
		if (!b || b->gen != c->gen)
			continue;
		refset_add_all(r, b->hex, b->n_hex);
		if (b->list)
			refset_add_all(&todo, b->hex, b->n_hex);
	}
	free(done.v);
	oa_hash_index_free(&done.index);
	free(skips.v);
	oa_refset_free(&todo);
	oa_refset_sort(r);
	r->incomplete = c->status.incomplete;
	memcpy(r->why, c->status.why, sizeof r->why);
	return done.n;
}

/* Add what the stores sharing these blob files reach, and their names. */
static void add_shared(const oa_refcache *c, oa_refset *r)
{
	refset_add_all(r, c->shared.hex, c->shared.n);
	oa_refset_sort(r);
	r->shared_store = oa_xcalloc(c->peers.n ? c->peers.n : 1, sizeof *r->shared_store);
	r->shared_how = oa_xcalloc(c->peers.n ? c->peers.n : 1, sizeof *r->shared_how);
	for (size_t i = 0; i < c->peers.n; i++) {
		r->shared_store[i] = oa_xstrdup(c->peers.v[i].s.root);
		r->shared_how[i] = oa_xstrdup(c->peers.v[i].how);
	}
	r->n_shared = c->peers.n;
}

/* A cache of s; its peers found in s's peer index, or with peers_now
 * looked for afresh. */
static oa_refcache *rc_new(const oa_store *s, bool peers_now)
{
	oa_refcache *c = oa_xcalloc(1, sizeof *c);
	c->s = s;
	c->root_fd = s->root_fd;
	c->blobs_fd = s->blobs_fd;
	c->peers_now = peers_now;
	return c;
}

/* Find the stores that reach these blob files (once), bring their caches
 * up to date and take what they reach; one that cannot be read in full, or
 * an owner that cannot be found, makes this set incomplete too. */
static void rc_peers_update(oa_refcache *c)
{
	if (!c->peers_found) {
		c->peers_found = true;
		if (c->peers_now)
			oa_peers_find_now(c->s->peer_index, c->s, &c->peers);
		else
			oa_peers_find(c->s->peer_index, c->s, &c->peers);
		c->peer = oa_xcalloc(c->peers.n ? c->peers.n : 1, sizeof *c->peer);
		for (size_t i = 0; i < c->peers.n; i++) {
			c->peer[i] = rc_new(&c->peers.v[i].s, false);
			c->peer[i]->own_only = true;
		}
	}
	oa_refset_free(&c->shared);
	/* a store that may reference these blob files is out of sight */
	if (c->peers.unfound)
		refset_fail(&c->status, c->peers.unfound, "", "", 0);
	for (size_t i = 0; i < c->peers.n; i++) {
		oa_refcache_update(c->peer[i]);
		refset_add_all(&c->shared, c->peer[i]->all.hex, c->peer[i]->all.n);
		const char *inc = oa_refcache_incomplete(c->peer[i]);
		if (inc) {
			char after[700];
			snprintf(after, sizeof after, " (%s) cannot be read in full: %s", c->peers.v[i].how, inc);
			refset_fail(&c->status, "the store ", c->peers.v[i].s.root, after, 0);
		}
	}
	oa_refset_sort(&c->shared);
}

/* blobs/ without manifests/ or manifests-v2/: whose blobs these are cannot
 * be told here (a blobs/ moved to a bigger disk behind a symlink). */
static void rc_unowned(oa_refcache *c)
{
	char after[700];
	const oa_peers *p = &c->peers;
	size_t k = 0;
	while (k < p->n && !p->v[k].links_here)
		k++;
	if (k < p->n) {
		char *root = oa_escape(p->v[k].s.root, strlen(p->v[k].s.root));
		snprintf(after, sizeof after, "; the store %s links its blobs/ here: run prune there", root);
		free(root);
	} else {
		snprintf(after, sizeof after, "; if another store links its blobs/ here, run prune on the store "
		         "that owns the manifests");
	}
	refset_fail(&c->status, "no manifests/ or manifests-v2/ here, so which blobs are referenced cannot be "
	            "told", "", after, 0);
}

oa_refcache *oa_refcache_new(const oa_store *s)
{
	return rc_new(s, true);
}

void oa_refcache_update(oa_refcache *c)
{
	c->gen++;
	memset(&c->status, 0, sizeof c->status);
	c->n_dirs = 0;
	oa_hash_index_clear(&c->dir_index);
	struct stat bst;
	c->blobs_physical = fstatat(c->root_fd, "blobs", &bst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(bst.st_mode);
	/* The root and blobs/ are never walked as if they held tags (a symlink
	 * under manifests/ back to the root would read every weights file). */
	struct stat rst;
	if (fstat(c->root_fd, &rst) == 0)
		rc_dir_first(c, rst.st_dev, rst.st_ino);
	if (c->blobs_fd >= 0 && fstat(c->blobs_fd, &rst) == 0)
		rc_dir_first(c, rst.st_dev, rst.st_ino);
	if (!c->own_only)
		rc_peers_update(c);
	static const char *const dirs[] = { "manifests", "manifests-v2" };
	size_t absent = 0;
	for (size_t i = 0; i < 2; i++) {
		int fd = openat(c->root_fd, dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT)
				refset_fail(&c->status, "cannot open ", dirs[i], "", errno);
			absent += errno == ENOENT;
			continue;
		}
		struct stat st, lst;
		bool physical = fstatat(c->root_fd, dirs[i], &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(lst.st_mode);
		if (fstat(fd, &st) == 0 && rc_dir_first(c, st.st_dev, st.st_ino))
			rc_walk(c, fd, dirs[i], 1, physical);
		close(fd);
	}
	if (absent == 2 && c->blobs_fd >= 0 && !c->own_only)
		rc_unowned(c);
	rc_aliases(c);
	/* Follow the lists now, reading what they name; later closures (with
	 * files skipped) reach a subset of this and only consult the cache.
	 * While applying, most updates find nothing changed: then the last set
	 * stands (unless it followed lists, whose blobs must be re-checked). */
	if (c->changes || c->all_followed || c->status.files != c->all_tags || !c->all.hex) {
		oa_refset_free(&c->all);
		c->all_followed = rc_closure(c, c, NULL, 0, &c->all);
		c->all_tags = c->status.files;
		c->changes = 0;
	}
	c->all.incomplete = c->status.incomplete;
	memcpy(c->all.why, c->status.why, sizeof c->all.why);
}

bool oa_refcache_has(const oa_refcache *c, const char *hex)
{
	return oa_refset_has(&c->all, hex) || oa_refset_has(&c->shared, hex);
}

const char *oa_refcache_incomplete(const oa_refcache *c)
{
	return c->status.incomplete ? c->status.why : NULL;
}

void oa_refcache_refset(const oa_refcache *c, const char *const *skip, size_t n_skip, oa_refset *r)
{
	rc_closure(c, NULL, skip, n_skip, r);
	add_shared(c, r);
}

size_t oa_refcache_size(const oa_refcache *c)
{
	return c->status.files + c->n_dirs;
}

void oa_refcache_free(oa_refcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].label);
		free(c->v[i].hex);
		free(c->v[i].alias);
	}
	free(c->v);
	oa_hash_index_free(&c->index);
	free(c->dirs);
	oa_hash_index_free(&c->dir_index);
	oa_refset_free(&c->all);
	for (size_t i = 0; i < c->peers.n; i++)
		oa_refcache_free(c->peer[i]);
	free(c->peer);
	oa_peers_free(&c->peers);
	oa_refset_free(&c->shared);
	free(c);
}

/* A cache entry holding digests the scan gathered (not a file). */
/* Binary digests as lowercase hex (sorted binary is sorted hex). */
static void hex_from_binary(oa_digest_hex *out, const unsigned char (*dig)[32], size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 32; k++) {
			out[i][2 * k] = digits[dig[i][k] >> 4];
			out[i][2 * k + 1] = digits[dig[i][k] & 15];
		}
		out[i][64] = '\0';
	}
}

static void rc_seed(oa_refcache *c, const char *label, const unsigned char (*dig)[32], size_t n, bool list)
{
	rc_file *f = rc_add(c, oa_xstrdup(label), oa_str_hash(label));
	f->gen = c->gen;
	f->list = list;
	f->n_hex = n;
	f->hex = oa_xcalloc(n ? n : 1, sizeof *f->hex);
	hex_from_binary(f->hex, dig, n);
}

/* oa_refset_scanned's set; without `tags`, when the scan's facts are
 * plain, all but the digests the tag files mention (which stay in
 * s->tags.dig). Returns whether it left those out. */
static bool scanned(const oa_store *s, oa_refset *r, bool tags)
{
	const oa_tag_facts *t = &s->tags;
	if (!t->plain) {
		oa_refset_build(s, NULL, 0, r);
		return false;
	}
	oa_refcache *c = rc_new(s, false);
	c->gen = 1;
	rc_peers_update(c);
	/* What the lists among the tag files name, followed through blobs/ as
	 * an update would; then what every tag file says, written into the set
	 * directly (no copy of the scan's digests as a seed file: 2 MB on a
	 * store of 10,000 tags). */
	rc_seed(c, "(scan) lists", (const unsigned char (*)[32])t->list_dig, t->n_list_dig, true);
	rc_closure(c, c, NULL, 0, r);
	if (tags && t->n_dig) {
		r->cap = r->n + t->n_dig;
		r->hex = oa_xreallocarray(r->hex, r->cap, sizeof *r->hex);
		hex_from_binary(r->hex + r->n, (const unsigned char (*)[32])t->dig, t->n_dig);
		r->n += t->n_dig;
		oa_refset_sort(r);
	}
	r->files = t->files;
	add_shared(c, r);
	oa_refcache_free(c);
	return !tags;
}

void oa_refset_scanned(const oa_store *s, oa_refset *r)
{
	scanned(s, r, true);
}

bool refset_scanned_apart(const oa_store *s, oa_refset *r)
{
	return scanned(s, r, false);
}

static int cmp_dig(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

bool refset_scanned_has(const oa_store *s, const oa_refset *r, bool apart, const char *hex)
{
	if (oa_refset_has(r, hex))
		return true;
	if (!apart || !s->tags.n_dig)
		return false;
	unsigned char key[32];
	for (int k = 0; k < 64; k++) {
		int c = tolower((unsigned char)hex[k]);
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (v < 0)
			return false; /* not 64 hex digits: no binary digest spells it */
		key[k / 2] = (unsigned char)(k % 2 ? key[k / 2] | v : v << 4);
	}
	return bsearch(key, s->tags.dig, s->tags.n_dig, sizeof *s->tags.dig, cmp_dig) != NULL;
}

void oa_refset_build(const oa_store *s, const char *const *skip_paths, size_t n_skip, oa_refset *r)
{
	oa_refcache *c = rc_new(s, false);
	oa_refcache_update(c);
	oa_refcache_refset(c, skip_paths, n_skip, r);
	oa_refcache_free(c);
}
