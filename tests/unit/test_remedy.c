/* test_remedy.c - the fix every finding code prints (src/audit/remedy.c):
 * each template fills in, an error's fix is a command for a pulled model,
 * a missing or damaged blob is repair's (a pull keeps any blob file that
 * exists), a model created here is never sent to a pull, a prune
 * blocker gets its file's fix, paths are quoted for a shell. Over
 * fixtures/demo-store (demo-llama:1b was pulled, tiny-mlx:int4 created). */
#include "teststore.h"

#include "audit/remedy.h"
#include "ollama_audit/finding.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WEIGHTS "blobs/sha256-2d9c9529b4589def2320ae89334886d371a92d50910d558ab524f4dcc8cdf318"

static const char *const commands[] = { "ollama-audit ", "ollama ", "mv ", "rm ", "rmdir ", "cp ", "chmod ", "sudo ",
	                                        NULL };
static const char *const manual[] = { "none", "by hand: ", "wait: ", NULL };

static bool starts(const char *s, const char *const *v)
{
	for (; *v; v++)
		if (oa_str_has_prefix(s, *v))
			return true;
	return false;
}

/* The fix of one finding of code id about model and path, added to s. */
static const char *fix_for(oa_store *s, oa_finding_code id, const char *model, const char *path)
{
	const char *digest = "sha256:2d9c9529b4589def2320ae89334886d371a92d50910d558ab524f4dcc8cdf318";
	oa_findings_add(&s->findings, id, model, digest, path, "test");
	oa_remedy_fill(s, &(oa_remedy_facts){ .euid = geteuid() });
	return s->findings.v[s->findings.n - 1].fix;
}

/* Every code's template fills in: a command, or what to do by hand. */
static void test_every_code(oa_store *s)
{
	for (int id = 0; id < OA_FINDING_NCODES; id++) {
		if (oa_finding_kinds[id].flags & OA_FC_JUNK)
			continue; /* prune's plan decides: test_audit_agree.py */
		const char *fix = fix_for(s, (oa_finding_code)id, "demo-llama:1b", WEIGHTS);
		CHECK(fix && *fix && !strchr(fix, '{'));
		CHECK(fix && (starts(fix, commands) || starts(fix, manual)));
		/* an error about a pulled model's files: a command (unreadable reads here: the audit's case) */
		if (oa_finding_kinds[id].severity == OA_SEV_ERROR && id != OA_FINDING_UNREADABLE && !starts(fix, commands))
			fprintf(stderr, "error code %s prints no command: %s\n", oa_finding_kinds[id].code, fix);
		if (oa_finding_kinds[id].severity == OA_SEV_ERROR && id != OA_FINDING_UNREADABLE)
			CHECK(starts(fix, commands));
	}
}

/* facts.has_cache: verify's failures are on record (or not) in the cache. */
static bool cache_yes(void *ctx)
{
	(void)ctx;
	return true;
}

static bool cache_no(void *ctx)
{
	(void)ctx;
	return false;
}

/* The fix of one finding of code id about model, with these cache facts. */
static const char *fix_with_cache(oa_store *s, oa_finding_code id, const char *model, const char *cache_path,
                                  bool (*has_cache)(void *))
{
	const char *digest = "sha256:2d9c9529b4589def2320ae89334886d371a92d50910d558ab524f4dcc8cdf318";
	oa_findings_add(&s->findings, id, model, digest, WEIGHTS, "test");
	oa_remedy_fill(s, &(oa_remedy_facts){ .euid = geteuid(), .cache_path = cache_path, .has_cache = has_cache });
	return s->findings.v[s->findings.n - 1].fix;
}

/* A missing or damaged blob: ollama-audit repair, whatever the code (a
 * pull keeps any blob file that is there), never a pull, never a file
 * moved aside by hand. */
