/* test_guard.c - applying a plan refuses by itself (guard.h): a store an
 * Ollama server uses (a fake one, through the test seam), one with a
 * manifest that cannot be read, and one with blobs/ but no manifests/.
 * The CLI prints these refusals; the library must not depend on it. */
#include "teststore.h"

#include "ollama_audit/digest.h"
#include "ollama_audit/guard.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/apply.h"
#include "ollama_audit/plan_file.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/reclaim.h"
#include "ollama_audit/scan.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char g_tmp[] = "/tmp/oa-unit-guard-XXXXXX";

static bool blob_exists(const char *root, const char *hex)
{
	char *path = oa_xasprintf("%s/blobs/sha256-%s", root, hex);
	bool yes = access(path, F_OK) == 0;
	free(path);
	return yes;
}

/* A store with one model (config + one layer) and, when `with_manifests`,
 * its manifest; plus an orphan blob. Returns the root. */
static char *make_store(const char *name, bool with_manifests, oa_digest_hex orphan)
{
	char *root = oa_xasprintf("%s/%s", g_tmp, name);
	char *blobs = oa_xasprintf("%s/blobs", root);
	mkdirs(blobs);
	oa_digest_hex cfg, layer;
	add_blob(root, "{}", cfg);
	add_blob(root, "weights", layer);
	add_blob(root, "an orphan", orphan);
	if (with_manifests)
		add_model(root, "m", cfg, layer);
	free(blobs);
	return root;
}

static int fake_server(const char *root, oa_store_user *users, int max, char *why, size_t whylen)
{
	(void)root;
	(void)why;
	(void)whylen;
	if (max > 0) {
		users[0].pid = 4242;
		snprintf(users[0].cmd, sizeof users[0].cmd, "ollama serve");
		snprintf(users[0].how, sizeof users[0].how, "cwd %s", root);
	}
	return 1;
}

/* Open, scan, plan the default prune (no age limit) and apply it; users:
 * who uses the store (NULL: the machine's processes). */
static int apply(const char *root, bool force, oa_store_users_fn users, char *err, size_t errlen,
                 size_t *planned)
{
	oa_store s;
	CHECK(oa_store_open(&s, root, "--store", err, errlen) == 0);
	s.users_probe = users;
	oa_store_set_header_mode(&s, OA_HEADERS_NONE);
	oa_store_scan(&s);
	oa_reclaim r;
	oa_reclaim_plan(&s, OA_JUNK_DEFAULT, 0, (double)time(NULL) + 10, &r);
	*planned = r.plan.todo.n;
	oa_apply_opts o = { .force = force };
	oa_apply_result res;
	int rc = oa_plan_apply(&s, &r.plan, &o, &res, err, errlen);
	oa_reclaim_free(&r);
	oa_store_close(&s);
	return rc;
}

static void test_server_in_use(void)
{
	oa_digest_hex orphan;
	char *root = make_store("served", true, orphan);
	char err[768] = "";
	size_t planned;
	CHECK(apply(root, false, fake_server, err, sizeof err, &planned) == -1);
	CHECK(planned == 1);
	CHECK(strstr(err, "Ollama server") != NULL);
	CHECK(blob_exists(root, orphan));
	CHECK(apply(root, true, fake_server, err, sizeof err, &planned) == 0); /* force: it goes */
	CHECK(!blob_exists(root, orphan));
	free(root);
}

static void test_unreadable_manifest(void)
{
	oa_digest_hex orphan;
	char *root = make_store("blocked", true, orphan);
	char *dir = oa_xasprintf("%s/manifests/registry.ollama.ai/library/broken", root);
	mkdirs(dir);
	char *path = oa_xasprintf("%s/latest", dir);
	write_file(path, "{\"schemaVersion\":2,");
	char err[768] = "";
	size_t planned;
	CHECK(apply(root, false, NULL, err, sizeof err, &planned) == -1);
	CHECK(strstr(err, "cannot be parsed or read") != NULL);
	CHECK(blob_exists(root, orphan));
	free(path);
	free(dir);
	free(root);
}

static void test_no_manifests(void)
{
	oa_digest_hex orphan;
	char *root = make_store("blobs-only", false, orphan);
	char err[768] = "";
	size_t planned;
	CHECK(apply(root, true, NULL, err, sizeof err, &planned) == -1); /* not even forced */
	CHECK(strstr(err, "no manifests/") != NULL);
	CHECK(blob_exists(root, orphan));
	free(root);
}

/* A saved plan is applied only by its own command, in the store it was
 * made for (oa_plan_read_for). */
static void test_plan_read_for(void)
{
	oa_digest_hex orphan, other_orphan;
	char *root = make_store("planned", true, orphan);
	char *other = make_store("elsewhere", true, other_orphan);
	char err[768] = "";
	oa_store s, t;
	CHECK(oa_store_open(&s, root, "--store", err, sizeof err) == 0);
	CHECK(oa_store_open(&t, other, "--store", err, sizeof err) == 0);
	oa_store_set_header_mode(&s, OA_HEADERS_NONE);
	oa_store_scan(&s);
	oa_reclaim r;
	oa_reclaim_plan(&s, OA_JUNK_DEFAULT, 0, (double)time(NULL) + 10, &r);
	char *file = oa_xasprintf("%s/plan.json", g_tmp);
	CHECK(oa_plan_write(&r.plan, file, err, sizeof err) == 0);
	oa_plan p;
	CHECK(oa_plan_read_for(file, &s, "prune", -1, &p, err, sizeof err) == 0);
	CHECK(p.todo.n == 1);
	oa_plan_free(&p);
	CHECK(oa_plan_read_for(file, &s, "rm", -1, &p, err, sizeof err) == OA_PLAN_OTHER_COMMAND);
	CHECK(strstr(err, "is a plan for `prune`") != NULL);
	CHECK(oa_plan_read_for(file, &t, "prune", -1, &p, err, sizeof err) == OA_PLAN_OTHER_STORE);
	CHECK(strstr(err, "made for another store") != NULL);
	write_file(file, "{\"schema\":\"ollama-audit.plan/1\"}");
	CHECK(oa_plan_read_for(file, &s, "prune", -1, &p, err, sizeof err) == OA_PLAN_UNREADABLE);
	CHECK(strstr(err, "older ollama-audit") != NULL);
	oa_reclaim_free(&r);
	oa_store_close(&s);
	oa_store_close(&t);
	free(file);
	free(other);
	free(root);
}

int main(void)
{
	if (!test_tmp_begin(g_tmp))
		return 1;
	test_server_in_use();
	test_unreadable_manifest();
	test_plan_read_for();
	test_no_manifests();
	test_tmp_end(g_tmp);
	TEST_MAIN_END();
}
