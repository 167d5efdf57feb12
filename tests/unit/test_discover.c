/* test_discover.c - the systemd Environment= and environment-file parsers of
 * store discovery, the server's OLLAMA_MODELS trimming, the discovery
 * sources, and opening a store found (oa_open_candidate). */
#include "testutil.h"

#include "ollama_audit/discover.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/scan.h"
#include "ollama_audit/shared.h"
#include "ollama_audit/store.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct got {
	char v[8][256];
	char k[8][64];
	int n;
} got;

static void collect(void *ctx, const char *name, const char *value)
{
	got *g = ctx;
	if (g->n < 8) {
		snprintf(g->k[g->n], sizeof g->k[g->n], "%s", name);
		snprintf(g->v[g->n], sizeof g->v[g->n], "%s", value);
		g->n++;
	}
}

static got sd(const char *value)
{
	got g;
	memset(&g, 0, sizeof g);
	oa_systemd_env_parse(value, collect, &g);
	return g;
}

static got ef(const char *line)
{
	got g;
	memset(&g, 0, sizeof g);
	oa_envfile_line_parse(line, collect, &g);
	return g;
}

static void test_systemd(void)
{
	got g = sd("OLLAMA_MODELS=/srv/m");
	CHECK(g.n == 1);
	CHECK_STR(g.k[0], "OLLAMA_MODELS");
	CHECK_STR(g.v[0], "/srv/m");

	g = sd("\"OLLAMA_HOST=0.0.0.0\" \"OLLAMA_MODELS=/srv/with space\"");
	CHECK(g.n == 2);
	CHECK_STR(g.k[0], "OLLAMA_HOST");
	CHECK_STR(g.v[1], "/srv/with space");

	g = sd("OLLAMA_MODELS=\"/srv/x y\"  OTHER=1");
	CHECK(g.n == 2);
	CHECK_STR(g.v[0], "/srv/x y");
	CHECK_STR(g.k[1], "OTHER");

	g = sd("'OLLAMA_MODELS=/srv/single \"q\"'");
	CHECK(g.n == 1);
	CHECK_STR(g.v[0], "/srv/single \"q\"");

	g = sd("OLLAMA_MODELS=/a\\x20b \"C=\\\"quoted\\\"\"");
	CHECK(g.n == 2);
	CHECK_STR(g.v[0], "/a b");
	CHECK_STR(g.v[1], "\"quoted\"");

	g = sd("   ");
	CHECK(g.n == 0);
	g = sd("=novalue NOEQUALS \"unterminated=x");
	CHECK(g.n == 1); /* only the unterminated one has a name */
	CHECK_STR(g.k[0], "unterminated");
	CHECK_STR(g.v[0], "x");
	g = sd("EMPTY=");
	CHECK(g.n == 1);
	CHECK_STR(g.v[0], "");

	/* systemd refuses \x00: that word and the rest of the line are ignored
	 * (not cut short at the NUL) */
	g = sd("A=1 OLLAMA_MODELS=/srv/a\\x00b C=2");
	CHECK(g.n == 1);
	CHECK_STR(g.k[0], "A");
	g = sd("\"OLLAMA_MODELS=/srv/q\\x00\" C=2");
	CHECK(g.n == 0);
}

static void test_envfile(void)
{
	got g = ef("OLLAMA_MODELS=/srv/m\n");
	CHECK(g.n == 1);
	CHECK_STR(g.v[0], "/srv/m");
	g = ef("export OLLAMA_MODELS=\"/opt/a b\"  # comment\n");
	CHECK(g.n == 1);
	CHECK_STR(g.v[0], "/opt/a b");
	g = ef("OLLAMA_MODELS='/single#notcomment'\n");
	CHECK_STR(g.v[0], "/single#notcomment");
	g = ef("OLLAMA_MODELS=/x#y # real comment\n");
	CHECK_STR(g.v[0], "/x#y");
	g = ef("  # OLLAMA_MODELS=/commented\n");
	CHECK(g.n == 0);
	g = ef("; OLLAMA_MODELS=/commented\n");
	CHECK(g.n == 0);
	g = ef("NOT A=b\n");
	CHECK(g.n == 0);
	g = ef("OLLAMA_MODELS = /spaced\n");
	CHECK(g.n == 1);
	CHECK_STR(g.k[0], "OLLAMA_MODELS");
	CHECK_STR(g.v[0], "/spaced");
}

static void test_trim(void)
{
	char *s = oa_env_trim("  \"/srv/m\"  ");
	CHECK_STR(s, "/srv/m");
	free(s);
	s = oa_env_trim("'\"/both\"'");
	CHECK_STR(s, "/both");
	free(s);
	CHECK(oa_env_trim("  \"\" ") == NULL);
	CHECK(oa_env_trim(NULL) == NULL);
}

