/* verify_store.c - verify's findings about a store: hash what the selected
 * models reference (oa_verify_store), and what an earlier verify found
 * about files that have not changed since (oa_verify_cached_findings). */
#include "ollama_audit/verify_store.h"
#include "ollama_audit/humanize.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Jobs handed to the engine at a time: its arrays (a job, its path and its
 * result, ~400 bytes a blob) are a batch's, not every blob's (8 MB over the
 * 20,000 blobs of a store of 10,000 tags, issue 21). The batches take the
 * blobs largest first, as the engine takes the jobs of one. */
#define VERIFY_BATCH 1024

/* A job's place in the order the batches take: largest first. */
typedef struct job_order {
	uint64_t planned;
	uint32_t j;
} job_order;

/* What record_result needs of a job's result, kept across the batches in
 * 16 bytes. */
typedef struct job_done {
	union {
		char *hex;      /* digest or fingerprint mismatch: the content's SHA-256 or
		                   XXH3-128 (owned) */
		uint64_t size;  /* size mismatch: the size on disk the engine saw */
	} u;
	int err;
	unsigned char status;   /* oa_verify_status */
} job_done;

/* One store's hashing: the jobs, the batch the engine has, what came back. */
typedef struct verify_run {
	const job_ref *refs;    /* per blob of the store */
	size_t n;
	uint32_t *blob;         /* per job (blob order): its blob, the index in refs */
	uint32_t *order;        /* the jobs, largest first */
	job_done *done;         /* per job */
	const oa_verify_opts *o; /* the caller's */
	/* the batch: */
	oa_verify_job *jobs;
	char **paths;           /* per job of the batch: owned path */
	size_t *idx;            /* per job of the batch: the job */
	size_t nb;
	bool one_batch;         /* every job in one: the engine's progress totals as they are */
	uint64_t done_before;   /* bytes of the batches before this one */
	uint64_t total;         /* planned bytes of every job */
} verify_run;

static int by_planned_desc(const void *a, const void *b)
{
	const job_order *x = a, *y = b;
	if (x->planned != y->planned)
		return x->planned > y->planned ? -1 : 1;
	return x->j < y->j ? -1 : x->j > y->j;
}

/* A job's bytes for the order and progress: its declared size, else the
 * size the scan saw. */
static uint64_t planned_of(const job_ref *ref)
{
	const oa_blob *b = ref->blob;
	return ref->declared >= 0 ? (uint64_t)ref->declared :
	       b->stat_ok && S_ISREG(b->st.mode) ? (uint64_t)b->st.size : 0;
}

/* The job of order[at]'s ref. */
static const job_ref *ref_at(const verify_run *r, size_t at)
{
	return &r->refs[r->blob[r->order[at]]];
}

/* The jobs of refs (each blob with a ref, in blob order) and their order. */
static void plan_jobs(const oa_store *s, const job_ref *refs, verify_run *r)
{
	r->refs = refs;
	r->n = 0;
	for (size_t b = 0; b < s->n_blobs; b++)
		r->n += refs[b].blob != NULL;
	r->blob = oa_xcalloc(r->n + 1, sizeof *r->blob);
	r->order = oa_xcalloc(r->n + 1, sizeof *r->order);
	r->done = oa_xcalloc(r->n + 1, sizeof *r->done);
	job_order *ord = oa_xcalloc(r->n + 1, sizeof *ord);
	uint32_t k = 0;
	for (size_t b = 0; b < s->n_blobs; b++) {
		if (!refs[b].blob)
			continue;
		r->blob[k] = (uint32_t)b;
		ord[k] = (job_order){ planned_of(&refs[b]), k };
		r->total += ord[k].planned;
		k++;
	}
	qsort(ord, r->n, sizeof *ord, by_planned_desc);
	for (size_t i = 0; i < r->n; i++)
		r->order[i] = ord[i].j;
	free(ord);
	r->one_batch = r->n <= VERIFY_BATCH;
}

/* Hand the engine's arrays the batch of order[at..at+nb). */
static void build_batch(const oa_store *s, verify_run *r, size_t at, size_t nb)
{
	r->nb = nb;
	for (size_t i = 0; i < nb; i++) {
		const job_ref *ref = ref_at(r, at + i);
		r->paths[i] = oa_xasprintf("%s/blobs/%s", s->root, ref->blob->name);
		r->jobs[i] = (oa_verify_job){ .path = r->paths[i],
		                              .expected_size = ref->declared >= 0 ? (uint64_t)ref->declared :
		                                                                    OA_VERIFY_SIZE_UNKNOWN };
		memcpy(r->jobs[i].expected_hex, ref->blob->hex, 65);
		r->idx[i] = r->order[at + i];
	}
}

