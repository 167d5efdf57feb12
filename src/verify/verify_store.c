/* verify_store.c - verify's findings about a store: hash what the selected
 * models reference (oa_verify_store), and what an earlier verify found
 * about files that have not changed since (oa_verify_cached_findings). */
#include "ollama_audit/verify_store.h"
#include "ollama_audit/humanize.h"
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool has_finding(const oa_findings *fs, oa_finding_code id, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].id == id && fs->v[i].path && strcmp(fs->v[i].path, path) == 0)
			return true;
	return false;
}

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
static void add_blob_finding(oa_store *s, const oa_blob *b, const oa_model *fallback, oa_finding_code code,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_blob_finding(oa_store *s, const oa_blob *b, const oa_model *fallback, oa_finding_code code,
                             const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = oa_xvasprintf(fmt, ap);
	va_end(ap);
	char *digest = oa_xasprintf("sha256:%s", b->hex);
	char *path = oa_xasprintf("blobs/%s", b->name);
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
	free(path);
	free(digest);
	free(msg);
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

typedef struct job_ref {
	const oa_model *model; /* the first model that references the blob, or NULL */
	oa_blob *blob;
	int64_t declared;
} job_ref;

/* The blobs to hash, per blob of the store: the selected models' layers and
 * configs (the first model that references one names it), with `all` every
 * other valid blob too. */
static job_ref *collect_refs(const oa_store *s, const bool *selected, bool all)
{
	job_ref *refs = oa_xcalloc(s->n_blobs + 1, sizeof *refs);
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *m = &s->models[j];
		if ((selected && !selected[j]) || !m->manifest_ok)
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
	if (all)
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
	oa_verify_progress_fn progress; /* the caller's, given model names */
	void *progress_ctx;
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

/* The engine names the blob it started last by its path; the caller gets
 * the model that blob belongs to, which is what a user recognises. */
static void progress_by_model(void *ctx, uint64_t done, uint64_t total, const char *path)
{
	const verify_run *r = ctx;
	const char *label = "";
	for (size_t j = 0; path && j < r->n; j++)
		if (r->jobs[j].path == path)
			label = r->jr[j]->model ? r->jr[j]->model->display : r->jr[j]->blob->name;
	r->progress(r->progress_ctx, done, total, label);
}

/* What one job's result says about its blob, as a finding; tallies the
 * jobs skipped and not done. */
static void record_result(oa_store *s, const verify_run *r, size_t j, oa_verify_store_result *out)
{
	const oa_verify_result *res = &r->res[j];
	const job_ref *ref = r->jr[j];
	const char *model = ref->model ? ref->model->display : NULL;
	char digest[72], path[96];
	snprintf(digest, sizeof digest, "sha256:%s", r->jobs[j].expected_hex);
	snprintf(path, sizeof path, "blobs/%s", ref->blob->name);
	switch (res->status) {
	case OA_VERIFY_OK: break;
	case OA_VERIFY_SKIPPED_UNCHANGED: out->skipped_unchanged++; break;
	case OA_VERIFY_NOT_DONE: out->not_done++; break;
	case OA_VERIFY_DIGEST_MISMATCH:
		add_blob_finding(s, ref->blob, ref->model, OA_FINDING_DIGEST_MISMATCH, "content hashes to sha256:%s",
		                 res->sha256_hex);
		break;
	case OA_VERIFY_FINGERPRINT_MISMATCH:
		add_blob_finding(s, ref->blob, ref->model, OA_FINDING_FINGERPRINT_MISMATCH,
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

int oa_verify_store(oa_store *s, const oa_verify_store_opts *o, oa_verify_store_result *out, char *err,
                    size_t errlen)
{
	memset(out, 0, sizeof *out);
	keep_structure_findings(s);
	verify_run r = { .refs = collect_refs(s, o->selected, o->all) };
	build_jobs(s, &r);
	oa_verify_opts run = o->run;
	if (run.progress) {
		r.progress = run.progress;
		r.progress_ctx = run.progress_ctx;
		run.progress = progress_by_model;
		run.progress_ctx = &r;
	}
	int rc = oa_verify_run(r.jobs, r.n, &run, r.res, &out->tot, err, errlen);
	for (size_t j = 0; j < r.n; j++)
		record_result(s, &r, j, out);
	out->blobs = r.n;
	free_run(&r);
	return rc;
}

/* Is the cache's failure about b, the file in the store now? Only when the
 * scan's file is the one verify read (same dev, ino) and its stamp (size,
 * mtime, ctime) is still the one verify saw. */
static bool failed_still(const oa_store *s, const oa_blob *b, oa_verify_cache *vc, oa_verify_cache_entry *e)
{
	if (b->cls != OA_BLOB_VALID || !b->stat_ok || b->is_symlink ||
	    !oa_verify_cache_lookup_file(vc, b->hex, (uint64_t)b->st.dev, (uint64_t)b->st.ino, e) ||
	    !e->failed[0])
		return false;
	char *path = oa_xasprintf("%s/blobs/%s", s->root, b->name);
	oa_file_stamp now;
	bool there = oa_file_stamp_of(path, &now) == 0;
	free(path);
	return there && oa_verify_cache_judge(vc, b->hex, &now, e) == OA_VSTATE_FAILED;
}

void oa_verify_cached_findings(oa_store *s, oa_verify_cache *vc)
{
	for (size_t i = 0; vc && i < s->n_blobs; i++) {
		const oa_blob *b = &s->blobs[i];
		oa_verify_cache_entry e;
		if (!failed_still(s, b, vc, &e))
			continue;
		char when[64];
		oa_iso8601((time_t)e.verified_at, 0, when, sizeof when);
		oa_finding_code code = strcmp(e.failed, "fingerprint-mismatch") == 0 ? OA_FINDING_FINGERPRINT_MISMATCH
		                                                                    : OA_FINDING_DIGEST_MISMATCH;
		add_blob_finding(s, b, NULL, code,
		                 "verify found this file corrupt at %s and it has not changed since (the "
		                 "verification cache; check hashes nothing): `ollama pull` fetches it again", when);
	}
}
