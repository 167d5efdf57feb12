/* test_scan_jobs.c - the worker pool (src/base/pool.c) and the scan on
 * several threads: the same store scanned with one, two and four threads
 * gives the same models, the same facts and the same findings in the same
 * order (issue 21, "use both cores"). */
#define _XOPEN_SOURCE 700
#include "teststore.h"

#include "ollama_audit/refs.h"
#include "ollama_audit/scan.h"
#include "base/pool.h"

#include <ftw.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- the pool ------------------------------------------------------------ */

typedef struct pool_probe {
	atomic_int *hits;  /* per item: how many times it ran */
	size_t *order;     /* the order items ran in, when on one thread */
	atomic_size_t ran;
} pool_probe;

static void probe(void *ctx, size_t i)
{
	pool_probe *p = ctx;
	atomic_fetch_add(&p->hits[i], 1);
	size_t k = atomic_fetch_add(&p->ran, 1);
	p->order[k] = i;
}

static void test_pool(void)
{
	static const int jobs[] = { 1, 2, 4, 0 };
	static const size_t sizes[] = { 0, 1, OA_POOL_MIN_PARALLEL - 1, OA_POOL_MIN_PARALLEL, 1000 };
	for (size_t a = 0; a < sizeof jobs / sizeof jobs[0]; a++)
		for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
			size_t n = sizes[b];
			pool_probe p = { .hits = oa_xcalloc(n + 1, sizeof *p.hits), .order = oa_xcalloc(n + 1, sizeof *p.order) };
			atomic_init(&p.ran, 0);
			oa_pool_run(jobs[a], n, OA_POOL_MIN_PARALLEL, probe, &p);
			bool once = true, in_order = true;
			for (size_t i = 0; i < n; i++) {
				once &= atomic_load(&p.hits[i]) == 1;
				in_order &= p.order[i] == i;
			}
			CHECK(once);
			CHECK_U64(atomic_load(&p.ran), n);
			if (jobs[a] == 1 || n < OA_POOL_MIN_PARALLEL)
				CHECK(in_order); /* the sequential path: the caller's thread, in order */
			free(p.hits);
			free(p.order);
		}
	CHECK(oa_pool_threads(1) == 1);
	CHECK(oa_pool_threads(3) == 3);
	CHECK(oa_pool_threads(0) >= 1);
}

/* ---- the scan ------------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* 40 models (more than one batch of the pool's minimum) sharing a weight
 * blob, each with its own config (of the wrong size: a finding each), one
 * manifest that is not JSON, one whose config is missing, a stray file
 * and an empty directory between them (the walk's own findings, which must
 * come after those of the tags walked before them), and 40 orphans. */
static void build_store(const char *root)
{
	char *blobs = oa_path_join(root, "blobs");
	mkdirs(blobs);
	oa_digest_hex layer, cfg, orphan;
	add_blob(root, "weights", layer);
	for (int i = 0; i < 40; i++) {
		char text[64], repo[16];
		snprintf(text, sizeof text, "{\"model_format\":\"gguf\",\"n\":%d}", i);
		add_blob(root, text, cfg);
		snprintf(repo, sizeof repo, "m%02d", i);
		if (i == 7)
			memset(cfg, 'a', 64); /* a config that is not here */
		add_model(root, repo, cfg, layer);
		snprintf(text, sizeof text, "orphan %d", i);
		add_blob(root, text, orphan);
	}
	char *lib = oa_path_join(root, "manifests/registry.ollama.ai/library");
	char *p = oa_path_join(lib, "m05/latest");
	write_file(p, "not json");
	free(p);
	p = oa_path_join(lib, "m20a");
	write_file(p, "a file where a model's directory belongs");
	free(p);
	p = oa_path_join(lib, "m30b");
	mkdirs(p);
	free(p);
	free(lib);
	free(blobs);
}