/* Keep of a batch's results what record_result needs; free its paths. */
static void keep_batch(verify_run *r, const oa_verify_result *res)
{
	for (size_t i = 0; i < r->nb; i++) {
		job_done *d = &r->done[r->idx[i]];
		d->status = (unsigned char)res[i].status;
		d->err = res[i].err;
		if (res[i].status == OA_VERIFY_DIGEST_MISMATCH)
			d->u.hex = oa_xstrdup(res[i].sha256_hex);
		else if (res[i].status == OA_VERIFY_FINGERPRINT_MISMATCH)
			d->u.hex = oa_xstrdup(res[i].xxh128_hex);
		else
			d->u.size = res[i].st.size;
		free(r->paths[i]);
		r->paths[i] = NULL;
	}
	r->nb = 0;
}

static void free_run(verify_run *r)
{
	for (size_t j = 0; j < r->n; j++)
		if (r->done[j].status == OA_VERIFY_DIGEST_MISMATCH ||
		    r->done[j].status == OA_VERIFY_FINGERPRINT_MISMATCH)
			free(r->done[j].u.hex);
	free(r->done);
	free(r->order);
	free(r->blob);
}

/* The engine names the blob it started last by its path; the caller gets
 * the model that blob belongs to, which is what a user recognises. Bytes
 * count over every batch. */
static void progress_by_model(void *ctx, uint64_t done, uint64_t total, const char *path)
{
	const verify_run *r = ctx;
	const char *label = "";
	for (size_t i = 0; path && i < r->nb; i++)
		if (r->jobs[i].path == path) {
			const job_ref *ref = &r->refs[r->blob[r->idx[i]]];
			label = ref->model ? ref->model->display : ref->blob->name;
		}
	if (!r->one_batch)
		total = r->total;
	r->o->progress(r->o->progress_ctx, r->done_before + done, total, label);
}

/* The caller's on_result, given the job's index among all the jobs. */
static void result_by_job(void *ctx, size_t job_index, const oa_verify_result *res)
{
	const verify_run *r = ctx;
	r->o->on_result(r->o->result_ctx, r->idx[job_index], res);
}

static void add_totals(oa_verify_totals *tot, const oa_verify_totals *b)
{
	for (size_t k = 0; k < OA_VERIFY_STATUS_COUNT; k++)
		tot->count[k] += b->count[k];
	tot->bytes_total += b->bytes_total;
	tot->bytes_hashed += b->bytes_hashed;
	if (b->threads > tot->threads)
		tot->threads = b->threads;
	tot->interrupted |= b->interrupted;
	tot->timed_out |= b->timed_out;
}

/* Jobs order[at..) not done: a stop before their batch. */
static void rest_not_done(verify_run *r, size_t at, oa_verify_totals *tot)
{
	for (; at < r->n; at++) {
		r->done[r->order[at]].status = OA_VERIFY_NOT_DONE;
		tot->count[OA_VERIFY_NOT_DONE]++;
		tot->bytes_total += planned_of(ref_at(r, at));
	}
}

/* The engine on the jobs, a batch at a time; returns and totals what one
 * oa_verify_run on them all would: a stop (interrupt, max_duration, a
 * setup failure) leaves the batches after it not done. */
