/* junk.c - the junk taxonomy and the conservative reference set (junk.h). */
#include "ollama_audit/junk.h"
#include "space/junk_private.h"
#include "space/refs_private.h"
#include "base/platform.h"
#include "base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static const char *const cat_names[OA_JUNK_CAT_COUNT] = {
	[OA_JUNK_ORPHAN] = "orphans",     [OA_JUNK_MANIFEST_BLOB] = "manifest-blobs",
	[OA_JUNK_PARTIAL] = "partials",   [OA_JUNK_TEMP] = "temps",
	[OA_JUNK_LEGACY] = "legacy",      [OA_JUNK_FOREIGN] = "foreign",
	[OA_JUNK_EMPTY_DIR] = "empty-dirs",
};

static const char *const cat_keys[OA_JUNK_CAT_COUNT] = {
	[OA_JUNK_ORPHAN] = "orphans",     [OA_JUNK_MANIFEST_BLOB] = "manifest_blobs",
	[OA_JUNK_PARTIAL] = "partials",   [OA_JUNK_TEMP] = "temps",
	[OA_JUNK_LEGACY] = "legacy",      [OA_JUNK_FOREIGN] = "foreign",
	[OA_JUNK_EMPTY_DIR] = "empty_dirs",
};

const char *oa_junk_cat_name(enum oa_junk_cat c)
{
	return c < OA_JUNK_CAT_COUNT ? cat_names[c] : "?";
}

const char *oa_junk_cat_key(enum oa_junk_cat c)
{
	return c < OA_JUNK_CAT_COUNT ? cat_keys[c] : "unknown";
}

int oa_junk_parse_what(const char *list, unsigned *mask, char *err, size_t errlen)
{
	*mask = 0;
	char *copy = oa_xstrdup(list), *save = NULL;
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (strcmp(t, "all") == 0) {
			*mask |= OA_JUNK_ALL;
			continue;
		}
		if (strcmp(t, "default") == 0) {
			*mask |= OA_JUNK_DEFAULT;
			continue;
		}
		int found = -1;
		for (int c = 0; c < OA_JUNK_CAT_COUNT; c++) {
			size_t n = strlen(cat_names[c]);
			/* singular forms too: orphan, partial, temp, manifest-blob, empty-dir */
			if (strcmp(t, cat_names[c]) == 0 ||
			    (strlen(t) + 1 == n && strncmp(t, cat_names[c], n - 1) == 0 && cat_names[c][n - 1] == 's'))
				found = c;
		}
		if (found < 0) {
			snprintf(err, errlen,
			         "unknown category '%s' (orphans, partials, temps, legacy, foreign, "
			         "manifest-blobs, empty-dirs, all, default)", t);
			rc = -1;
			break;
		}
		*mask |= 1u << found;
	}
	free(copy);
	if (rc == 0 && *mask == 0) {
		snprintf(err, errlen, "--what needs at least one category");
		rc = -1;
	}
	return rc;
}

#define CHAIN_LINKS_MAX 40 /* Linux's MAXSYMLINKS */

void oa_symlink_chain(int dirfd, const char *name, oa_inode_ledger *set)
{
	char t[PATH_MAX];
	ssize_t tl = readlinkat(dirfd, name, t, sizeof t - 1);
	if (tl <= 0)
		return;
	t[tl] = '\0';
	char *rest = oa_xstrdup(t);
	int cur = t[0] == '/' ? open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : dup(dirfd);
	int links = 1;
	for (int steps = 0; cur >= 0 && steps < 4096; steps++) {
		char *p = rest;
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, "/");
		if (n > NAME_MAX)
			break;
		char comp[NAME_MAX + 1];
		memcpy(comp, p, n);
		comp[n] = '\0';
		const char *after = p + n; /* "" or "/..." */
		bool last = after[strspn(after, "/")] == '\0';
		if (strcmp(comp, ".") != 0) {
			struct stat st;
			if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
				break;
			oa_inode_ledger_add_file(set, st.st_dev, st.st_ino);
			if (S_ISLNK(st.st_mode)) {
				if (++links > CHAIN_LINKS_MAX || (tl = readlinkat(cur, comp, t, sizeof t - 1)) <= 0)
					break;
				t[tl] = '\0';
				char *nr = oa_xasprintf("%s%s", t, after);
				free(rest);
				rest = nr;
				if (t[0] == '/') {
					close(cur);
					cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				}
				continue;
			}
			if (!last) {
				if (!S_ISDIR(st.st_mode))
					break;
				int nfd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				close(cur);
				cur = nfd;
			}
		}
		memmove(rest, after, strlen(after) + 1);
	}
	if (cur >= 0)
		close(cur);
	free(rest);
}

