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

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_tmp[] = "/tmp/oa-unit-vstore-XXXXXX";

/* A store with one model m:latest (a config and a weights layer); the
 * weights' path into wpath. */
/* An empty store (its blobs/) at g_tmp/name. */
static char *new_store(const char *name)
{
	char *root = oa_xasprintf("%s/%s", g_tmp, name);
	char *blobs = oa_xasprintf("%s/blobs", root);
	mkdirs(blobs);
	free(blobs);
	return root;
}

static char *make_store(char **wpath)
{
	char *root = new_store("models");
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

/* More blobs than the engine is handed at a time (verify_store.c's
 * VERIFY_BATCH, 1,024): 2,100 weights and their one config, three batches. */
#define MANY 2100

static void progress_sane(void *ctx, uint64_t done, uint64_t total, const char *label)
{
	uint64_t *last = ctx;
	CHECK(done >= last[0] && done <= total && label != NULL);
	last[0] = done;
	last[1] = total;
}

/* on_result: each job once, by its index among all the jobs; a stop
 * asked for once the first batch is done. */
typedef struct stop_after {
	atomic_size_t seen;
	unsigned char once[MANY + 1];
	volatile sig_atomic_t stop;
} stop_after;

static void stop_after_first_batch(void *ctx, size_t job, const oa_verify_result *r)
{
	stop_after *sa = ctx;
	CHECK(job < MANY + 1 && r->status == OA_VERIFY_OK);
	CHECK(sa->once[job]++ == 0);
	if (atomic_fetch_add(&sa->seen, 1) + 1 == 1024)
		sa->stop = 1;
}

/* The findings, counts and progress of one engine run, whatever the
 * batches: each bad blob once, in blob (name) order. */
static void many_blobs(void)
{
	char *root = new_store("many");
	oa_digest_hex cfg, layer;
	add_blob(root, "{}", cfg);
	size_t bad = 0;
	for (int i = 0; i < MANY; i++) {
		char text[16], repo[16];
		snprintf(text, sizeof text, "w%06d", i);
		snprintf(repo, sizeof repo, "m%04d", i);
		add_blob(root, text, layer);
		add_model(root, repo, cfg, layer);
		if (i % 300 == 7) { /* same size, other bytes */
			char *path = oa_xasprintf("%s/blobs/sha256-%s", root, layer);
			text[0] = 'W';
			write_file(path, text);
			free(path);
			bad++;
		}
	}
	oa_store s;
	scan(&s, root);
	char err[512];
	uint64_t last[2] = { 0, 0 };
	oa_verify_store_opts o = { .selected = NULL };
	oa_verify_opts_init(&o.run);
	o.run.jobs = 2;
	o.run.progress = progress_sane;
	o.run.progress_ctx = last;
	o.run.progress_interval = 1e-6;
	oa_verify_store_result res;
	CHECK(oa_verify_store(&s, &o, &res, err, sizeof err) == 0);
	CHECK_U64(res.blobs, MANY + 1);
	CHECK_U64(res.tot.jobs, MANY + 1);
	CHECK_U64(res.tot.count[OA_VERIFY_OK], MANY + 1 - bad);
	CHECK_U64(res.tot.count[OA_VERIFY_DIGEST_MISMATCH], bad);
	CHECK_U64(res.tot.bytes_total, 2 + 7 * (uint64_t)MANY);
	CHECK_U64(res.tot.bytes_hashed, 2 + 7 * (uint64_t)MANY);
	CHECK(last[0] == last[1] && last[1] == res.tot.bytes_total);
	CHECK_U64(s.findings.n, bad);
	for (size_t i = 0; i < s.findings.n; i++) {
		const oa_finding *f = &s.findings.v[i];
		CHECK(f->id == OA_FINDING_DIGEST_MISMATCH && f->model && f->path);
		CHECK(i == 0 || strcmp(s.findings.v[i - 1].path, f->path) < 0);
	}
	oa_store_close(&s);

	/* a stop before the start: every blob not done, whichever batch */
	volatile sig_atomic_t stop = 1;
	scan(&s, root);
	oa_verify_opts_init(&o.run);
	o.run.interrupt = &stop;
	CHECK(oa_verify_store(&s, &o, &res, err, sizeof err) == 1);
	CHECK_U64(res.not_done, MANY + 1);
	CHECK_U64(res.tot.count[OA_VERIFY_NOT_DONE], MANY + 1);
	CHECK_U64(res.tot.bytes_total, 2 + 7 * (uint64_t)MANY);
	CHECK(res.tot.interrupted && !res.tot.timed_out);
	CHECK_U64(s.findings.n, 0);
	oa_store_close(&s);

	/* a stop between two batches: the rest is not done, as with one run */
	stop_after *sa = oa_xcalloc(1, sizeof *sa);
	scan(&s, root);
	oa_verify_opts_init(&o.run);
	o.run.jobs = 2;
	o.run.interrupt = &sa->stop;
	o.run.on_result = stop_after_first_batch;
	o.run.result_ctx = sa;
	o.selected = NULL;
	bool *good = oa_xcalloc(s.n_models + 1, sizeof *good); /* the models whose weights are good */
	for (size_t i = 0; i < s.n_models; i++)
		good[i] = atoi(s.models[i].display + 1) % 300 != 7;
	o.selected = good;
	CHECK(oa_verify_store(&s, &o, &res, err, sizeof err) == 1);
	CHECK_U64(atomic_load(&sa->seen), 1024);
	CHECK_U64(res.tot.count[OA_VERIFY_OK], 1024);
	CHECK_U64(res.not_done, res.blobs - 1024);
	CHECK(res.tot.interrupted && !res.tot.timed_out);
	free(good);
	free(sa);
	oa_store_close(&s);
	free(root);
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

	many_blobs();

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
