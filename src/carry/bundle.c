/* bundle.c - the member grammar of a bundle and what its index and
 * SHA256SUMS promise (bundle.h). */
#include "ollama_audit/bundle.h"
#include "base/jsonutil.h"
#include "base/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Split path into at most max components; false when one is empty, ".", or "..". */
static bool split_parts(char *path, char **parts, size_t max, size_t *n, const char **why)
{
	*n = 0;
	for (char *p = path;;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		if (!*p || strcmp(p, ".") == 0 || strcmp(p, "..") == 0) {
			*why = !*p ? "an empty path component" : "a '.' or '..' component";
			return false;
		}
		if (*n == max) {
			*why = "too deep for a store path";
			return false;
		}
		parts[(*n)++] = p;
		if (!slash)
			return true;
		p = slash + 1;
	}
}

/* The directories on the way to a tag: host, namespace, model. */
static bool tag_dirs_valid(bool v2, char **parts, size_t n, const char **why)
{
	static const enum oa_name_part kinds[] = { OA_PART_HOST, OA_PART_NAMESPACE, OA_PART_MODEL };
	for (size_t i = 0; i < n; i++) {
		char host[OA_NAME_V2_HOST_MAX];
		const char *s = parts[i];
		if (i == 0 && v2) {
			if (!oa_name_v2_host(parts[0], host, why))
				return false;
			s = host;
		}
		if (!oa_name_part_valid(kinds[i], s, strlen(s), why))
			return false;
	}
	return true;
}

static enum oa_member_kind classify(oa_member_name *out, char **parts, size_t n, bool is_dir)
{
	const char *why = "not a blob, a tag, SHA256SUMS or the index";
	if (n == 0 && is_dir)
		return OA_MEMBER_DIR;
	if (n == 0) {
		out->why = "a file without a name";
		return OA_MEMBER_BAD;
	}
	bool blobs = strcmp(parts[0], "blobs") == 0, legacy = strcmp(parts[0], "manifests") == 0,
	     v2 = strcmp(parts[0], "manifests-v2") == 0;
	if (n == 1 && !is_dir && strcmp(parts[0], OA_BUNDLE_SUMS) == 0)
		return OA_MEMBER_SUMS;
	if (n == 1 && !is_dir && strcmp(parts[0], OA_BUNDLE_INDEX) == 0)
		return OA_MEMBER_INDEX;
	if (is_dir && n == 1 && (blobs || legacy || v2))
		return OA_MEMBER_DIR;
	if (blobs && n == 2 && !is_dir) {
		if (strncmp(parts[1], "sha256-", 7) == 0 && strlen(parts[1]) == 7 + 64 && oa_is_hex(parts[1] + 7, 64)) {
			bool lower = true;
			for (const char *p = parts[1] + 7; *p; p++)
				lower &= !(*p >= 'A' && *p <= 'F');
			if (lower) {
				memcpy(out->hex, parts[1] + 7, 65);
				return OA_MEMBER_BLOB;
			}
			why = "a blob name with upper-case hex (the server's prune deletes it)";
		} else {
			why = "a file in blobs/ whose name is not sha256-<64 hex>";
		}
	} else if ((legacy || v2) && is_dir && n <= 4) {
		if (tag_dirs_valid(v2, parts + 1, n - 1, &why))
			return OA_MEMBER_DIR;
	} else if ((legacy || v2) && !is_dir && n == 5) {
		char host[OA_NAME_V2_HOST_MAX];
		bool host_ok = !v2 || oa_name_v2_host(parts[1], host, &why);
		if (host_ok && oa_name_from_parts(&out->name, v2 ? host : parts[1], parts[2], parts[3], parts[4], &why))
			return v2 ? OA_MEMBER_TAG_V2 : OA_MEMBER_TAG;
	}
	out->why = why;
	return OA_MEMBER_BAD;
}

