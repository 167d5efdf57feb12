/* cmd_verify.c - `ollama-audit verify`: sha256 of every referenced blob. */
#include "cmd_verify.h"
#include "output.h"
#include "cli_multi.h"
#include "open_stores.h"
#include "report_common.h"
#include "usage.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "base/util.h"
#include "ollama_audit/verify.h"
#include "base/platform.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static bool has_finding(const oa_findings *fs, oa_finding_code id, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].id == id && fs->v[i].path && strcmp(fs->v[i].path, path) == 0)
			return true;
	return false;
}

typedef struct job_ref {
	const oa_model *model; /* the first model that references the blob, or NULL */
	oa_blob *blob;
	int64_t declared;
} job_ref;

static bool model_uses(const oa_model *m, const oa_blob *b)
{
	if (!m->manifest_ok)
		return false;
	for (size_t k = 0; k < m->m.n_layers; k++)
		if (m->layer_blobs[k] == b)
			return true;
	return m->config_blob == b;
}

/* A finding about a blob's content, once for every model that references
 * it: a blob several tags share is broken for each of them, and naming
 * only one would make the others look healthy. `fallback` (NULL: no model)
 * is used for a blob no parseable manifest references (verify --all). */
static void add_blob_finding(oa_store *s, const oa_blob *b, const oa_model *fallback,
                             oa_finding_code code, const char *digest, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
static void add_blob_finding(oa_store *s, const oa_blob *b, const oa_model *fallback,
                             oa_finding_code code, const char *digest, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = oa_xvasprintf(fmt, ap);
	va_end(ap);
	bool any = false;
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *m = &s->models[j];
		bool seen = false; /* a legacy anchor has its v2 tag's name: one finding */
		for (size_t q = 0; q < j && !seen; q++)
			seen = model_uses(&s->models[q], b) && strcmp(s->models[q].display, m->display) == 0;
		if (!model_uses(m, b) || seen)
			continue;
		oa_findings_add(&s->findings, code, m->display, digest, path, "%s", msg);
		any = true;
	}
	if (!any)
		oa_findings_add(&s->findings, code, fallback ? fallback->display : NULL, digest, path, "%s", msg);
	free(msg);
}

typedef struct progress_ctx {
	double t0;
	const oa_verify_job *jobs;
	job_ref **refs;
	size_t n;
} progress_ctx;

/* The engine names the blob it started last by its path; show the model
 * that blob belongs to, which is what the user recognises. */
static const char *progress_label(const progress_ctx *p, const char *path)
{
	for (size_t j = 0; path && j < p->n; j++)
		if (p->jobs[j].path == path)
			return p->refs[j]->model ? p->refs[j]->model->display : p->refs[j]->blob->name;
	return "";
}

static void progress(void *ctx, uint64_t done, uint64_t total, const char *label)
{
	const progress_ctx *p = ctx;
	double el = oa_now() - p->t0;
	double rate = el > 0 ? (double)done / el : 0;
	double eta = rate > 0 ? (double)(total - done) / rate : 0;
	char d[32], t[32], r[32];
	oa_human_bytes((int64_t)done, d, sizeof d);
	oa_human_bytes((int64_t)total, t, sizeof t);
	oa_human_bytes((int64_t)rate, r, sizeof r);
	int pct = total ? (int)(100.0 * (double)done / (double)total) : 100;
	fprintf(stderr, "\r\033[K%3d%% %s / %s  %s/s  ETA %.0fs  %.40s", pct, d, t, r, eta,
	        cli_safe(progress_label(p, label)));
}

/* Structure findings that a content pass cannot do without; the rest of
 * the structure pass is check's to report. */
static void keep_structure_findings(oa_store *s)
{
	oa_findings keep = { 0 };
	for (size_t j = 0; j < s->findings.n; j++) {
		oa_finding *f = &s->findings.v[j];
		switch (f->id) {
		case OA_FINDING_MISSING_BLOB:
		case OA_FINDING_MISSING_CONFIG:
		case OA_FINDING_INVALID_DIGEST:
		case OA_FINDING_UNREADABLE:
		case OA_FINDING_INVALID_MANIFEST:
			oa_findings_add_sev(&keep, f->id, f->severity, f->model, f->digest, f->path, "%s",
			                    f->message);
			break;
		default:
			break;
		}
	}
	oa_findings_free(&s->findings);
	s->findings = keep;
}

/* The blobs to hash, per blob of the store: the selected models' layers and
 * configs (the first model that references one names it), with --all every
 * other valid blob too. */