/* ---- the disk-usage walker ---------------------------------------------------- */

#define USAGE_DEPTH_MAX 32

static void usage_add_info(oa_usage *u, const oa_file_info *fi, size_t top)
{
	oa_inode_ledger_add(&u->names, (oa_inode_use){ .dev = fi->dev, .ino = fi->ino, .owner = top,
	                                               .apparent = (uint64_t)fi->size,
	                                               .allocated = (uint64_t)fi->blocks * 512,
	                                               .nlink = fi->nlink, .is_dir = S_ISDIR(fi->mode) });
}

static void usage_add(oa_usage *u, const struct stat *st, size_t top)
{
	oa_file_info fi;
	oa_file_info_set(&fi, st);
	usage_add_info(u, &fi, top);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void usage_entry(oa_usage *u, int dirfd, const char *name, size_t top, int depth);

static void usage_dir(oa_usage *u, int fd, size_t top, int depth)
{
	size_t n;
	char **names = oa_list_dir(fd, &n, NULL);
	if (!names) {
		u->incomplete = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		usage_entry(u, fd, names[i], top, depth);
		free(names[i]);
	}
	free(names);
}

static void usage_entry(oa_usage *u, int dirfd, const char *name, size_t top, int depth)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		u->incomplete |= errno != ENOENT;
		return;
	}
	usage_add(u, &st, top);
	if (!S_ISDIR(st.st_mode))
		return;
	if (depth >= USAGE_DEPTH_MAX) {
		u->incomplete = true;
		return;
	}
	int cfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0) {
		u->incomplete = true;
		return;
	}
	usage_dir(u, cfd, top, depth + 1);
	close(cfd);
}

/* Each inode once, as walked. */
static void usage_total(oa_usage *u)
{
	oa_inode_ledger_sort(&u->names);
	oa_inode_ledger_bytes(&u->names, &u->apparent, &u->allocated);
}

void oa_usage_walk(int fd, oa_usage *u)
{
	memset(u, 0, sizeof *u);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		u->incomplete = fd >= 0;
		return;
	}
	usage_add(u, &st, OA_USAGE_ROOT);
	if (S_ISDIR(st.st_mode)) {
		u->tops = oa_list_dir(fd, &u->n_tops, NULL);
		if (!u->tops)
			u->incomplete = true;
		else if (u->n_tops)
			qsort(u->tops, u->n_tops, sizeof *u->tops, cmp_name);
		for (size_t i = 0; i < u->n_tops; i++)
			usage_entry(u, fd, u->tops[i], i, 1);
	}
	usage_total(u);
}

void oa_usage_blobs(const oa_store *s, oa_usage *u)
{
	struct stat st;
	if (!s->blobs_listed || s->blobs_fd < 0 || fstat(s->blobs_fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		oa_usage_walk(s->blobs_fd, u);
		return;
	}
	memset(u, 0, sizeof *u);
	usage_add(u, &st, OA_USAGE_ROOT);
	u->n_tops = s->n_blobs;
	u->tops = oa_xcalloc(s->n_blobs ? s->n_blobs : 1, sizeof *u->tops);
	u->tops_borrowed = true;
	for (size_t i = 0; i < s->n_blobs; i++) { /* the scan's list is in strcmp order too */
		const oa_blob *b = &s->blobs[i];
		u->tops[i] = b->name;
		/* a plain file's stat is its lstat; anything else is looked at again */
		if (b->stat_ok && !b->is_symlink && !S_ISDIR(b->st.mode))
			usage_add_info(u, &b->st, i);
		else
			usage_entry(u, s->blobs_fd, b->name, i, 1);
	}
	usage_total(u);
}

void oa_usage_free(oa_usage *u)
{
	for (size_t i = 0; i < u->n_tops && !u->tops_borrowed; i++)
		free(u->tops[i]);
	free(u->tops);
	oa_inode_ledger_free(&u->names);
	memset(u, 0, sizeof *u);
}

void oa_usage_sum(const oa_usage *const *v, size_t n, uint64_t *apparent, uint64_t *allocated)
{
	oa_inode_ledger all = { 0 };
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < v[i]->names.n; j++)
			oa_inode_ledger_add(&all, v[i]->names.v[j]);
	oa_inode_ledger_sort(&all);
	oa_inode_ledger_bytes(&all, apparent, allocated);
	oa_inode_ledger_free(&all);
}

