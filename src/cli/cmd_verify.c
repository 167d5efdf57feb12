/* cmd_verify.c - `ollama-audit verify`: sha256 of every referenced blob. */
#include "report_common.h"
#include "cli_multi.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "base/util.h"
#include "ollama_audit/verify.h"
#include "base/platform.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static bool has_finding(const oa_findings *fs, const char *code, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (strcmp(fs->v[i].code, code) == 0 && fs->v[i].path && strcmp(fs->v[i].path, path) == 0)
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
	        progress_label(p, label));
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

	char err[512];
	/* The cache is ours, never the store's: refuse a --cache inside a store. */
	if (c->cache_path && cli_refuse_store_path(c, "--cache", c->cache_path)) {
		cli_close_stores(st, n);
		return c->exit_code | OA_EXIT_USAGE;
	}
	oa_verify_cache *cache = oa_verify_cache_open(c->cache_path, err, sizeof err);
	if (!cache)
		cli_err("verification cache: %s (continuing without it)", err);
	else if (*err)
		cli_err("verification cache: %s", err);
	if ((c->changed || c->quick) && !cache)
		cli_err("--changed and --quick need the cache: every blob gets a full sha256");

	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		if (!check_args_resolve(c, s))
			continue;
		/* Structure findings that a content pass cannot do without. */
		oa_findings keep = { 0 };
		for (size_t j = 0; j < s->findings.n; j++) {
			oa_finding *f = &s->findings.v[j];
			if (strcmp(f->code, "missing-blob") == 0 || strcmp(f->code, "missing-config") == 0 ||
			    strcmp(f->code, "invalid-digest") == 0 ||
			    strcmp(f->code, "unreadable") == 0 || strcmp(f->code, "invalid-manifest") == 0)
				oa_findings_add_sev(&keep, f->id, f->severity, f->model, f->digest, f->path,
				                    "%s", f->message);
		}
		oa_findings_free(&s->findings);
		s->findings = keep;

		job_ref *refs = oa_xcalloc(s->n_blobs, sizeof *refs);
		size_t models = 0;
		for (size_t j = 0; j < s->n_models; j++) {
			const oa_model *m = &s->models[j];
			if (!model_selected(c, s, m->display) || !m->manifest_ok)
				continue;
			models++;
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
		size_t njobs = 0;
		for (size_t b = 0; b < s->n_blobs; b++)
			njobs += refs[b].blob != NULL;
		oa_verify_job *jobs = oa_xcalloc(njobs, sizeof *jobs);
		job_ref **jr = oa_xcalloc(njobs, sizeof *jr);
		char **paths = oa_xcalloc(njobs, sizeof *paths);
		size_t k = 0;
		for (size_t b = 0; b < s->n_blobs; b++) {
			if (!refs[b].blob)
				continue;
			paths[k] = oa_xasprintf("%s/blobs/%s", s->root, refs[b].blob->name);
			jobs[k].path = paths[k];
			memcpy(jobs[k].expected_hex, refs[b].blob->hex, 65);
			jobs[k].expected_size = refs[b].declared >= 0 ? (uint64_t)refs[b].declared
			                                              : OA_VERIFY_SIZE_UNKNOWN;
			jr[k] = &refs[b];
			k++;
		}
		oa_verify_opts opts;
		oa_verify_opts_init(&opts);
		opts.jobs = c->jobs;
		opts.mode = c->quick ? OA_VERIFY_QUICK : OA_VERIFY_SHA256;
		opts.max_duration = c->max_duration;
		opts.interrupt = &interrupted;
		opts.cache = cache;
		opts.changed_only = c->changed;
		progress_ctx pctx = { oa_now(), jobs, jr, njobs };
		if (c->progress) {
			opts.progress = progress;
			opts.progress_ctx = &pctx;
		}
		oa_verify_result *res = oa_xcalloc(njobs, sizeof *res);
		oa_verify_totals tot;
		memset(&tot, 0, sizeof tot);
		if (oa_verify_run(jobs, njobs, &opts, res, &tot, err, sizeof err) < 0) {
			cli_err("%s: verify failed: %s", s->root, err);
			c->exit_code |= OA_EXIT_OPERATIONAL;
		}
		if (c->progress)
			fputs("\r\033[K", stderr);
		size_t done = 0, not_done = 0, skipped = 0;
		for (size_t j = 0; j < njobs; j++) {
			const oa_verify_result *r = &res[j];
			const char *model = jr[j]->model ? jr[j]->model->display : NULL;
			char digest[72], path[96];
			snprintf(digest, sizeof digest, "sha256:%s", jobs[j].expected_hex);
			snprintf(path, sizeof path, "blobs/%s", jr[j]->blob->name);
			switch (r->status) {
			case OA_VERIFY_OK: done++; break;
			case OA_VERIFY_SKIPPED_UNCHANGED: skipped++; break;
			case OA_VERIFY_NOT_DONE: not_done++; break;
			case OA_VERIFY_DIGEST_MISMATCH:
				done++;
				add_blob_finding(s, jr[j]->blob, jr[j]->model, OA_FINDING_DIGEST_MISMATCH, digest, path,
				                 "content hashes to sha256:%s", r->sha256_hex);
				break;
			case OA_VERIFY_FINGERPRINT_MISMATCH:
				done++;
				add_blob_finding(s, jr[j]->blob, jr[j]->model, OA_FINDING_FINGERPRINT_MISMATCH, digest, path,
				                 "content changed since it was verified (XXH3-128 %s); run verify without --quick",
				                 r->xxh128_hex);
				break;
			case OA_VERIFY_SIZE_MISMATCH:
				done++;
				oa_findings_add(&s->findings, r->st.size == 0 ? OA_FINDING_EMPTY_BLOB : OA_FINDING_SIZE_MISMATCH,
				                model, digest, path, "%llu bytes on disk; the manifest declares %llu",
				                (unsigned long long)r->st.size,
				                (unsigned long long)jobs[j].expected_size);
				break;
			case OA_VERIFY_MISSING:
				oa_findings_add(&s->findings, OA_FINDING_MISSING_BLOB, model, digest, path,
				                "blob disappeared during verify");
				break;
			default:
				/* The structure pass may already have said so (a config or
				 * template it could not read): say it once. */
				if (!has_finding(&s->findings, "unreadable", path))
					oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, model, digest, path, "%s",
					                strerror(r->err ? r->err : EIO));
				break;
			}
		}
		if (tot.interrupted)
			c->exit_code |= OA_EXIT_INTERRUPTED;
		char total[32], rate[32], line[320];
		oa_human_bytes((int64_t)tot.bytes_hashed, total, sizeof total);
		oa_human_bytes(tot.seconds > 0 ? (int64_t)((double)tot.bytes_hashed / tot.seconds) : 0,
		               rate, sizeof rate);
		int len = snprintf(line, sizeof line, "%zu model%s, %zu blob%s, %s verified in %.1f s (%s/s)",
		                   models, models == 1 ? "" : "s", njobs, njobs == 1 ? "" : "s", total,
		                   tot.seconds, rate);
		if (skipped)
			len += snprintf(line + len, sizeof line - (size_t)len, ", %zu unchanged skipped", skipped);
		if (not_done)
			snprintf(line + len, sizeof line - (size_t)len, ", %zu not done (%s)", not_done,
			         tot.interrupted ? "interrupted" : "time budget");
		json_t *summary = json_pack("{s:I,s:I,s:I,s:I,s:I,s:f,s:b,s:b}", "models", (json_int_t)models,
		                            "blobs", (json_int_t)njobs, "bytes_hashed", (json_int_t)tot.bytes_hashed,
		                            "skipped_unchanged", (json_int_t)skipped, "not_done", (json_int_t)not_done,
		                            "seconds", tot.seconds, "interrupted", tot.interrupted,
		                            "timed_out", tot.timed_out);
		report_findings(c, s, OA_SCHEMA_VERIFY, line, summary, first);
		json_decref(summary);
		first = false;
		for (size_t j = 0; j < njobs; j++)
			free(paths[j]);
		free(paths);
		free(jobs);
		free(jr);
		free(refs);
		free(res);
	}
	if (cache) {
		if (oa_verify_cache_dirty(cache) && oa_verify_cache_save(cache, err, sizeof err) < 0) {
			cli_err("cannot save the verification cache: %s", err);
			c->exit_code |= OA_EXIT_OPERATIONAL;
		}
		oa_verify_cache_close(cache);
	}
	report_finish(c, OA_SCHEMA_VERIFY, !first);
	sigaction(SIGINT, &old, NULL);
	if (interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	cli_close_stores(st, n);
	return c->exit_code;
}