static job_ref *collect_refs(const cli *c, oa_store *s)
{
	job_ref *refs = oa_xcalloc(s->n_blobs + 1, sizeof *refs);
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *m = &s->models[j];
		if (!model_selected(c, s, m->display) || !m->manifest_ok)
			continue;
		for (size_t k = 0; k <= m->m.n_layers; k++) {
			oa_blob *b = k < m->m.n_layers ? m->layer_blobs[k] : m->config_blob;
			const oa_layer *l = k < m->m.n_layers ? &m->m.layers[k] : &m->m.config;
			if (!b || b->dangling || b->cls != OA_BLOB_VALID)
				continue;
			size_t bi = (size_t)(b - s->blobs);
			if (!refs[bi].blob)
				refs[bi] = (job_ref){ m, b, l->size };
		}
	}
	if (c->all)
		for (size_t b = 0; b < s->n_blobs; b++)
			if (!refs[b].blob && s->blobs[b].cls == OA_BLOB_VALID && !s->blobs[b].dangling)
				refs[b] = (job_ref){ NULL, &s->blobs[b], -1 };
	return refs;
}

/* One store's hashing: the jobs handed to the engine and what came back. */
typedef struct verify_run {
	job_ref *refs;          /* per blob of the store */
	oa_verify_job *jobs;
	job_ref **jr;           /* per job: its blob's ref */
	char **paths;           /* per job: owned path */
	size_t n;
	oa_verify_result *res;
	oa_verify_totals tot;
} verify_run;

static void build_jobs(const oa_store *s, verify_run *r)
{
	r->n = 0;
	for (size_t b = 0; b < s->n_blobs; b++)
		r->n += r->refs[b].blob != NULL;
	r->jobs = oa_xcalloc(r->n + 1, sizeof *r->jobs);
	r->jr = oa_xcalloc(r->n + 1, sizeof *r->jr);
	r->paths = oa_xcalloc(r->n + 1, sizeof *r->paths);
	r->res = oa_xcalloc(r->n + 1, sizeof *r->res);
	size_t k = 0;
	for (size_t b = 0; b < s->n_blobs; b++) {
		const job_ref *ref = &r->refs[b];
		if (!ref->blob)
			continue;
		r->paths[k] = oa_xasprintf("%s/blobs/%s", s->root, ref->blob->name);
		r->jobs[k].path = r->paths[k];
		memcpy(r->jobs[k].expected_hex, ref->blob->hex, 65);
		r->jobs[k].expected_size = ref->declared >= 0 ? (uint64_t)ref->declared : OA_VERIFY_SIZE_UNKNOWN;
		r->jr[k] = &r->refs[b];
		k++;
	}
}

static void free_run(verify_run *r)
{
	for (size_t j = 0; j < r->n; j++)
		free(r->paths[j]);
	free(r->paths);
	free(r->jobs);
	free(r->jr);
	free(r->refs);
	free(r->res);
}

