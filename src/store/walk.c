/* walk.c - walk manifests/ and manifests-v2/ as the server does, read
 * each tag's manifest, and keep what the walk read (oa_tag_facts). */
#include "ollama_audit/manifest_list.h"
#include "formats/digest_set.h"
#include "store/blobs_private.h"
#include "store/resolve_private.h"
#include "store/store_core_private.h"
#include "store/walk.h"
#include "base/platform.h"
#include "base/pool.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A tag file under a valid name: read, hashed and parsed off the walk's
 * thread (tag_read, any order), then recorded in walk order (tag_finish). */
typedef struct tag_job {
	size_t model;            /* s->models[model] is its model */
	int dirfd;               /* its directory's fd (open until the batch is flushed) */
	char *file;
	mode_t mode;             /* of its stat (through a symlink) */
	bool link;
	char *raw;               /* its path as the file system spells it, when link */
	bool read_ok;
	int err;                 /* errno of a read that failed */
	uint8_t *bytes;          /* kept past tag_read only when they do not parse */
	size_t len;
	oa_digest_hex self, lh;  /* sha256 of its bytes; the blob its symlink resolves to, or "" */
	unsigned char (*mentions)[32]; /* every digest its bytes mention, in order, in binary */
	size_t n_mentions, cap_mentions;
	bool list_key;           /* its bytes mention a "manifests" key */
	int parsed;              /* oa_manifest_parse's result */
	char perr[256];
} tag_job;

/* The tag files read together; each batch ends before the walk adds a
 * finding of its own, so findings keep the order of a one-by-one walk. */
typedef struct tag_batch {
	tag_job *v;
	size_t n, cap, max;      /* max: 1 when the scan has one thread */
	int *dirs;               /* the directories its jobs are in, walked already */
	size_t n_dirs, cap_dirs;
	unsigned gen;            /* new for every batch filled (walk_ctx.gens) */
} tag_batch;

struct walk_ctx;

/* A batch whose tag files are read on the scan's threads: which batch. */
typedef struct batch_read {
	struct walk_ctx *w;
	tag_batch *b;
	int jobs;
	oa_model *models;        /* s->models when it was sent (the walk may store it again) */
} batch_read;

typedef struct walk_ctx {
	oa_store *s;
	size_t cap;
	const char *top;        /* "manifests" or "manifests-v2" */
	bool v2;
	const char *parts[4];
	tag_batch batch;        /* the batch the walk fills */
	/* With more than one thread, a full batch is read beside the walk
	 * (flying), which fills the next: the walk records the flying one, in
	 * order, before it sends another or adds a finding of its own. Until
	 * then its jobs and their models belong to its threads, and s->models
	 * has room for a whole batch more, so the walk never moves them. */
	tag_batch fly;
	bool flying;
	oa_task fly_task;
	batch_read fly_read;
	unsigned gens;          /* batches filled so far */
	store_blob_scan *blobs; /* blobs/, listed beside the walk: wait before a look at it */
	size_t window;          /* model directories read ahead at once (prefetch_dir) */
} walk_ctx;

static void flush_tags(walk_ctx *w);

/* The path of an entry under the walk's top: escaped for findings, or as
 * the file system spells it (raw). */
static char *walk_path(walk_ctx *w, int depth, const char *leaf, bool raw)
{
	oa_buf b;
	oa_buf_init(&b);
	oa_buf_adds(&b, w->top);
	for (int i = 0; i <= depth; i++) {
		const char *part = i < depth ? w->parts[i] : leaf;
		if (!part)
			break;
		oa_buf_addc(&b, '/');
		if (raw)
			oa_buf_adds(&b, part);
		else
			oa_buf_add_escaped(&b, part, strlen(part));
	}
	return oa_buf_take(&b);
}

static char *rel_path(walk_ctx *w, int depth, const char *leaf)
{
	return walk_path(w, depth, leaf, false);
}

static char *raw_path(walk_ctx *w, int depth, const char *leaf)
{
	return walk_path(w, depth, leaf, true);
}

/* A finding of the walk's own at rel: the tags read so far are recorded
 * first, so findings keep the order of a one-by-one walk. */
__attribute__((format(printf, 4, 5)))
static void walk_finding(walk_ctx *w, oa_finding_code code, const char *rel, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *message = oa_xvasprintf(fmt, ap);
	va_end(ap);
	flush_tags(w);
	oa_findings_add(&w->s->findings, code, NULL, NULL, rel, "%s", message);
	free(message);
}

