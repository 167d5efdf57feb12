/* test_scan_jobs.c - the worker pool (src/base/pool.c) and the scan on
 * several threads: the same store scanned with one, two and four threads
 * gives the same models, the same facts and the same findings in the same
 * order (issue 21, "use both cores"). */
#define _XOPEN_SOURCE 700
#include "teststore.h"

#include "ollama_audit/junk.h"
#include "ollama_audit/refs.h"
#include "ollama_audit/resolve.h"
#include "ollama_audit/scan.h"
#include "base/pool.h"
#include "space/refs_private.h"

#include <ctype.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
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

/* N_MODELS models (more than one batch of the pool's minimum, of the walk's
 * read-ahead window and of its tag batch) sharing a weight blob, each with
 * its own config (of the wrong size: a finding each), one manifest that is
 * not JSON, one whose config is missing, a stray file and an empty
 * directory between them (the walk's own findings, which must come after
 * those of the tags walked before them), and 40 orphans. Among the model
 * directories, what the read-ahead must leave to the walk: a symlink to
 * another model's directory (in the store: followed) and one out of the
 * store (not followed), a directory that cannot be opened (mode 000; root
 * opens it all the same), a directory where a tag file belongs, a
 * dangling tag symlink, a file at depth 3 and one at depth 2, and every
 * tenth model with a second tag. */
#define N_MODELS 300

static void build_store(const char *root, const char *outside)
{
	char *blobs = oa_path_join(root, "blobs");
	mkdirs(blobs);
	oa_digest_hex layer, cfg, orphan;
	add_blob(root, "weights", layer);
	char *lib = oa_path_join(root, "manifests/registry.ollama.ai/library");
	for (int i = 0; i < N_MODELS; i++) {
		char text[64], repo[16];
		snprintf(text, sizeof text, "{\"model_format\":\"gguf\",\"n\":%d}", i);
		add_blob(root, text, cfg);
		snprintf(repo, sizeof repo, "m%03d", i);
		if (i == 7)
			memset(cfg, 'a', 64); /* a config that is not here */
		add_model(root, repo, cfg, layer);
		if (i % 10 == 3) {
			char *from = oa_xasprintf("%s/%s/latest", lib, repo), *to = oa_xasprintf("%s/%s/v2", lib, repo);
			CHECK(link(from, to) == 0);
			free(from);
			free(to);
		}
		if (i < 40) {
			snprintf(text, sizeof text, "orphan %d", i);
			add_blob(root, text, orphan);
		}
	}
	char *p = oa_path_join(lib, "m005/latest");
	write_file(p, "not json");
	free(p);
	p = oa_path_join(lib, "m020a");
	write_file(p, "a file where a model's directory belongs");
	free(p);
	p = oa_path_join(lib, "m030b");
	mkdirs(p);
	free(p);
	p = oa_path_join(lib, "m140/dir-tag");
	mkdirs(p);
	free(p);
	p = oa_path_join(lib, "m150/gone");
	CHECK(symlink("nowhere", p) == 0);
	free(p);
	p = oa_path_join(lib, "m131l");
	CHECK(symlink("m131", p) == 0);
	free(p);
	p = oa_path_join(lib, "m200o");
	CHECK(symlink(outside, p) == 0);
	free(p);
	p = oa_path_join(outside, "latest");
	write_file(p, "{}");
	free(p);
	p = oa_path_join(lib, "m260");
	CHECK(chmod(p, 0) == 0);
	free(p);
	p = oa_path_join(root, "manifests/registry.ollama.ai/stray");
	write_file(p, "a file at depth 2");
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
			fprintf(stderr, "finding %zu: %s %s (%s) / %s %s (%s)\n", i, x->code, x->path ? x->path : "-",
			        x->message ? x->message : "-", y->code, y->path ? y->path : "-",
			        y->message ? y->message : "-");
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
	char root[] = "/tmp/oa-unit-jobs-XXXXXX", outside[] = "/tmp/oa-unit-jobs-out-XXXXXX";
	CHECK(mkdtemp(root) != NULL && mkdtemp(outside) != NULL);
	build_store(root, outside);
	oa_store *one = scan_with(root, 1);
	/* every model, the second tags, the symlinked directory's; without
	 * m260 when it cannot be opened */
	bool root_user = geteuid() == 0;
	CHECK_U64(one->n_models, N_MODELS + N_MODELS / 10 + 1 - (root_user ? 0 : 1));
	CHECK(one->findings.n > N_MODELS); /* a size finding per config, the walk's own, the orphans */
	static const char *const walks[] = { "library/m131l/latest", "library/m140/dir-tag", "library/m150/gone",
	                                     "library/m200o", "registry.ollama.ai/stray", "library/m030b" };
	for (size_t k = 0; k < sizeof walks / sizeof walks[0]; k++) {
		bool seen = false;
		for (size_t i = 0; i < one->findings.n; i++)
			seen |= one->findings.v[i].path && strstr(one->findings.v[i].path, walks[k]);
		for (size_t i = 0; i < one->n_models; i++)
			seen |= strstr(one->models[i].rel_path, walks[k]) != NULL;
		CHECK(seen);
	}
	bool stray_after_broken = false;
	for (size_t i = 0, broken = SIZE_MAX; i < one->findings.n; i++) {
		const char *path = one->findings.v[i].path;
		if (path && strstr(path, "m005/latest") && broken == SIZE_MAX)
			broken = i;
		if (path && strstr(path, "library/m020a"))
			stray_after_broken = broken < i;
	}
	CHECK(stray_after_broken); /* walk order, as one thread gives it */
	for (int jobs = 2; jobs <= 4; jobs += 2) {
		oa_store *many = scan_with(root, jobs);
		same_scan(one, many);
		free_scan(many);
	}
	/* Under a low fd limit (macOS's default soft limit is 256) the walk
	 * holds fewer directories open at once: a tag file read on a thread
	 * never fails with EMFILE (it did with 384 held, one "cannot read"
	 * finding per sound tag). */
	struct rlimit was;
	CHECK(getrlimit(RLIMIT_NOFILE, &was) == 0);
	if (was.rlim_cur > 64) {
		struct rlimit low = { 64, was.rlim_max };
		CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
		oa_store *tight = scan_with(root, 2);
		CHECK(setrlimit(RLIMIT_NOFILE, &was) == 0);
		same_scan(one, tight);
		free_scan(tight);
	}
	free_scan(one);
	char *locked = oa_path_join(root, "manifests/registry.ollama.ai/library/m260");
	CHECK(chmod(locked, 0755) == 0);
	free(locked);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	nftw(outside, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* oa_store_drop_tag_facts (issue 21: list and check free the walk's digests
 * once done with them): the facts are gone and the reference set, read
 * from the tags again, is the one the scan's facts gave. */
/* A store whose walk is plain (what the facts stand for in full): 40
 * models sharing a weight blob, an orphan, and an empty model directory. */
static void build_plain_store(const char *root)
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
		add_model(root, repo, cfg, layer);
	}
	add_blob(root, "an orphan", orphan);
	char *hollow = oa_path_join(root, "manifests/registry.ollama.ai/library/hollow");
	mkdirs(hollow); /* junk, found with or without the facts */
	free(hollow);
	free(blobs);
}