static void test_damaged_blob(oa_store *s)
{
	char *want = oa_xasprintf("ollama-audit repair demo-llama:1b --apply --store %s", s->root);
	static const oa_finding_code by_size[] = { OA_FINDING_MISSING_BLOB, OA_FINDING_MISSING_CONFIG,
		                                   OA_FINDING_EMPTY_BLOB, OA_FINDING_SIZE_MISMATCH };
	for (size_t i = 0; i < sizeof by_size / sizeof by_size[0]; i++)
		CHECK_STR(fix_for(s, by_size[i], "demo-llama:1b", WEIGHTS), want);
	/* what verify found: repair reads it in the cache the run read, named when the run named it */
	CHECK_STR(fix_with_cache(s, OA_FINDING_DIGEST_MISMATCH, "demo-llama:1b", NULL, cache_yes), want);
	char *named = oa_xasprintf("%s --cache '/tmp/my cache.json'", want);
	CHECK_STR(fix_with_cache(s, OA_FINDING_DIGEST_MISMATCH, "demo-llama:1b", "/tmp/my cache.json", cache_yes),
	          named);
	CHECK_STR(fix_with_cache(s, OA_FINDING_FINGERPRINT_MISMATCH, "demo-llama:1b", "/tmp/my cache.json", cache_yes),
	          named);
	free(named);
	/* no cache to read it in: repair hashes */
	char *hashed = oa_xasprintf("%s --verify", want);
	CHECK_STR(fix_with_cache(s, OA_FINDING_DIGEST_MISMATCH, "demo-llama:1b", NULL, cache_no), hashed);
	CHECK_STR(fix_with_cache(s, OA_FINDING_FINGERPRINT_MISMATCH, "demo-llama:1b", NULL, NULL), hashed);
	/* a broken header of the right size: only a hash tells damage from what the model came with */
	static const oa_finding_code by_hash[] = { OA_FINDING_INVALID_CONFIG, OA_FINDING_INVALID_GGUF,
		                                   OA_FINDING_INVALID_SAFETENSORS };
	for (size_t i = 0; i < sizeof by_hash / sizeof by_hash[0]; i++)
		CHECK_STR(fix_with_cache(s, by_hash[i], "demo-llama:1b", "/tmp/c.json", cache_yes), hashed);
	free(hashed);
	/* verify's cached failure names no model: the first that references the blob, pulled */
	CHECK_STR(fix_with_cache(s, OA_FINDING_DIGEST_MISMATCH, NULL, NULL, cache_yes), want);
	free(want);
	/* created here: repair too (a good copy from another store, or how to create it again), never a pull */
	want = oa_xasprintf("ollama-audit repair tiny-mlx:int4 --apply --store %s --verify", s->root);
	CHECK_STR(fix_for(s, OA_FINDING_INVALID_SAFETENSORS, "tiny-mlx:int4", WEIGHTS), want);
	free(want);
	want = oa_xasprintf("ollama-audit repair tiny-mlx:int4 --apply --store %s", s->root);
	CHECK_STR(fix_for(s, OA_FINDING_MISSING_BLOB, "tiny-mlx:int4", WEIGHTS), want);
	free(want);
	/* what a pull writes again (a manifest) for a model created here: by hand, no pull */
	const char *f = fix_for(s, OA_FINDING_SPLIT_MISMATCH, "tiny-mlx:int4", WEIGHTS);
	CHECK(f && oa_str_has_prefix(f, "by hand: tiny-mlx:int4 was created here") && !strstr(f, "ollama pull"));
	CHECK_STR(fix_for(s, OA_FINDING_SPLIT_MISMATCH, "demo-llama:1b", WEIGHTS), "ollama pull demo-llama:1b");
	/* no template of a code moves a damaged file aside by hand any more */
	for (int id = 0; id < OA_FINDING_NCODES; id++)
		CHECK(!strstr(oa_finding_kinds[id].fix, ".damaged") && !strstr(oa_finding_kinds[id].fix, "{refetch}"));
}