static void run_jobs(cli *c, const oa_store *s, verify_run *r, oa_verify_cache *cache)
{
	oa_verify_opts opts;
	oa_verify_opts_init(&opts);
	opts.jobs = c->jobs;
	opts.mode = c->quick ? OA_VERIFY_QUICK : OA_VERIFY_SHA256;
	opts.max_duration = c->max_duration;
	opts.interrupt = &interrupted;
	opts.cache = cache;
	opts.changed_only = c->changed;
	progress_ctx pctx = { oa_now(), r->jobs, r->jr, r->n };
	if (c->progress) {
		opts.progress = progress;
		opts.progress_ctx = &pctx;
	}
	memset(&r->tot, 0, sizeof r->tot);
	char err[512];
	if (oa_verify_run(r->jobs, r->n, &opts, r->res, &r->tot, err, sizeof err) < 0) {
		cli_err("%s: verify failed: %s", s->root, err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	if (c->progress)
		fputs("\r\033[K", stderr);
}

/* What one job's result says about its blob, as a finding; tallies the
 * jobs skipped and not done in sum. */
static void record_result(oa_store *s, const verify_run *r, size_t j, oa_audit_summary *sum)
{
	const oa_verify_result *res = &r->res[j];
	const job_ref *ref = r->jr[j];
	const char *model = ref->model ? ref->model->display : NULL;
	char digest[72], path[96];
	snprintf(digest, sizeof digest, "sha256:%s", r->jobs[j].expected_hex);
	snprintf(path, sizeof path, "blobs/%s", ref->blob->name);
	switch (res->status) {
	case OA_VERIFY_OK: break;
	case OA_VERIFY_SKIPPED_UNCHANGED: sum->skipped_unchanged++; break;
	case OA_VERIFY_NOT_DONE: sum->not_done++; break;
	case OA_VERIFY_DIGEST_MISMATCH:
		add_blob_finding(s, ref->blob, ref->model, OA_FINDING_DIGEST_MISMATCH, digest, path,
		                 "content hashes to sha256:%s", res->sha256_hex);
		break;
	case OA_VERIFY_FINGERPRINT_MISMATCH:
		add_blob_finding(s, ref->blob, ref->model, OA_FINDING_FINGERPRINT_MISMATCH, digest, path,
		                 "content changed since it was verified (XXH3-128 %s); run verify without --quick",
		                 res->xxh128_hex);
		break;
	case OA_VERIFY_SIZE_MISMATCH:
		oa_findings_add(&s->findings, res->st.size == 0 ? OA_FINDING_EMPTY_BLOB : OA_FINDING_SIZE_MISMATCH,
		                model, digest, path, "%llu bytes on disk; the manifest declares %llu",
		                (unsigned long long)res->st.size, (unsigned long long)r->jobs[j].expected_size);
		break;
	case OA_VERIFY_MISSING:
		oa_findings_add(&s->findings, OA_FINDING_MISSING_BLOB, model, digest, path,
		                "blob disappeared during verify");
		break;
	default:
		/* The structure pass may already have said so (a config or
		 * template it could not read): say it once. */
		if (!has_finding(&s->findings, OA_FINDING_UNREADABLE, path))
			oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, model, digest, path, "%s",
			                strerror(res->err ? res->err : EIO));
		break;
	}
}

/* "2 models, 3 blobs, 1.2 GB verified in 4.0 s (300 MB/s), ..." */
static void summary_line(const oa_audit_summary *sum, char *line, size_t len)
{
	char total[32], rate[32];
	oa_human_bytes((int64_t)sum->bytes_hashed, total, sizeof total);
	oa_human_bytes(sum->seconds > 0 ? (int64_t)((double)sum->bytes_hashed / sum->seconds) : 0, rate,
	               sizeof rate);
	int n = snprintf(line, len, "%zu model%s, %zu blob%s, %s verified in %.1f s (%s/s)", sum->models,
	                 sum->models == 1 ? "" : "s", sum->blobs, sum->blobs == 1 ? "" : "s", total,
	                 sum->seconds, rate);
	if (sum->skipped_unchanged)
		n += snprintf(line + n, len - (size_t)n, ", %zu unchanged skipped", sum->skipped_unchanged);
	if (sum->not_done)
		snprintf(line + n, len - (size_t)n, ", %zu not done (%s)", sum->not_done,
		         sum->interrupted ? "interrupted" : "time budget");
}

static void verify_store(cli *c, oa_store *s, oa_verify_cache *cache, bool first)
{
	keep_structure_findings(s);
	oa_audit_summary sum = { .verify = true };
	/* Counted as check counts them (a broken manifest too), not by what
	 * there is to hash: the two passes name the same number of models. */
	sum.models = selected_models(c, s);
	verify_run r = { .refs = collect_refs(c, s) };
	build_jobs(s, &r);
	run_jobs(c, s, &r, cache);
	for (size_t j = 0; j < r.n; j++)
		record_result(s, &r, j, &sum);
	if (r.tot.interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	sum.blobs = r.n;
	sum.bytes_hashed = r.tot.bytes_hashed;
	sum.seconds = r.tot.seconds;
	sum.interrupted = r.tot.interrupted;
	sum.timed_out = r.tot.timed_out;
	char line[320];
	summary_line(&sum, line, sizeof line);
	report_findings(c, s, line, &sum, first);
	free_run(&r);
}

/* The cache is ours, never the store's. Returns false on a --cache inside
 * a store; *cache NULL: going on without one. */
static bool open_cache(cli *c, oa_verify_cache **cache)
{
	*cache = NULL;
	if (c->cache_path && cli_refuse_store_path(c, "--cache", c->cache_path))
		return false;
	char err[512];
	*cache = oa_verify_cache_open(c->cache_path, err, sizeof err);
	if (!*cache)
		cli_err("verification cache: %s (continuing without it)", err);
	else if (*err)
		cli_err("verification cache: %s", err);
	if ((c->changed || c->quick) && !*cache)
		cli_err("--changed and --quick need the cache: every blob gets a full sha256");
	return true;
}

static void close_cache(cli *c, oa_verify_cache *cache)
{
	if (!cache)
		return;
	char err[512];
	if (oa_verify_cache_dirty(cache) && oa_verify_cache_save(cache, err, sizeof err) < 0) {
		cli_err("cannot save the verification cache: %s", err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
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
	report_finish(c, OA_SCHEMA_VERIFY, !first);
	sigaction(SIGINT, &old, NULL);
	if (interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	cli_close_stores(st, n);
	return c->exit_code;
}
