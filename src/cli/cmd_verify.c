/* cmd_verify.c - `ollama-audit verify`: sha256 of every referenced blob.
 * The library hashes and makes the findings (oa_verify_store); this file
 * parses, opens the cache, shows progress and renders. */
#include "cmd_verify.h"
#include "cli_audit.h"
#include "output.h"
#include "cli_multi.h"
#include "open_stores.h"
#include "report_common.h"
#include "views/findings_text.h"
#include "usage.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "base/util.h"
#include "ollama_audit/verify_store.h"
#include "base/platform.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* The library names the model whose blob it started last. */
static void progress(void *ctx, uint64_t done, uint64_t total, const char *label)
{
	const double *t0 = ctx;
	oa_verify_progress_line(stderr, done, total, oa_now() - *t0, label);
}

/* The options as the engine takes them; *t0 is the progress line's clock. */
static void engine_opts(const cli *c, oa_verify_cache *cache, double *t0, oa_verify_opts *opts)
{
	oa_verify_opts_init(opts);
	opts->jobs = c->jobs;
	opts->mode = c->quick ? OA_VERIFY_QUICK : OA_VERIFY_SHA256;
	opts->max_duration = c->max_duration;
	opts->interrupt = &interrupted;
	opts->cache = cache;
	opts->changed_only = c->changed;
	*t0 = oa_now();
	if (c->progress) {
		opts->progress = progress;
		opts->progress_ctx = t0;
	}
}

static void verify_store(cli *c, oa_store *s, oa_verify_cache *cache, bool first)
{
	oa_audit_summary sum = { .verify = true };
	/* Counted as check counts them (a broken manifest too), not by what
	 * there is to hash: the two passes name the same number of models. */
	oa_model_args a = cli_model_args(c);
	sum.models = oa_args_count(s, &a);
	bool *selected = oa_args_models(s, &a);
	oa_verify_store_opts o = { .selected = selected, .all = c->all };
	double t0;
	engine_opts(c, cache, &t0, &o.run);
	oa_verify_store_result res;
	char err[512];
	if (oa_verify_store(s, &o, &res, err, sizeof err) < 0) {
		cli_err("%s: verify failed: %s", s->root, err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	if (c->progress)
		fputs("\r\033[K", stderr);
	free(selected);
	if (res.tot.interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	oa_audit_summary_verified(&sum, &res);
	oa_audit_fixes(cli_audit(c), s);
	report_findings(c, s, &sum, first);
}

/* The cache is ours, never the store's. Returns false on a --cache inside
 * a store; *cache NULL: going on without one (the default cache inside a
 * store too). */
static bool open_cache(cli *c, oa_verify_cache **cache)
{
	*cache = NULL;
	if (c->cache_path && cli_refuse_store_path(c, "--cache", c->cache_path))
		return false;
	char err[512] = "", def[4096];
	const char *path = c->cache_path;
	if (!path && oa_verify_cache_default_path(def, sizeof def) == 0)
		path = def; /* else oa_verify_cache_open says why there is none */
	if (path != def || !cli_default_cache_in_store(c, def))
		*cache = oa_verify_cache_open(path, err, sizeof err);
	if (*err)
		cli_err("verification cache: %s%s", err, *cache ? "" : " (continuing without it)");
	if ((c->changed || c->quick) && !*cache)
		cli_err("--changed and --quick need the cache: every blob gets a full sha256");
	return true;
}

static void close_cache(cli *c, oa_verify_cache *cache)
{
	if (!cache)
		return;
	char err[512] = "";
	if (oa_verify_cache_dirty(cache) && oa_verify_cache_save(cache, err, sizeof err) < 0) {
		cli_err("cannot save the verification cache: %s", err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	} else if (*err) {
		cli_err("verification cache: %s", err);
	}
	oa_verify_cache_close(cache);
}

int cmd_verify(cli *c)
{
	size_t n;
	/* Catch SIGINT before the scan: an interrupt at any point still ends in
	 * a report (every store, its blobs "not done"), never a silent exit. */
	/* SA_RESETHAND: the first Ctrl-C asks for a clean stop (a report of what
	 * was done); a second one, if the stop takes too long, ends the process. */
	struct sigaction sa = { .sa_handler = on_sigint, .sa_flags = SA_RESETHAND }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	c->no_tag_facts = c->format != OUT_PROMETHEUS; /* its reference set reads them; nothing else */
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	oa_verify_cache *cache;
	if (!open_cache(c, &cache)) {
		cli_close_stores(st, n);
		return c->exit_code | OA_EXIT_USAGE;
	}
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok || !check_args_resolve(c, &st[i].s))
			continue;
		verify_store(c, &st[i].s, cache, first);
		first = false;
	}
	close_cache(c, cache);
	report_finish(c, OA_SCHEMA_VERIFY);
	sigaction(SIGINT, &old, NULL);
	if (interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	cli_close_stores(st, n);
	return c->exit_code;
}
