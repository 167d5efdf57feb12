/* fuzz_bundle.c - libFuzzer target for what import reads of a bundle
 * before it writes anything: a member's path judged by the store's
 * grammar, and the promises of SHA256SUMS and the index. The input's first
 * byte says whether the member is a directory, the bytes up to the first
 * newline are its path, the rest is read as SHA256SUMS and as an index.
 * Whatever the bytes: a path the grammar accepts is relative, free of "."
 * and ".." components and of empty ones, and names what its kind says; a
 * blob's digest is its name's 64 lowercase hex digits; a tag's model name
 * is valid; a promise holds only digests and tag paths the grammar takes. */
#include "ollama_audit/bundle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_path(const oa_member_name *m)
{
	const char *p = m->path;
	if (p[0] == '/' || strstr(p, "//") || (*p && p[strlen(p) - 1] == '/'))
		abort();
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			abort();
		c += n + (c[n] == '/');
	}
}

static void check_member(const char *raw, bool is_dir)
{
	oa_member_name m;
	enum oa_member_kind k = oa_bundle_member(raw, is_dir, &m);
	if (k != m.kind || (k == OA_MEMBER_BAD) != (m.why != NULL))
		abort();
	if (k == OA_MEMBER_BAD)
		return;
	check_path(&m);
	if (k == OA_MEMBER_BLOB) {
		if (strncmp(m.path, "blobs/sha256-", 13) != 0 || strcmp(m.path + 13, m.hex) != 0 || strlen(m.hex) != 64 ||
		    strspn(m.hex, "0123456789abcdef") != 64)
			abort();
	} else if (k == OA_MEMBER_TAG || k == OA_MEMBER_TAG_V2) {
		oa_name again;
		if (!oa_name_from_parts(&again, m.name.host, m.name.ns, m.name.model, m.name.tag, NULL) || is_dir)
			abort();
	} else if (k == OA_MEMBER_DIR && !is_dir) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 16))
		return 0;
	bool is_dir = data[0] & 1;
	const uint8_t *nl = memchr(data + 1, '\n', size - 1);
	size_t plen = nl ? (size_t)(nl - (data + 1)) : size - 1;
	char *path = malloc(plen + 1);
	memcpy(path, data + 1, plen);
	path[plen] = '\0';
	check_member(path, is_dir);
	free(path);
	const uint8_t *rest = nl ? nl + 1 : data + size;
	size_t rlen = (size_t)(data + size - rest);
	oa_bundle_promise p = { 0 };
	char err[256];
	(void)oa_bundle_promise_sums(&p, rest, rlen, err, sizeof err);
	(void)oa_bundle_promise_index(&p, rest, rlen, err, sizeof err);
	for (size_t i = 0; i < p.n_blobs; i++)
		if (strlen(p.blobs[i]) != 64 || strspn(p.blobs[i], "0123456789abcdef") != 64 || !oa_bundle_promise_has_blob(&p, p.blobs[i], NULL))
			abort();
	for (size_t i = 0; i < p.n_tags; i++) {
		oa_member_name m;
		enum oa_member_kind k = oa_bundle_member(p.tags[i], false, &m);
		if ((k != OA_MEMBER_TAG && k != OA_MEMBER_TAG_V2) || !oa_bundle_promise_has_tag(&p, p.tags[i], NULL))
			abort();
	}
	oa_bundle_promise_free(&p);
	return 0;
}
