/* audit.c - one audit of a store: the producer of every finding the
 * commands report, and the run's inputs it reads once (audit.h). */
#include "ollama_audit/audit.h"
#include "audit/audit_inputs.h"
#include "audit/remedy.h"
#include "ollama_audit/guard.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/reclaim.h"
#include "ollama_audit/verify_store.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct oa_audit {
	oa_audit_options opt;
	oa_log_inputs logs;
	oa_usage_cache usage;
	oa_machine machine;
	bool probed;
	oa_verify_cache *vcache;
	bool vcache_opened, vcache_failed_only;
	uid_t euid;          /* who will run the fixes the findings print */
	oa_audit_problems problems;
};

oa_audit *oa_audit_new(const oa_audit_options *o)
{
	oa_audit *a = oa_xcalloc(1, sizeof *a);
	a->opt = *o;
	a->logs = (oa_log_inputs){ .logs = o->logs, .n_logs = o->n_logs, .root = o->root, .sysroot = o->sysroot,
	                           .stdin_shared = true };
	a->euid = geteuid();
	return a;
}

void oa_audit_free(oa_audit *a)
{
	if (!a)
		return;
	oa_log_inputs_close(&a->logs);
	oa_usage_cache_free(&a->usage);
	oa_verify_cache_close(a->vcache);
	oa_audit_problems_free(&a->problems);
	free(a);
}

static void problem(oa_audit *a, char *line)
{
	oa_audit_problems *p = &a->problems;
	p->v = oa_xreallocarray(p->v, p->n + 1, sizeof *p->v);
	p->v[p->n++] = line;
}

/* The sources' problems, kept for the caller; ok: every named source was read. */
static void sources_done(oa_audit *a, oa_log_sources *src, bool ok)
{
	for (size_t i = 0; i < src->n_problems; i++)
		problem(a, oa_xstrdup(src->problems[i]));
	oa_log_sources_free(src);
	a->problems.failed |= !ok;
}

void oa_audit_take_problems(oa_audit *a, oa_audit_problems *out)
{
	*out = a->problems;
	memset(&a->problems, 0, sizeof a->problems);
}

void oa_audit_problems_free(oa_audit_problems *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	memset(p, 0, sizeof *p);
}

oa_log_inputs *oa_audit_log_inputs(oa_audit *a)
{
	return &a->logs;
}

void oa_audit_stdin_shared(oa_audit *a, bool shared)
{
	a->logs.stdin_shared = shared;
}

const oa_log_usage *oa_audit_usage(oa_audit *a, const oa_store *s, bool *fresh)
{
	oa_log_usage *u = oa_usage_cache_find(&a->usage, s);
	*fresh = !u;
	if (u)
		return u;
	u = oa_usage_cache_add(&a->usage, s);
	oa_log_sources src = { 0 };
	bool ok = oa_log_inputs_usage(&a->logs, (oa_store *)s, u, &src);
	sources_done(a, &src, ok);
	return u;
}

const oa_log_usage *oa_audit_usage_known(const oa_audit *a, const oa_store *s)
{
	return oa_usage_cache_find(&a->usage, s);
}

const oa_machine *oa_audit_machine(oa_audit *a)
{
	if (a->probed)
		return &a->machine;
	char *lib = oa_env_trim(a->opt.llm_library);
	char *overhead = oa_env_trim(a->opt.gpu_overhead);
	oa_machine_probe(&a->machine, a->opt.root ? a->opt.root : a->opt.sysroot, lib, overhead);
	free(lib);
	free(overhead);
	a->probed = true;
	return &a->machine;
}

oa_verify_cache *oa_audit_verify_cache(oa_audit *a, bool failed_only)
{
	if (a->vcache_opened && (failed_only || !a->vcache_failed_only))
		return a->vcache;
	oa_verify_cache_close(a->vcache); /* the failures alone, when the whole table is wanted now */
	a->vcache = NULL;
	a->vcache_opened = true;
	a->vcache_failed_only = failed_only;
	char def[4096], err[512];
	const char *path = a->opt.cache_path;
	/* No cache anywhere (no HOME, no file) is simply nothing verified; nor
	 * is a default one the caller refuses (inside a store: nothing we wrote). */
	if (!path && (oa_verify_cache_default_path(def, sizeof def) != 0 ||
	              (a->opt.default_cache_refused && a->opt.default_cache_refused(a->opt.ctx, def))))
		return NULL;
	a->vcache = (failed_only ? oa_verify_cache_open_failed : oa_verify_cache_open)(path ? path : def, err,
	                                                                             sizeof err);
	if (*err)
		problem(a, oa_xasprintf("verification cache: %s", err));
	return a->vcache;
}

/* Whether verify's failures are on record where repair reads them: a cache
 * this run reads, or would (the one it names, else the default one, unless
 * the caller refuses it). Asked only by the fix of a failure verify found. */
static bool has_cache(void *ctx)
{
	oa_audit *a = ctx;
	if (a->vcache_opened)
		return a->vcache != NULL;
	char def[4096];
	return a->opt.cache_path ||
	       (oa_verify_cache_default_path(def, sizeof def) == 0 &&
	        !(a->opt.default_cache_refused && a->opt.default_cache_refused(a->opt.ctx, def)));
}

/* load-failed and runner-changed, from the store's logs. */
static void log_findings(oa_audit *a, oa_store *s)
{
	oa_log_sources src = { 0 };
	bool ok = oa_log_inputs_findings(&a->logs, s, &src);
	sources_done(a, &src, ok);
}

/* The fixes of the findings that have none; with_prune: junk's too, from
 * the plan a plain `prune` would make now (it reads the scan's tag facts). */
static void fixes(oa_audit *a, oa_store *s, bool with_prune)
{
	bool junk = false;
	for (size_t i = 0; with_prune && i < s->findings.n; i++)
		junk |= !s->findings.v[i].fix && oa_finding_is(&s->findings.v[i], OA_FC_JUNK);
	oa_reclaim r;
	oa_remedy_prune p;
	if (junk) {
		oa_reclaim_plan(s, OA_JUNK_DEFAULT, OA_SERVER_GRACE_SECONDS, oa_wall_now(), &r);
		oa_remedy_prune_read(&p, &r);
	}
	oa_blocker *b;
	size_t blockers = oa_store_blockers(s, NULL, 0, &b);
	free(b);
	oa_remedy_fill(s, &(oa_remedy_facts){ .euid = a->euid, .prune = junk ? &p : NULL, .blockers = blockers,
	                                      .cache_path = a->opt.cache_path, .has_cache = has_cache, .ctx = a });
	if (junk) {
		oa_remedy_prune_free(&p);
		oa_reclaim_free(&r);
	}
}

void oa_audit_fixes(oa_audit *a, oa_store *s)
{
	fixes(a, s, true);
}

void oa_audit_findings(oa_audit *a, oa_store *s, enum oa_audit_scope scope)
{
	/* Every step below adds or drops findings that never hide a model. */
	if (scope == OA_AUDIT_LISTING) {
		fixes(a, s, false);
		return;
	}
	oa_findings_drop_referenced(s); /* what prune keeps is no orphan */
	fixes(a, s, true); /* junk's from prune's plan, while the tag facts are here */
	if (a->opt.drop_tag_facts)
		oa_store_drop_tag_facts(s); /* their last reader: memory for what follows */
	log_findings(a, s); /* docs/history.md */
	oa_runhere_findings(oa_audit_machine(a), s);
	oa_verify_cached_findings(s, oa_audit_verify_cache(a, true)); /* what verify found, still true */
	fixes(a, s, false);
}