enum oa_member_kind oa_bundle_member(const char *raw, bool is_dir, oa_member_name *out)
{
	memset(out, 0, sizeof *out);
	out->kind = OA_MEMBER_BAD;
	if (!raw || !*raw) {
		out->why = "an empty name";
		return OA_MEMBER_BAD;
	}
	if (raw[0] == '/') {
		out->why = "an absolute path";
		return OA_MEMBER_BAD;
	}
	while (raw[0] == '.' && raw[1] == '/') {
		raw += 2;
		while (*raw == '/')
			raw++;
	}
	size_t len = strlen(raw);
	if (is_dir && len && raw[len - 1] == '/')
		len--;
	if (is_dir && len == 1 && raw[0] == '.')
		len = 0;
	if (len >= sizeof out->path) {
		out->why = "a name too long for a store path";
		return OA_MEMBER_BAD;
	}
	memcpy(out->path, raw, len);
	out->path[len] = '\0';
	char work[OA_BUNDLE_PATH_MAX], *parts[6];
	memcpy(work, out->path, len + 1);
	size_t n = 0;
	const char *why = NULL;
	if (len && !split_parts(work, parts, 6, &n, &why)) {
		out->why = why;
		return OA_MEMBER_BAD;
	}
	out->kind = classify(out, parts, n, is_dir);
	return out->kind;
}

void oa_bundle_sums_line(const char *hex, char *buf)
{
	snprintf(buf, OA_BUNDLE_SUMS_LINE, "%.64s  blobs/sha256-%.64s\n", hex, hex);
}

/* ---- promises -------------------------------------------------------------- */

static void add_blob(oa_bundle_promise *p, const char *hex, int64_t size)
{
	for (size_t i = 0; i < p->n_blobs; i++)
		if (strcmp(p->blobs[i], hex) == 0) {
			if (p->blob_sizes[i] < 0)
				p->blob_sizes[i] = size;
			return;
		}
	p->blobs = oa_xreallocarray(p->blobs, p->n_blobs + 1, sizeof *p->blobs);
	p->blob_sizes = oa_xreallocarray(p->blob_sizes, p->n_blobs + 1, sizeof *p->blob_sizes);
	memcpy(p->blobs[p->n_blobs], hex, sizeof p->blobs[0]);
	p->blob_sizes[p->n_blobs++] = size;
}

static void add_tag(oa_bundle_promise *p, const char *path, const char *sha)
{
	for (size_t i = 0; i < p->n_tags; i++)
		if (strcmp(p->tags[i], path) == 0)
			return;
	p->tags = oa_xreallocarray(p->tags, p->n_tags + 1, sizeof *p->tags);
	p->tag_sha256 = oa_xreallocarray(p->tag_sha256, p->n_tags + 1, sizeof *p->tag_sha256);
	p->tags[p->n_tags] = oa_xstrdup(path);
	memcpy(p->tag_sha256[p->n_tags++], sha, sizeof p->tag_sha256[0]);
}

static int index_blobs(oa_bundle_promise *p, json_t *blobs, char *err, size_t errlen)
{
	size_t i;
	json_t *b;
	json_array_foreach(blobs, i, b) {
		const char *digest = json_string_value(json_object_get(b, "digest"));
		int64_t size;
		oa_digest_hex hex;
		bool upper;
		if (!digest || !oa_digest_parse(digest, hex, &upper) || upper || !oa_json_get_i64(b, "size", &size) ||
		    size < 0) {
			oa_seterr(err, errlen, "the index's blob %zu is not a digest with a size", i + 1);
			return -1;
		}
		add_blob(p, hex, size);
	}
	return 0;
}

static int index_tags(oa_bundle_promise *p, json_t *tags, char *err, size_t errlen)
{
	size_t i;
	json_t *t;
	json_array_foreach(tags, i, t) {
		const char *path = json_string_value(json_object_get(t, "path"));
		const char *sha = json_string_value(json_object_get(t, "sha256"));
		oa_member_name m;
		enum oa_member_kind k = path ? oa_bundle_member(path, false, &m) : OA_MEMBER_BAD;
		if ((k != OA_MEMBER_TAG && k != OA_MEMBER_TAG_V2) || !sha || strlen(sha) != 64 || !oa_is_hex(sha, 64)) {
			oa_seterr(err, errlen, "the index's tag %zu is not a tag path with its sha256", i + 1);
			return -1;
		}
		add_tag(p, m.path, sha);
	}
	return 0;
}