/* oa_dir_usage, with the apparent bytes of what it alone holds
 * (freed_apparent, may be NULL), and whether any inode of the tree is in
 * `protect`. */
static bool dir_usage(int dirfd, const char *name, uint64_t *apparent, uint64_t *allocated,
                      uint64_t *freed, uint64_t *freed_apparent, const oa_inode_ledger *protect)
{
	uint64_t fa = 0;
	*apparent = *allocated = *freed = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	oa_usage u;
	oa_usage_walk(fd, &u);
	close(fd);
	*apparent = u.apparent;
	*allocated = u.allocated;
	bool hit = false;
	const oa_inode_ledger *l = &u.names;
	for (size_t i = 0, j; i < l->n; i = j) {
		j = oa_inode_ledger_run(l, i);
		if (l->v[i].is_dir || j - i >= (size_t)l->v[i].nlink) {
			*freed += l->v[i].allocated;
			fa += l->v[i].apparent;
		}
		if (protect && oa_inode_ledger_has(protect, l->v[i].dev, l->v[i].ino))
			hit = true;
	}
	oa_usage_free(&u);
	if (freed_apparent)
		*freed_apparent = fa;
	return hit;
}

void oa_dir_usage(int dirfd, const char *name, uint64_t *apparent, uint64_t *allocated,
                  uint64_t *freed)
{
	dir_usage(dirfd, name, apparent, allocated, freed, NULL, NULL);
}

/* ---- the taxonomy -------------------------------------------------------------- */

static oa_junk *junk_add(oa_junk_list *j, enum oa_junk_cat cat, enum oa_junk_where where,
                         char *path, const char *kind, const struct stat *lst, double now)
{
	OA_ALLOC_GROW(j->v, j->n + 1, j->cap);
	oa_junk *e = &j->v[j->n++];
	memset(e, 0, sizeof *e);
	e->cat = cat;
	e->where = where;
	e->path = path;
	e->kind = kind;
	e->group = -1;
	if (lst) {
		e->lst = *lst;
		e->is_dir = S_ISDIR(lst->st_mode);
		e->is_symlink = S_ISLNK(lst->st_mode);
		e->apparent = (uint64_t)lst->st_size;
		e->allocated = (uint64_t)lst->st_blocks * 512;
		e->freed_alone = lst->st_nlink <= 1 || e->is_dir ? e->allocated : 0;
		e->apparent_alone = e->is_dir ? e->apparent : 0;
		if (!e->is_dir && lst->st_nlink > 1)
			e->note = "hardlinked: removing this name frees no space while another link exists";
		e->age = now - (double)oa_stat_mtime_ns(lst) / 1e9;
		e->in_grace = e->age < OA_SERVER_GRACE_SECONDS;
	}
	return e;
}

static int cmp_group_hex(const void *key, const void *g)
{
	return strcmp(key, ((const oa_partial_group *)g)->hex);
}

const oa_partial_group *oa_junk_group(const oa_junk_list *j, const char *hex)
{
	if (!j || !j->n_groups)
		return NULL;
	return bsearch(hex, j->groups, j->n_groups, sizeof *j->groups, cmp_group_hex);
}

/* The blobs come sorted by name, so the groups are made in digest order: a
 * file's group is the newest one or a new one, and the list stays sorted
 * for oa_junk_group's bsearch. */
static int find_group(oa_junk_list *j, const char *hex)
{
	const oa_partial_group *found = oa_junk_group(j, hex);
	if (found)
		return (int)(found - j->groups);
	OA_ALLOC_GROW(j->groups, j->n_groups + 1, j->groups_cap);
	oa_partial_group *g = &j->groups[j->n_groups];
	memset(g, 0, sizeof *g);
	memcpy(g->hex, hex, sizeof(oa_digest_hex));
	g->data = -1;
	g->parts_ok = true;
	return (int)j->n_groups++;
}

/* A -partial-N file: {"N":..,"Offset":..,"Size":..,"Completed":..}. Negative
 * numbers (or Completed beyond Size) make it implausible: false. */
