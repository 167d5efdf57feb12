/* store.c - find a store, walk it as the server does, read manifests and configs. */
#include "ollama_audit/store.h"
#include "ollama_audit/manifest_list.h"
#include "ollama_audit/humanize.h"
#include "base/platform.h"
#include "base/util.h"

#include <ctype.h>
#include <jansson.h>
#include <strings.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OA_CONFIG_MAX (16u << 20)
#define OA_TEMPLATE_MAX (1u << 20)

static const char *blob_class_names[OA_BLOB_CLASS_COUNT] = {
	[OA_BLOB_VALID] = "blob",          [OA_BLOB_PARTIAL] = "partial",
	[OA_BLOB_PARTIAL_PART] = "partial-part", [OA_BLOB_TMP] = "tensor-download-temp",
	[OA_BLOB_CREATE_TEMP] = "create-temp", [OA_BLOB_QUANT_TEMP] = "quantize-temp",
	[OA_BLOB_LEGACY] = "legacy-name",  [OA_BLOB_TEMP_DIR] = "temp-dir",
	[OA_BLOB_DIR] = "directory",       [OA_BLOB_FOREIGN] = "foreign",
};

const char *oa_blob_class_name(enum oa_blob_class c)
{
	return c < OA_BLOB_CLASS_COUNT ? blob_class_names[c] : "foreign";
}

static const char *format_names[] = {
	[OA_FORMAT_UNKNOWN] = "unknown", [OA_FORMAT_GGUF] = "gguf",
	[OA_FORMAT_SAFETENSORS] = "safetensors", [OA_FORMAT_REMOTE] = "remote",
	[OA_FORMAT_MIXED] = "mixed",
};
static const char *runner_names[] = {
	[OA_RUNNER_NONE] = "none", [OA_RUNNER_LLAMACPP] = "llamacpp",
	[OA_RUNNER_MLX] = "mlx", [OA_RUNNER_REMOTE] = "remote",
};

const char *oa_format_name(enum oa_format f)
{
	return format_names[f];
}

const char *oa_runner_name(enum oa_runner r)
{
	return runner_names[r];
}

/* ---- discovery ---------------------------------------------------------- */

void oa_file_info_set(oa_file_info *fi, const struct stat *st)
{
	fi->dev = (uint64_t)st->st_dev;
	fi->ino = (uint64_t)st->st_ino;
	fi->size = (int64_t)st->st_size;
	fi->blocks = (int64_t)st->st_blocks;
	fi->mtime_ns = oa_stat_mtime_ns(st);
	fi->ctime_ns = oa_stat_ctime_ns(st);
	fi->mode = (uint32_t)st->st_mode;
	fi->uid = (uint32_t)st->st_uid;
	fi->nlink = st->st_nlink > UINT32_MAX ? UINT32_MAX : (uint32_t)st->st_nlink;
}

char *oa_store_default_path(const char **how)
{
	char *env = oa_env_trim(getenv("OLLAMA_MODELS"));
	if (env) {
		*how = "OLLAMA_MODELS";
		return env;
	}
	const char *home = getenv("HOME");
	*how = "default";
	return oa_path_join(home && *home ? home : "/", ".ollama/models");
}