/* The set without the tag files' digests, looked up in them
 * (refset_scanned_has), answers as the whole set does: each member, in
 * either case, and a digest that is none. */
static void same_answers_apart(const oa_store *s, const oa_refset *whole)
{
	oa_refset part;
	CHECK(refset_scanned_apart(s, &part));
	CHECK(part.n < whole->n && part.files == whole->files && part.incomplete == whole->incomplete);
	for (size_t i = 0; i < whole->n; i++) {
		oa_digest_hex hex, other;
		memcpy(hex, whole->hex[i], sizeof hex);
		CHECK(refset_scanned_has(s, &part, true, hex));
		for (int k = 0; k < 64; k++)
			hex[k] = (char)toupper((unsigned char)hex[k]);
		CHECK(refset_scanned_has(s, &part, true, hex));
		memcpy(other, whole->hex[i], sizeof other);
		other[63] = other[63] == '0' ? '1' : '0';
		CHECK(refset_scanned_has(s, &part, true, other) == oa_refset_has(whole, other));
	}
	oa_digest_hex junk;
	memset(junk, 'z', 64);
	junk[64] = '\0';
	CHECK(!refset_scanned_has(s, &part, true, junk)); /* not hex */
	oa_refset_free(&part);
}

static void test_drop_tag_facts(void)
{
	char root[] = "/tmp/oa-unit-drop-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	build_plain_store(root);
	oa_store *s = scan_with(root, 1);
	CHECK(s->tags.plain && s->tags.n_dig > 0 && s->tags.n_empty_dirs == 1);
	oa_refset before, after;
	oa_refset_scanned(s, &before);
	same_answers_apart(s, &before);
	oa_junk_list j_before, j_after;
	oa_junk_collect(s, &before, 0, &j_before);
	oa_store_drop_tag_facts(s);
	CHECK(!s->tags.plain && s->tags.dig == NULL && s->tags.n_dig == 0 && s->tags.n_empty_dirs == 0);
	oa_refset_scanned(s, &after);
	oa_junk_collect(s, &after, 0, &j_after); /* walks manifests/ itself now */
	CHECK_U64(j_before.count[OA_JUNK_EMPTY_DIR], 1);
	CHECK_U64(j_after.count[OA_JUNK_EMPTY_DIR], 1);
	CHECK_U64(j_after.n, j_before.n);
	size_t j_n = j_before.n;
	oa_junk_free(&j_before);
	oa_junk_free(&j_after);
	CHECK_U64(after.n, before.n);
	CHECK(after.n == before.n && memcmp(after.hex, before.hex, before.n * sizeof *before.hex) == 0);
	CHECK(after.incomplete == before.incomplete);
	oa_refset_free(&after);
	oa_store_drop_tag_facts(s); /* twice: nothing left to free */

	/* Scanned without them (list and verify: not held at the scan's peak),
	 * on the threads that read tags beside the walk and on the caller's:
	 * the same models, blobs and findings, the reference set and junk of
	 * the dropped facts, and no digest held. */
	for (int jobs = 1; jobs <= 2; jobs++) {
		oa_store *bare = oa_xcalloc(1, sizeof *bare);
		char err[256];
		CHECK(oa_store_open(bare, root, "test", err, sizeof err) == 0);
		bare->jobs = jobs;
		bare->no_tag_facts = true;
		oa_store_scan(bare);
		CHECK(!bare->tags.plain && bare->tags.dig == NULL && bare->tags.list_dig == NULL &&
		      bare->tags.n_empty_dirs == 0);
		CHECK_U64(bare->n_models, s->n_models);
		CHECK_U64(bare->n_blobs, s->n_blobs);
		CHECK_U64(bare->findings.n, s->findings.n);
		for (size_t i = 0; i < s->n_models && i < bare->n_models; i++)
			CHECK(strcmp(bare->models[i].m.id, s->models[i].m.id) == 0);
		oa_refset set;
		oa_refset_scanned(bare, &set);
		CHECK(set.n == before.n && memcmp(set.hex, before.hex, before.n * sizeof *before.hex) == 0);
		oa_junk_list j;
		oa_junk_collect(bare, &set, 0, &j);
		CHECK_U64(j.count[OA_JUNK_EMPTY_DIR], 1);
		CHECK_U64(j.n, j_n);
		oa_junk_free(&j);
		oa_refset_free(&set);
		free_scan(bare);
	}
	oa_refset_free(&before);
	free_scan(s);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* oa_store_resolve through the scan's name index answers as the pass over
 * every model does: exact first, a unique name ignoring case, ambiguity. */
static void test_resolve_index(void)
{
	char root[] = "/tmp/oa-unit-resolve-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	build_plain_store(root);
	oa_digest_hex layer, cfg;
	add_blob(root, "weights", layer);
	add_blob(root, "{\"model_format\":\"gguf\",\"n\":\"case\"}", cfg);
	add_model(root, "case", cfg, layer);
	add_model(root, "Case", cfg, layer);
	add_model(root, "Solo", cfg, layer);
	oa_store *s = scan_with(root, 1);
	CHECK(s->name_index != NULL);
	static const char *const queries[] = { "m05", "M05", "library/m05:latest", "registry.ollama.ai/library/m39",
	                                       "case", "Case", "CASE", "solo", "SOLO:latest", "m40", "hollow",
	                                       "not a name", "" };
	long want[sizeof queries / sizeof queries[0]];
	struct oa_name_index *x = s->name_index;
	s->name_index = NULL; /* the pass over every model */
	for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++)
		want[i] = oa_store_resolve(s, queries[i]);
	s->name_index = x;
	for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++)
		CHECK_U64((uint64_t)oa_store_resolve(s, queries[i]), (uint64_t)want[i]);
	CHECK(want[0] >= 0 && want[1] == want[0] && want[2] == want[0]);
	CHECK(want[4] >= 0 && want[5] >= 0 && want[4] != want[5]);
	CHECK(strcmp(s->models[want[4]].display, "case:latest") == 0);
	CHECK(want[6] == OA_RESOLVE_AMBIGUOUS_NAME);
	CHECK(want[7] >= 0 && want[8] == want[7]);
	CHECK(want[9] == -1 && want[10] == -1 && want[11] == -1);
	free_scan(s);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	test_pool();
	test_scan_jobs();
	test_drop_tag_facts();
	test_resolve_index();
	TEST_MAIN_END();
}