static bool read_part(int blobs_fd, const char *name, int64_t *size, int64_t *completed)
{
	uint8_t *buf;
	size_t len;
	if (oa_read_file_at(blobs_fd, name, 1 << 16, &buf, &len) < 0)
		return false;
	json_error_t jerr;
	json_t *o = json_loadb((const char *)buf, len, JSON_DISABLE_EOF_CHECK, &jerr);
	free(buf);
	bool ok = false;
	if (json_is_object(o)) {
		json_t *sz = json_object_get(o, "Size"), *c = json_object_get(o, "Completed");
		json_t *off = json_object_get(o, "Offset");
		if (json_is_integer(sz) && json_is_integer(c) && json_integer_value(sz) >= 0 &&
		    json_integer_value(c) >= 0 && json_integer_value(c) <= json_integer_value(sz) &&
		    (!off || (json_is_integer(off) && json_integer_value(off) >= 0))) {
			*size = json_integer_value(sz);
			*completed = json_integer_value(c);
			ok = true;
		}
	}
	json_decref(o);
	return ok;
}

/* a += b for non-negative values; false (a unchanged) on overflow. */
static bool add_i64(int64_t *a, int64_t b)
{
	if (b > INT64_MAX - *a)
		return false;
	*a += b;
	return true;
}

static bool empty_tree(oa_junk_list *j, int dirfd, const char *rel, double now, int depth)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	rewinddir(d);
	bool empty = true;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		/* depth + 1 is the entry's depth below manifests/: deeper ones are
		 * beyond what a plan may name, so their parents are not empty. */
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    depth + 1 > OA_MANIFESTS_DEPTH_MAX) {
			empty = false;
			continue;
		}
		int cfd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			empty = false;
			continue;
		}
		char *sub = oa_xasprintf("%s/%s", rel, e->d_name);
		if (empty_tree(j, cfd, sub, now, depth + 1))
			junk_add(j, OA_JUNK_EMPTY_DIR, OA_IN_MANIFESTS, sub, "empty-dir", &st, now);
		else {
			empty = false;
			free(sub);
		}
		close(cfd);
	}
	closedir(d);
	return empty;
}

/* Whether blobs/ still names the file (dev, ino): a blob the scan saw with
 * it, looked at again now. */
static bool blob_named(const oa_store *s, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; s->blobs_fd >= 0 && i < s->n_blobs; i++) {
		const oa_blob *b = &s->blobs[i];
		struct stat st;
		if (!b->is_symlink && b->st.dev == dev && b->st.ino == ino &&
		    fstatat(s->blobs_fd, b->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (uint64_t)st.st_dev == dev &&
		    (uint64_t)st.st_ino == ino)
			return true;
	}
	return false;
}

bool junk_tree_unnamed(const oa_store *s, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true; /* cannot tell: as if it did */
	oa_usage u;
	oa_usage_walk(fd, &u);
	close(fd);
	bool unnamed = u.incomplete;
	for (size_t i = 0; i < u.names.n && !unnamed; i++)
		unnamed = !u.names.v[i].is_dir && !blob_named(s, (uint64_t)u.names.v[i].dev, (uint64_t)u.names.v[i].ino);
	oa_usage_free(&u);
	return unnamed;
}

static const char *const target_keep = "a symlinked blob that a manifest uses resolves to it: removing it "
                                       "would break that blob";
static const char *const holds_keep = "holds the target of a symlinked blob that a manifest uses";
static const char *const incomplete_keep = "not every manifest can be read: no complete blob can be "
                                           "proven unreferenced";

static const char *const unnamed_keep = "a file in it has no name in blobs/ (its blob is gone, these may be "
                                          "the last links to its bytes): link it back into blobs/ if a manifest "
                                          "names it, else remove it yourself";

static const char *const links_keep = "it has hard links outside this store, which may be another "
                                      "store's: it cannot be proven unreferenced";

size_t oa_store_names_of(const oa_store *s, dev_t dev, ino_t ino)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_blobs; i++)
		n += !s->blobs[i].is_symlink && s->blobs[i].st.dev == dev && s->blobs[i].st.ino == ino;
	for (size_t i = 0; i < s->n_models; i++)
		n += s->models[i].st.dev == dev && s->models[i].st.ino == ino;
	return n;
}

/* Everything a symlinked blob that a manifest uses (or may use) resolves
 * through: removing any of it would break that blob. */