static void test_same_file(oa_store *s)
{
	const char *bad = "manifests/registry.ollama.ai/library/Bad!Name/latest";
	oa_findings_free(&s->findings); /* test_every_code's unparsed-reference would make it by hand */
	char *name = oa_xstrdup(fix_for(s, OA_FINDING_INVALID_NAME, NULL, bad));
	CHECK_STR(fix_for(s, OA_FINDING_PRUNE_BLOCKER, NULL, bad), name);
	char *want = oa_xasprintf("mv -- '%s/%s' '%s/set-aside-manifests-registry.ollama.ai-library-Bad!Name-latest'",
	                          s->root, bad, s->root);
	CHECK_STR(name, want); /* '!' is quoted for the shell */
	free(want);
	free(name);
	/* a ' inside a path */
	want = oa_xasprintf("mv -- '%s/blobs/it'\\''s' '%s/set-aside-blobs-it'\\''s'", s->root, s->root);
	CHECK_STR(fix_for(s, OA_FINDING_FOREIGN_FILE, NULL, "blobs/it's"), want);
	free(want);
	/* a blob kept only because such a file names it: setting the file aside would leave it to prune */
	oa_findings_add(&s->findings, OA_FINDING_UNPARSED_REFERENCE, NULL, NULL, "blobs/sha256-x", "test");
	CHECK(oa_str_has_prefix(fix_for(s, OA_FINDING_INVALID_NAME, NULL, bad), "by hand: "));
	CHECK(oa_str_has_prefix(fix_for(s, OA_FINDING_IGNORED_FILE, NULL, "manifests/x"), "by hand: "));
	CHECK(oa_str_has_prefix(fix_for(s, OA_FINDING_FOREIGN_FILE, NULL, "blobs/it's"), "mv -- "));
}

/* {emptydir}: prune removes an empty directory under manifests/, after
 * what blocks it; rmdir one under manifests-v2/, which prune leaves. */
static void test_empty_dir(oa_store *s)
{
	const char *v1 = "manifests/registry.ollama.ai/library/gone", *v2 = "manifests-v2/ollama.com/library/gone";
	char *want = oa_xasprintf("ollama-audit prune --apply --what empty-dirs --store %s", s->root);
	CHECK_STR(fix_for(s, OA_FINDING_EMPTY_MANIFEST_DIR, NULL, v1), want);
	free(want);
	want = oa_xasprintf("rmdir -- %s/%s", s->root, v2);
	CHECK_STR(fix_for(s, OA_FINDING_EMPTY_MANIFEST_DIR, NULL, v2), want);
	free(want);
	oa_findings_add(&s->findings, OA_FINDING_EMPTY_MANIFEST_DIR, NULL, NULL, v1, "test");
	oa_remedy_fill(s, &(oa_remedy_facts){ .euid = geteuid(), .blockers = 1 });
	want = oa_xasprintf("by hand: first fix what its prune-blocker finding names; then ollama-audit prune --apply "
	                    "--what empty-dirs --store %s", s->root);
	CHECK_STR(s->findings.v[s->findings.n - 1].fix, want);
	free(want);
}

/* {perm}: a file the caller cannot read gets a chmod (root reads it: the
 * fix says it reads now). */
static void test_permissions(void)
{
	char tmpl[] = "/tmp/oa-remedy-XXXXXX";
	char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	if (!dir)
		return;
	char *blobs = oa_xasprintf("%s/blobs", dir), *man = oa_xasprintf("%s/manifests", dir);
	mkdir(blobs, 0755);
	mkdir(man, 0755);
	char *file = oa_xasprintf("%s/sha256-%064d", blobs, 0);
	write_file(file, "x");
	chmod(file, 0);
	oa_store s;
	char err[256];
	CHECK(oa_store_open(&s, dir, "--store", err, sizeof err) == 0);
	char *rel = oa_xasprintf("blobs/sha256-%064d", 0);
	const char *f = fix_for(&s, OA_FINDING_UNREADABLE, NULL, rel);
	char *want = oa_xasprintf("chmod a+r -- %s/%s", s.root, rel);
	if (geteuid() == 0)
		CHECK(f && oa_str_has_prefix(f, "none by permissions: it reads now"));
	else
		CHECK_STR(f, want);
	free(want);
	want = oa_xasprintf("chmod a+rx -- %s/blobs", s.root);
	chmod(blobs, 0);
	f = fix_for(&s, OA_FINDING_UNREADABLE, NULL, "blobs");
	if (geteuid() != 0)
		CHECK_STR(f, want);
	chmod(blobs, 0755);
	free(want);
	oa_store_close(&s);
	unlink(file);
	rmdir(blobs);
	rmdir(man);
	rmdir(dir);
	free(rel);
	free(file);
	free(man);
	free(blobs);
}

int main(void)
{
	oa_store s;
	demo_store_scan(&s, OA_HEADERS_QUICK);
	CHECK(s.n_models > 0);
	test_every_code(&s);
	test_damaged_blob(&s);
	test_same_file(&s);
	test_empty_dir(&s);
	oa_store_close(&s);
	test_permissions();
	TEST_MAIN_END();
}
