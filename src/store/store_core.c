/* store_core.c - open a store: its root, its bounds, names, the disk bytes
 * of models' blobs, and releasing it (the types, store_core.h). */
#include "ollama_audit/store_core.h"
#include "store/store_core_private.h"
#include "formats/digest_set.h"
#include "ollama_audit/inode_ledger.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const blob_class_names[OA_BLOB_CLASS_COUNT] = {
	[OA_BLOB_VALID] = "blob",          [OA_BLOB_PARTIAL] = "partial",
	[OA_BLOB_PARTIAL_PART] = "partial-part", [OA_BLOB_TMP] = "tensor-download-temp",
	[OA_BLOB_CREATE_TEMP] = "create-temp", [OA_BLOB_QUANT_TEMP] = "quantize-temp",
	[OA_BLOB_LEGACY] = "legacy-name",  [OA_BLOB_TEMP_DIR] = "temp-dir",
	[OA_BLOB_DIR] = "directory",       [OA_BLOB_FOREIGN] = "foreign",
	[OA_BLOB_SPLIT_DIR] = "split-dir",
};

const char *oa_blob_class_name(enum oa_blob_class c)
{
	return c < OA_BLOB_CLASS_COUNT ? blob_class_names[c] : "foreign";
}

static const char *const format_names[] = {
	[OA_FORMAT_UNKNOWN] = "unknown", [OA_FORMAT_GGUF] = "gguf",
	[OA_FORMAT_SAFETENSORS] = "safetensors", [OA_FORMAT_REMOTE] = "remote",
	[OA_FORMAT_MIXED] = "mixed",
};
static const char *const runner_names[] = {
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
	static const char *const tops[] = { ".", "manifests", "manifests-v2", "blobs" };
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
	s->digests = oa_digest_set_new();
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

/* Field by field, without the copy oa_model_name_get makes: resolving
 * MODEL arguments compares every model with each of them. */
static bool part_is(const char *a, const char *b, bool fold)
{
	return (fold ? strcasecmp(a, b) : strcmp(a, b)) == 0;
}

bool oa_model_name_is(const oa_model_name *a, const oa_name *n, bool fold)
{
	if (!a->host) /* an unset name reads as four empty parts */
		return !n->host[0] && !n->ns[0] && !n->model[0] && !n->tag[0];
	return part_is(a->host, n->host, fold) && part_is(a->ns, n->ns, fold) && part_is(a->model, n->model, fold) &&
	       part_is(a->tag, n->tag, fold);
}

void store_free_tag_facts(oa_tag_facts *f)
{
	free(f->dig);
	free(f->list_dig);
	oa_free_names(f->empty_dirs, f->n_empty_dirs);
	free(f->empty_st);
	memset(f, 0, sizeof *f);
}

void store_free_blob_index(oa_store *s)
{
	if (s->blob_index)
		oa_hash_index_free(&s->blob_index->ix);
	free(s->blob_index);
	s->blob_index = NULL;
}

void oa_store_release(oa_store *s)
{
	free(s->name_index);
	s->name_index = NULL;
	store_free_blob_index(s);
	free(s->models);
	oa_free_names(s->v2_temps, s->n_v2_temps);
	oa_free_names(s->stale_metadata, s->n_stale_metadata);
	oa_free_names(s->metadata_temps, s->n_metadata_temps);
	for (size_t i = 0; i < s->n_blobs; i++) {
		free(s->blobs[i].name);
		free(s->blobs[i].link_target);
	}
	for (size_t i = 0; s->blob_text && i < s->n_blobs; i++)
		free(s->blob_text[i]);
	free(s->blob_text);
	free(s->blobs);
	store_free_tag_facts(&s->tags);
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
	oa_digest_set_free(s->digests); /* its models, and their manifests, are gone */
	free(s->input);
	free(s->root);
	memset(s, 0, sizeof *s);
	s->root_fd = s->manifests_fd = s->blobs_fd = s->manifests_v2_fd = -1;
}

/* Adds the blob files a model references (existing ones only) to l. */
static void collect_model_blobs(const oa_model *m, oa_inode_ledger *l)
{
	for (size_t k = 0; m->manifest_ok && k <= m->m.n_layers; k++) {
		const oa_blob *b = k < m->m.n_layers ? (m->layer_blobs ? m->layer_blobs[k] : NULL)
		                                     : m->config_blob;
		if (!b || !b->stat_ok || b->dangling)
			continue;
		oa_inode_ledger_add(l, (oa_inode_use){ .dev = b->st.dev, .ino = b->st.ino,
		                                       .allocated = (uint64_t)b->st.blocks * 512,
		                                       .apparent = (uint64_t)b->st.size });
	}
}

/* Allocated and apparent bytes of the distinct files in l (sorts l, frees it). */
static void sum_distinct(oa_inode_ledger *l, uint64_t *alloc, uint64_t *apparent)
{
	oa_inode_ledger_sort(l);
	oa_inode_ledger_bytes(l, apparent, alloc);
	oa_inode_ledger_free(l);
}

void oa_model_blob_usage(const oa_model *m, uint64_t *alloc, uint64_t *apparent)
{
	oa_inode_ledger l = { 0 };
	collect_model_blobs(m, &l);
	sum_distinct(&l, alloc, apparent);
}

uint64_t oa_store_models_disk_bytes(const oa_store *s, const bool *selected)
{
	oa_inode_ledger l = { 0 };
	for (size_t i = 0; i < s->n_models; i++)
		if (!selected || selected[i])
			collect_model_blobs(&s->models[i], &l);
	uint64_t alloc, apparent;
	sum_distinct(&l, &alloc, &apparent);
	return alloc;
}

void oa_store_drop_tag_facts(oa_store *s)
{
	store_free_tag_facts(&s->tags);
}

unsigned oa_model_layer_count(const oa_model *m, enum oa_layer_kind k)
{
	unsigned n = 0;
	for (size_t i = 0; i < m->m.n_layers; i++)
		n += m->m.layers[i].kind == k;
	return n;
}