static void symlink_targets(const oa_store *s, const oa_refset *refs, oa_inode_ledger *targets)
{
	for (size_t i = 0; s->blobs_fd >= 0 && i < s->n_blobs; i++) {
		const oa_blob *b = &s->blobs[i];
		if (b->is_symlink && (b->refs || b->weak_refs ||
		                      (b->hex[0] && b->cls != OA_BLOB_CREATE_TEMP && oa_refset_has(refs, b->hex))))
			oa_symlink_chain(s->blobs_fd, b->name, targets);
	}
	oa_inode_ledger_unique(targets);
}

/* The junk category of a file in blobs/, and why its class alone keeps it
 * (*keep, or NULL). False for a referenced blob, which is not junk. */
static bool blob_category(oa_store *s, const oa_refset *refs, oa_blob *b, enum oa_junk_cat *cat,
                          const char **keep)
{
	*keep = NULL;
	switch (b->cls) {
	case OA_BLOB_VALID:
		if (b->refs > 0)
			return false;
		/* where tags reach manifest blobs (manifests-v2/), one no tag reaches is an orphan */
		*cat = !s->has_manifests_v2 && oa_blob_looks_like_manifest(s, b) ? OA_JUNK_MANIFEST_BLOB : OA_JUNK_ORPHAN;
		if (oa_refset_has(refs, b->hex))
			*keep = refs->n_shared ? "a file under manifests/ or manifests-v2/ here, or in a store "
			                         "sharing these blob files, reaches this digest" :
			        "a file under manifests/ or manifests-v2/ mentions this digest, or reaches it "
			        "through a manifest list (an unparseable manifest may reference it)";
		break;
	case OA_BLOB_PARTIAL:
	case OA_BLOB_PARTIAL_PART:
		*cat = OA_JUNK_PARTIAL;
		break;
	case OA_BLOB_TMP:
	case OA_BLOB_CREATE_TEMP:
	case OA_BLOB_QUANT_TEMP:
	case OA_BLOB_TEMP_DIR:
	case OA_BLOB_SPLIT_DIR:
		*cat = OA_JUNK_TEMP;
		break;
	case OA_BLOB_LEGACY:
		*cat = OA_JUNK_LEGACY;
		if (oa_refset_has(refs, b->hex))
			*keep = "a manifest references this digest: the server renames the file to "
			        "sha256-<hex> at start";
		break;
	case OA_BLOB_DIR:
		*cat = OA_JUNK_FOREIGN;
		*keep = "a directory Ollama does not write: look at it and remove it yourself";
		break;
	default:
		*cat = OA_JUNK_FOREIGN;
		break;
	}
	return true;
}

/* Count a partial download's data or part file into its group. */
static void add_partial(oa_junk_list *j, const oa_store *s, const oa_blob *b, oa_junk *e)
{
	int g = find_group(j, b->hex);
	oa_partial_group *pg = &j->groups[g];
	e->group = g;
	pg->allocated += e->allocated;
	if (b->cls == OA_BLOB_PARTIAL) {
		pg->data = (int)(j->n - 1);
		return;
	}
	int64_t size, done;
	pg->n_parts++;
	/* Hostile part files may hold any number: never overflow,
	 * call the group's progress unknown instead. */
	if (!read_part(s->blobs_fd, b->name, &size, &done) || !add_i64(&pg->total, size) ||
	    !add_i64(&pg->downloaded, done))
		pg->parts_ok = false;
}

static bool blobs_linked(const oa_store *s)
{
	struct stat lst;
	return s->root_fd >= 0 && fstatat(s->root_fd, "blobs", &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode);
}

