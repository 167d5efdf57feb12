/* blobs.c - list blobs/ (each entry's class and stat), the blob a digest
 * names, reading one, and the blobs an unparsed manifest mentions. */
#include "ollama_audit/blobs.h"
#include "store/blobs_private.h"
#include "store/store_core_private.h"
#include "base/platform.h"
#include "base/pool.h"
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
#include <xxhash.h>

/* Temp-file prefixes of create and quantize (spec §1.3), each followed by digits. */
static bool is_quant_temp(const char *name)
{
	static const char *const prefixes[] = {
		"COPY", "split-copy", "projector-metadata", "compat-tensors",
		"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q8_0", "Q5_0", "Q5_1", "Q2_K", "Q2_K_S",
		"Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q4_K", "Q5_K_S", "Q5_K_M",
		"Q6_K", "IQ2_XXS", "IQ2_XS", "IQ3_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",
		"IQ3_M", "IQ2_S", "IQ2_M", "IQ4_XS", "IQ1_M", "TQ1_0", "TQ2_0", "MXFP4_MOE",
		"NVFP4", "Q1_0",
	};
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(name, prefixes[i], n) == 0 && oa_all_digits(name + n))
			return true;
	}
	return false;
}

static enum oa_blob_class classify_blob_name(const char *name, bool is_dir, oa_digest_hex hex,
                                             unsigned long *part)
{
	hex[0] = '\0';
	if (is_dir && oa_str_has_prefix(name, OA_SPLIT_DIR_PREFIX))
		return OA_BLOB_SPLIT_DIR; /* any suffix: without a valid digest the runner names it by random alone */
	if (is_dir)
		return oa_str_has_prefix(name, "split-gguf-") && oa_all_digits(name + 11) ? OA_BLOB_TEMP_DIR
		                                                                        : OA_BLOB_DIR;
	if ((strncmp(name, "sha256-", 7) == 0 || strncmp(name, "sha256:", 7) == 0) &&
	    strlen(name) >= 7 + 64 && oa_is_hex(name + 7, 64)) {
		for (int i = 0; i < 64; i++)
			hex[i] = (char)tolower((unsigned char)name[7 + i]);
		hex[64] = '\0';
		const char *rest = name + 7 + 64;
		if (name[6] == ':')
			return *rest ? OA_BLOB_FOREIGN : OA_BLOB_LEGACY;
		if (!*rest)
			return OA_BLOB_VALID;
		if (strcmp(rest, "-partial") == 0)
			return OA_BLOB_PARTIAL;
		if (strncmp(rest, "-partial-", 9) == 0 && oa_all_digits(rest + 9)) {
			*part = strtoul(rest + 9, NULL, 10);
			return OA_BLOB_PARTIAL_PART;
		}
		if (strcmp(rest, ".tmp") == 0)
			return OA_BLOB_TMP;
		hex[0] = '\0';
		return OA_BLOB_FOREIGN;
	}
	if (strncmp(name, "sha256-", 7) == 0 && oa_all_digits(name + 7))
		return OA_BLOB_CREATE_TEMP;
	if (is_quant_temp(name))
		return OA_BLOB_QUANT_TEMP;
	return OA_BLOB_FOREIGN;
}

enum oa_blob_class oa_blob_name_class(const char *name)
{
	oa_digest_hex hex;
	unsigned long part;
	return classify_blob_name(name, false, hex, &part);
}

int store_cmp_blob_name(const void *a, const void *b)
{
	return strcmp(((const oa_blob *)a)->name, ((const oa_blob *)b)->name);
}

/* Is `path` (already resolved) inside the store root? */
static bool inside_root(const oa_store *s, const char *resolved)
{
	char root[PATH_MAX];
	if (!realpath(s->root, root))
		return false;
	size_t n = strlen(root);
	return strncmp(resolved, root, n) == 0 && (resolved[n] == '/' || resolved[n] == '\0');
}

/* Read a file whose stat (its `mode`, through any symlink) was just taken: a
 * regular file is opened without a second look, anything else goes through
 * oa_read_file_at, which refuses it with the right errno. */
