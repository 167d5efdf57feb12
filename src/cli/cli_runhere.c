/* cli_runhere.c - "what can run here" for show and check (runhere.h,
 * docs/history.md). */
#include "cli_runhere.h"
#include "cli_multi.h"
#include "cmd_history.h"
#include "usage.h"
#include "ollama_audit/runhere.h"
#include "views/runhere_text.h"
#include "ollama_audit/verify_cache.h"
#include "base/util.h"

#include <stdlib.h>

static oa_machine machine;
static bool probed;
static oa_verify_cache *vcache;
static bool vcache_opened, vcache_failed_only;

static void close_vcache(void)
{
	oa_verify_cache_close(vcache);
}

static oa_verify_cache *open_vcache(const cli *c, bool failed_only)
{
	if (vcache_opened && (failed_only || !vcache_failed_only))
		return vcache;
	if (!vcache_opened)
		atexit(close_vcache);
	oa_verify_cache_close(vcache); /* the failures alone, when the whole table is wanted now */
	vcache = NULL;
	vcache_opened = true;
	vcache_failed_only = failed_only;
	char def[4096], err[512];
	const char *path = c->cache_path;
	/* No cache anywhere (no HOME, no file) is simply nothing verified; nor
	 * is a default one inside a store (never read there: nothing we wrote). */
	if (!path && (oa_verify_cache_default_path(def, sizeof def) != 0 || cli_default_cache_in_store(c, def)))
		return NULL;
	vcache = (failed_only ? oa_verify_cache_open_failed : oa_verify_cache_open)(path ? path : def, err,
	                                                                          sizeof err);
	if (*err)
		cli_err("verification cache: %s", err);
	return vcache;
}

oa_verify_cache *cli_runhere_cache(const cli *c)
{
	return open_vcache(c, false);
}

oa_verify_cache *cli_runhere_failed_cache(const cli *c)
{
	return open_vcache(c, true);
}

/* --root, else the tests' fake machine, else this one; OLLAMA_LLM_LIBRARY
 * and OLLAMA_GPU_OVERHEAD as this environment sets them for a server. */
static const oa_machine *cli_machine(const cli *c)
{
	if (probed)
		return &machine;
	const char *sysroot = getenv("OLLAMA_AUDIT_SYSROOT");
	char *lib = oa_env_trim(getenv("OLLAMA_LLM_LIBRARY"));
	char *overhead = oa_env_trim(getenv("OLLAMA_GPU_OVERHEAD"));
	oa_machine_probe(&machine, c->root ? c->root : sysroot, lib, overhead);
	free(lib);
	free(overhead);
	probed = true;
	return &machine;
}

static oa_verify_cache *cache_of(void *ctx)
{
	return cli_runhere_cache(ctx);
}

/* The logs' newest failed load of m (read when first asked). */
static const char *failure_of(void *ctx, const oa_store *s, const oa_model *m)
{
	const cli_usage *u = s ? cli_usage_of(ctx, s) : NULL;
	return u && u->failure ? u->failure[m - s->models] : NULL;
}

char *cli_runhere_text(cli *c, const oa_store *s, const oa_model *m)
{
	oa_runhere_inputs in = { .cache = cache_of, .failure = failure_of, .ctx = c };
	return oa_runhere_text(c->units, cli_machine(c), s, m, &in);
}

const oa_machine *cli_runhere_machine(const cli *c)
{
	return cli_machine(c);
}