static int run_batches(const oa_store *s, verify_run *r, oa_verify_totals *tot, char *err, size_t errlen)
{
	const oa_verify_opts *o = r->o;
	double t0 = oa_now();
	size_t cap = r->n < VERIFY_BATCH ? r->n : VERIFY_BATCH;
	r->jobs = oa_xcalloc(cap + 1, sizeof *r->jobs);
	r->paths = oa_xcalloc(cap + 1, sizeof *r->paths);
	r->idx = oa_xcalloc(cap + 1, sizeof *r->idx);
	oa_verify_result *res = oa_xcalloc(cap + 1, sizeof *res);
	oa_verify_opts run = *o;
	if (o->progress) {
		run.progress = progress_by_model;
		run.progress_ctx = r;
	}
	if (o->on_result) {
		run.on_result = result_by_job;
		run.result_ctx = r;
	}
	memset(tot, 0, sizeof *tot);
	tot->jobs = r->n;
	int rc = 0;
	size_t at = 0;
	do {
		if (at > 0) {
			bool stop = o->interrupt && *o->interrupt;
			double left = o->max_duration - (oa_now() - t0);
			if (rc != 0 || stop || (o->max_duration > 0 && left <= 0)) {
				tot->interrupted |= rc == 0 && stop;
				tot->timed_out |= rc == 0 && !stop;
				rest_not_done(r, at, tot);
				rc = rc ? rc : 1;
				break;
			}
			if (o->max_duration > 0)
				run.max_duration = left;
		}
		size_t nb = r->n - at < VERIFY_BATCH ? r->n - at : VERIFY_BATCH;
		build_batch(s, r, at, nb);
		oa_verify_totals bt;
		int brc = oa_verify_run(r->jobs, nb, &run, res, &bt, err, errlen);
		keep_batch(r, res);
		add_totals(tot, &bt);
		r->done_before += bt.bytes_total;
		rc = brc < 0 || rc < 0 ? -1 : brc ? brc : rc;
		at += nb;
	} while (at < r->n);
	tot->seconds = oa_now() - t0;
	free(res);
	free(r->idx);
	free(r->paths);
	free(r->jobs);
	return rc;
}

/* What one job's result says about its blob, as a finding; tallies the
 * jobs skipped and not done. */
static void record_result(oa_store *s, const job_ref *ref, const job_done *d, oa_verify_store_result *out)
{
	const char *model = ref->model ? ref->model->display : NULL;
	char digest[72], path[96];
	snprintf(digest, sizeof digest, "sha256:%s", ref->blob->hex);
	snprintf(path, sizeof path, "blobs/%s", ref->blob->name);
	switch (d->status) {
	case OA_VERIFY_OK: break;
	case OA_VERIFY_SKIPPED_UNCHANGED: out->skipped_unchanged++; break;
	case OA_VERIFY_NOT_DONE: out->not_done++; break;
	case OA_VERIFY_DIGEST_MISMATCH:
		add_blob_finding(s, ref->blob, ref->model, OA_FINDING_DIGEST_MISMATCH, "content hashes to sha256:%s",
		                 d->u.hex);
		break;
	case OA_VERIFY_FINGERPRINT_MISMATCH:
		add_blob_finding(s, ref->blob, ref->model, OA_FINDING_FINGERPRINT_MISMATCH,
		                 "content changed since it was verified (XXH3-128 %s); run verify without --quick",
		                 d->u.hex);
		break;
	case OA_VERIFY_SIZE_MISMATCH:
		oa_findings_add(&s->findings, d->u.size == 0 ? OA_FINDING_EMPTY_BLOB : OA_FINDING_SIZE_MISMATCH,
		                model, digest, path, "%llu bytes on disk; the manifest declares %llu",
		                (unsigned long long)d->u.size,
		                (unsigned long long)(ref->declared >= 0 ? (uint64_t)ref->declared :
		                                                          OA_VERIFY_SIZE_UNKNOWN));
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
			                strerror(d->err ? d->err : EIO));
		break;
	}
}

int oa_verify_store(oa_store *s, const oa_verify_store_opts *o, oa_verify_store_result *out, char *err,
                    size_t errlen)
{
	memset(out, 0, sizeof *out);
	keep_structure_findings(s);
	job_ref *refs = collect_refs(s, o->selected, o->all);
	verify_run r = { .o = &o->run };
	plan_jobs(s, refs, &r);
	int rc = run_batches(s, &r, &out->tot, err, errlen);
	for (size_t j = 0; j < r.n; j++)
		record_result(s, &refs[r.blob[j]], &r.done[j], out);
	out->blobs = r.n;
	free_run(&r);
	free(refs);
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
		oa_finding_code code = oa_finding_code_of(e.failed) == OA_FINDING_FINGERPRINT_MISMATCH
		                       ? OA_FINDING_FINGERPRINT_MISMATCH : OA_FINDING_DIGEST_MISMATCH;
		add_blob_finding(s, b, NULL, code,
		                 "verify found this file corrupt at %s and it has not changed since (the "
		                 "verification cache; check hashes nothing): `ollama-audit repair` mends it", when);
	}
}