int oa_bundle_promise_index(oa_bundle_promise *p, const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc = json_loadb((const char *)bytes, len, JSON_REJECT_DUPLICATES, &je);
	const char *schema = json_string_value(json_object_get(doc, "schema"));
	json_t *blobs = json_object_get(doc, "blobs"), *tags = json_object_get(doc, "tags");
	int rc = -1;
	if (!doc)
		oa_seterr(err, errlen, "%s is not JSON: %s (line %d)", OA_BUNDLE_INDEX, je.text, je.line);
	else if (!schema || strcmp(schema, OA_BUNDLE_SCHEMA) != 0)
		oa_seterr(err, errlen, "%s is not an index of schema %s", OA_BUNDLE_INDEX, OA_BUNDLE_SCHEMA);
	else if (!json_is_array(blobs) || !json_is_array(tags))
		oa_seterr(err, errlen, "%s lists no blobs or no tags", OA_BUNDLE_INDEX);
	else if (index_blobs(p, blobs, err, errlen) == 0 && index_tags(p, tags, err, errlen) == 0)
		rc = 0;
	const char *tool = json_string_value(json_object_get(doc, "tool"));
	if (rc == 0 && tool && !p->tool)
		p->tool = oa_xstrdup(tool);
	json_decref(doc);
	return rc;
}

int oa_bundle_promise_sums(oa_bundle_promise *p, const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
	size_t line = 0;
	for (size_t at = 0; at < len;) {
		const uint8_t *nl = memchr(bytes + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (bytes + at)) : len - at;
		const char *s = (const char *)bytes + at;
		line++;
		/* "<64 hex>  blobs/sha256-<64 hex>": sha256sum's text mode, the same digest twice */
		if (n != 64 + 2 + 13 + 64 || !oa_is_hex(s, 64) || memcmp(s + 64, "  blobs/sha256-", 15) != 0 ||
		    memcmp(s, s + 79, 64) != 0) {
			oa_seterr(err, errlen, "%s line %zu is not \"<sha256>  blobs/sha256-<the same sha256>\"",
			          OA_BUNDLE_SUMS, line);
			return -1;
		}
		oa_digest_hex hex;
		memcpy(hex, s, 64);
		hex[64] = '\0';
		oa_member_name m;
		char path[13 + 64 + 1];
		memcpy(path, s + 66, 13 + 64);
		path[13 + 64] = '\0';
		if (oa_bundle_member(path, false, &m) != OA_MEMBER_BLOB) {
			oa_seterr(err, errlen, "%s line %zu: %s", OA_BUNDLE_SUMS, line, m.why);
			return -1;
		}
		add_blob(p, hex, -1);
		at += n + 1;
	}
	return 0;
}

bool oa_bundle_promise_has_blob(const oa_bundle_promise *p, const char *hex, int64_t *size)
{
	for (size_t i = 0; i < p->n_blobs; i++)
		if (strcmp(p->blobs[i], hex) == 0) {
			if (size)
				*size = p->blob_sizes[i];
			return true;
		}
	return false;
}

bool oa_bundle_promise_has_tag(const oa_bundle_promise *p, const char *path, const char **tag_sha256)
{
	for (size_t i = 0; i < p->n_tags; i++)
		if (strcmp(p->tags[i], path) == 0) {
			if (tag_sha256)
				*tag_sha256 = p->tag_sha256[i];
			return true;
		}
	return false;
}

void oa_bundle_promise_free(oa_bundle_promise *p)
{
	free(p->blobs);
	free(p->blob_sizes);
	oa_free_names(p->tags, p->n_tags);
	free(p->tag_sha256);
	free(p->tool);
	memset(p, 0, sizeof *p);
}
