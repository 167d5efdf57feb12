/* plan_path.c - what a plan entry may remove, decided from its path and type
 * alone (plan_path.h), and opening the directory that holds it. */
#include "space/plan_path.h"
#include "ollama_audit/junk.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *plan_type_name(char t)
{
	return t == 'd' ? "dir" : t == 'l' ? "symlink" : "file";
}

static bool digits_after(const char *s, const char *prefix)
{
	return oa_str_has_prefix(s, prefix) && oa_all_digits(s + strlen(prefix));
}

/* Relative, no empty, "." or ".." component; the number of components. */
size_t plan_path_parts(const char *path)
{
	if (!path || !*path || path[0] == '/' || strlen(path) > 4096)
		return 0;
	size_t parts = 0;
	const char *p = path;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		parts++;
		p += n;
		if (*p == '/')
			p++;
		if (e && !*p)
			return 0;
	}
	return parts;
}

/* A directory prune removes whole from blobs/: create's split-gguf-<digits>,
 * and the runner's .ollama-split-<...> links of a split GGUF. */
static bool blob_tree_name(const char *name)
{
	return digits_after(name, "split-gguf-") ||
	       (oa_str_has_prefix(name, OA_SPLIT_DIR_PREFIX) && name[strlen(OA_SPLIT_DIR_PREFIX)]);
}

/* command "prune": blobs/<one entry> (a directory only blob_tree_name's),
 * directories under manifests/ (1..OA_MANIFESTS_DEPTH_MAX deep) and root
 * ollama-safetensors<digits> directories. command "rm": manifest files at
 * depth 4, directories under manifests/, files in blobs/. command
 * "repair": files in blobs/. */
path_kind plan_path_kind(const char *command, const char *path, char type)
{
	size_t parts = plan_path_parts(path);
	bool prune = command && strcmp(command, "prune") == 0, rm = command && strcmp(command, "rm") == 0;
	bool repair = command && strcmp(command, "repair") == 0; /* a damaged blob it set aside */
	if (!parts || (!prune && !rm && !repair))
		return PK_BAD;
	if (oa_str_has_prefix(path, "blobs/") && parts == 2) {
		if (type != 'd')
			return PK_BLOB;
		return prune && blob_tree_name(path + 6) ? PK_BLOB_TREE : PK_BAD;
	}
	if (repair)
		return PK_BAD;
	const char *leaf = strrchr(path, '/');
	if (prune && type != 'd' && leaf && ((oa_str_has_prefix(path, "manifests-v2/") && parts == 5 &&
	                                      oa_str_has_prefix(leaf + 1, ".manifest-")) ||
	                                     (oa_str_has_prefix(path, "manifests/") && parts == 5 &&
	                                      oa_is_tag_rewrite_temp(leaf + 1)) ||
	                                     (oa_str_has_prefix(path, "metadata/sha256-") && parts == 2 &&
	                                      oa_str_has_suffix(leaf + 1, ".json")) ||
	                                     (oa_str_has_prefix(path, "metadata/" OA_METADATA_TEMP_PREFIX) &&
	                                      parts == 2 && oa_str_has_suffix(leaf + 1, ".tmp"))))
		return PK_STORE_TEMP;
	if ((oa_str_has_prefix(path, "manifests/") || oa_str_has_prefix(path, "manifests-v2/")) && parts >= 2 &&
	    parts - 1 <= OA_MANIFESTS_DEPTH_MAX) {
		if (type == 'd')
			return PK_MANIFEST_DIR;
		return rm && parts == 5 ? PK_MANIFEST : PK_BAD;
	}
	if (prune && parts == 1 && type == 'd' && digits_after(path, "ollama-safetensors"))
		return PK_ROOT_TREE;
	return PK_BAD;
}

/* The digest a blobs/sha256[-:]<64 hex>... name carries (lowercase), or "". */
void plan_path_hex(const char *path, oa_digest_hex hex)
{
	hex[0] = '\0';
	const char *n = path + 6;
	if (!oa_str_has_prefix(path, "blobs/") || strncmp(n, "sha256", 6) != 0 ||
	    (n[6] != '-' && n[6] != ':') || strlen(n) < 7 + 64 || !oa_is_hex(n + 7, 64))
		return;
	for (int k = 0; k < 64; k++)
		hex[k] = (char)tolower((unsigned char)n[7 + k]);
	hex[64] = '\0';
}

char plan_type_char(const char *type)
{
	return !type ? 0 : strcmp(type, "dir") == 0 ? 'd' : strcmp(type, "symlink") == 0 ? 'l'
	                   : strcmp(type, "file") == 0 ? 'f' : 0;
}

int plan_open_parent_at(int root_fd, const char *path, const char **leaf)
{
	const char *slash = strrchr(path, '/');
	*leaf = slash ? slash + 1 : path;
	int fd = dup(root_fd);
	for (const char *p = path; fd >= 0 && slash && p < slash;) {
		const char *e = strchr(p, '/');
		char *part = oa_xstrndup(p, (size_t)(e - p));
		int nfd = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		free(part);
		close(fd);
		fd = nfd;
		errno = saved;
		p = e + 1;
	}
	return fd;
}

/* Open the directory holding `path` without following any symlink; the last
 * component goes to *leaf. Returns a new fd, or -1 with errno. */
int plan_open_parent(const oa_store *s, const char *path, const char **leaf)
{
	/* blobs/ as the store opened it (it may be a symlink to another disk:
	 * the reference set then holds every store that reaches it). */
	if (oa_str_has_prefix(path, "blobs/") && s->blobs_fd >= 0)
		return plan_open_parent_at(s->blobs_fd, path + strlen("blobs/"), leaf);
	return plan_open_parent_at(s->root_fd, path, leaf);
}