static bool is_dir_at(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* What a symlink may lead into: the root and its three directories, each
 * resolved (manifests/ may itself be a symlink to another disk). */
static void store_bounds(oa_store *s)
{
	static const char *tops[] = { ".", "manifests", "manifests-v2", "blobs" };
	for (size_t i = 0; i < 4; i++) {
		char *p = oa_path_join(s->root, tops[i]);
		char r[PATH_MAX];
		/* "/" is never a bound: it would let every symlink in */
		if (realpath(p, r) && strcmp(r, "/") != 0) {
			s->bounds[s->n_bounds++] = oa_xstrdup(r);
			if (i == 3)
				s->blobs_real = s->bounds[s->n_bounds - 1];
		}
		free(p);
	}
}

bool oa_store_blob_path_hex(const oa_store *s, const char *resolved, oa_digest_hex hex)
{
	const char *slash = strrchr(resolved, '/');
	if (!slash || !s->blobs_real)
		return false;
	size_t n = (size_t)(slash - resolved);
	return strlen(s->blobs_real) == n && strncmp(resolved, s->blobs_real, n) == 0 &&
	       strlen(slash + 1) == 7 + 64 && oa_digest_parse(slash + 1, hex, NULL);
}

_Static_assert(OA_PATH_MAX >= PATH_MAX, "realpath() may write PATH_MAX bytes into an OA_PATH_MAX buffer");

int oa_store_resolve_path(const oa_store *s, const char *rel, char out[OA_PATH_MAX])
{
	char *p = oa_path_join(s->root, rel);
	char *r = realpath(p, out);
	int e = errno;
	free(p);
	if (!r) {
		errno = e;
		return -1;
	}
	for (size_t i = 0; i < s->n_bounds; i++) {
		size_t n = strlen(s->bounds[i]);
		if (strncmp(out, s->bounds[i], n) == 0 && (out[n] == '/' || out[n] == '\0' || n == 1))
			return 1;
	}
	return 0;
}

int oa_store_open(oa_store *s, const char *path, const char *how, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	s->root_fd = s->manifests_fd = s->blobs_fd = s->manifests_v2_fd = -1;
	s->input = oa_xstrdup(path);
	s->how = how;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (is_dir_at(fd, "manifests") || is_dir_at(fd, "manifests-v2") || is_dir_at(fd, "blobs")) {
		s->root = oa_xstrdup(path);
	} else if (is_dir_at(fd, "models")) {
		/* the parent .ollama directory */
		int sub = openat(fd, "models", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = sub;
		if (fd < 0) {
			snprintf(err, errlen, "%s/models: %s", path, strerror(errno));
			return -1;
		}
		if (!is_dir_at(fd, "manifests") && !is_dir_at(fd, "blobs")) {
			snprintf(err, errlen, "%s/models has neither manifests/ nor blobs/", path);
			close(fd);
			return -1;
		}
		s->root = oa_path_join(path, "models");
	} else {
		snprintf(err, errlen, "%s is not an Ollama store: no manifests/ or blobs/ in it or in %s/models",
		         path, path);
		close(fd);
		return -1;
	}
	s->root_fd = fd;
	fstat(fd, &s->root_st);
	store_bounds(s);
	s->manifests_fd = openat(fd, "manifests", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s->has_manifests = s->manifests_fd >= 0 || is_dir_at(fd, "manifests");
	if (s->has_manifests && s->manifests_fd < 0)
		oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, NULL, "manifests",
		                "cannot open manifests/: %s", strerror(errno));
	s->manifests_v2_fd = openat(fd, "manifests-v2", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s->has_manifests_v2 = s->manifests_v2_fd >= 0 || is_dir_at(fd, "manifests-v2");
	if (s->has_manifests_v2 && s->manifests_v2_fd < 0)
		oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, NULL, "manifests-v2",
		                "cannot open manifests-v2/: %s", strerror(errno));
	s->blobs_fd = openat(fd, "blobs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s->has_blobs = s->blobs_fd >= 0 || is_dir_at(fd, "blobs");
	if (s->has_blobs && s->blobs_fd < 0)
		oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, NULL, "blobs",
		                "cannot open blobs/: %s", strerror(errno));
	return 0;
}

/* Temp-file prefixes of create and quantize (spec §1.3), each followed by digits. */
static bool is_quant_temp(const char *name)
{
	static const char *prefixes[] = {
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

static int cmp_blob_name(const void *a, const void *b)
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
static int read_looked_at(int dirfd, const char *name, mode_t mode, size_t max, uint8_t **out, size_t *len)
{
	if (S_ISREG(mode))
		return oa_read_regular_at(dirfd, name, max, out, len);
	return oa_read_file_at(dirfd, name, max, out, len);
}

/* A blob's bytes, by the stat scan_blobs took. */
static int read_blob(const oa_store *s, const oa_blob *b, size_t max, uint8_t **out, size_t *len)
{
	if (b->stat_ok)
		return read_looked_at(s->blobs_fd, b->name, (mode_t)b->st.mode, max, out, len);
	return oa_read_file_at(s->blobs_fd, b->name, max, out, len);
}

static void scan_blobs(oa_store *s)
{
	if (s->blobs_fd < 0)
		return;
	int fd = dup(s->blobs_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, NULL, "blobs", "cannot list blobs/: %s",
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
		struct stat lst;
		if (fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
			b->stat_errno = errno;
			b->cls = classify_blob_name(b->name, false, b->hex, &b->partial_index);
			continue;
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
		b->cls = classify_blob_name(b->name, b->stat_ok && S_ISDIR(b->st.mode), b->hex,
		                            &b->partial_index);
		errno = 0;
	}
	s->blobs_listed = !errno;
	if (errno)
		oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, NULL, "blobs",
		                "error while listing blobs/: %s", strerror(errno));
	closedir(d);
	if (s->n_blobs) /* qsort on a NULL array is undefined */
		qsort(s->blobs, s->n_blobs, sizeof *s->blobs, cmp_blob_name);
}

oa_blob *oa_store_find_blob(const oa_store *s, const oa_layer *l)
{
	if (!l->digest_valid || s->n_blobs == 0)
		return NULL; /* (bsearch on a NULL array is undefined) */
	/* The server's BlobsPath only swaps ':' for '-': the case of the hex is kept. */
	char name[7 + 64 + 1];
	snprintf(name, sizeof name, "sha256-%s", l->digest + 7);
	oa_blob key = { .name = name };
	return bsearch(&key, s->blobs, s->n_blobs, sizeof *s->blobs, cmp_blob_name);
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
	if (read_blob(s, b, 1 << 20, &buf, &len) < 0)
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

/* ---- names ---------------------------------------------------------------- */

void oa_model_name_set(oa_model_name *dst, const oa_name *n)
{
	size_t h = strlen(n->host) + 1, ns = strlen(n->ns) + 1, m = strlen(n->model) + 1, t = strlen(n->tag) + 1;
	char *p = oa_xmalloc(h + ns + m + t);
	memcpy(p, n->host, h);
	memcpy(p + h, n->ns, ns);
	memcpy(p + h + ns, n->model, m);
	memcpy(p + h + ns + m, n->tag, t);
	*dst = (oa_model_name){ p, p + h, p + h + ns, p + h + ns + m };
}

void oa_model_name_get(const oa_model_name *n, oa_name *out)
{
	memset(out, 0, sizeof *out);
	if (!n->host)
		return;
	snprintf(out->host, sizeof out->host, "%s", n->host);
	snprintf(out->ns, sizeof out->ns, "%s", n->ns);
	snprintf(out->model, sizeof out->model, "%s", n->model);
	snprintf(out->tag, sizeof out->tag, "%s", n->tag);
}

void oa_model_name_free(oa_model_name *n)
{
	free(n->host);
	memset(n, 0, sizeof *n);
}

bool oa_model_name_is(const oa_model_name *a, const oa_name *n, bool fold)
{
	oa_name x;
	oa_model_name_get(a, &x);
	return fold ? oa_name_equal_fold(&x, n) : oa_name_equal(&x, n);
}

/* The same for two models' names. */
static bool names_match(const oa_model_name *a, const oa_model_name *b, bool fold)
{
	oa_name y;
	oa_model_name_get(b, &y);
	return oa_model_name_is(a, &y, fold);
}

/* ---- manifests/ ----------------------------------------------------------- */

typedef struct walk_ctx {
	oa_store *s;
	size_t cap;
	const char *top;        /* "manifests" or "manifests-v2" */
	bool v2;
	char *parts[4];
} walk_ctx;

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

/* ---- what the walk tells the reference set (oa_tag_facts) ------------------ */

static int cmp_dig(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

static void dig_unique(unsigned char (*v)[32], size_t *n)
{
	if (*n)
		qsort(v, *n, sizeof *v, cmp_dig);
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

/* Append a digest (64 hex digits, either case) in binary; sorted and
 * deduplicated whenever it doubled, so memory is bounded by the distinct
 * digests, not the mentions. */
static void dig_push(unsigned char (**v)[32], size_t *n, size_t *cap, size_t *sorted, const char *hex)
{
	if (*n >= 4096 && *n >= 2 * *sorted) {
		dig_unique(*v, n);
		*sorted = *n;
	}
	OA_ALLOC_GROW(*v, *n + 1, *cap);
	for (int k = 0; k < 32; k++)
		(*v)[*n][k] = (unsigned char)(hex_nibble(hex[2 * k]) << 4 | hex_nibble(hex[2 * k + 1]));
	(*n)++;
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

static void free_tag_facts(oa_tag_facts *f)
{
	free(f->dig);
	free(f->list_dig);
	oa_free_names(f->empty_dirs, f->n_empty_dirs);
	free(f->empty_st);
	memset(f, 0, sizeof *f);
}

/* Done walking: sort what was gathered, or drop it when it is not complete. */
static void finish_tag_facts(oa_store *s)
{
	oa_tag_facts *f = &s->tags;
	if (!f->plain) {
		free_tag_facts(f);
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
	f->empty_dirs = oa_xreallocarray(f->empty_dirs, f->n_empty_dirs + 1, sizeof *f->empty_dirs);
	f->empty_st = oa_xreallocarray(f->empty_st, f->n_empty_dirs + 1, sizeof *f->empty_st);
	f->empty_dirs[f->n_empty_dirs] = rel;
	f->empty_st[f->n_empty_dirs++] = *st;
}

static void read_manifest(walk_ctx *w, int dirfd, const char *file, const struct stat *st, bool link);

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
		oa_findings_add(&w->s->findings, OA_FINDING_SYMLINK_OUT_OF_STORE, NULL, NULL, rel,
		                "a symlink to %s, outside the store: not followed; what it holds may "
		                "reference any blob, so prune keeps every complete blob", where);
		free(where);
		free(rel);
	}
	return out;
}

/* Walk one directory; true when nothing but directories holding nothing
 * is below it (junk.c's empty directories, recorded for manifests/). */
static bool walk(walk_ctx *w, int dirfd, int depth)
{
	oa_store *s = w->s;
	size_t n;
	int err;
	bool empty = true;
	char **names = oa_list_dir(dirfd, &n, &err);
	if (err) {
		not_plain(s);
		char *rel = rel_path(w, depth, NULL);
		oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, NULL, rel, "cannot list %s: %s", rel,
		                strerror(err));
		/* The server's glob silently skips what it cannot read. */
		free(rel);
		return false;
	}
	if (n == 0 && depth > 0) {
		char *rel = rel_path(w, depth, NULL);
		oa_findings_add(&s->findings, OA_FINDING_EMPTY_MANIFEST_DIR, NULL, NULL, rel,
		                "empty directory (the server removes it on prune)");
		free(rel);
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i];
		/* One lstat: only a symlink needs a second stat, through it, once
		 * it is known to stay in the store. */
		struct stat st;
		bool ok = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
		int serr = errno;
		bool link = ok && S_ISLNK(st.st_mode);
		bool was_dir = ok && S_ISDIR(st.st_mode);
		if (!ok || (link && leads_out(w, depth, name))) {
			not_plain(s);
			empty = false;
			if (link)
				continue;
		}
		if (link) {
			ok = fstatat(dirfd, name, &st, 0) == 0;
			serr = errno;
			/* only a tag symlink to a regular file is read as refs.c reads it */
			if (!ok || !S_ISREG(st.st_mode) || depth != 3)
				not_plain(s);
		}
		if (!was_dir)
			empty = false;
		if (depth == 3) {
			w->parts[3] = names[i];
			char *rel = rel_path(w, 3, name);
			if (!ok && w->v2 && link) {
				/* 0.40 writes the blob first, then the link: the manifest is gone. */
				oa_findings_add(&s->findings, OA_FINDING_DANGLING_TAG, NULL, NULL, rel,
				                "a manifests-v2 tag whose symlink leads nowhere: %s", strerror(serr));
				s->n_manifest_files++;
			} else if (!ok) {
				oa_findings_add(&s->findings, link ? OA_FINDING_INVALID_MANIFEST : OA_FINDING_UNREADABLE, NULL,
				                NULL, rel, "%s: %s", link ? "dangling symlink" : "cannot stat",
				                strerror(serr));
				oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, NULL, NULL, rel,
				                "the server cannot stat this file: it skips its start-up prune, and /api/tags fails");
				s->prune_blocked = true;
				s->n_manifest_files++;
			} else if (S_ISDIR(st.st_mode)) {
				not_plain(s); /* refs.c reads what it holds */
				oa_findings_add(&s->findings, OA_FINDING_IGNORED_FILE, NULL, NULL, rel,
				                "a directory where a manifest file belongs; the server skips it");
			} else {
				s->n_manifest_files++;
				read_manifest(w, dirfd, name, &st, link);
			}
			free(rel);
			continue;
		}
		if (!ok || !S_ISDIR(st.st_mode)) {
			not_plain(s); /* refs.c reads a file at any depth */
			char *rel = rel_path(w, depth, name);
			oa_findings_add(&s->findings, OA_FINDING_IGNORED_FILE, NULL, NULL, rel,
			                ok ? "a file at depth %d under manifests/; the server only reads depth 4"
			                   : "cannot stat (depth %d); the server ignores it",
			                depth + 1);
			free(rel);
			continue;
		}
		int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0) {
			not_plain(s);
			empty = false;
			w->parts[depth] = names[i];
			char *rel = rel_path(w, depth + 1, NULL);
			oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, NULL, rel, "cannot open %s: %s",
			                rel, strerror(errno));
			free(rel);
			continue;
		}
		w->parts[depth] = names[i];
		if (!walk(w, sub, depth + 1))
			empty = false;
		else if (!w->v2)
			note_empty_dir(s, raw_path(w, depth + 1, NULL), &st);
		close(sub);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return empty;
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
		oa_blob key = { .name = name };
		oa_blob *b = s->n_blobs ? bsearch(&key, s->blobs, s->n_blobs, sizeof *s->blobs,
		                                  cmp_blob_name) : NULL;
		if (b) {
			b->weak_refs++;
			return;
		}
	}
}

static void mark_weak_refs(oa_store *s, const uint8_t *bytes, size_t len)
{
	oa_digest_scan(bytes, len, weak_ref, s);
}

/* The same for a file too large to read whole (over OA_MANIFEST_MAX): read
 * in windows that overlap by more than any spelling of a digest, as the
 * reference set does, so check and prune agree on what it names. */
#define WEAK_WINDOW (1u << 20)
#define WEAK_OVERLAP 1024u
static void mark_weak_refs_file(oa_store *s, int dirfd, const char *file)
{
	int fd = oa_openat_ro(dirfd, file, O_NONBLOCK);
	if (fd < 0)
		return;
	uint8_t *buf = oa_xmalloc(WEAK_WINDOW + WEAK_OVERLAP);
	size_t carry = 0;
	ssize_t got;
	while ((got = read(fd, buf + carry, WEAK_WINDOW)) > 0 || (got < 0 && errno == EINTR)) {
		if (got < 0)
			continue;
		size_t n = carry + (size_t)got;
		mark_weak_refs(s, buf, n);
		carry = n < WEAK_OVERLAP ? n : WEAK_OVERLAP;
		memmove(buf, buf + n - carry, carry);
	}
	free(buf);
	close(fd);
}

/* The name of a manifests-v2 tag: its host directory has ':' written %3A,
 * and ollama.com is the default registry (spec §2.5). */
static bool v2_name(walk_ctx *w, const char *file, oa_name *name, const char **why)
{
	char host[351 + 1];
	size_t n = 0;
	for (const char *p = w->parts[0]; *p; p++) {
		if (n + 1 >= sizeof host) {
			*why = "host too long";
			return false;
		}
		if (p[0] == '%' && p[1] == '3' && (p[2] == 'A' || p[2] == 'a')) {
			host[n++] = ':';
			p += 2;
		} else {
			host[n++] = *p;
		}
	}
	host[n] = '\0';
	if (strcasecmp(host, "ollama.com") == 0)
		snprintf(host, sizeof host, "%s", OA_NAME_DEFAULT_HOST);
	return oa_name_from_parts(name, host, w->parts[1], w->parts[2], file, why);
}

oa_blob *oa_store_find_blob_hex(const oa_store *s, const char *hex)
{
	char digest[7 + 64 + 1];
	snprintf(digest, sizeof digest, "sha256:%s", hex);
	oa_layer l = { .digest = digest, .digest_valid = true };
	memcpy(l.hex, hex, sizeof l.hex);
	return oa_store_find_blob(s, &l);
}

/* The blob whose name is this digest, when it is a complete, present file. */
static oa_blob *blob_by_hex(const oa_store *s, const char *hex)
{
	oa_blob *b = oa_store_find_blob_hex(s, hex);
	return b && b->cls == OA_BLOB_VALID && !b->dangling && b->stat_ok ? b : NULL;
}

/* The blob a list entry names, in the case its digest is written: the
 * server's BlobsPath keeps the case of the hex. */
static oa_blob *entry_blob(const oa_store *s, const oa_list_entry *e)
{
	if (!e->digest_valid)
		return NULL;
	oa_layer l = { .digest = e->digest, .digest_valid = true };
	memcpy(l.hex, e->hex, sizeof l.hex);
	oa_blob *b = oa_store_find_blob(s, &l);
	return b && b->cls == OA_BLOB_VALID && !b->dangling && b->stat_ok ? b : NULL;
}

/* The manifest blob a tag symlink resolves to, or "". */
static void link_blob(walk_ctx *w, const char *file, oa_digest_hex hex)
{
	hex[0] = '\0';
	char *raw = raw_path(w, 3, file);
	char resolved[OA_PATH_MAX];
	if (oa_store_resolve_path(w->s, raw, resolved) != 1 || !oa_store_blob_path_hex(w->s, resolved, hex))
		hex[0] = '\0';
	free(raw);
}

/* Which manifest blob a tag is: the one its symlink resolves to (link_hex),
 * else the one its bytes hash to (self: a hard link or a copy). */
static void tag_blob(walk_ctx *w, oa_model *m, bool link, const oa_digest_hex self, const oa_digest_hex link_hex)
{
	m->tag_kind = "file";
	if (link) {
		m->tag_kind = "symlink";
		memcpy(m->tag_blob, link_hex, sizeof m->tag_blob);
		return;
	}
	oa_blob *b = blob_by_hex(w->s, self);
	if (!b)
		return;
	memcpy(m->tag_blob, self, sizeof m->tag_blob);
	m->tag_kind = b->st.dev == m->st.dev && b->st.ino == m->st.ino ? "hardlink" : "copy";
}

/* The bytes of a list entry's manifest: the child blob, or the entry itself
 * when inline. NULL when it is not here. */
static uint8_t *child_bytes(oa_store *s, const oa_list_entry *e, size_t *len)
{
	if (e->inline_json) {
		*len = strlen(e->inline_json);
		return (uint8_t *)oa_xstrdup(e->inline_json);
	}
	oa_blob *b = entry_blob(s, e);
	uint8_t *bytes;
	if (!b || read_blob(s, b, OA_MANIFEST_MAX, &bytes, len) < 0)
		return NULL;
	return bytes;
}

/* A tag whose manifest is a list: use the child the server would (one that
 * is here, by the platform's runner preference), and say which a pull on
 * that platform would fetch. m->m becomes that child's manifest. */
static void use_list_child(oa_store *s, oa_model *m)
{
	m->is_list = true;
	m->list = oa_xmalloc(sizeof *m->list);
	*m->list = m->m;
	memset(&m->m, 0, sizeof m->m);
	size_t n = m->list->n_manifests;
	m->child_present = oa_xcalloc(n ? n : 1, sizeof *m->child_present);
	for (size_t i = 0; i < n; i++) {
		const oa_list_entry *e = &m->list->entries[i];
		m->child_present[i] = e->inline_json || entry_blob(s, e);
	}
	const char *platform = s->platform ? s->platform : oa_platform_default();
	m->child_pull = oa_list_select(m->list, NULL, platform);
	m->child = oa_list_select(m->list, m->child_present, platform);
	for (size_t i = 0; i < n && m->child < 0; i++)
		if (m->child_present[i])
			m->child = (long)i; /* a runner no preference names: the first that is here */
	char err[256] = "";
	uint8_t *bytes = NULL;
	size_t len = 0;
	if (m->child >= 0)
		bytes = child_bytes(s, &m->list->entries[m->child], &len);
	if (!bytes || oa_manifest_parse(bytes, len, &m->m, err, sizeof err) < 0 || m->m.is_list) {
		if (!*err)
			snprintf(err, sizeof err, "%s", m->child < 0 ? "no child of the list is here"
			         : bytes ? "its child is another manifest list, which the server rejects"
			         : "cannot read its child manifest");
		m->manifest_ok = false;
		m->manifest_error = oa_escape(err, strlen(err));
		if (!m->m.media_type) { /* never parsed: an empty manifest */
			m->m.media_type = oa_xstrdup("");
			m->m.config.media_type = oa_xstrdup("");
			m->m.config.digest = oa_xstrdup("");
			m->m.runner = oa_xstrdup("");
			m->m.format = oa_xstrdup("");
		}
		oa_finding_code code = m->child < 0 ? OA_FINDING_MISSING_CHILD
		                       : m->m.is_list ? OA_FINDING_NESTED_LIST : OA_FINDING_INVALID_MANIFEST;
		oa_findings_add(&s->findings, code, m->display, NULL, m->rel_path, "manifest list: %s",
		                m->manifest_error);
	}
	free(bytes);
	/* ollama list shows the child's digest as the ID (the list's when none is here) */
	const oa_list_entry *e = m->child >= 0 ? &m->list->entries[m->child] : NULL;
	if (e && e->digest_valid)
		memcpy(m->m.id, e->hex, sizeof m->m.id);
	else if (!e || !e->inline_json)
		memcpy(m->m.id, m->list->id, sizeof m->m.id);
}

static int cmp_layer_digest(const void *a, const void *b)
{
	return strcmp((*(const oa_layer *const *)a)->digest, (*(const oa_layer *const *)b)->digest);
}

/* SIZE in 0.40 (TotalSizeForName): every distinct digest once. */
static int64_t unique_size(const oa_manifest *mf)
{
	size_t n = mf->n_layers + 1;
	const oa_layer **v = oa_xcalloc(n, sizeof *v);
	v[0] = &mf->config;
	for (size_t i = 0; i < mf->n_layers; i++)
		v[i + 1] = &mf->layers[i];
	qsort(v, n, sizeof *v, cmp_layer_digest);
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		if (*v[i]->digest && (i == 0 || strcmp(v[i - 1]->digest, v[i]->digest) != 0))
			total = (int64_t)((uint64_t)total + (uint64_t)v[i]->size);
	free(v);
	return total;
}

static void read_manifest(walk_ctx *w, int dirfd, const char *file, const struct stat *st, bool link)
{
	oa_store *s = w->s;
	char *rel = rel_path(w, 3, file);
	if (!S_ISREG(st->st_mode) || st->st_nlink > 1)
		not_plain(s); /* refs.c skips the one, looks for the other's names in blobs/ */
	if (w->v2 && oa_str_has_prefix(file, ".manifest-")) {
		not_plain(s); /* refs.c reads it */
		/* a tag write the server did not finish (its temp name): junk, not a model */
		oa_findings_add(&s->findings, OA_FINDING_TEMP_FILE, NULL, NULL, rel,
		                "an interrupted manifests-v2 tag write; prune removes it after the grace period");
		s->v2_temps = oa_xreallocarray(s->v2_temps, s->n_v2_temps + 1, sizeof *s->v2_temps);
		s->v2_temps[s->n_v2_temps++] = rel;
		return;
	}
	oa_name name;
	const char *why = NULL;
	bool valid = w->v2 ? v2_name(w, file, &name, &why)
	                   : oa_name_from_parts(&name, w->parts[0], w->parts[1], w->parts[2], file, &why);
	if (!valid) {
		oa_findings_add(&s->findings, OA_FINDING_INVALID_NAME, NULL, NULL, rel,
		                "not a valid model name (%s); the server skips it", why);
		if (!w->v2) {
			oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, NULL, NULL, rel,
			                "an invalid name under manifests/ makes the server skip its start-up prune");
			s->prune_blocked = true;
		}
		/* It may be a real manifest under a name the server rejects: keep
		 * whatever it references out of the orphans. */
		uint8_t *bytes;
		size_t len;
		if (read_looked_at(dirfd, file, st->st_mode, OA_MANIFEST_MAX, &bytes, &len) == 0) {
			mark_weak_refs(s, bytes, len);
			oa_digest_hex self, lh = "";
			oa_sha256_hex(bytes, len, self);
			if (link)
				link_blob(w, file, lh);
			note_tag_file(s, bytes, len, self, lh);
			free(bytes);
		} else {
			not_plain(s);
			if (errno == EFBIG)
				mark_weak_refs_file(s, dirfd, file);
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

	uint8_t *bytes;
	size_t len;
	char err[256];
	if (read_looked_at(dirfd, file, st->st_mode, OA_MANIFEST_MAX, &bytes, &len) < 0) {
		int e = errno;
		not_plain(s);
		m->manifest_error = oa_xasprintf("cannot read: %s", e == EFBIG ? "larger than 16 MiB"
		                                 : e == EINVAL ? "not a regular file" : strerror(e));
		if (e == EFBIG) /* what it names is not an orphan (issue 19, 11c) */
			mark_weak_refs_file(s, dirfd, file);
		oa_finding_code code = e == EFBIG || e == EINVAL ? OA_FINDING_INVALID_MANIFEST : OA_FINDING_UNREADABLE;
		oa_findings_add(&s->findings, code, m->display, NULL, rel, "manifest %s", m->manifest_error);
		if (!w->v2) {
			oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, m->display, NULL, rel,
			                "an unreadable manifest makes the server skip its start-up prune");
			s->prune_blocked = true;
		}
		m->m.media_type = oa_xstrdup("");
		m->m.config.media_type = oa_xstrdup("");
		m->m.config.digest = oa_xstrdup("");
		return;
	}
	m->manifest_bytes = len;
	oa_digest_hex self, lh = ""; /* a manifest blob's digest is the sha256 of all its bytes */
	oa_sha256_hex(bytes, len, self);
	if (link)
		link_blob(w, file, lh);
	note_tag_file(s, bytes, len, self, lh);
	tag_blob(w, m, link, self, lh);
	if (oa_manifest_parse(bytes, len, &m->m, err, sizeof err) < 0) {
		m->manifest_error = oa_escape(err, strlen(err));
		oa_findings_add(&s->findings, OA_FINDING_INVALID_MANIFEST, m->display, NULL, rel, "manifest is %s%s",
		                oa_str_has_prefix(err, "not JSON") || oa_str_has_prefix(err, "empty") ? "" : "invalid: ",
		                m->manifest_error);
		if (!w->v2) {
			oa_findings_add(&s->findings, OA_FINDING_PRUNE_BLOCKER, m->display, NULL, rel,
			                "a corrupt manifest makes the server skip its start-up prune");
			s->prune_blocked = true;
		}
		mark_weak_refs(s, bytes, len);
	} else {
		m->manifest_ok = true;
		if (w->v2)
			memcpy(m->m.id, self, sizeof m->m.id);
		if (m->m.is_list)
			use_list_child(s, m);
		if (m->v2 || m->is_list)
			m->m.size = unique_size(&m->m);
	}
	free(bytes);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *fold_key(const oa_model_name *n)
{
	char *k = oa_xasprintf("%s/%s/%s:%s", n->host, n->ns, n->model, n->tag);
	for (char *p = k; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return k;
}

/* The runner a tag's row names: its manifest's own, else its list entry's. */
static const char *row_runner(const oa_model *r)
{
	const oa_list_entry *e = r->sibling ? r->row_entry
	                         : r->is_list && r->child >= 0 ? &r->list->entries[r->child] : NULL;
	if (r->m.runner && *r->m.runner)
		return r->m.runner;
	return e ? e->runner : "";
}

/* Whether two parsed manifests name the same config and layers, in order
 * (the anchor is the child re-serialised: other bytes, same model). */
static bool same_manifest(const oa_model *a, const oa_model *b)
{
	if (!a->manifest_ok || !b->manifest_ok || a->m.n_layers != b->m.n_layers ||
	    strcmp(a->m.config.digest, b->m.config.digest) != 0)
		return false;
	for (size_t k = 0; k < a->m.n_layers; k++)
		if (strcmp(a->m.layers[k].digest, b->m.layers[k].digest) != 0)
			return false;
	return true;
}

/* Reads try manifests-v2 first (spec §2.5): a legacy tag of the same name
 * is only a downgrade anchor. Say whether it still matches one of the
 * list's rows (the migration's anchor is its ggml child). */
static void mark_anchors(oa_store *s)
{
	char **keys = NULL;
	size_t n = 0;
	for (size_t i = 0; i < s->n_models; i++)
		n += s->models[i].v2;
	if (n == 0)
		return;
	keys = oa_xcalloc(n, sizeof *keys);
	n = 0;
	for (size_t i = 0; i < s->n_models; i++)
		if (s->models[i].v2)
			keys[n++] = fold_key(&s->models[i].name);
	qsort(keys, n, sizeof *keys, cmp_key);
	for (size_t i = 0; i < s->n_models; i++) {
		oa_model *m = &s->models[i];
		if (m->v2)
			continue;
		char *k = fold_key(&m->name);
		m->anchor = bsearch(&k, keys, n, sizeof *keys, cmp_key) != NULL;
		free(k);
		if (!m->anchor)
			continue;
		const oa_model *v = NULL, *same = NULL;
		for (size_t j = 0; j < s->n_models; j++) {
			const oa_model *r = &s->models[j];
			if (!r->v2 || !names_match(&r->name, &m->name, true))
				continue;
			if (!v)
				v = r;
			if (!same && (strcmp(r->m.id, m->m.id) == 0 || same_manifest(r, m)))
				same = r;
		}
		m->migration_anchor = same && same->is_list + same->sibling && strcmp(row_runner(same), "ggml") == 0;
		oa_findings_add_sev(&s->findings, OA_FINDING_LEGACY_ANCHOR, same ? OA_SEV_INFO : OA_SEV_WARNING,
		                    m->display, NULL, m->rel_path,
		                    m->migration_anchor ? "the downgrade anchor the compatibility migration wrote: the list's ggml child (ID %.12s), kept for an Ollama before 0.40%.0s"
		                    : same ? "a legacy tag kept for a downgrade; the manifests-v2 tag of the same model takes precedence%.0s%.0s"
		                         : "a legacy tag that differs from the manifests-v2 tag of the same name (ID %.12s, not %.12s): an Ollama before 0.40 would load another model",
		                    m->m.id, v ? v->m.id : "?");
	}
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

/* Every blob a list entry reaches: its manifest blob and what that names
 * (a nested list's entries too: the server rejects it, but nothing it names
 * may be lost). fn is called for each blob here; a child that does not parse
 * marks the blobs its bytes mention as weak references instead. */
typedef void (*blob_fn)(void *ctx, oa_blob *b);

static void reach_child(oa_store *s, const oa_list_entry *e, int depth, blob_fn fn, void *ctx)
{
	oa_blob *b = entry_blob(s, e);
	if (b)
		fn(ctx, b);
	size_t len;
	uint8_t *bytes = child_bytes(s, e, &len);
	if (!bytes)
		return;
	oa_manifest c;
	char err[256] = "";
	if (oa_manifest_parse(bytes, len, &c, err, sizeof err) == 0 && c.is_list) {
		for (size_t k = 0; k < c.n_manifests && depth < 8; k++)
			reach_child(s, &c.entries[k], depth + 1, fn, ctx);
	} else if (!*err) {
		for (size_t k = 0; k <= c.n_layers; k++) {
			const oa_layer *l = k == 0 ? &c.config : &c.layers[k - 1];
			oa_blob *lb = oa_store_find_blob(s, l);
			if (lb && lb->cls == OA_BLOB_VALID)
				fn(ctx, lb);
		}
	} else {
		mark_weak_refs(s, bytes, len);
	}
	oa_manifest_free(&c);
	free(bytes);
}

/* The manifest blobs a tag is or names, beyond its config and layers: the
 * blob the tag is, and for a list every child here with what it names (the
 * child in use only as a manifest blob: its config and layers are m's). */
static void reach_manifests(oa_store *s, const oa_model *m, bool rows_count, blob_fn fn, void *ctx)
{
	oa_blob *b;
	if (m->tag_blob[0] && (b = blob_by_hex(s, m->tag_blob)))
		fn(ctx, b);
	for (size_t i = 0; m->is_list && i < m->list->n_manifests; i++) {
		const oa_list_entry *e = &m->list->entries[i];
		if (!m->child_present[i])
			continue;
		if (rows_count && m->child_row && m->child_row[i]) /* its row counts its config and layers */
			fn(ctx, entry_blob(s, e));
		else if ((long)i != m->child || !m->manifest_ok)
			reach_child(s, e, 0, fn, ctx);
		else if ((b = entry_blob(s, e)))
			fn(ctx, b);
	}
}

static void count_ref(void *ctx, oa_blob *b)
{
	(void)ctx;
	b->refs++;
}

typedef struct blob_vec {
	oa_blob **v;
	size_t n, cap;
} blob_vec;

static void collect_blob(void *ctx, oa_blob *b)
{
	blob_vec *bv = ctx;
	OA_ALLOC_GROW(bv->v, bv->n + 1, bv->cap);
	bv->v[bv->n++] = b;
}

typedef struct blob_at {
	const oa_blob *b;
	size_t at;
} blob_at;

static int cmp_blob_at(const void *a, const void *b)
{
	const blob_at *x = a, *y = b;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* Keep the first of each blob, in order (a model may name one many times). */
static size_t unique_blobs(oa_blob **v, size_t n)
{
	blob_at *k = oa_xcalloc(n ? n : 1, sizeof *k);
	bool *dup = oa_xcalloc(n ? n : 1, sizeof *dup);
	for (size_t i = 0; i < n; i++)
		k[i] = (blob_at){ v[i], i };
	qsort(k, n, sizeof *k, cmp_blob_at);
	for (size_t i = 1; i < n; i++)
		dup[k[i].at] = k[i].b == k[i - 1].b;
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!dup[i])
			v[w++] = v[i];
	free(k);
	free(dup);
	return w;
}

size_t oa_model_reach(oa_store *s, const oa_model *m, oa_blob ***out)
{
	blob_vec bv = { NULL, 0, 0 };
	if (m->manifest_ok) {
		if (m->config_blob)
			collect_blob(&bv, m->config_blob);
		for (size_t i = 0; m->layer_blobs && i < m->m.n_layers; i++)
			if (m->layer_blobs[i])
				collect_blob(&bv, m->layer_blobs[i]);
	}
	reach_manifests(s, m, false, collect_blob, &bv); /* the tag reaches every child here */
	*out = bv.v;
	return unique_blobs(bv.v, bv.n);
}

size_t oa_store_row_tag(const oa_store *s, size_t idx)
{
	const oa_model *r = &s->models[idx];
	for (size_t i = 0; r->sibling && i < s->n_models; i++)
		if (!s->models[i].sibling && s->models[i].is_list && strcmp(s->models[i].rel_path, r->rel_path) == 0)
			return i;
	return idx;
}

size_t oa_store_listed_models(const oa_store *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_models; i++)
		n += !s->models[i].anchor;
	return n;
}

oa_blob *oa_store_blob_by_hex(const oa_store *s, const char *hex)
{
	return blob_by_hex(s, hex);
}

static void ref_manifest_blobs(oa_store *s, oa_model *m)
{
	reach_manifests(s, m, true, count_ref, NULL);
	if (!m->is_list)
		return;
	const char *platform = s->platform ? s->platform : oa_platform_default();
	const oa_list_entry *use = m->child >= 0 ? &m->list->entries[m->child] : NULL;
	const oa_list_entry *pull = m->child_pull >= 0 ? &m->list->entries[m->child_pull] : NULL;
	char pulls[160] = "";
	if (pull && pull != use)
		snprintf(pulls, sizeof pulls, "; a pull on %s would fetch the %s child (%s)%s", platform,
		         pull->runner, *pull->format ? pull->format : "format not named",
		         m->child_present[m->child_pull] ? "" : ", which is not here");
	char *r = use ? oa_escape(use->runner, strlen(use->runner)) : NULL;
	char *f = use ? oa_escape(use->format, strlen(use->format)) : NULL;
	oa_findings_add(&s->findings, OA_FINDING_MANIFEST_LIST, m->display, NULL, m->rel_path,
	                "a manifest list of %zu children: %s%s%s%s%s", m->list->n_manifests,
	                use ? "uses the " : "none is here", use ? r : "", use ? " child (" : "",
	                use ? (*f ? f : "format not named") : "", use ? ")" : "");
	if (*pulls)
		oa_findings_add(&s->findings, OA_FINDING_MANIFEST_LIST, m->display, NULL, m->rel_path, "%s",
		                pulls + 2);
	free(r);
	free(f);
}

/* ---- references ----------------------------------------------------------- */

static void check_reference(oa_store *s, oa_model *m, const oa_layer *l, const char *what,
                            oa_blob **out)
{
	*out = NULL;
	if (!l->digest_valid) {
		char *d = oa_escape(l->digest, strlen(l->digest));
		oa_findings_add(&s->findings, OA_FINDING_INVALID_DIGEST, m->display, NULL, m->rel_path,
		                "%s digest \"%s\" is not sha256: followed by 64 hex digits", what, d);
		free(d);
		return;
	}
	oa_blob *b = oa_store_find_blob(s, l);
	char digest[72];
	snprintf(digest, sizeof digest, "sha256:%s", l->hex);
	char path[80];
	snprintf(path, sizeof path, "blobs/sha256-%s", l->digest + 7);
	if (l->hex_uppercase)
		oa_findings_add(&s->findings, OA_FINDING_INVALID_DIGEST, m->display, digest, m->rel_path,
		                "%s digest has upper-case hex: the server's prune compares exact strings and deletes its blob",
		                what);
	if (!b || b->cls != OA_BLOB_VALID || (b->dangling)) {
		if (b && b->dangling) {
			b->refs++;
			*out = b;
		}
		m->missing_blobs++;
		if (l == &m->m.config)
			return; /* read_config reports it once, as missing-config */
		oa_findings_add(&s->findings, OA_FINDING_MISSING_BLOB, m->display, digest, path,
		                "%s blob is missing%s", what,
		                b && b->dangling ? " (a dangling symlink)" :
		                b && b->cls == OA_BLOB_DIR ? " (a directory has its name)" : "");
		return;
	}
	b->refs++;
	*out = b;
	if (!b->stat_ok)
		return;
	if ((int64_t)b->st.size != l->size) {
		if (b->st.size == 0)
			oa_findings_add(&s->findings, OA_FINDING_EMPTY_BLOB, m->display, digest, path,
			                "%s blob is empty; the manifest declares %lld bytes", what,
			                (long long)l->size);
		else {
			char have[32], want[32];
			oa_format_size((uint64_t)b->st.size, OA_UNITS_SI, have, sizeof have);
			oa_format_size((uint64_t)(l->size < 0 ? 0 : l->size), OA_UNITS_SI, want, sizeof want);
			oa_findings_add(&s->findings, OA_FINDING_SIZE_MISMATCH, m->display, digest, path,
			                "%s blob has %s (%lld bytes) on disk; the manifest declares %s (%lld)", what,
			                have, (long long)b->st.size, want, (long long)l->size);
		}
	}
}

static void read_config(oa_store *s, oa_model *m)
{
	const oa_layer *c = &m->m.config;
	if (!*c->digest) {
		m->config_state = OA_CONFIG_NONE;
		return;
	}
	check_reference(s, m, c, "config", &m->config_blob);
	if (!c->digest_valid) {
		m->config_state = OA_CONFIG_BAD_DIGEST;
		return;
	}
	/* Config findings name the blob file, like every other blob finding. */
	char path[80];
	snprintf(path, sizeof path, "blobs/sha256-%s", c->digest + 7);
	if (!m->config_blob || m->config_blob->dangling || m->config_blob->cls != OA_BLOB_VALID) {
		oa_blob *b = m->config_blob;
		m->config_state = OA_CONFIG_MISSING;
		oa_findings_add(&s->findings, OA_FINDING_MISSING_CONFIG, m->display, c->digest, path,
		                "config blob is missing%s",
		                b && b->dangling ? " (a dangling symlink)" :
		                b && b->cls == OA_BLOB_DIR ? " (a directory has its name)" : "");
		return;
	}
	uint8_t *bytes;
	size_t len;
	char err[256];
	if (read_blob(s, m->config_blob, OA_CONFIG_MAX, &bytes, &len) < 0) {
		m->config_state = OA_CONFIG_INVALID;
		int e = errno;
		bool bad_file = e == EINVAL || e == EFBIG;
		m->config_error = oa_xasprintf("cannot read config blob: %s",
		                               e == EINVAL ? "not a regular file" :
		                               e == EFBIG ? "larger than 16 MiB" : strerror(e));
		oa_findings_add(&s->findings, bad_file ? OA_FINDING_INVALID_CONFIG : OA_FINDING_UNREADABLE, m->display,
		                c->digest, path, "%s", m->config_error);
		return;
	}
	if (oa_config_parse(bytes, len, &m->cfg, err, sizeof err) < 0) {
		m->config_state = OA_CONFIG_INVALID;
		m->config_error = oa_escape(err, strlen(err));
		oa_findings_add(&s->findings, OA_FINDING_INVALID_CONFIG, m->display, c->digest, path,
		                "config blob is %s", m->config_error);
	} else {
		m->config_state = OA_CONFIG_OK;
	}
	free(bytes);
}

static void resolve_model(oa_store *s, oa_model *m)
{
	ref_manifest_blobs(s, m);
	if (!m->manifest_ok)
		return;
	read_config(s, m);
	m->layer_blobs = oa_xcalloc(m->m.n_layers, sizeof *m->layer_blobs);
	for (size_t i = 0; i < m->m.n_layers; i++) {
		const oa_layer *l = &m->m.layers[i];
		char what[64];
		snprintf(what, sizeof what, "layer %zu (%s)", i, oa_layer_kind_name(l->kind));
		if (l->kind == OA_LAYER_UNKNOWN) {
			char *mt = oa_escape(l->media_type, strlen(l->media_type));
			oa_findings_add(&s->findings, OA_FINDING_UNKNOWN_MEDIA_TYPE, m->display,
			                l->digest_valid ? l->digest : NULL, m->rel_path,
			                "layer %zu has media type \"%s\", which Ollama does not use", i, mt);
			free(mt);
		}
		check_reference(s, m, l, what, &m->layer_blobs[i]);
		if (l->kind == OA_LAYER_TEMPLATE && m->layer_blobs[i] && !m->layer_blobs[i]->dangling &&
		    !m->template_text) {
			uint8_t *t;
			size_t tlen, at = (size_t)(m->layer_blobs[i] - s->blobs);
			if (!s->blob_text)
				s->blob_text = oa_xcalloc(s->n_blobs, sizeof *s->blob_text);
			/* every tag of a family names the same template: read it once */
			if (s->blob_text[at])
				m->template_text = s->blob_text[at];
			else if (read_blob(s, m->layer_blobs[i], OA_TEMPLATE_MAX, &t, &tlen) == 0)
				m->template_text = s->blob_text[at] = (char *)t;
			else if (errno != EFBIG) {
				/* The server cannot read it either: ollama list drops the model. */
				int e = errno;
				char *bp = oa_xasprintf("blobs/%s", m->layer_blobs[i]->name);
				oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, m->display, l->digest, bp,
				                "cannot read the template blob: %s", strerror(e));
				free(bp);
			}
		}
	}
}

static void check_blob_files(oa_store *s)
{
	for (size_t i = 0; i < s->n_blobs; i++) {
		oa_blob *b = &s->blobs[i];
		char *path = oa_xasprintf("blobs/%s", b->name);
		char digest[72];
		snprintf(digest, sizeof digest, "sha256:%s", b->hex);
		const char *dg = b->hex[0] ? digest : NULL;
		if (b->is_symlink) {
			const char *t = b->link_target ? b->link_target : "?";
			if (b->dangling)
				oa_findings_add(&s->findings, OA_FINDING_SYMLINKED_BLOB, NULL, dg, path,
				                "dangling symlink to %s", t);
			else
				oa_findings_add_sev(&s->findings, OA_FINDING_SYMLINKED_BLOB,
				                    b->link_outside ? OA_SEV_WARNING : OA_SEV_INFO, NULL, dg,
				                    path, "symlink to %s (%s the store)", t,
				                    b->link_outside ? "outside" : "inside");
		} else if (!b->stat_ok) {
			oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, dg, path, "cannot stat: %s",
			                strerror(b->stat_errno));
		}
		switch (b->cls) {
		case OA_BLOB_VALID:
			if (b->refs == 0 && b->weak_refs && !b->dangling) {
				oa_findings_add(&s->findings, OA_FINDING_UNPARSED_REFERENCE, NULL, dg, path,
				                "named only by a manifest the server cannot read; kept, it may still be needed");
			} else if (b->refs == 0 && !b->dangling) {
				if (oa_blob_looks_like_manifest(s, b))
					oa_findings_add(&s->findings, OA_FINDING_MANIFEST_BLOB, NULL, dg, path,
					                "unreferenced, but its content is a manifest (newer Ollama keeps these; older ones prune them)");
				else {
					char size[32];
					oa_format_size((uint64_t)b->st.size, OA_UNITS_SI, size, sizeof size);
					oa_findings_add(&s->findings, OA_FINDING_ORPHAN_BLOB, NULL, dg, path,
					                "no manifest references this blob (%s)%s", size,
					                s->prune_blocked ? "; the server's prune is blocked, so it stays" : "");
				}
			}
			break;
		case OA_BLOB_LEGACY:
			oa_findings_add(&s->findings, OA_FINDING_LEGACY_BLOB_NAME, NULL, dg, path,
			                "old blob name with ':'; the server renames it to sha256-%s at start",
			                b->hex);
			break;
		case OA_BLOB_PARTIAL: {
			char alloc[32], size[32];
			oa_format_size((uint64_t)b->st.blocks * 512, OA_UNITS_SI, alloc, sizeof alloc);
			oa_format_size((uint64_t)b->st.size, OA_UNITS_SI, size, sizeof size);
			oa_findings_add(&s->findings, OA_FINDING_PARTIAL_DOWNLOAD, NULL, dg, path,
			                "interrupted download: %s allocated for a %s file", alloc, size);
			break;
		}
		case OA_BLOB_PARTIAL_PART:
			break; /* reported with its -partial file, or below when alone */
		case OA_BLOB_TMP:
		case OA_BLOB_CREATE_TEMP:
		case OA_BLOB_QUANT_TEMP:
		case OA_BLOB_TEMP_DIR:
			oa_findings_add(&s->findings, OA_FINDING_TEMP_FILE, NULL, dg, path, "%s left behind",
			                oa_blob_class_name(b->cls));
			break;
		case OA_BLOB_DIR:
		case OA_BLOB_FOREIGN:
			oa_findings_add(&s->findings, OA_FINDING_FOREIGN_FILE, NULL, NULL, path,
			                "%s that Ollama does not write in blobs/",
			                b->cls == OA_BLOB_DIR ? "a directory" : "a file");
			break;
		default:
			break;
		}
		if (b->cls == OA_BLOB_PARTIAL_PART) {
			/* Part files without their -partial data file. */
			char want[7 + 64 + 9];
			snprintf(want, sizeof want, "sha256-%s-partial", b->hex);
			oa_blob key = { .name = want };
			if (!bsearch(&key, s->blobs, s->n_blobs, sizeof *s->blobs, cmp_blob_name))
				oa_findings_add(&s->findings, OA_FINDING_PARTIAL_DOWNLOAD, NULL, dg, path,
				                "download part state without its -partial data file");
		}
		free(path);
	}
}

static int cmp_model_mtime(const void *a, const void *b)
{
	const oa_model *x = a, *y = b;
	/* Newest first by Unix seconds; ties keep walk (name) order, a list's
	 * rows in list order after the child in use. */
	if (x->st.mtime_ns / 1000000000 != y->st.mtime_ns / 1000000000)
		return x->st.mtime_ns / 1000000000 > y->st.mtime_ns / 1000000000 ? -1 : 1;
	int c = strcmp(x->rel_path, y->rel_path);
	if (c || x->sibling != y->sibling)
		return c ? c : x->sibling ? 1 : -1;
	return x->row_entry < y->row_entry ? -1 : x->row_entry > y->row_entry;
}

/* A row for entry e of list tag p (0.40 lists every child here): the
 * child's manifest, its digest as the ID, its SIZE over unique digests. */
static bool sibling_row(oa_store *s, const oa_model *p, const oa_list_entry *e, oa_model *r)
{
	size_t len;
	uint8_t *bytes = child_bytes(s, e, &len);
	char err[256];
	memset(r, 0, sizeof *r);
	bool ok = bytes && oa_manifest_parse(bytes, len, &r->m, err, sizeof err) == 0 && !r->m.is_list;
	free(bytes);
	if (!ok) { /* the tag's own findings already say what is wrong with it */
		if (r->m.media_type)
			oa_manifest_free(&r->m);
		return false;
	}
	oa_name pn;
	oa_model_name_get(&p->name, &pn);
	oa_model_name_set(&r->name, &pn);
	r->display = oa_xstrdup(p->display);
	r->rel_path = oa_xstrdup(p->rel_path);
	r->st = p->st;
	r->v2 = p->v2;
	r->tag_kind = p->tag_kind;
	r->manifest_ok = true;
	r->manifest_bytes = len;
	r->child = r->child_pull = -1;
	r->sibling = true;
	r->row_entry = e;
	if (e->digest_valid)
		memcpy(r->m.id, e->hex, sizeof r->m.id);
	r->m.size = unique_size(&r->m);
	return true;
}

static void add_list_rows(oa_store *s, size_t *cap)
{
	size_t n = s->n_models;
	for (size_t i = 0; i < n; i++) {
		oa_model *p = &s->models[i];
		if (!p->is_list || !p->manifest_ok)
			continue;
		p->list_rows = 1;
		p->child_row = oa_xcalloc(p->list->n_manifests + 1, sizeof *p->child_row);
		for (size_t k = 0; k < p->list->n_manifests; k++) {
			if ((long)k == p->child || !p->child_present[k])
				continue;
			oa_model r;
			if (!sibling_row(s, p, &s->models[i].list->entries[k], &r))
				continue;
			OA_ALLOC_GROW(s->models, s->n_models + 1, *cap);
			s->models[s->n_models++] = r;
			p = &s->models[i];
			p->child_row[k] = true;
			p->list_rows++;
		}
	}
}

/* The row of a list tag whose child digest is hex, or NULL. */
static const oa_model *list_row_of(const oa_store *s, const char *hex)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *r = &s->models[i];
		if ((r->is_list || r->sibling) && r->manifest_ok && strcmp(r->m.id, hex) == 0)
			return r;
	}
	return NULL;
}

