/* store.c - find a store, walk it as the server does, read manifests and configs. */
#include "ollama_audit/store.h"
#include "ollama_audit/model.h"
#include "ollama_audit/platform.h"
#include "ollama_audit/util.h"

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

/* ---- discovery ---------------------------------------------------------- */

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
		if (realpath(p, r)) {
			s->bounds[s->n_bounds++] = oa_xstrdup(r);
			if (i == 3)
				s->blobs_real = s->bounds[s->n_bounds - 1];
		}
		free(p);
	}
}

int oa_store_resolve_path(const oa_store *s, const char *rel, char out[PATH_MAX])
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
	s->root_fd = s->manifests_fd = s->blobs_fd = -1;
	s->input = oa_xstrdup(path);
	s->how = how;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (is_dir_at(fd, "manifests") || is_dir_at(fd, "blobs")) {
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
		oa_findings_add(&s->findings, "unreadable", NULL, NULL, "manifests",
		                "cannot open manifests/: %s", strerror(errno));
	s->blobs_fd = openat(fd, "blobs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s->has_blobs = s->blobs_fd >= 0 || is_dir_at(fd, "blobs");
	if (s->has_blobs && s->blobs_fd < 0)
		oa_findings_add(&s->findings, "unreadable", NULL, NULL, "blobs",
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

static enum oa_blob_class classify_blob_name(const char *name, bool is_dir, char hex[65],
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

static void scan_blobs(oa_store *s)
{
	if (s->blobs_fd < 0)
		return;
	int fd = dup(s->blobs_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		oa_findings_add(&s->findings, "unreadable", NULL, NULL, "blobs", "cannot list blobs/: %s",
		                strerror(errno));
		return;
	}
	size_t cap = 0;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (s->n_blobs == cap) {
			cap = cap ? cap * 2 : 256;
			s->blobs = oa_xreallocarray(s->blobs, cap, sizeof *s->blobs);
		}
		oa_blob *b = &s->blobs[s->n_blobs++];
		memset(b, 0, sizeof *b);
		b->name = oa_xstrdup(e->d_name);
		struct stat lst;
		if (fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
			b->stat_errno = errno;
			b->cls = classify_blob_name(b->name, false, b->hex, &b->partial_index);
			continue;
		}
		b->st = lst;
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
				b->st = st;
				char *full = oa_path_join(s->root, "blobs");
				char *p = oa_path_join(full, b->name);
				char resolved[PATH_MAX];
				b->link_outside = !realpath(p, resolved) || !inside_root(s, resolved);
				free(full);
				free(p);
			}
		}
		b->cls = classify_blob_name(b->name, b->stat_ok && S_ISDIR(b->st.st_mode), b->hex,
		                            &b->partial_index);
		errno = 0;
	}
	if (errno)
		oa_findings_add(&s->findings, "unreadable", NULL, NULL, "blobs",
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
	if (!b->stat_ok || !S_ISREG(b->st.st_mode) || b->st.st_size == 0 || b->st.st_size > (1 << 20))
		return false;
	uint8_t *buf;
	size_t len;
	if (oa_read_file_at(s->blobs_fd, b->name, 1 << 20, &buf, &len) < 0)
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

/* ---- manifests/ ----------------------------------------------------------- */

typedef struct walk_ctx {
	oa_store *s;
	size_t cap;
	char *parts[4];
} walk_ctx;

static char *rel_path(walk_ctx *w, int depth, const char *leaf)
{
	oa_buf b;
	oa_buf_init(&b);
	oa_buf_adds(&b, "manifests");
	for (int i = 0; i < depth; i++) {
		oa_buf_addc(&b, '/');
		oa_buf_add_escaped(&b, w->parts[i], strlen(w->parts[i]));
	}
	if (leaf) {
		oa_buf_addc(&b, '/');
		oa_buf_add_escaped(&b, leaf, strlen(leaf));
	}
	return oa_buf_take(&b);
}

static void read_manifest(walk_ctx *w, int dirfd, const char *file, const struct stat *st);

/* A symlink that leads out of the store is never followed, as a directory or
 * as a manifest: what it hides is a finding (and makes prune keep every
 * complete blob, see refs.h). */
static bool leads_out(walk_ctx *w, int dirfd, int depth, const char *name)
{
	struct stat lst;
	if (fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode))
		return false;
	oa_buf raw;
	oa_buf_init(&raw);
	oa_buf_adds(&raw, "manifests");
	for (int i = 0; i < depth; i++) {
		oa_buf_addc(&raw, '/');
		oa_buf_adds(&raw, w->parts[i]);
	}
	oa_buf_addc(&raw, '/');
	oa_buf_adds(&raw, name);
	char resolved[PATH_MAX];
	bool out = oa_store_resolve_path(w->s, raw.data, resolved) == 0;
	oa_buf_free(&raw);
	if (out) {
		char *rel = rel_path(w, depth, name);
		char *where = oa_escape(resolved, strlen(resolved));
		oa_findings_add(&w->s->findings, "symlink-out-of-store", NULL, NULL, rel,
		                "a symlink to %s, outside the store: not followed; what it holds may "
		                "reference any blob, so prune keeps every complete blob", where);
		free(where);
		free(rel);
	}
	return out;
}

static void walk(walk_ctx *w, int dirfd, int depth)
{
	oa_store *s = w->s;
	size_t n;
	int err;
	char **names = oa_list_dir(dirfd, &n, &err);
	if (err) {
		char *rel = rel_path(w, depth, NULL);
		oa_findings_add(&s->findings, "unreadable", NULL, NULL, rel, "cannot list %s: %s", rel,
		                strerror(err));
		/* The server's glob silently skips what it cannot read. */
		free(rel);
		return;
	}
	if (n == 0 && depth > 0) {
		char *rel = rel_path(w, depth, NULL);
		oa_findings_add(&s->findings, "empty-manifest-dir", NULL, NULL, rel,
		                "empty directory (the server removes it on prune)");
		free(rel);
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i];
		if (leads_out(w, dirfd, depth, name))
			continue;
		struct stat st;
		bool ok = fstatat(dirfd, name, &st, 0) == 0;
		int serr = errno;
		if (depth == 3) {
			w->parts[3] = names[i];
			char *rel = rel_path(w, 3, name);
			if (!ok) {
				struct stat lst;
				bool link = fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
				            S_ISLNK(lst.st_mode);
				oa_findings_add(&s->findings, link ? "invalid-manifest" : "unreadable", NULL,
				                NULL, rel, "%s: %s", link ? "dangling symlink" : "cannot stat",
				                strerror(serr));
				oa_findings_add(&s->findings, "prune-blocker", NULL, NULL, rel,
				                "the server cannot stat this file: it skips its start-up prune, and /api/tags fails");
				s->prune_blocked = true;
				s->n_manifest_files++;
			} else if (S_ISDIR(st.st_mode)) {
				oa_findings_add(&s->findings, "ignored-file", NULL, NULL, rel,
				                "a directory where a manifest file belongs; the server skips it");
			} else {
				s->n_manifest_files++;
				read_manifest(w, dirfd, name, &st);
			}
			free(rel);
			continue;
		}
		if (!ok || !S_ISDIR(st.st_mode)) {
			char *rel = rel_path(w, depth, name);
			oa_findings_add(&s->findings, "ignored-file", NULL, NULL, rel,
			                ok ? "a file at depth %d under manifests/; the server only reads depth 4"
			                   : "cannot stat (depth %d); the server ignores it",
			                depth + 1);
			free(rel);
			continue;
		}
		int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0) {
			w->parts[depth] = names[i];
			char *rel = rel_path(w, depth + 1, NULL);
			oa_findings_add(&s->findings, "unreadable", NULL, NULL, rel, "cannot open %s: %s",
			                rel, strerror(errno));
			free(rel);
			continue;
		}
		w->parts[depth] = names[i];
		walk(w, sub, depth + 1);
		close(sub);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* A manifest that does not parse may still be the only thing that needs
 * some blobs (spec §5.2: upstream's rm deletes them anyway). Mark every
 * blob whose digest appears in its bytes. */
static void weak_ref(void *ctx, const char hex[65])
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

static void read_manifest(walk_ctx *w, int dirfd, const char *file, const struct stat *st)
{
	oa_store *s = w->s;
	char *rel = rel_path(w, 3, file);
	oa_name name;
	const char *why = NULL;
	if (!oa_name_from_parts(&name, w->parts[0], w->parts[1], w->parts[2], file, &why)) {
		oa_findings_add(&s->findings, "invalid-name", NULL, NULL, rel,
		                "not a valid model name (%s); the server skips it", why);
		oa_findings_add(&s->findings, "prune-blocker", NULL, NULL, rel,
		                "an invalid name under manifests/ makes the server skip its start-up prune");
		s->prune_blocked = true;
		/* It may be a real manifest under a name the server rejects: keep
		 * whatever it references out of the orphans. */
		uint8_t *bytes;
		size_t len;
		if (oa_read_file_at(dirfd, file, OA_MANIFEST_MAX, &bytes, &len) == 0) {
			mark_weak_refs(s, bytes, len);
			free(bytes);
		}
		free(rel);
		return;
	}
	if (s->n_models == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 32;
		s->models = oa_xreallocarray(s->models, w->cap, sizeof *s->models);
	}
	oa_model *m = &s->models[s->n_models++];
	memset(m, 0, sizeof *m);
	m->name = name;
	oa_name_display(&name, m->display, sizeof m->display);
	m->rel_path = rel;
	m->st = *st;

	uint8_t *bytes;
	size_t len;
	char err[256];
	if (oa_read_file_at(dirfd, file, OA_MANIFEST_MAX, &bytes, &len) < 0) {
		int e = errno;
		m->manifest_error = oa_xasprintf("cannot read: %s", e == EFBIG ? "larger than 16 MiB"
		                                 : e == EINVAL ? "not a regular file" : strerror(e));
		oa_findings_add(&s->findings, e == EFBIG || e == EINVAL ? "invalid-manifest" : "unreadable", m->display,
		                NULL, rel, "manifest %s", m->manifest_error);
		oa_findings_add(&s->findings, "prune-blocker", m->display, NULL, rel,
		                "an unreadable manifest makes the server skip its start-up prune");
		s->prune_blocked = true;
		m->m.media_type = oa_xstrdup("");
		m->m.config.media_type = oa_xstrdup("");
		m->m.config.digest = oa_xstrdup("");
		return;
	}
	m->manifest_bytes = len;
	if (oa_manifest_parse(bytes, len, &m->m, err, sizeof err) < 0) {
		m->manifest_error = oa_escape(err, strlen(err));
		oa_findings_add(&s->findings, "invalid-manifest", m->display, NULL, rel, "manifest is %s%s",
		                oa_str_has_prefix(err, "not JSON") || oa_str_has_prefix(err, "empty") ? "" : "invalid: ",
		                m->manifest_error);
		oa_findings_add(&s->findings, "prune-blocker", m->display, NULL, rel,
		                "a corrupt manifest makes the server skip its start-up prune");
		s->prune_blocked = true;
		mark_weak_refs(s, bytes, len);
	} else {
		m->manifest_ok = true;
		if (m->m.is_list)
			mark_weak_refs(s, bytes, len);
		if (m->m.is_list)
			oa_findings_add(&s->findings, "manifest-list", m->display, NULL, rel,
			                "a manifest list (%zu entries): current Ollama cannot load it",
			                m->m.n_manifests);
	}
	free(bytes);
}

/* ---- references ----------------------------------------------------------- */

static void check_reference(oa_store *s, oa_model *m, const oa_layer *l, const char *what,
                            oa_blob **out)
{
	*out = NULL;
	if (!l->digest_valid) {
		char *d = oa_escape(l->digest, strlen(l->digest));
		oa_findings_add(&s->findings, "invalid-digest", m->display, NULL, m->rel_path,
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
		oa_findings_add(&s->findings, "invalid-digest", m->display, digest, m->rel_path,
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
		oa_findings_add(&s->findings, "missing-blob", m->display, digest, path,
		                "%s blob is missing%s", what,
		                b && b->dangling ? " (a dangling symlink)" :
		                b && b->cls == OA_BLOB_DIR ? " (a directory has its name)" : "");
		return;
	}
	b->refs++;
	*out = b;
	if (!b->stat_ok)
		return;
	if ((int64_t)b->st.st_size != l->size) {
		if (b->st.st_size == 0)
			oa_findings_add(&s->findings, "empty-blob", m->display, digest, path,
			                "%s blob is empty; the manifest declares %lld bytes", what,
			                (long long)l->size);
		else
			oa_findings_add(&s->findings, "size-mismatch", m->display, digest, path,
			                "%s blob has %lld bytes on disk; the manifest declares %lld", what,
			                (long long)b->st.st_size, (long long)l->size);
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
		oa_findings_add(&s->findings, "missing-config", m->display, c->digest, path,
		                "config blob is missing%s",
		                b && b->dangling ? " (a dangling symlink)" :
		                b && b->cls == OA_BLOB_DIR ? " (a directory has its name)" : "");
		return;
	}
	uint8_t *bytes;
	size_t len;
	char err[256];
	if (oa_read_file_at(s->blobs_fd, m->config_blob->name, OA_CONFIG_MAX, &bytes, &len) < 0) {
		m->config_state = OA_CONFIG_INVALID;
		int e = errno;
		bool bad_file = e == EINVAL || e == EFBIG;
		m->config_error = oa_xasprintf("cannot read config blob: %s",
		                               e == EINVAL ? "not a regular file" :
		                               e == EFBIG ? "larger than 16 MiB" : strerror(e));
		oa_findings_add(&s->findings, bad_file ? "invalid-config" : "unreadable", m->display,
		                c->digest, path, "%s", m->config_error);
		return;
	}
	if (oa_config_parse(bytes, len, &m->cfg, err, sizeof err) < 0) {
		m->config_state = OA_CONFIG_INVALID;
		m->config_error = oa_escape(err, strlen(err));
		oa_findings_add(&s->findings, "invalid-config", m->display, c->digest, path,
		                "config blob is %s", m->config_error);
	} else {
		m->config_state = OA_CONFIG_OK;
	}
	free(bytes);
}

static void resolve_model(oa_store *s, oa_model *m)
{
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
			oa_findings_add(&s->findings, "unknown-media-type", m->display,
			                l->digest_valid ? l->digest : NULL, m->rel_path,
			                "layer %zu has media type \"%s\", which Ollama does not use", i, mt);
			free(mt);
		}
		check_reference(s, m, l, what, &m->layer_blobs[i]);
		if (l->kind == OA_LAYER_TEMPLATE && m->layer_blobs[i] && !m->layer_blobs[i]->dangling &&
		    !m->template_text) {
			uint8_t *t;
			size_t tlen;
			if (oa_read_file_at(s->blobs_fd, m->layer_blobs[i]->name, OA_TEMPLATE_MAX, &t,
			                    &tlen) == 0)
				m->template_text = (char *)t;
			else if (errno != EFBIG) {
				/* The server cannot read it either: ollama list drops the model. */
				int e = errno;
				char *bp = oa_xasprintf("blobs/%s", m->layer_blobs[i]->name);
				oa_findings_add(&s->findings, "unreadable", m->display, l->digest, bp,
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
				oa_findings_add(&s->findings, "symlinked-blob", NULL, dg, path,
				                "dangling symlink to %s", t);
			else
				oa_findings_add_sev(&s->findings, "symlinked-blob",
				                    b->link_outside ? OA_SEV_WARNING : OA_SEV_INFO, NULL, dg,
				                    path, "symlink to %s (%s the store)", t,
				                    b->link_outside ? "outside" : "inside");
		} else if (!b->stat_ok) {
			oa_findings_add(&s->findings, "unreadable", NULL, dg, path, "cannot stat: %s",
			                strerror(b->stat_errno));
		}
		switch (b->cls) {
		case OA_BLOB_VALID:
			if (b->refs == 0 && b->weak_refs && !b->dangling) {
				oa_findings_add(&s->findings, "unparsed-reference", NULL, dg, path,
				                "named only by a manifest the server cannot read; kept, it may still be needed");
			} else if (b->refs == 0 && !b->dangling) {
				if (oa_blob_looks_like_manifest(s, b))
					oa_findings_add(&s->findings, "manifest-blob", NULL, dg, path,
					                "unreferenced, but its content is a manifest (newer Ollama keeps these; older ones prune them)");
				else
					oa_findings_add(&s->findings, "orphan-blob", NULL, dg, path,
					                "no manifest references this blob (%lld bytes)%s",
					                (long long)b->st.st_size,
					                s->prune_blocked ? "; the server's prune is blocked, so it stays" : "");
			}
			break;
		case OA_BLOB_LEGACY:
			oa_findings_add(&s->findings, "legacy-blob-name", NULL, dg, path,
			                "old blob name with ':'; the server renames it to sha256-%s at start",
			                b->hex);
			break;
		case OA_BLOB_PARTIAL:
			oa_findings_add(&s->findings, "partial-download", NULL, dg, path,
			                "interrupted download: %lld bytes allocated of %lld",
			                (long long)b->st.st_blocks * 512, (long long)b->st.st_size);
			break;
		case OA_BLOB_PARTIAL_PART:
			break; /* reported with its -partial file, or below when alone */
		case OA_BLOB_TMP:
		case OA_BLOB_CREATE_TEMP:
		case OA_BLOB_QUANT_TEMP:
		case OA_BLOB_TEMP_DIR:
			oa_findings_add(&s->findings, "temp-file", NULL, dg, path, "%s left behind",
			                oa_blob_class_name(b->cls));
			break;
		case OA_BLOB_DIR:
		case OA_BLOB_FOREIGN:
			oa_findings_add(&s->findings, "foreign-file", NULL, NULL, path,
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
				oa_findings_add(&s->findings, "partial-download", NULL, dg, path,
				                "download part state without its -partial data file");
		}
		free(path);
	}
}

static int cmp_model_mtime(const void *a, const void *b)
{
	const oa_model *x = a, *y = b;
	/* Newest first by Unix seconds; ties keep walk (name) order. */
	if (x->st.st_mtime != y->st.st_mtime)
		return x->st.st_mtime > y->st.st_mtime ? -1 : 1;
	return strcmp(x->rel_path, y->rel_path);
}

void oa_store_scan(oa_store *s)
{
	double t0 = oa_now();
	scan_blobs(s);
	if (s->manifests_fd >= 0) {
		walk_ctx w = { .s = s };
		walk(&w, s->manifests_fd, 0);
	}
	if (s->n_models)
		qsort(s->models, s->n_models, sizeof *s->models, cmp_model_mtime);
	for (size_t i = 0; i < s->n_models; i++)
		resolve_model(s, &s->models[i]);
	check_blob_files(s);
	for (size_t i = 0; i < s->n_models; i++)
		oa_model_classify(s, &s->models[i]);
	s->scan_seconds = oa_now() - t0;
}

long oa_store_resolve(const oa_store *s, const char *query)
{
	oa_name want;
	if (oa_name_parse_ref(query, &want, NULL)) {
		for (size_t i = 0; i < s->n_models; i++)
			if (oa_name_equal_fold(&s->models[i].name, &want))
				return (long)i;
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
		if (strncasecmp(s->models[i].m.id, query, n) == 0) {
			if (found >= 0)
				return -2;
			found = (long)i;
		}
	}
	return found;
}

void oa_store_close(oa_store *s)
{
	for (size_t i = 0; i < s->n_models; i++)
		oa_model_free(&s->models[i]);
	free(s->models);
	for (size_t i = 0; i < s->n_blobs; i++) {
		free(s->blobs[i].name);
		free(s->blobs[i].link_target);
	}
	free(s->blobs);
	oa_findings_free(&s->findings);
	if (s->manifests_fd >= 0)
		close(s->manifests_fd);
	if (s->blobs_fd >= 0)
		close(s->blobs_fd);
	if (s->root_fd >= 0)
		close(s->root_fd);
	for (size_t i = 0; i < s->n_bounds; i++)
		free(s->bounds[i]);
	free(s->input);
	free(s->root);
	memset(s, 0, sizeof *s);
	s->root_fd = s->manifests_fd = s->blobs_fd = -1;
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
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*v = oa_xreallocarray(*v, *cap, sizeof **v);
		}
		(*v)[(*n)++] = (inode_usage){ b->st.st_dev, b->st.st_ino,
		                              (uint64_t)b->st.st_blocks * 512, (uint64_t)b->st.st_size };
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