static int cmp_dig(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/* Sort digests: by their first byte into 256 runs (a counting sort, the
 * digests being uniform), then each run by qsort; the same order as one
 * qsort by cmp_dig, in a fraction of the comparisons. */
static void dig_sort(unsigned char (*v)[32], size_t n)
{
	if (n < 1024) {
		if (n)
			qsort(v, n, sizeof *v, cmp_dig);
		return;
	}
	size_t start[257] = { 0 };
	for (size_t i = 0; i < n; i++)
		start[v[i][0] + 1]++;
	for (int b = 0; b < 256; b++)
		start[b + 1] += start[b];
	unsigned char (*tmp)[32] = oa_xreallocarray(NULL, n, sizeof *tmp);
	size_t at[256];
	memcpy(at, start, sizeof at);
	for (size_t i = 0; i < n; i++)
		memcpy(tmp[at[v[i][0]]++], v[i], sizeof *v);
	for (int b = 0; b < 256; b++)
		if (start[b + 1] - start[b] > 1)
			qsort(tmp[start[b]], start[b + 1] - start[b], sizeof *tmp, cmp_dig);
	memcpy(v, tmp, n * sizeof *v);
	free(tmp);
}

static void dig_unique(unsigned char (*v)[32], size_t *n)
{
	dig_sort(v, *n);
	size_t w = 0;
	for (size_t i = 0; i < *n; i++)
		if (w == 0 || memcmp(v[w - 1], v[i], 32) != 0)
			memmove(v[w++], v[i], sizeof *v);
	*n = w;
}

static int hex_nibble(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* A digest (64 hex digits, either case) in binary. */
static void dig_binary(unsigned char out[32], const char *hex)
{
	for (int k = 0; k < 32; k++)
		out[k] = (unsigned char)(hex_nibble(hex[2 * k]) << 4 | hex_nibble(hex[2 * k + 1]));
}

/* Append a digest in binary; sorted and deduplicated whenever it doubled,
 * so memory is bounded by the distinct digests, not the mentions. */
static void dig_push_binary(unsigned char (**v)[32], size_t *n, size_t *cap, size_t *sorted,
                            const unsigned char dig[32])
{
	if (*n >= 4096 && *n >= 2 * *sorted) {
		dig_unique(*v, n);
		*sorted = *n;
	}
	OA_ALLOC_GROW(*v, *n + 1, *cap);
	memcpy((*v)[*n], dig, 32);
	(*n)++;
}

static void dig_push(unsigned char (**v)[32], size_t *n, size_t *cap, size_t *sorted, const char *hex)
{
	unsigned char dig[32];
	dig_binary(dig, hex);
	dig_push_binary(v, n, cap, sorted, dig);
}

static void fact_mention(void *ctx, const oa_digest_hex hex)
{
	oa_tag_facts *f = ctx;
	dig_push(&f->dig, &f->n_dig, &f->cap_dig, &f->sorted_dig, hex);
}

static void fact_list_mention(void *ctx, const oa_digest_hex hex)
{
	oa_tag_facts *f = ctx;
	dig_push(&f->list_dig, &f->n_list_dig, &f->cap_list_dig, &f->sorted_list_dig, hex);
}

/* A tag file read in full: what refs.c would take from its bytes (every
 * digest they mention, their sha256, the blob its symlink resolves to,
 * and, when they may be a list, the digests to follow). */
static void note_tag_file(oa_store *s, const uint8_t *bytes, size_t len, const oa_digest_hex self,
                          const oa_digest_hex link_hex)
{
	oa_tag_facts *f = &s->tags;
	f->files++;
	if (!f->plain)
		return; /* dropped once the walk is done */
	oa_digest_scan(bytes, len, fact_mention, f);
	fact_mention(f, self);
	if (link_hex[0])
		fact_mention(f, link_hex);
	if (oa_mentions_manifests_key(bytes, len))
		oa_digest_scan(bytes, len, fact_list_mention, f);
}

/* Something the facts cannot stand for: the views walk the tree themselves. */
static void not_plain(oa_store *s)
{
	s->tags.plain = false;
}

/* Done walking: sort what was gathered, or drop it when it is not complete. */
static void finish_tag_facts(oa_store *s)
{
	oa_tag_facts *f = &s->tags;
	if (!f->plain) {
		store_free_tag_facts(f);
		return;
	}
	dig_unique(f->dig, &f->n_dig);
	dig_unique(f->list_dig, &f->n_list_dig);
	f->sorted_dig = f->n_dig;
	f->sorted_list_dig = f->n_list_dig;
}

/* manifests/ or manifests-v2/: absent, or a directory (not a symlink) that
 * opened. */
static bool top_plain(const oa_store *s, const char *name, int fd, bool *present)
{
	struct stat lst;
	*present = false;
	if (s->root_fd < 0)
		return false;
	if (fstatat(s->root_fd, name, &lst, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	*present = true;
	return fd >= 0 && S_ISDIR(lst.st_mode);
}

static void note_empty_dir(oa_store *s, char *rel, const struct stat *st)
{
	oa_tag_facts *f = &s->tags;
	if (!f->plain) {
		free(rel);
		return;
	}
	f->empty_dirs = oa_xreallocarray(f->empty_dirs, f->n_empty_dirs + 1, sizeof *f->empty_dirs);
	f->empty_st = oa_xreallocarray(f->empty_st, f->n_empty_dirs + 1, sizeof *f->empty_st);
	f->empty_dirs[f->n_empty_dirs] = rel;
	f->empty_st[f->n_empty_dirs++] = *st;
}

/* Whether the current batch holds jobs reading from a directory's fd: the
 * fd then lives until that batch is flushed (the batch closes it). */
typedef struct dir_copy {
	bool used;    /* a job was queued with it */
	unsigned gen; /* in that batch */
} dir_copy;

static void read_manifest(walk_ctx *w, int dirfd, dir_copy *copy, const char *file, char *rel, const struct stat *st,
                          bool link);

/* A symlink (`name` is one) that leads out of the store is never followed,
 * as a directory or as a manifest: what it hides is a finding (and makes
 * prune keep every complete blob, see refs.h). */
static bool leads_out(walk_ctx *w, int depth, const char *name)
{
	char *raw = raw_path(w, depth, name);
	char resolved[OA_PATH_MAX];
	bool out = oa_store_resolve_path(w->s, raw, resolved) == 0;
	free(raw);
	if (out) {
		char *rel = rel_path(w, depth, name);
		char *where = oa_escape(resolved, strlen(resolved));
		walk_finding(w, OA_FINDING_SYMLINK_OUT_OF_STORE, rel,
		             "a symlink to %s, outside the store: not followed; what it holds may "
		             "reference any blob, so prune keeps every complete blob", where);
		free(where);
		free(rel);
	}
	return out;
}

/* An lstat of one entry. */
typedef struct look {
	bool ok;
	int err;     /* its errno when not ok */
	struct stat st;
} look;

/* A directory about to be walked: open at fd, and its listing and each
 * entry's lstat when they were read ahead (prefetch_dir). */
typedef struct dir_in {
	int fd;
	bool listed;
	oa_dir_list list;
	look *looks;  /* per entry of list, or NULL */
} dir_in;

/* Model directories (the entries of a depth-2 directory) read ahead, a
 * window at a time, on the scan's threads: opened (never through a
 * symlink), listed, each entry lstat'ed. Anything that fails there is
 * left for the walk to do again itself (in.fd -1), so its findings and
 * their errno are the walk's own. */
typedef struct pre_dir {
	const oa_dirent *e;
	dir_in in;
} pre_dir;

typedef struct pre_window {
	int dirfd;
	pre_dir *v;
} pre_window;

/* Directory fds the walk may hold for each of the batch, the flying batch
 * and (half of it) the read-ahead window: 256, or a quarter of a lower
 * RLIMIT_NOFILE (macOS's default soft limit is 256), so that a tag file
 * opened on a reading thread never finds the fd table full; a read that
 * failed with EMFILE would be a finding ("cannot read") about a sound file. */
static size_t fd_share(void)
{
	size_t share = 256;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < share)
		share = (size_t)rl.rlim_cur / 4;
	return share > 2 ? share : 2;
}

static void prefetch_dir(void *ctx, size_t i)
{
	pre_window *pw = ctx;
	pre_dir *p = &pw->v[i];
	p->in.fd = -1;
	if (p->e->type != OA_DT_DIR)
		return;
	int fd = openat(pw->dirfd, p->e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (oa_dir_read(fd, &p->in.list) != 0) {
		close(fd);
		return;
	}
	p->in.looks = oa_xcalloc(p->in.list.n + 1, sizeof *p->in.looks);
	for (size_t k = 0; k < p->in.list.n; k++) {
		look *l = &p->in.looks[k];
		l->ok = fstatat(fd, p->in.list.v[k].name, &l->st, AT_SYMLINK_NOFOLLOW) == 0;
		l->err = l->ok ? 0 : errno;
	}
	p->in.listed = true;
	p->in.fd = fd;
}

static void free_dir_in(dir_in *in)
{
	oa_dir_list_free(&in->list);
	free(in->looks);
	in->looks = NULL;
	in->listed = false;
}

/* Drop what a window read ahead and the walk did not take. */
static void free_window(pre_dir *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].in.fd >= 0) {
			close(v[i].in.fd);
			v[i].in.fd = -1;
			free_dir_in(&v[i].in);
		}
}

/* openat for a directory; when fds ran out, flush the batch (which closes
 * the directories it holds) and try once more. */
static int open_dir(walk_ctx *w, int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && (w->batch.n || w->flying)) {
		flush_tags(w);
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
	}
	return fd;
}

static bool walk(walk_ctx *w, dir_in *in, int depth, bool *kept);

/* Walk the subdirectory `name` (entry of the directory being walked at
 * `depth`), open at in->fd; st: its lstat, or NULL when only the fd was
 * looked at. False when something but empty directories is below it. */
static bool walk_sub(walk_ctx *w, dir_in *in, int depth, const char *name, const struct stat *st)
{
	w->parts[depth] = name;
	bool kept = false;
	bool empty = walk(w, in, depth + 1, &kept);
	if (empty && !w->v2) {
		struct stat own;
		if (!st && fstat(in->fd, &own) == 0)
			st = &own;
		if (st)
			note_empty_dir(w->s, raw_path(w, depth + 1, NULL), st);
		else
			empty = false;
	}
	if (!kept)
		close(in->fd);
	return empty;
}

/* List the directory being walked (unless it was read ahead); an empty
 * one below the top is a finding. False when it cannot be listed. */
static bool list_dir(walk_ctx *w, dir_in *in, int depth)
{
	if (!in->listed) {
		int err = oa_dir_read(in->fd, &in->list);
		if (err) {
			not_plain(w->s);
			char *rel = rel_path(w, depth, NULL);
			walk_finding(w, OA_FINDING_UNREADABLE, rel, "cannot list %s: %s", rel, strerror(err));
			/* The server's glob silently skips what it cannot read. */
			free(rel);
			return false;
		}
		in->listed = true;
	}
	if (in->list.n == 0 && depth > 0) {
		char *rel = rel_path(w, depth, NULL);
		walk_finding(w, OA_FINDING_EMPTY_MANIFEST_DIR, rel, "empty directory (the server removes it on prune)");
		free(rel);
	}
	return true;
}

/* The model directories of one directory read ahead on the pool, a
 * window at a time: entries [lo, lo + n) of its listing. */
typedef struct read_ahead {
	pre_dir *v;  /* NULL: no read-ahead at this depth */
	size_t lo, n;
} read_ahead;

/* What was read ahead for entry i, reading the next window first when i is
 * past this one; NULL without read-ahead. */
static pre_dir *read_ahead_at(walk_ctx *w, read_ahead *ra, const dir_in *in, size_t i)
{
	if (!ra->v)
		return NULL;
	if (i >= ra->lo + ra->n) {
		free_window(ra->v, ra->n);
		size_t n = in->list.n;
		ra->lo = i;
		ra->n = n - i < w->window ? n - i : w->window;
		for (size_t k = 0; k < ra->n; k++)
			ra->v[k] = (pre_dir){ .e = &in->list.v[i + k], .in = { .fd = -1 } };
		pre_window pw = { in->fd, ra->v };
		oa_pool_run(w->s->jobs, ra->n, OA_POOL_MIN_PARALLEL, prefetch_dir, &pw);
	}
	return &ra->v[i - ra->lo];
}

static void read_ahead_free(read_ahead *ra)
{
	if (ra->v) {
		free_window(ra->v, ra->n);
		free(ra->v);
	}
}

/* A directory readdir calls one, above the tags: open it without
 * following a symlink, and its lstat is not needed (an empty one is
 * fstat'ed). False for anything else, or a failed open: the entry then
 * takes the full path (walk_entry). */
static bool walk_listed_dir(walk_ctx *w, const dir_in *in, int depth, size_t i, pre_dir *pd, bool *empty)
{
	const oa_dirent *ent = &in->list.v[i];
	if (depth >= 3 || ent->type != OA_DT_DIR || in->looks)
		return false;
	dir_in sub = { .fd = -1 };
	if (pd && pd->in.fd >= 0) {
		sub = pd->in;
		pd->in = (dir_in){ .fd = -1 };
	} else {
		sub.fd = open_dir(w, in->fd, ent->name, O_NOFOLLOW);
	}
	if (sub.fd < 0)
		return false;
	if (!walk_sub(w, &sub, depth, ent->name, NULL))
		*empty = false;
	return true;
}

/* One lstat of entry i (or the one read ahead): only a symlink needs a
 * second stat, through it, once it is known to stay in the store. *link:
 * it is a symlink. False when it is one that leads out (not followed). */
static bool look_entry(walk_ctx *w, const dir_in *in, int depth, size_t i, look *l, bool *link, bool *empty)
{
	const char *name = in->list.v[i].name;
	if (in->looks) {
		*l = in->looks[i];
	} else {
		l->ok = fstatat(in->fd, name, &l->st, AT_SYMLINK_NOFOLLOW) == 0;
		l->err = errno;
	}
	*link = l->ok && S_ISLNK(l->st.st_mode);
	if (!l->ok || !S_ISDIR(l->st.st_mode))
		*empty = false;
	if (!l->ok || (*link && leads_out(w, depth, name))) {
		not_plain(w->s);
		if (*link)
			return false;
	}
	if (*link) {
		l->ok = fstatat(in->fd, name, &l->st, 0) == 0;
		l->err = errno;
		/* only a tag symlink to a regular file is read as refs.c reads it */
		if (!l->ok || !S_ISREG(l->st.st_mode) || depth != 3)
			not_plain(w->s);
	}
	return true;
}

/* An entry where the server reads tags (depth 4): read it as a manifest,
 * or say why it is not one. */
static void tag_entry(walk_ctx *w, int dirfd, dir_copy *copy, const char *name, const look *l, bool link)
{
	oa_store *s = w->s;
	w->parts[3] = name;
	char *rel = rel_path(w, 3, name);
	if (!l->ok && w->v2 && link) {
		/* 0.40 writes the blob first, then the link: the manifest is gone. */
		walk_finding(w, OA_FINDING_DANGLING_TAG, rel, "a manifests-v2 tag whose symlink leads nowhere: %s",
		             strerror(l->err));
		s->n_manifest_files++;
	} else if (!l->ok) {
		walk_finding(w, link ? OA_FINDING_INVALID_MANIFEST : OA_FINDING_UNREADABLE, rel, "%s: %s",
		             link ? "dangling symlink" : "cannot stat", strerror(l->err));
		walk_finding(w, OA_FINDING_PRUNE_BLOCKER, rel,
		             "the server cannot stat this file: it skips its start-up prune, and /api/tags fails");
		s->prune_blocked = true;
		s->n_manifest_files++;
	} else if (S_ISDIR(l->st.st_mode)) {
		not_plain(s); /* refs.c reads what it holds */
		walk_finding(w, OA_FINDING_IGNORED_FILE, rel, "a directory where a manifest file belongs; the server skips it");
	} else {
		s->n_manifest_files++;
		read_manifest(w, dirfd, copy, name, rel, &l->st, link);
		return; /* it took rel */
	}
	free(rel);
}

/* A file (or what cannot be stat'ed) above the tags: the server ignores it. */
static void stray_entry(walk_ctx *w, int depth, const char *name, bool ok)
{
	not_plain(w->s); /* refs.c reads a file at any depth */
	char *rel = rel_path(w, depth, name);
	walk_finding(w, OA_FINDING_IGNORED_FILE, rel,
	             ok ? "a file at depth %d under manifests/; the server only reads depth 4"
	                : "cannot stat (depth %d); the server ignores it",
	             depth + 1);
	free(rel);
}

/* Open the subdirectory `name` (st: its stat) and walk it. False when
 * something but empty directories is below it, or it cannot be opened. */
static bool descend(walk_ctx *w, int dirfd, int depth, const char *name, const struct stat *st)
{
	dir_in sub = { .fd = open_dir(w, dirfd, name, 0) };
	if (sub.fd < 0) {
		int oerr = errno; /* walk_finding below closes the batch's fds */
		not_plain(w->s);
		w->parts[depth] = name;
		char *rel = rel_path(w, depth + 1, NULL);
		walk_finding(w, OA_FINDING_UNREADABLE, rel, "cannot open %s: %s", rel, strerror(oerr));
		free(rel);
		return false;
	}
	return walk_sub(w, &sub, depth, name, st);
}

/* Tags of a batch not recorded yet read from dirfd: the batch closes it.
 * True when it took dirfd. */
static bool hand_dir_to_batch(walk_ctx *w, const dir_copy *copy, int dirfd)
{
	tag_batch *b = !copy->used ? NULL : copy->gen == w->batch.gen ? &w->batch
	             : w->flying && copy->gen == w->fly.gen ? &w->fly : NULL;
	if (!b)
		return false;
	OA_ALLOC_GROW(b->dirs, b->n_dirs + 1, b->cap_dirs);
	b->dirs[b->n_dirs++] = dirfd;
	return true;
}

/* Walk one directory; true when nothing but directories holding nothing
 * is below it (junk.c's empty directories, recorded for manifests/). The
 * walk owns in's listing; in->fd stays the caller's unless *kept (the
 * batch took it: a tag queued from it is not read yet). */
static bool walk(walk_ctx *w, dir_in *in, int depth, bool *kept)
{
	if (!list_dir(w, in, depth))
		return false;
	bool empty = true;
	dir_copy copy = { false, 0 }; /* whether the batch reads from in->fd */
	/* Below a depth-2 directory (a model's), read ahead on the pool. */
	bool prefetch = depth == 2 && w->batch.max > 1;
	read_ahead ra = { .v = prefetch ? oa_xcalloc(w->window, sizeof *ra.v) : NULL };
	for (size_t i = 0; i < in->list.n; i++) {
		pre_dir *pd = read_ahead_at(w, &ra, in, i);
		if (walk_listed_dir(w, in, depth, i, pd, &empty))
			continue;
		const char *name = in->list.v[i].name;
		look l;
		bool link;
		if (!look_entry(w, in, depth, i, &l, &link, &empty))
			continue;
		if (depth == 3)
			tag_entry(w, in->fd, &copy, name, &l, link);
		else if (!l.ok || !S_ISDIR(l.st.st_mode))
			stray_entry(w, depth, name, l.ok);
		else if (!descend(w, in->fd, depth, name, &l.st))
			empty = false;
	}
	read_ahead_free(&ra);
	free_dir_in(in);
	if (hand_dir_to_batch(w, &copy, in->fd))
		*kept = true;
	return empty;
}

/* The name of a manifests-v2 tag: its host directory has ':' written %3A,
 * and ollama.com is the default registry (spec §2.5). */
static bool v2_name(walk_ctx *w, const char *file, oa_name *name, const char **why)
{
	char host[OA_NAME_V2_HOST_MAX];
	return oa_name_v2_host(w->parts[0], host, why) &&
	       oa_name_from_parts(name, host, w->parts[1], w->parts[2], file, why);
}

/* The manifest blob a tag symlink resolves to, or "" (raw: its path as
 * the file system spells it). */
static void link_blob(oa_store *s, const char *raw, oa_digest_hex hex)
{
	hex[0] = '\0';
	char resolved[OA_PATH_MAX];
	if (oa_store_resolve_path(s, raw, resolved) != 1 || !oa_store_blob_path_hex(s, resolved, hex))
		hex[0] = '\0';
}

static const char tag_file[] = "file";

/* Which manifest blob a tag is: the one its symlink resolves to (link_hex),
 * else the one its bytes hash to (self), which blobs/ may not hold: a tag
 * file whose tag_blob is set waits for tag_blob_found, once blobs/ is
 * listed. */
static void tag_blob(oa_model *m, bool link, const oa_digest_hex self, const oa_digest_hex link_hex)
{
	m->tag_kind = link ? "symlink" : tag_file;
	const char *hex = link ? link_hex : self;
	if (hex[0])
		m->tag_blob = oa_xstrdup(hex);
}

/* A tag file whose bytes are a blob of blobs/: a hard link to it or a copy;
 * else none. */
static void tag_blob_found(oa_store *s, oa_model *m)
{
	if (m->tag_kind != tag_file || !m->tag_blob)
		return;
	oa_blob *b = store_blob_by_hex(s, m->tag_blob);
	if (!b) {
		free(m->tag_blob);
		m->tag_blob = NULL;
		return;
	}
	m->tag_kind = b->st.dev == m->st.dev && b->st.ino == m->st.ino ? "hardlink" : "copy";
}

static void job_mention(void *ctx, const oa_digest_hex hex)
{
	tag_job *j = ctx;
	OA_ALLOC_GROW(j->mentions, j->n_mentions + 1, j->cap_mentions);
	dig_binary(j->mentions[j->n_mentions++], hex);
}

/* The part of reading a tag that touches nothing but its job and its model
 * (the store's blobs and bounds are only read): any thread, any order. */
static void read_tag(walk_ctx *w, oa_model *models, tag_job *j)
{
	oa_store *s = w->s;
	oa_model *m = &models[j->model];
	if (store_read_looked_at(j->dirfd, j->file, j->mode, OA_MANIFEST_MAX, &j->bytes, &j->len) < 0) {
		j->err = errno;
		return;
	}
	j->read_ok = true;
	m->manifest_bytes = j->len;
	m->created_here = j->len && j->bytes[j->len - 1] == '\n';
	oa_sha256_hex(j->bytes, j->len, j->self); /* a manifest blob's digest is the sha256 of all its bytes */
	if (j->link)
		link_blob(s, j->raw, j->lh);
	if (!s->no_tag_facts) { /* (not tags.plain: the walk's thread may clear it meanwhile) */
		oa_digest_scan(j->bytes, j->len, job_mention, j);
		j->list_key = oa_mentions_manifests_key(j->bytes, j->len);
	}
	tag_blob(m, j->link, j->self, j->lh);
	j->parsed = oa_manifest_parse_in(s->digests, j->bytes, j->len, &m->m, j->perr, sizeof j->perr);
	if (j->parsed == 0) {
		free(j->bytes);
		j->bytes = NULL;
	}
}

static void tag_read(void *ctx, size_t i)
{
	batch_read *r = ctx;
	read_tag(r->w, r->models, &r->b->v[i]);
}

static void read_batch(void *ctx)
{
	batch_read *r = ctx;
	oa_pool_run(r->jobs, r->b->n, OA_POOL_MIN_PARALLEL, tag_read, r);
}

/* What refs.c would take from a tag file read in full (note_tag_file),
 * from what tag_read found in its bytes. */
static void note_tag_job(oa_store *s, const tag_job *j)
{
	oa_tag_facts *f = &s->tags;
	f->files++;
	if (!f->plain)
		return;
	for (size_t k = 0; k < j->n_mentions; k++)
		dig_push_binary(&f->dig, &f->n_dig, &f->cap_dig, &f->sorted_dig, j->mentions[k]);
	fact_mention(f, j->self);
	if (j->lh[0])
		fact_mention(f, j->lh);
	for (size_t k = 0; j->list_key && k < j->n_mentions; k++)
		dig_push_binary(&f->list_dig, &f->n_list_dig, &f->cap_list_dig, &f->sorted_list_dig, j->mentions[k]);
}

/* A manifests-v2 tag the server cannot read: a server that reads
 * manifests-v2/ cannot tell what it keeps, so it deletes no blob. */
static void v2_blocker(oa_store *s, const oa_model *m)
{
	oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, m->display, NULL, m->rel_path,
	                "a server with manifest lists cannot tell what this tag keeps: its blob cleanup fails closed "
	                "(start-up deletes no blob, and `ollama rm` leaves the removed model's blobs)");
	s->prune_blocked = true;
}

