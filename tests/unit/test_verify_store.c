/* test_verify_store.c - verify's findings come from the library: a program
 * linking it gets digest-mismatch for a corrupt blob from oa_verify_store,
 * and check's report of it from the cache (oa_verify_cached_findings),
 * without the CLI. */
#include "teststore.h"

#include "ollama_audit/digest.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/scan.h"
#include "ollama_audit/verify_store.h"
#include "base/util.h"

#include <sys/stat.h>
#include <unistd.h>

static char g_tmp[] = "/tmp/oa-unit-vstore-XXXXXX";

/* A store with one model m:latest (a config and a weights layer); the
 * weights' path into wpath. */
static char *make_store(char **wpath)
{
	char *root = oa_xasprintf("%s/models", g_tmp);
	char *blobs = oa_xasprintf("%s/blobs", root);
	mkdirs(blobs);
	free(blobs);
	oa_digest_hex cfg, layer;
	add_blob(root, "{}", cfg);
	add_blob(root, "weights", layer);
	add_model(root, "m", cfg, layer);
	*wpath = oa_xasprintf("%s/blobs/sha256-%s", root, layer);
	return root;
}

static void scan(oa_store *s, const char *root)
{
	char err[512];
	CHECK(oa_store_open(s, root, "--store", err, sizeof err) == 0);
	oa_store_set_header_mode(s, OA_HEADERS_NONE);
	oa_store_scan(s);
}

/* How many findings with that code name model m:latest and the weights. */
static size_t count(const oa_store *s, oa_finding_code code)
{
	size_t n = 0;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		n += f->id == code && f->model && strcmp(f->model, "m:latest") == 0 && f->path &&
		     strncmp(f->path, "blobs/sha256-", 13) == 0;
	}
	return n;
}

int main(void)
{
	CHECK(mkdtemp(g_tmp) != NULL);
	char *weights;
	char *root = make_store(&weights);
	write_file(weights, "WEIGHTS"); /* same size, other bytes */
	char *cpath = oa_xasprintf("%s/cache.json", g_tmp), err[512];
	oa_verify_cache *vc = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK(vc != NULL);

	/* verify: the finding, with no CLI in sight */
	oa_store s;
	scan(&s, root);
	oa_verify_store_opts o = { .selected = NULL };
	oa_verify_opts_init(&o.run);
	o.run.jobs = 1;
	o.run.cache = vc;
	oa_verify_store_result res;
	CHECK(oa_verify_store(&s, &o, &res, err, sizeof err) == 0);
	CHECK_U64(res.blobs, 2);
	CHECK_U64(res.tot.count[OA_VERIFY_DIGEST_MISMATCH], 1);
	CHECK_U64(count(&s, OA_FINDING_DIGEST_MISMATCH), 1);
	CHECK_U64(s.findings.n, 1); /* the structure pass's others are check's */
	oa_store_close(&s);

	/* check: the cached failure of this very file, nothing hashed */
	scan(&s, root);
	CHECK_U64(count(&s, OA_FINDING_DIGEST_MISMATCH), 0);
	oa_verify_cached_findings(&s, vc);
	CHECK_U64(count(&s, OA_FINDING_DIGEST_MISMATCH), 1);
	oa_store_close(&s);

	/* the blob replaced by another file: the old failure says nothing */
	char *fresh = oa_xasprintf("%s.new", weights);
	write_file(fresh, "weights");
	CHECK(rename(fresh, weights) == 0);
	scan(&s, root);
	oa_verify_cached_findings(&s, vc);
	CHECK_U64(count(&s, OA_FINDING_DIGEST_MISMATCH), 0);
	oa_verify_cached_findings(&s, NULL); /* no cache: nothing */
	CHECK_U64(count(&s, OA_FINDING_DIGEST_MISMATCH), 0);
	oa_store_close(&s);

	oa_verify_cache_close(vc);
	free(fresh);
	free(cpath);
	free(weights);
	free(root);
	char *rm = oa_xasprintf("rm -rf '%s'", g_tmp);
	CHECK(system(rm) == 0);
	free(rm);
	TEST_MAIN_END();
}