int store_read_looked_at(int dirfd, const char *name, mode_t mode, size_t max, uint8_t **out, size_t *len)
{
	if (S_ISREG(mode))
		return oa_read_regular_at(dirfd, name, max, out, len);
	return oa_read_file_at(dirfd, name, max, out, len);
}

/* The hex of a blob whose class carries none: "" with room for a digest,
 * so that a copy of oa_digest_hex's size stays inside it. */
static const oa_digest_hex no_hex;

/* b's class, and its hex stored once: the digits inside its name when it
 * spells them in lower case and ends there, else a copy after the name's
 * NUL, in the name's allocation. */
static void classify_blob(oa_blob *b, bool is_dir)
{
	oa_digest_hex hex;
	b->cls = classify_blob_name(b->name, is_dir, hex, &b->partial_index);
	if (!hex[0]) {
		b->hex = no_hex;
		return;
	}
	size_t n = strlen(b->name);
	if (n == 7 + OA_DIGEST_HEX_LEN && memcmp(b->name + 7, hex, OA_DIGEST_HEX_LEN) == 0) {
		b->hex = b->name + 7;
		return;
	}
	b->name = oa_xrealloc(b->name, n + 1 + sizeof hex);
	memcpy(b->name + n + 1, hex, sizeof hex);
	b->hex = b->name + n + 1;
}

/* A blob's bytes, by the stat store_scan_blobs took. */
int store_read_blob(const oa_store *s, const oa_blob *b, size_t max, uint8_t **out, size_t *len)
{
	if (b->stat_ok)
		return store_read_looked_at(s->blobs_fd, b->name, (mode_t)b->st.mode, max, out, len);
	return oa_read_file_at(s->blobs_fd, b->name, max, out, len);
}

/* Entry b of blobs/: its stat (through a symlink when it resolves), where
 * a symlink leads, its class. Touches b alone: any thread, any order. */
static void stat_blob(const oa_store *s, oa_blob *b)
{
	struct stat lst;
	if (fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
		b->stat_errno = errno;
		classify_blob(b, false);
		return;
	}
	oa_file_info_set(&b->st, &lst);
	b->stat_ok = true;
	if (S_ISLNK(lst.st_mode)) {
		b->is_symlink = true;
		char target[PATH_MAX];
		ssize_t n = readlinkat(s->blobs_fd, b->name, target, sizeof target - 1);
		if (n >= 0) {
			target[n] = '\0';
			b->link_target = oa_xstrdup(target);
		}
		struct stat st;
		if (fstatat(s->blobs_fd, b->name, &st, 0) < 0) {
			b->dangling = true;
			b->stat_ok = false;
			b->stat_errno = errno;
		} else {
			oa_file_info_set(&b->st, &st);
			char *full = oa_path_join(s->root, "blobs");
			char *p = oa_path_join(full, b->name);
			char resolved[OA_PATH_MAX];
			b->link_outside = !realpath(p, resolved) || !inside_root(s, resolved);
			free(full);
			free(p);
		}
	}
	classify_blob(b, b->stat_ok && S_ISDIR(b->st.mode));
}

static void stat_blob_at(void *ctx, size_t i)
{
	oa_store *s = ctx;
	stat_blob(s, &s->blobs[i]);
}

static uint64_t name_hash(const char *name, size_t len)
{
	return XXH3_64bits(name, len);
}

static bool same_name(const void *ctx, size_t entry, const void *key)
{
	const oa_blob *blobs = ctx;
	return strcmp(blobs[entry].name, key) == 0;
}

/* Built once the blobs are sorted (their indexes no longer move). */
static void index_blobs(oa_store *s)
{
	store_free_blob_index(s);
	if (s->n_blobs == 0 || s->n_blobs >= UINT32_MAX / 4)
		return; /* (the binary search then) */
	struct oa_blob_index *ix = oa_xcalloc(1, sizeof *ix);
	oa_hash_index_reserve(&ix->ix, s->n_blobs);
	for (size_t i = 0; i < s->n_blobs; i++)
		oa_hash_index_add(&ix->ix, name_hash(s->blobs[i].name, strlen(s->blobs[i].name)), i);
	s->blob_index = ix;
}