/* The rest, in walk order: findings, the store's counts and facts. */
static void tag_finish(walk_ctx *w, tag_job *j)
{
	oa_store *s = w->s;
	oa_model *m = &s->models[j->model];
	const char *rel = m->rel_path;
	if (!j->read_ok) {
		int e = j->err;
		not_plain(s);
		m->manifest_error = oa_xasprintf("cannot read: %s", e == EFBIG ? "larger than 16 MiB"
		                                 : e == EINVAL ? "not a regular file" : strerror(e));
		if (e == EFBIG) { /* what it names is not an orphan (issue 19, 11c) */
			store_scan_blobs_wait(w->blobs);
			store_mark_weak_refs_file(s, j->dirfd, j->file);
		}
		oa_finding_code code = e == EFBIG || e == EINVAL ? OA_FINDING_INVALID_MANIFEST : OA_FINDING_UNREADABLE;
		oa_findings_add(&s->findings, code, m->display, NULL, rel, "manifest %s", m->manifest_error);
		if (!m->v2) {
			oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, m->display, NULL, rel,
			                "an unreadable manifest makes the server skip its start-up prune");
			s->prune_blocked = true;
		} else {
			v2_blocker(s, m);
		}
		m->m.media_type = oa_xstrdup("");
		m->m.config.media_type = oa_xstrdup("");
		m->m.config.digest = oa_xstrdup("");
		m->m.config.hex = "";
		return;
	}
	note_tag_job(s, j);
	if (j->parsed < 0) {
		const char *err = j->perr;
		m->manifest_error = oa_escape(err, strlen(err));
		oa_findings_add(&s->findings, OA_FINDING_INVALID_MANIFEST, m->display, NULL, rel, "manifest is %s%s",
		                oa_str_has_prefix(err, "not JSON") || oa_str_has_prefix(err, "empty") ? "" : "invalid: ",
		                m->manifest_error);
		if (!m->v2) {
			oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, m->display, NULL, rel,
			                "a corrupt manifest makes the server skip its start-up prune");
			s->prune_blocked = true;
		} else {
			v2_blocker(s, m);
		}
		store_scan_blobs_wait(w->blobs);
		store_mark_weak_refs(s, j->bytes, j->len);
	} else {
		m->manifest_ok = true;
		if (m->v2)
			memcpy(m->m.id, j->self, sizeof m->m.id);
		if (m->m.is_list) {
			store_scan_blobs_wait(w->blobs);
			store_use_list_child(s, m);
		}
		if (m->v2 || m->is_list)
			m->m.size = store_unique_size(&m->m);
	}
}