/* One file in blobs/ that is not a referenced blob, with why it is kept. */
static void collect_blob(oa_store *s, const oa_refset *refs, double now, const oa_inode_ledger *targets,
                         oa_blob *b, oa_junk_list *j)
{
	enum oa_junk_cat cat;
	const char *keep;
	if (!blob_category(s, refs, b, &cat, &keep))
		return;
	struct stat lst;
	bool have = s->blobs_fd >= 0 && fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
	/* Applying re-checks every sha256-named file against its digest, so
	 * a partial or temp of a digest some manifest mentions is kept too. */
	if (!keep && b->hex[0] && b->cls != OA_BLOB_CREATE_TEMP && oa_refset_has(refs, b->hex))
		keep = "a file under manifests/ mentions this digest: files named after it are kept";
	/* What a manifest we cannot read names is unknown: any complete
	 * blob may be it, whatever --force says. */
	if (!keep && refs->incomplete && (b->cls == OA_BLOB_VALID || b->cls == OA_BLOB_LEGACY))
		keep = incomplete_keep;
	if (!have)
		keep = "cannot stat it";
	else if (!keep && oa_inode_ledger_has(targets, lst.st_dev, lst.st_ino))
		keep = target_keep;
	else if (!keep && b->cls == OA_BLOB_FOREIGN && blobs_linked(s))
		keep = OA_LINKED_FOREIGN_KEEP;
	else if (!keep && (b->cls == OA_BLOB_VALID || b->cls == OA_BLOB_LEGACY) && S_ISREG(lst.st_mode) &&
	         lst.st_nlink > 1 && /* one link is this name: no need to count the store's names */
	         (size_t)lst.st_nlink > oa_store_names_of(s, lst.st_dev, lst.st_ino))
		keep = links_keep;
	oa_junk *e = junk_add(j, cat, OA_IN_BLOBS, oa_xasprintf("blobs/%s", b->name),
	                      oa_blob_class_name(b->cls), have ? &lst : NULL, now);
	e->keep = keep;
	if (b->hex[0] && b->cls != OA_BLOB_CREATE_TEMP)
		memcpy(e->hex, b->hex, sizeof(oa_digest_hex));
	if (b->is_symlink) {
		e->link_target = b->link_target;
		e->freed_alone = e->allocated;
		e->note = "a symlink: only the link is removed, never its target";
	}
	if (have && e->is_dir) {
		uint64_t ap, al, fr;
		if (dir_usage(s->blobs_fd, b->name, &ap, &al, &fr, &e->apparent_alone, targets) && !e->keep)
			e->keep = holds_keep;
		e->apparent = ap;
		e->allocated = al;
		e->freed_alone = fr;
		if (fr < al)
			e->note = "holds hard links to blobs: removing it frees only what is not linked elsewhere";
		if (!e->keep && b->cls == OA_BLOB_SPLIT_DIR && junk_tree_unnamed(s, s->blobs_fd, b->name))
			e->keep = unnamed_keep;
	}
	if (cat == OA_JUNK_PARTIAL && b->hex[0])
		add_partial(j, s, b, e);
}

/* The N of a part file's name (blobs/sha256-<hex>-partial-N). */
static unsigned long long part_number(const oa_junk *e)
{
	const char *dash = strrchr(e->path, '-');
	return dash ? strtoull(dash + 1, NULL, 10) : 0;
}