/* The entry of blobs/ named `name` (len bytes), or NULL. */
static oa_blob *blob_named(const oa_store *s, const char *name, size_t len)
{
	if (s->n_blobs == 0)
		return NULL; /* (bsearch on a NULL array is undefined) */
	const struct oa_blob_index *ix = s->blob_index;
	if (!ix) {
		oa_blob key = { .name = (char *)name };
		return bsearch(&key, s->blobs, s->n_blobs, sizeof *s->blobs, store_cmp_blob_name);
	}
	size_t i = oa_hash_index_find(&ix->ix, name_hash(name, len), same_name, s->blobs, name);
	return i == OA_HASH_NONE ? NULL : &s->blobs[i];
}

/* List blobs/, then stat its entries on `jobs` threads; its findings go
 * to *into. */
static void scan_blobs(oa_store *s, oa_findings *into, int jobs)
{
	if (s->blobs_fd < 0)
		return;
	int fd = dup(s->blobs_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		oa_findings_add(into, OA_FINDING_UNREADABLE, NULL, NULL, "blobs", "cannot list blobs/: %s",
		                strerror(errno));
		return;
	}
	size_t cap = 0;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		OA_ALLOC_GROW(s->blobs, s->n_blobs + 1, cap);
		oa_blob *b = &s->blobs[s->n_blobs++];
		memset(b, 0, sizeof *b);
		b->name = oa_xstrdup(e->d_name);
		errno = 0;
	}
	s->blobs_listed = !errno;
	if (errno)
		oa_findings_add(into, OA_FINDING_UNREADABLE, NULL, NULL, "blobs",
		                "error while listing blobs/: %s", strerror(errno));
	closedir(d);
	oa_pool_run(jobs, s->n_blobs, OA_POOL_MIN_PARALLEL, stat_blob_at, s);
	if (s->n_blobs) /* qsort on a NULL array is undefined */
		qsort(s->blobs, s->n_blobs, sizeof *s->blobs, store_cmp_blob_name);
	index_blobs(s);
}

void store_scan_blobs(oa_store *s)
{
	scan_blobs(s, &s->findings, s->jobs);
}

/* On a thread of its own, the listing stats one entry after the other. */
static void scan_blobs_task(void *ctx)
{
	store_blob_scan *bs = ctx;
	scan_blobs(bs->s, &bs->found, 1);
}

void store_scan_blobs_start(oa_store *s, store_blob_scan *bs)
{
	*bs = (store_blob_scan){ .s = s, .at = s->findings.n };
	if (oa_pool_threads(s->jobs) <= 1) {
		store_scan_blobs(s);
		bs->ready = true;
		return;
	}
	bs->running = true;
	oa_task_start(&bs->task, scan_blobs_task, bs);
}

void store_scan_blobs_wait(store_blob_scan *bs)
{
	if (bs->ready)
		return;
	bs->ready = true;
	if (!bs->running)
		return;
	oa_task_wait(&bs->task);
	/* Its findings where a listing before the walk would have put them. */
	oa_findings *f = &bs->s->findings, *g = &bs->found;
	if (g->n) {
		OA_ALLOC_GROW(f->v, f->n + g->n, f->cap);
		memmove(f->v + bs->at + g->n, f->v + bs->at, (f->n - bs->at) * sizeof *f->v);
		memcpy(f->v + bs->at, g->v, g->n * sizeof *g->v);
		f->n += g->n;
	}
	free(g->v);
	*g = (oa_findings){ 0 };
}

oa_blob *oa_store_find_blob(const oa_store *s, const oa_layer *l)
{
	if (!l->digest_valid || s->n_blobs == 0)
		return NULL; /* (bsearch on a NULL array is undefined) */
	/* The server's BlobsPath only swaps ':' for '-': the case of the hex is kept. */
	char name[7 + 64 + 1];
	size_t k = strnlen(l->digest + 7, 64); /* (what snprintf "sha256-%s" kept, without its cost) */
	memcpy(name, "sha256-", 7);
	memcpy(name + 7, l->digest + 7, k);
	name[7 + k] = '\0';
	return blob_named(s, name, 7 + k);
}

int oa_store_open_blob(const oa_store *s, const oa_blob *b)
{
	return oa_openat_ro(s->blobs_fd, b->name, 0);
}