/* Record a batch whose files were read, in walk order, and close its
 * directory copies. */
static void finish_batch(walk_ctx *w, tag_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		tag_job *j = &b->v[i];
		tag_finish(w, j);
		free(j->bytes);
		free(j->file);
		free(j->raw);
		free(j->mentions);
	}
	for (size_t i = 0; i < b->n_dirs; i++)
		close(b->dirs[i]);
	b->n = b->n_dirs = 0;
}

/* Wait for the flying batch, and record it. */
static void land(walk_ctx *w)
{
	if (!w->flying)
		return;
	oa_task_wait(&w->fly_task);
	w->flying = false;
	finish_batch(w, &w->fly);
}

/* Record every tag queued so far: the flying batch, then the one being
 * filled, read now on the scan's threads. */
static void flush_tags(walk_ctx *w)
{
	land(w);
	tag_batch *b = &w->batch;
	if (b->n == 0)
		return;
	batch_read r = { w, b, w->s->jobs, w->s->models };
	read_batch(&r);
	finish_batch(w, b);
	b->gen = ++w->gens;
}

/* The batch being filled is full: send it to be read beside the walk
 * (after recording the one before it), and fill the next. */
static void take_off(walk_ctx *w)
{
	land(w);
	tag_batch t = w->fly;
	w->fly = w->batch;
	w->batch = t;
	w->batch.gen = ++w->gens;
	/* The next batch's models go in without moving those being read. */
	OA_ALLOC_GROW(w->s->models, w->s->n_models + w->batch.max + 1, w->cap);
	int threads = oa_pool_threads(w->s->jobs);
	w->fly_read = (batch_read){ w, &w->fly, threads > 2 ? threads - 1 : 1, w->s->models };
	w->flying = true;
	oa_task_start(&w->fly_task, read_batch, &w->fly_read);
}