/* Allocated bytes of the blobs m reaches that no other tag reaches. */
static uint64_t bytes_only_in(oa_store *s, const oa_model *m)
{
	oa_blob **mine;
	size_t n = oa_model_reach(s, m, &mine);
	bool *shared = oa_xcalloc(n + 1, sizeof *shared);
	for (size_t i = 0; i < s->n_models; i++) {
		if (&s->models[i] == m)
			continue;
		oa_blob **other;
		size_t k = oa_model_reach(s, &s->models[i], &other);
		for (size_t a = 0; a < n; a++)
			for (size_t b = 0; b < k && !shared[a]; b++)
				shared[a] = mine[a] == other[b];
		free(other);
	}
	uint64_t bytes = 0;
	for (size_t a = 0; a < n; a++)
		if (!shared[a] && mine[a]->stat_ok)
			bytes += (uint64_t)mine[a]->st.blocks * 512;
	free(shared);
	free(mine);
	return bytes;
}

/* Compatibility shadows (compatmigrate: writeConvertedLegacyShadow): a
 * legacy tag registry.ollama.ai/library/llamacpp:<hex> holding the
 * converted child whose digest is <hex>, so that an older server keeps its
 * blobs. Its ID (the sha256 of its bytes) is that hex. */
static void mark_shadows(oa_store *s)
{
	for (size_t i = 0; i < s->n_models; i++) {
		oa_model *m = &s->models[i];
		if (m->v2 || !m->manifest_ok || strcmp(m->name.host, "registry.ollama.ai") != 0 ||
		    strcmp(m->name.ns, "library") != 0 || strcmp(m->name.model, "llamacpp") != 0 ||
		    strcmp(m->name.tag, m->m.id) != 0)
			continue;
		m->shadow = true;
		const oa_model *of = list_row_of(s, m->m.id);
		if (of) {
			m->shadow_of = of->display;
			oa_findings_add(&s->findings, OA_FINDING_COMPAT_SHADOW, m->display, NULL, m->rel_path,
			                "the compatibility shadow of %s's converted (llamacpp) child, kept for an Ollama "
			                "before manifest lists", of->display);
			continue;
		}
		char h[32];
		oa_human_bytes(bytes_only_in(s, m), h, sizeof h);
		oa_findings_add(&s->findings, OA_FINDING_ORPHANED_SHADOW, m->display, NULL, m->rel_path,
		                "a compatibility shadow whose model is gone (no tag's list names this child): "
		                "it alone holds %s; `rm` it to free them", h);
	}
}