static int cmp_part(const void *a, const void *b)
{
	const oa_junk *x = a, *y = b;
	unsigned long long m = part_number(x), n = part_number(y);
	if (m != n)
		return m < n ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Name order puts -partial-10 before -partial-2: each run of one group's
 * part files is put in the order of N. Only part files move, within their
 * run, so the group's data index stays valid. */
static void order_parts(oa_junk_list *j)
{
	for (size_t i = 0; i < j->n;) {
		size_t k = i;
		while (k < j->n && j->v[k].group >= 0 && strcmp(j->v[k].kind, "partial-part") == 0 &&
		       j->v[k].group == j->v[i].group)
			k++;
		if (k - i > 1)
			qsort(j->v + i, k - i, sizeof *j->v, cmp_part);
		i = k > i ? k : i + 1;
	}
}

/* A group's total and progress when its part files cannot say. */
static void finish_partial_groups(oa_junk_list *j)
{
	for (size_t g = 0; g < j->n_groups; g++) {
		oa_partial_group *pg = &j->groups[g];
		if (pg->n_parts == 0 && pg->data >= 0) {
			pg->total = (int64_t)j->v[pg->data].apparent;
			pg->downloaded = -1; /* unknown without part files */
		} else if (!pg->parts_ok) {
			pg->downloaded = -1; /* a part file is unreadable or implausible */
		}
	}
}

/* ollama-safetensors<digits>/ temp directories in the root (spec §1.3). */
static void collect_root_temps(oa_store *s, double now, const oa_inode_ledger *targets, oa_junk_list *j)
{
	int fd = dup(s->root_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!oa_str_has_prefix(e->d_name, "ollama-safetensors") ||
		    !oa_all_digits(e->d_name + strlen("ollama-safetensors")))
			continue;
		struct stat lst;
		if (fstatat(s->root_fd, e->d_name, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(lst.st_mode))
			continue;
		oa_junk *x = junk_add(j, OA_JUNK_TEMP, OA_IN_ROOT, oa_xstrdup(e->d_name), "temp-dir",
		                      &lst, now);
		uint64_t ap, al, fr;
		if (dir_usage(s->root_fd, e->d_name, &ap, &al, &fr, &x->apparent_alone, targets) ||
		    oa_inode_ledger_has(targets, lst.st_dev, lst.st_ino))
			x->keep = holds_keep;
		x->apparent = ap;
		x->allocated = al;
		x->freed_alone = fr;
	}
	closedir(d);
}

/* Files the scan found outside blobs/ that are junk by name: interrupted
 * manifests-v2 tag writes (.manifest-*), metadata caches whose blob is
 * gone and metadata cache writes never renamed. Temps: prune removes them
 * after the grace period. */
static void collect_store_files(oa_store *s, double now, oa_junk_list *j)
{
	static const char *const kinds[] = { "manifest-temp", "stale-metadata", "metadata-temp" };
	for (int pass = 0; pass < 3; pass++) {
		char **v = pass == 0 ? s->v2_temps : pass == 1 ? s->stale_metadata : s->metadata_temps;
		size_t n = pass == 0 ? s->n_v2_temps : pass == 1 ? s->n_stale_metadata : s->n_metadata_temps;
		for (size_t i = 0; i < n; i++) {
			struct stat lst;
			if (fstatat(s->root_fd, v[i], &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(lst.st_mode))
				continue;
			junk_add(j, OA_JUNK_TEMP, pass ? OA_IN_ROOT : OA_IN_MANIFESTS, oa_xstrdup(v[i]), kinds[pass],
			         &lst, now);
		}
	}
}

void oa_junk_collect(oa_store *s, const oa_refset *refs, double now, oa_junk_list *j)
{
	memset(j, 0, sizeof *j);
	oa_inode_ledger targets = { 0 };
	symlink_targets(s, refs, &targets);
	for (size_t i = 0; i < s->n_blobs; i++)
		collect_blob(s, refs, now, &targets, &s->blobs[i], j);
	finish_partial_groups(j);
	order_parts(j);
	if (s->root_fd >= 0)
		collect_root_temps(s, now, &targets, j);
	if (s->root_fd >= 0)
		collect_store_files(s, now, j);
	/* Empty directories under manifests/ (deepest first), never manifests/
	 * itself: as the scan saw them when its walk was complete. */
	if (s->manifests_fd >= 0 && s->tags.plain)
		for (size_t i = 0; i < s->tags.n_empty_dirs; i++)
			junk_add(j, OA_JUNK_EMPTY_DIR, OA_IN_MANIFESTS, oa_xstrdup(s->tags.empty_dirs[i]), "empty-dir",
			         &s->tags.empty_st[i], now);
	else if (s->manifests_fd >= 0)
		empty_tree(j, s->manifests_fd, "manifests", now, 0);
	oa_inode_ledger_free(&targets);
	for (size_t i = 0; i < j->n; i++) {
		oa_junk *e = &j->v[i];
		j->count[e->cat]++;
		/* a directory's hard links to blobs are counted where those blobs are */
		j->apparent[e->cat] += e->is_dir ? e->apparent_alone : e->apparent;
		j->allocated[e->cat] += e->is_dir ? e->freed_alone : e->allocated;
	}
}

void oa_findings_drop_referenced(oa_store *s)
{
	oa_refset refs;
	bool apart = refset_scanned_apart(s, &refs); /* the few orphans are looked up, not the set made */
	oa_findings *f = &s->findings;
	size_t w = 0;
	for (size_t i = 0; i < f->n; i++) {
		oa_finding *x = &f->v[i];
		bool orphan = x->id == OA_FINDING_ORPHAN_BLOB || x->id == OA_FINDING_MANIFEST_BLOB;
		if (orphan && x->digest && oa_str_has_prefix(x->digest, "sha256:") &&
		    refset_scanned_has(s, &refs, apart, x->digest + 7)) {
			free(x->model);
			free(x->digest);
			free(x->path);
			free(x->message);
			free(x->fix);
			continue;
		}
		f->v[w++] = *x;
	}
	f->n = w;
	oa_refset_free(&refs);
}

void oa_junk_free(oa_junk_list *j)
{
	for (size_t i = 0; i < j->n; i++)
		free(j->v[i].path);
	free(j->v);
	free(j->groups);
	memset(j, 0, sizeof *j);
}