static void test_sources(void)
{
	for (int i = OA_SOURCE_OTHER; i <= OA_SOURCE_DEFAULT; i++)
		CHECK(oa_store_source_of(oa_store_source_name((oa_store_source)i)) == (oa_store_source)i);
	CHECK_STR(oa_store_source_name(OA_SOURCE_STORE_OPTION), "--store");
	CHECK_STR(oa_store_source_name(OA_SOURCE_ENVIRONMENT_FILE), "environment-file");
	CHECK(oa_store_source_of("nonsense") == OA_SOURCE_OTHER);
	CHECK(oa_store_source_of(NULL) == OA_SOURCE_OTHER);
	oa_found_by home[2] = { { "home", "user a", "/h/a" }, { "default", "$HOME", "/h/a" } };
	oa_candidate k = { .found = home, .n_found = 2 };
	CHECK(!oa_candidate_named(&k) && !oa_candidate_configured(&k));
	oa_found_by named[2] = { { "home", "user a", "/h/a" }, { "--store", "command line", "/h/a" } };
	k.found = named;
	CHECK(oa_candidate_named(&k) && oa_candidate_configured(&k));
	oa_found_by unit[1] = { { "systemd", "ollama.service:3", "/srv/m" } };
	k.found = unit;
	k.n_found = 1;
	CHECK(!oa_candidate_named(&k) && oa_candidate_configured(&k));
}

/* Every way a store is opened takes the options: the platform above all. */
static void test_open_candidate(void)
{
	char dir[] = "/tmp/oa-unit-open-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *man = oa_path_join(dir, "manifests"), *blobs = oa_path_join(dir, "blobs");
	CHECK(mkdir(man, 0700) == 0 && mkdir(blobs, 0700) == 0);
	oa_found_by by[1] = { { "systemd", "ollama.service:3", dir } };
	oa_candidate k = { .path = dir, .root = dir, .found = by, .n_found = 1 };
	oa_peer_index *peers = oa_peer_index_new(NULL, 0);
	oa_open_options o = { "darwin/arm64", OA_HEADERS_NONE, 0, false, peers };
	oa_store s;
	char err[256];
	CHECK(oa_open_candidate(&s, dir, OA_SOURCE_SYSTEMD, &k, &o, err, sizeof err) == 0);
	CHECK_STR(s.platform, "darwin/arm64");
	CHECK_STR(s.how, "systemd");
	CHECK(s.found == by && s.n_found == 1);
	CHECK(s.peer_index == peers); /* lent: the set's index reaches the store's reference set */
	oa_store_close(&s);
	oa_peer_index_free(peers);
	CHECK(oa_open_candidate(&s, dir, OA_SOURCE_STORE_OPTION, NULL, NULL, err, sizeof err) == 0);
	CHECK(s.platform == NULL && s.n_found == 0);
	CHECK_STR(s.how, "--store");
	oa_store_close(&s);
	char *gone = oa_path_join(dir, "gone");
	CHECK(oa_open_candidate(&s, gone, OA_SOURCE_STORE_OPTION, NULL, &o, err, sizeof err) < 0);
	CHECK(err[0] != '\0');
	oa_store_close(&s);
	rmdir(man);
	rmdir(blobs);
	rmdir(dir);
	free(man);
	free(blobs);
	free(gone);
}

/* The accounts are read when asked, never kept for the rest of the
 * process: a program that looks at one machine's passwd, then another's
 * (--root, or two audits), gets each one's names. */
static void test_accounts_not_kept(void)
{
	char tmpl[] = "/tmp/oa-accounts-XXXXXX";
	char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	if (!dir)
		return;
	char *a = oa_xasprintf("%s/a", dir), *b = oa_xasprintf("%s/b", dir);
	FILE *f = fopen(a, "w");
	if (f) {
		fprintf(f, "alice:x:4242:4242::/home/alice:/bin/sh\n");
		fclose(f);
	}
	f = fopen(b, "w");
	if (f) {
		fprintf(f, "bob:x:4242:4242::/home/bob:/bin/sh\n");
		fclose(f);
	}
	char name[64];
	setenv("OLLAMA_AUDIT_PASSWD", a, 1);
	oa_user_name(4242, name, sizeof name);
	CHECK_STR(name, "alice");
	setenv("OLLAMA_AUDIT_PASSWD", b, 1);
	oa_user_name(4242, name, sizeof name);
	CHECK_STR(name, "bob");
	char *home = oa_user_home(4242);
	CHECK_STR(home, "/home/bob");
	free(home);
	unsetenv("OLLAMA_AUDIT_PASSWD");
	unlink(a);
	unlink(b);
	rmdir(dir);
	free(a);
	free(b);
}

int main(void)
{
	test_accounts_not_kept();
	test_sources();
	test_open_candidate();
	test_systemd();
	test_envfile();
	test_trim();
	TEST_MAIN_END();
}