static void free_batch(tag_batch *b)
{
	free(b->v);
	free(b->dirs);
	memset(b, 0, sizeof *b);
}

/* Queue the tag file of model `model` for the batch: it reads from dirfd,
 * which the walk hands to the batch when it leaves the directory. */
static void queue_tag(walk_ctx *w, int dirfd, dir_copy *copy, const char *file, const struct stat *st,
                      bool link, size_t model)
{
	tag_batch *b = &w->batch;
	*copy = (dir_copy){ true, b->gen };
	OA_ALLOC_GROW(b->v, b->n + 1, b->cap);
	b->v[b->n++] = (tag_job){ .model = model, .dirfd = dirfd, .file = oa_xstrdup(file),
	                          .mode = st->st_mode, .link = link,
	                          .raw = link ? raw_path(w, 3, file) : NULL };
	if (b->n < b->max)
		return;
	if (b->max > 1)
		take_off(w);
	else
		flush_tags(w);
}

/* The tag file `file` (rel: its path for findings, which this takes). */
static void read_manifest(walk_ctx *w, int dirfd, dir_copy *copy, const char *file, char *rel, const struct stat *st,
                          bool link)
{
	oa_store *s = w->s;
	if (!S_ISREG(st->st_mode) || st->st_nlink > 1)
		not_plain(s); /* refs.c skips the one, looks for the other's names in blobs/ */
	bool ours = !w->v2 && oa_is_tag_rewrite_temp(file);
	if ((w->v2 && oa_str_has_prefix(file, ".manifest-")) || ours) {
		not_plain(s); /* refs.c reads it */
		/* a tag write the server (or rm --child) did not finish: junk, not a model */
		walk_finding(w, OA_FINDING_TEMP_FILE, rel, "%s; prune removes it after the grace period",
		             ours ? "an interrupted rm --child tag rewrite" : "an interrupted manifests-v2 tag write");
		if (ours) {
			/* the server takes it for an invalid name; prune here knows it */
			oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, NULL, NULL, rel,
			                "an Ollama that reads manifests/ skips its start-up prune while it is there");
			s->prune_blocked = true;
		}
		s->v2_temps = oa_xreallocarray(s->v2_temps, s->n_v2_temps + 1, sizeof *s->v2_temps);
		s->v2_temps[s->n_v2_temps++] = rel;
		return;
	}
	oa_name name;
	const char *why = NULL;
	bool valid = w->v2 ? v2_name(w, file, &name, &why)
	                   : oa_name_from_parts(&name, w->parts[0], w->parts[1], w->parts[2], file, &why);
	if (!valid) {
		walk_finding(w, OA_FINDING_INVALID_NAME, rel, "not a valid model name (%s); the server skips it", why);
		if (!w->v2) {
			oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, NULL, NULL, rel,
			                "an invalid name under manifests/ makes the server skip its start-up prune");
			s->prune_blocked = true;
		}
		/* It may be a real manifest under a name the server rejects: keep
		 * whatever it references out of the orphans. */
		uint8_t *bytes;
		size_t len;
		store_scan_blobs_wait(w->blobs);
		if (store_read_looked_at(dirfd, file, st->st_mode, OA_MANIFEST_MAX, &bytes, &len) == 0) {
			store_mark_weak_refs(s, bytes, len);
			oa_digest_hex self, lh = "";
			oa_sha256_hex(bytes, len, self);
			if (link) {
				char *raw = raw_path(w, 3, file);
				link_blob(s, raw, lh);
				free(raw);
			}
			note_tag_file(s, bytes, len, self, lh);
			free(bytes);
		} else {
			not_plain(s);
			if (errno == EFBIG)
				store_mark_weak_refs_file(s, dirfd, file);
		}
		free(rel);
		return;
	}
	OA_ALLOC_GROW(s->models, s->n_models + 1, w->cap);
	oa_model *m = &s->models[s->n_models++];
	memset(m, 0, sizeof *m);
	oa_model_name_set(&m->name, &name);
	char shown[OA_NAME_DISPLAY_MAX];
	oa_name_display(&name, shown, sizeof shown);
	m->display = oa_xstrdup(shown);
	m->rel_path = rel;
	oa_file_info_set(&m->st, st);
	m->v2 = w->v2;
	m->child = m->child_pull = -1;
	queue_tag(w, dirfd, copy, file, st, link, s->n_models - 1);
}

