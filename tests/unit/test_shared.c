/* test_shared.c - the stores sharing a store's blob files (shared.h), found
 * in a peer index the set's stores share: the stores it names are looked at
 * (no module state: two indexes name different stores), each is looked at
 * once for every store asking, and a deletion's oa_peers_find_now looks
 * again. */
#include "teststore.h"

#include "ollama_audit/discover.h"
#include "ollama_audit/refs.h"
#include "ollama_audit/shared.h"

#include <unistd.h>

static char g_tmp[] = "/tmp/oa-unit-shared-XXXXXX";

static oa_digest_hex orphan;

/* Store a: one model and an orphan; b (its tag a symlink to a's orphan)
 * and c (its blobs/ a symlink to a's) are found by nobody but the index
 * that names them. */
static void make_stores(char **a, char **b, char **c)
{
	*a = oa_xasprintf("%s/a", g_tmp);
	*b = oa_xasprintf("%s/b", g_tmp);
	*c = oa_xasprintf("%s/c", g_tmp);
	char *blobs = oa_xasprintf("%s/blobs", *a);
	mkdirs(blobs);
	oa_digest_hex cfg, layer;
	add_blob(*a, "{}", cfg);
	add_blob(*a, "weights", layer);
	add_model(*a, "m", cfg, layer);
	add_blob(*a, "an orphan b's tag links to", orphan);
	char *tagdir = oa_xasprintf("%s/manifests/registry.ollama.ai/library/linked", *b);
	mkdirs(tagdir);
	char *tag = oa_xasprintf("%s/latest", tagdir), *target = oa_xasprintf("%s/sha256-%s", blobs, orphan);
	CHECK(symlink(target, tag) == 0);
	char *cman = oa_xasprintf("%s/manifests", *c), *cblobs = oa_xasprintf("%s/blobs", *c);
	mkdirs(cman);
	CHECK(symlink(blobs, cblobs) == 0);
	free(cman);
	free(cblobs);
	free(tag);
	free(target);
	free(tagdir);
	free(blobs);
}

static size_t peers_of(oa_peer_index *x, const oa_store *s, bool now, oa_peers *p)
{
	if (now)
		oa_peers_find_now(x, s, p);
	else
		oa_peers_find(x, s, p);
	return p->n;
}

static void test_named_and_once(const char *a, const char *b, const char *c)
{
	oa_store s;
	char err[256];
	CHECK(oa_store_open(&s, a, "--store", err, sizeof err) == 0);
	char *named[] = { (char *)b, (char *)c };
	oa_peer_index *x = oa_peer_index_new(named, 2), *other = oa_peer_index_new(named + 1, 1);
	oa_peers p;
	CHECK(peers_of(x, &s, false, &p) == 2);
	if (p.n == 2) {
		/* in the order the index names them, each with how it reaches a */
		CHECK(strstr(p.v[0].how, "its tag manifests/registry.ollama.ai/library/linked/latest") != NULL);
		CHECK(strstr(p.v[1].how, "its blobs/ is a symlink to this store's blobs/") != NULL && p.v[1].links_here);
		/* b's tags link into a's blobs/: that directory is one of b's bounds */
		bool bound = false;
		for (size_t i = 0; i < p.v[0].s.n_bounds; i++)
			bound |= s.blobs_real && strcmp(p.v[0].s.bounds[i], s.blobs_real) == 0;
		CHECK(bound);
	}
	oa_peers_free(&p);
	CHECK(peers_of(other, &s, false, &p) == 1); /* another index, other stores: no global between them */
	oa_peers_free(&p);
	CHECK(peers_of(NULL, &s, false, &p) == 0);  /* discovery alone finds neither */
	oa_peers_free(&p);

	/* b's tag is gone: the index answers as it first saw the stores, a
	 * deletion looks again */
	char *tag = oa_xasprintf("%s/manifests/registry.ollama.ai/library/linked/latest", b);
	CHECK(unlink(tag) == 0);
	CHECK(peers_of(x, &s, false, &p) == 2);
	oa_peers_free(&p);
	CHECK(peers_of(x, &s, true, &p) == 1);
	oa_peers_free(&p);

	oa_peer_index_free(x);
	oa_peer_index_free(other);
	free(tag);
	oa_store_close(&s);
}

/* The reference set of a store opened with a peer index holds what its
 * peers reach. */
static void test_refset_through_store(const char *a, const char *b)
{
	char *tagdir = oa_xasprintf("%s/manifests/registry.ollama.ai/library/linked", b);
	char *tag = oa_xasprintf("%s/latest", tagdir), *target = oa_xasprintf("%s/blobs/sha256-%s", a, orphan);
	CHECK(symlink(target, tag) == 0);
	char *named[] = { (char *)b };
	oa_peer_index *x = oa_peer_index_new(named, 1);
	oa_open_options o = { NULL, OA_HEADERS_NONE, 1, false, x };
	oa_store s;
	char err[256];
	CHECK(oa_open_candidate(&s, a, OA_SOURCE_STORE_OPTION, NULL, &o, err, sizeof err) == 0);
	oa_store_scan(&s);
	oa_refset r;
	oa_refset_scanned(&s, &r);
	CHECK(oa_refset_has(&r, orphan));
	CHECK(r.n_shared == 1);
	oa_refset_free(&r);
	oa_store_close(&s);
	CHECK(oa_store_open(&s, a, "--store", err, sizeof err) == 0); /* no index: nobody names b */
	oa_store_scan(&s);
	oa_refset_scanned(&s, &r);
	CHECK(!oa_refset_has(&r, orphan));
	oa_refset_free(&r);
	oa_store_close(&s);
	oa_peer_index_free(x);
	free(target);
	free(tag);
	free(tagdir);
}

int main(void)
{
	if (!test_tmp_begin(g_tmp))
		return 1;
	char *a, *b, *c;
	make_stores(&a, &b, &c);
	test_named_and_once(a, b, c);
	test_refset_through_store(a, b);
	free(a);
	free(b);
	free(c);
	test_tmp_end(g_tmp);
	TEST_MAIN_END();
}