bool oa_blob_looks_like_manifest(const oa_store *s, oa_blob *b)
{
	if (b->checked_manifest)
		return b->is_manifest_blob;
	b->checked_manifest = true;
	if (!b->stat_ok || !S_ISREG(b->st.mode) || b->st.size == 0 || b->st.size > (1 << 20))
		return false;
	uint8_t *buf;
	size_t len;
	if (store_read_blob(s, b, 1 << 20, &buf, &len) < 0)
		return false;
	size_t i = 0;
	while (i < len && isspace(buf[i]))
		i++;
	if (i < len && buf[i] == '{') {
		json_error_t jerr;
		json_t *root = json_loadb((const char *)buf, len, JSON_DISABLE_EOF_CHECK, &jerr);
		if (root && json_is_object(root) && json_object_get(root, "schemaVersion") &&
		    (json_object_get(root, "layers") || json_object_get(root, "manifests")))
			b->is_manifest_blob = true;
		json_decref(root);
	}
	free(buf);
	return b->is_manifest_blob;
}

/* A manifest that does not parse may still be the only thing that needs
 * some blobs (spec §5.2: upstream's rm deletes them anyway). Mark every
 * blob whose digest appears in its bytes. */
static void weak_ref(void *ctx, const oa_digest_hex hex)
{
	oa_store *s = ctx;
	char name[7 + 64 + 1];
	for (int lower = 0; lower < 2; lower++) {
		snprintf(name, sizeof name, "sha256-%s", hex);
		for (int k = 0; lower && k < 64; k++)
			name[7 + k] = (char)tolower((unsigned char)name[7 + k]);
		oa_blob *b = blob_named(s, name, strlen(name));
		if (b) {
			b->weak_refs++;
			return;
		}
	}
}

void store_mark_weak_refs(oa_store *s, const uint8_t *bytes, size_t len)
{
	oa_digest_scan(bytes, len, weak_ref, s);
}

/* The same for a file too large to read whole (over OA_MANIFEST_MAX): read
 * in windows that overlap by more than any spelling of a digest, as the
 * reference set does, so check and prune agree on what it names. */
#define WEAK_WINDOW (1u << 20)
#define WEAK_OVERLAP 1024u
void store_mark_weak_refs_file(oa_store *s, int dirfd, const char *file)
{
	int fd = oa_openat_ro(dirfd, file, O_NONBLOCK);
	if (fd < 0)
		return;
	uint8_t *buf = oa_xmalloc(WEAK_WINDOW + WEAK_OVERLAP);
	size_t carry = 0;
	ssize_t got;
	while ((got = oa_read_some(fd, buf + carry, WEAK_WINDOW)) > 0) {
		size_t n = carry + (size_t)got;
		store_mark_weak_refs(s, buf, n);
		carry = n < WEAK_OVERLAP ? n : WEAK_OVERLAP;
		memmove(buf, buf + n - carry, carry);
	}
	free(buf);
	close(fd);
}

oa_blob *oa_store_find_blob_hex(const oa_store *s, const char *hex)
{
	char digest[7 + 64 + 1];
	snprintf(digest, sizeof digest, "sha256:%s", hex);
	oa_layer l = { .digest = digest, .hex = hex, .digest_valid = true };
	return oa_store_find_blob(s, &l);
}

/* The blob whose name is this digest, when it is a complete, present file. */
oa_blob *store_blob_by_hex(const oa_store *s, const char *hex)
{
	oa_blob *b = oa_store_find_blob_hex(s, hex);
	return b && b->cls == OA_BLOB_VALID && !b->dangling && b->stat_ok ? b : NULL;
}

/* The blob a list entry names, in the case its digest is written: the
 * server's BlobsPath keeps the case of the hex. */
oa_blob *store_entry_blob(const oa_store *s, const oa_list_entry *e)
{
	if (!e->digest_valid)
		return NULL;
	oa_layer l = { .digest = e->digest, .hex = e->hex, .digest_valid = true };
	oa_blob *b = oa_store_find_blob(s, &l);
	return b && b->cls == OA_BLOB_VALID && !b->dangling && b->stat_ok ? b : NULL;
}

oa_blob *oa_store_blob_by_hex(const oa_store *s, const char *hex)
{
	return store_blob_by_hex(s, hex);
}