static bool legacy_names(const oa_store *s, const char *digest)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *l = &s->models[i];
		if (l->v2 || !l->manifest_ok)
			continue;
		if (strcmp(l->m.config.digest, digest) == 0)
			return true;
		for (size_t k = 0; k < l->m.n_layers; k++)
			if (strcmp(l->m.layers[k].digest, digest) == 0)
				return true;
	}
	return false;
}

/* An Ollama from before manifest lists reads manifests/ only: its start-up
 * prune deletes every blob no legacy tag names (spec §2.5.1, the
 * downgrade hazard). Count, per manifests-v2 row, what it would lose. */
static void mark_downgrade_loss(oa_store *s)
{
	for (size_t i = 0; i < s->n_models; i++) {
		oa_model *m = &s->models[i];
		if (!m->v2 || !m->manifest_ok)
			continue;
		oa_blob *seen = NULL;
		for (size_t k = 0; k <= m->m.n_layers; k++) {
			const oa_layer *l = k == 0 ? &m->m.config : &m->m.layers[k - 1];
			oa_blob *b = k == 0 ? m->config_blob : m->layer_blobs ? m->layer_blobs[k - 1] : NULL;
			if (b && b != seen && b->stat_ok && !legacy_names(s, l->digest))
				m->downgrade_loss += (uint64_t)b->st.blocks * 512;
			seen = b;
		}
		if (!m->downgrade_loss)
			continue;
		char h[32];
		oa_human_bytes(m->downgrade_loss, h, sizeof h);
		oa_findings_add(&s->findings, OA_FINDING_DOWNGRADE_LOSS, m->display, m->sibling ? m->m.id : NULL,
		                m->rel_path, "no legacy tag names the blobs of %s%s: one start of an Ollama from before manifest "
		                "lists deletes %s of its blobs (see prune --predict-server --server-version 0.33)",
		                m->display, m->sibling || m->list_rows > 1 ? " (this child)" : "", h);
	}
}