static oa_store *scan_with(const char *root, int jobs)
{
	oa_store *s = oa_xcalloc(1, sizeof *s);
	char err[256];
	CHECK(oa_store_open(s, root, "test", err, sizeof err) == 0);
	s->jobs = jobs;
	oa_store_scan(s);
	return s;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static void same_scan(const oa_store *a, const oa_store *b)
{
	CHECK_U64(a->n_models, b->n_models);
	CHECK_U64(a->n_blobs, b->n_blobs);
	CHECK_U64(a->findings.n, b->findings.n);
	CHECK_U64(a->n_manifest_files, b->n_manifest_files);
	CHECK(a->prune_blocked == b->prune_blocked);
	CHECK(a->tags.plain == b->tags.plain);
	CHECK_U64(a->tags.n_dig, b->tags.n_dig);
	CHECK_U64(a->tags.files, b->tags.files);
	if (a->tags.n_dig == b->tags.n_dig && a->tags.n_dig)
		CHECK(memcmp(a->tags.dig, b->tags.dig, a->tags.n_dig * sizeof *a->tags.dig) == 0);
	for (size_t i = 0; i < a->n_models && i < b->n_models; i++) {
		const oa_model *x = &a->models[i], *y = &b->models[i];
		CHECK_STR(x->rel_path, y->rel_path);
		CHECK(x->manifest_ok == y->manifest_ok && x->config_state == y->config_state);
		CHECK(same_str(x->manifest_error, y->manifest_error));
		CHECK(same_str(x->config_error, y->config_error));
		CHECK(strcmp(x->m.id, y->m.id) == 0 && x->manifest_bytes == y->manifest_bytes);
		CHECK(same_str(x->tag_kind, y->tag_kind));
	}
	for (size_t i = 0; i < a->n_blobs && i < b->n_blobs; i++)
		CHECK(strcmp(a->blobs[i].name, b->blobs[i].name) == 0 && a->blobs[i].cls == b->blobs[i].cls &&
		      a->blobs[i].st.ino == b->blobs[i].st.ino && a->blobs[i].refs == b->blobs[i].refs);
	bool findings_same = a->findings.n == b->findings.n;
	for (size_t i = 0; findings_same && i < a->findings.n; i++) {
		const oa_finding *x = &a->findings.v[i], *y = &b->findings.v[i];
		findings_same = x->id == y->id && same_str(x->model, y->model) && same_str(x->digest, y->digest) &&
		                same_str(x->path, y->path) && same_str(x->message, y->message);
		if (!findings_same)
			fprintf(stderr, "finding %zu: %s %s / %s %s\n", i, x->code, x->path ? x->path : "-",
			        y->code, y->path ? y->path : "-");
	}
	CHECK(findings_same);
}

static void free_scan(oa_store *s)
{
	oa_store_close(s);
	free(s);
}

static void test_scan_jobs(void)
{
	char root[] = "/tmp/oa-unit-jobs-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	build_store(root);
	oa_store *one = scan_with(root, 1);
	CHECK_U64(one->n_models, 40);
	CHECK(one->findings.n > 40); /* a size finding per config, the walk's own, the orphans */
	bool stray_after_broken = false;
	for (size_t i = 0, broken = SIZE_MAX; i < one->findings.n; i++) {
		const char *path = one->findings.v[i].path;
		if (path && strstr(path, "m05/latest") && broken == SIZE_MAX)
			broken = i;
		if (path && strstr(path, "library/m20a"))
			stray_after_broken = broken < i;
	}
	CHECK(stray_after_broken); /* walk order, as one thread gives it */
	for (int jobs = 2; jobs <= 4; jobs += 2) {
		oa_store *many = scan_with(root, jobs);
		same_scan(one, many);
		free_scan(many);
	}
	free_scan(one);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* oa_store_drop_tag_facts (issue 21: list and check free the walk's digests
 * once done with them): the facts are gone and the reference set, read
 * from the tags again, is the one the scan's facts gave. */
static void test_drop_tag_facts(void)
{
	char root[] = "/tmp/oa-unit-drop-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	build_store(root);
	char *stray = oa_path_join(root, "manifests/registry.ollama.ai/library/m20a");
	CHECK(unlink(stray) == 0); /* a file where a directory belongs: the walk's facts are not plain */
	free(stray);
	oa_store *s = scan_with(root, 1);
	CHECK(s->tags.plain && s->tags.n_dig > 0);
	oa_refset before, after;
	oa_refset_scanned(s, &before);
	oa_store_drop_tag_facts(s);
	CHECK(!s->tags.plain && s->tags.dig == NULL && s->tags.n_dig == 0 && s->tags.n_empty_dirs == 0);
	oa_refset_scanned(s, &after);
	CHECK_U64(after.n, before.n);
	CHECK(after.n == before.n && memcmp(after.hex, before.hex, before.n * sizeof *before.hex) == 0);
	CHECK(after.incomplete == before.incomplete);
	oa_refset_free(&before);
	oa_refset_free(&after);
	oa_store_drop_tag_facts(s); /* twice: nothing left to free */
	free_scan(s);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	test_pool();
	test_scan_jobs();
	test_drop_tag_facts();
	TEST_MAIN_END();
}