void store_walk(oa_store *s, size_t *cap, store_blob_scan *blobs)
{
	bool here, here_v2;
	s->tags.plain = !s->no_tag_facts && top_plain(s, "manifests", s->manifests_fd, &here) &&
	                top_plain(s, "manifests-v2", s->manifests_v2_fd, &here_v2) && (here || here_v2);
	walk_ctx w = { .s = s, .top = "manifests", .cap = *cap, .blobs = blobs };
	/* Tag files are read a batch at a time (256, fewer under a low fd
	 * limit) on the scan's threads, beside the walk; one by one when it
	 * has none. */
	size_t share = fd_share();
	w.batch.max = w.fly.max = oa_pool_threads(s->jobs) > 1 ? share : 1;
	w.window = share / 2;
	bool kept;
	if (s->manifests_fd >= 0)
		walk(&w, &(dir_in){ .fd = s->manifests_fd }, 0, &kept);
	w.top = "manifests-v2";
	w.v2 = true;
	if (s->manifests_v2_fd >= 0)
		walk(&w, &(dir_in){ .fd = s->manifests_v2_fd }, 0, &kept);
	flush_tags(&w);
	free_batch(&w.batch);
	free_batch(&w.fly);
	finish_tag_facts(s);
	store_scan_blobs_wait(blobs);
	for (size_t i = 0; i < s->n_models; i++)
		tag_blob_found(s, &s->models[i]);
	*cap = w.cap;
}