/* metadata/sha256-<hex>.json: extracted GGUF key-values, deleted with its
 * blob (PR #17858); one whose blob is gone is stale. */
static void scan_metadata(oa_store *s)
{
	int fd = s->root_fd < 0 ? -1 : openat(s->root_fd, "metadata", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t n;
	char **names = oa_list_dir(fd, &n, NULL);
	for (size_t i = 0; names && i < n; i++) {
		const char *nm = names[i];
		struct stat st;
		if (strlen(nm) != 7 + 64 + 5 || strncmp(nm, "sha256-", 7) != 0 || !oa_is_hex(nm + 7, 64) ||
		    strcmp(nm + 71, ".json") != 0 || fstatat(fd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		char hex[65];
		memcpy(hex, nm + 7, 64);
		hex[64] = '\0';
		s->metadata_bytes += (uint64_t)st.st_blocks * 512;
		if (blob_by_hex(s, hex)) {
			s->n_metadata++;
			continue;
		}
		char *rel = oa_xasprintf("metadata/%s", nm);
		oa_findings_add(&s->findings, OA_FINDING_STALE_METADATA, NULL, NULL, rel,
		                "a metadata cache whose blob is gone; prune removes it after the grace period");
		s->stale_metadata = oa_xreallocarray(s->stale_metadata, s->n_stale_metadata + 1, sizeof *s->stale_metadata);
		s->stale_metadata[s->n_stale_metadata++] = rel;
	}
	oa_free_names(names, n);
	close(fd);
}

/* Whether model o goes with row r when r's child is dropped: r itself, or
 * a legacy copy of it (the migration's anchor, a shadow). */
static bool goes_with(const oa_model *o, const oa_model *r)
{
	return o == r || (!o->v2 && (o->anchor || o->shadow) && (strcmp(o->m.id, r->m.id) == 0 || same_manifest(o, r)));
}

static bool names_blob(const oa_model *o, const oa_blob *b)
{
	if (!o->manifest_ok)
		return false;
	if (o->config_blob == b)
		return true;
	for (size_t k = 0; o->layer_blobs && k < o->m.n_layers; k++)
		if (o->layer_blobs[k] == b)
			return true;
	return false;
}

/* Allocated bytes of r's config and layers: all of them (other == NULL)
 * or those that model `other` does not name; with drop, those no model
 * but r and its legacy copies names. */
static uint64_t row_bytes(const oa_store *s, const oa_model *r, const oa_model *other, bool drop)
{
	uint64_t bytes = 0;
	const oa_blob *prev = NULL;
	for (size_t k = 0; k <= r->m.n_layers; k++) {
		const oa_blob *b = k == 0 ? r->config_blob : r->layer_blobs ? r->layer_blobs[k - 1] : NULL;
		if (!b || b == prev || !b->stat_ok || (other && names_blob(other, b)))
			continue;
		prev = b;
		bool kept = false;
		for (size_t i = 0; drop && i < s->n_models && !kept; i++)
			kept = !goes_with(&s->models[i], r) && names_blob(&s->models[i], b);
		if (!kept)
			bytes += (uint64_t)b->st.blocks * 512;
	}
	return bytes;
}

/* The conversion of list tag t, when it has a ggml and a llamacpp row. */
static bool conversion_of(const oa_store *s, const oa_model *t, oa_conversion *c)
{
	memset(c, 0, sizeof *c);
	if (!t->is_list || t->list_rows < 2)
		return false;
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *r = &s->models[j];
		if (r != t && !(r->sibling && strcmp(r->rel_path, t->rel_path) == 0))
			continue;
		if (strcmp(row_runner(r), "ggml") == 0)
			c->ggml = r;
		else if (strcmp(row_runner(r), "llamacpp") == 0)
			c->llamacpp = r;
	}
	if (!c->ggml || !c->llamacpp)
		return false;
	c->duplicated = row_bytes(s, c->llamacpp, c->ggml, false);
	c->drop_llamacpp = row_bytes(s, c->llamacpp, NULL, true);
	c->drop_ggml = row_bytes(s, c->ggml, NULL, true);
	return true;
}

size_t oa_store_conversions(const oa_store *s, oa_conversion **out)
{
	size_t n = 0;
	*out = NULL;
	oa_conversion c;
	for (size_t i = 0; i < s->n_models; i++) {
		if (!conversion_of(s, &s->models[i], &c))
			continue;
		*out = oa_xreallocarray(*out, n + 1, sizeof **out);
		(*out)[n++] = c;
	}
	return n;
}

bool oa_model_conversion(const oa_store *s, const oa_model *m, oa_conversion *out)
{
	return m->v2 && conversion_of(s, &s->models[oa_store_row_tag(s, (size_t)(m - s->models))], out);
}

void oa_store_read(oa_store *s)
{
	scan_blobs(s);
	bool here, here_v2;
	s->tags.plain = top_plain(s, "manifests", s->manifests_fd, &here) &&
	                top_plain(s, "manifests-v2", s->manifests_v2_fd, &here_v2) && (here || here_v2);
	walk_ctx w = { .s = s, .top = "manifests" };
	if (s->manifests_fd >= 0)
		walk(&w, s->manifests_fd, 0);
	w.top = "manifests-v2";
	w.v2 = true;
	if (s->manifests_v2_fd >= 0)
		walk(&w, s->manifests_v2_fd, 0);
	finish_tag_facts(s);
	add_list_rows(s, &w.cap);
	mark_anchors(s);
	if (s->n_models)
		qsort(s->models, s->n_models, sizeof *s->models, cmp_model_mtime);
	for (size_t i = 0; i < s->n_models; i++)
		resolve_model(s, &s->models[i]);
	check_blob_files(s);
	mark_shadows(s);
	mark_downgrade_loss(s);
	scan_metadata(s);
}

long oa_store_resolve(const oa_store *s, const char *query)
{
	oa_name want;
	if (oa_name_parse_ref(query, &want, NULL)) {
		long folded = -1;
		size_t n_folded = 0;
		for (size_t i = 0; i < s->n_models; i++) {
			if (s->models[i].anchor || s->models[i].sibling) /* manifests-v2 takes precedence */
				continue;
			if (oa_model_name_is(&s->models[i].name, &want, false))
				return (long)i;
			if (oa_model_name_is(&s->models[i].name, &want, true))
				folded = (long)i, n_folded++;
		}
		if (n_folded > 1)
			return OA_RESOLVE_AMBIGUOUS_NAME;
		if (folded >= 0)
			return folded;
	}
	size_t n = strlen(query);
	if (strncmp(query, "sha256:", 7) == 0 || strncmp(query, "sha256-", 7) == 0)
		query += 7, n -= 7;
	if (n < 6 || n > 64 || !oa_is_hex(query, n))
		return -1;
	/* Tags copied with `ollama cp` share an ID; a prefix naming two tags is
	 * ambiguous even then, as the user must say which name is meant. */
	long found = -1;
	for (size_t i = 0; i < s->n_models; i++) {
		if (!s->models[i].anchor && !s->models[i].sibling && strncasecmp(s->models[i].m.id, query, n) == 0) {
			if (found >= 0)
				return OA_RESOLVE_AMBIGUOUS_ID;
			found = (long)i;
		}
	}
	return found;
}

void oa_store_release(oa_store *s)
{
	free(s->models);
	oa_free_names(s->v2_temps, s->n_v2_temps);
	oa_free_names(s->stale_metadata, s->n_stale_metadata);
	for (size_t i = 0; i < s->n_blobs; i++) {
		free(s->blobs[i].name);
		free(s->blobs[i].link_target);
	}
	for (size_t i = 0; s->blob_text && i < s->n_blobs; i++)
		free(s->blob_text[i]);
	free(s->blob_text);
	free(s->blobs);
	free_tag_facts(&s->tags);
	oa_findings_free(&s->findings);
	if (s->manifests_fd >= 0)
		close(s->manifests_fd);
	if (s->manifests_v2_fd >= 0)
		close(s->manifests_v2_fd);
	if (s->blobs_fd >= 0)
		close(s->blobs_fd);
	if (s->root_fd >= 0)
		close(s->root_fd);
	for (size_t i = 0; i < s->n_bounds; i++)
		free(s->bounds[i]);
	free(s->input);
	free(s->root);
	memset(s, 0, sizeof *s);
	s->root_fd = s->manifests_fd = s->blobs_fd = s->manifests_v2_fd = -1;
}

typedef struct inode_usage {
	dev_t dev;
	ino_t ino;
	uint64_t alloc, size;
} inode_usage;

static int cmp_inode_usage(const void *a, const void *b)
{
	const inode_usage *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Adds the blob files a model references (existing ones only) to v. */
static void collect_model_blobs(const oa_model *m, inode_usage **v, size_t *n, size_t *cap)
{
	for (size_t k = 0; m->manifest_ok && k <= m->m.n_layers; k++) {
		const oa_blob *b = k < m->m.n_layers ? (m->layer_blobs ? m->layer_blobs[k] : NULL)
		                                     : m->config_blob;
		if (!b || !b->stat_ok || b->dangling)
			continue;
		OA_ALLOC_GROW(*v, *n + 1, *cap);
		(*v)[(*n)++] = (inode_usage){ b->st.dev, b->st.ino,
		                              (uint64_t)b->st.blocks * 512, (uint64_t)b->st.size };
	}
}

/* Allocated and apparent bytes of the distinct inodes in v (sorts v). */
static void sum_distinct(inode_usage *v, size_t n, uint64_t *alloc, uint64_t *apparent)
{
	if (n)
		qsort(v, n, sizeof *v, cmp_inode_usage);
	*alloc = *apparent = 0;
	for (size_t k = 0; k < n; k++)
		if (k == 0 || cmp_inode_usage(&v[k], &v[k - 1]) != 0) {
			*alloc += v[k].alloc;
			*apparent += v[k].size;
		}
}

void oa_model_blob_usage(const oa_model *m, uint64_t *alloc, uint64_t *apparent)
{
	size_t n = 0, cap = 0;
	inode_usage *v = NULL;
	collect_model_blobs(m, &v, &n, &cap);
	sum_distinct(v, n, alloc, apparent);
	free(v);
}

uint64_t oa_store_models_disk_bytes(const oa_store *s, const bool *selected)
{
	size_t n = 0, cap = 0;
	inode_usage *v = NULL;
	for (size_t i = 0; i < s->n_models; i++)
		if (!selected || selected[i])
			collect_model_blobs(&s->models[i], &v, &n, &cap);
	uint64_t alloc, apparent;
	sum_distinct(v, n, &alloc, &apparent);
	free(v);
	return alloc;
}
