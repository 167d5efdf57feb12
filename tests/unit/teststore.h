/* teststore.h - the small stores unit tests build by hand: files, blobs
 * named by their sha256, one model's manifest; the temporary directory
 * they lie in; and the bundled demo store, opened and scanned. */
#ifndef OA_TESTSTORE_H
#define OA_TESTSTORE_H

#include "testutil.h"

#include "ollama_audit/digest.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/scan.h"
#include "base/util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>

/* fixtures/demo-store (under OA_SOURCE_DIR, else ..), opened and scanned
 * with the given header mode; close it with oa_store_close. */
static inline void demo_store_scan(oa_store *s, enum oa_header_mode mode)
{
	const char *src = getenv("OA_SOURCE_DIR");
	char *path = oa_xasprintf("%s/fixtures/demo-store", src ? src : "..");
	char err[256];
	CHECK(oa_store_open(s, path, "--store", err, sizeof err) == 0);
	free(path);
	oa_store_set_header_mode(s, mode);
	oa_store_scan(s);
}

static inline void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static inline void mkdirs(const char *path)
{
	char *p = oa_xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
	free(p);
}

/* blobs/sha256-<hex of text> in root; its hex in hex. */
static inline void add_blob(const char *root, const char *text, oa_digest_hex hex)
{
	oa_sha256_hex(text, strlen(text), hex);
	char *path = oa_xasprintf("%s/blobs/sha256-%s", root, hex);
	write_file(path, text);
	free(path);
}

/* The manifest of library/<repo>:latest: a config (2 bytes) and one model
 * layer (7 bytes), as add_blob(root, "{}", cfg) and add_blob(root,
 * "weights", layer) make them. */
static inline void add_model(const char *root, const char *repo, const char *cfg, const char *layer)
{
	char *dir = oa_xasprintf("%s/manifests/registry.ollama.ai/library/%s", root, repo);
	mkdirs(dir);
	char *m = oa_xasprintf("{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution."
	                       "manifest.v2+json\",\"config\":{\"mediaType\":\"application/vnd.docker."
	                       "container.image.v1+json\",\"digest\":\"sha256:%s\",\"size\":2},\"layers\":"
	                       "[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":"
	                       "\"sha256:%s\",\"size\":7}]}", cfg, layer);
	char *path = oa_xasprintf("%s/latest", dir);
	write_file(path, m);
	free(path);
	free(m);
	free(dir);
}

/* The test's directory (mkdtemp of tmpl), where discovery (the stores
 * that may share blobs) sees an empty machine; false when it cannot be made. */
static inline bool test_tmp_begin(char *tmpl)
{
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return false;
	}
	char *sys = oa_xasprintf("%s/sysroot", tmpl);
	mkdir(sys, 0755);
	setenv("OLLAMA_AUDIT_SYSROOT", sys, 1);
	setenv("HOME", sys, 1);
	unsetenv("OLLAMA_MODELS");
	free(sys);
	return true;
}

static inline void test_tmp_end(const char *tmpl)
{
	char *cmd = oa_xasprintf("rm -rf '%s'", tmpl);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpl);
	free(cmd);
}

#endif
