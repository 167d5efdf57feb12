/* verify.c - see verify.h. */
#include "ollama_audit/verify.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define MAX_THREADS 256
#define MIN_BUFFER (64u << 10)
#define MAX_BUFFER (256u << 20)

struct run {
	const oa_verify_job *jobs;
	size_t n;
	const oa_verify_opts *o;
	oa_verify_result *res;
	size_t *order;     /* job indexes, largest first */
	uint64_t *planned; /* planned bytes per job */
	EVP_MD *md;
	size_t bufsize;
	size_t drop_chunk; /* page-cache hygiene grid, see drop_chunk_size() */
	double deadline;   /* oa_now() value, 0 = none */

	atomic_size_t next;         /* next position in order[] */
	atomic_uint_fast64_t done;  /* progress bytes */
	atomic_uint_fast64_t hashed;
	atomic_size_t last_started; /* job index + 1, 0 = none */
	atomic_int stop;            /* bit 1 = interrupted, bit 2 = timed out */

	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running;
};

struct worker {
	struct run *r;
	pthread_t tid;
	unsigned char *buf;
	unsigned char *dropvec; /* 2 × drop_chunk / page size: see struct dropper */
	EVP_MD_CTX *ctx;
	XXH3_state_t *xxh;
};


const char *oa_verify_status_name(oa_verify_status s)
{
	switch (s) {
	case OA_VERIFY_NOT_DONE: return "not-done";
	case OA_VERIFY_OK: return "ok";
	case OA_VERIFY_DIGEST_MISMATCH: return "digest-mismatch";
	case OA_VERIFY_FINGERPRINT_MISMATCH: return "fingerprint-mismatch";
	case OA_VERIFY_SIZE_MISMATCH: return "size-mismatch";
	case OA_VERIFY_MISSING: return "missing";
	case OA_VERIFY_UNREADABLE: return "unreadable";
	case OA_VERIFY_SKIPPED_UNCHANGED: return "skipped-unchanged";
	case OA_VERIFY_ERROR: return "error";
	case OA_VERIFY_STATUS_COUNT: break;
	}
	return "?";
}

bool oa_verify_status_is_failure(oa_verify_status s)
{
	return s == OA_VERIFY_DIGEST_MISMATCH || s == OA_VERIFY_FINGERPRINT_MISMATCH ||
	       s == OA_VERIFY_SIZE_MISMATCH || s == OA_VERIFY_MISSING || s == OA_VERIFY_UNREADABLE;
}

void oa_verify_opts_init(oa_verify_opts *o)
{
	memset(o, 0, sizeof *o);
	o->mode = OA_VERIFY_SHA256;
	o->progress_interval = 0.1;
	o->buffer_size = OA_VERIFY_DEFAULT_BUFFER;
	o->racy_window = OA_VERIFY_DEFAULT_RACY_WINDOW;
}

static void to_hex(const unsigned char *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Lowercase copy of a 64-hex digest; false when it is not one. */
static bool norm_hex64(const char *in, oa_digest_hex out)
{
	for (int i = 0; i < 64; i++) {
		char ch = in[i];
		if (ch >= 'A' && ch <= 'F')
			ch = (char)(ch - 'A' + 'a');
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
		out[i] = ch;
	}
	out[64] = '\0';
	return in[64] == '\0';
}

static void stamp_from_stat(const struct stat *st, oa_file_stamp *s)
{
	s->dev = (uint64_t)st->st_dev;
	s->ino = (uint64_t)st->st_ino;
	s->size = (uint64_t)st->st_size;
	s->mtime_ns = oa_stat_mtime_ns(st);
	s->ctime_ns = oa_stat_ctime_ns(st);
}


/* True when the run must stop; records why. Cheap: an atomic load, a
 * volatile load and (with a deadline) a vDSO clock read. */
static bool should_stop(struct run *r)
{
	if (atomic_load_explicit(&r->stop, memory_order_relaxed))
		return true;
	if (r->o->interrupt && *r->o->interrupt) {
		atomic_fetch_or(&r->stop, 1);
		return true;
	}
	if (r->deadline > 0 && oa_now() >= r->deadline) {
		atomic_fetch_or(&r->stop, 2);
		return true;
	}
	return false;
}

/* A mismatch makes the cached stat of this very file worthless: forget it so
 * changed_only re-checks (and re-reports) it. The entries of other copies of
 * the same digest (other dev/ino) stay. */
static void cache_forget(struct run *r, const char *hex, const oa_file_stamp *st)
{
	oa_verify_cache_remove_file(r->o->cache, hex, st->dev, st->ino);
}

/* Page-cache hygiene: drop exactly the pages a verify brought into the page
 * cache, keep the ones the machine already had (a model in use).
 *
 * The file is cut into chunks of r->drop_chunk bytes at multiples of it from
 * the file start, a grid independent of the read size. Before a chunk is
 * read we note which of its pages are resident (mincore, one byte a page);
 * once the reads have passed its end, we drop the runs of pages that were
 * not. Only the current chunk and the next one have a residency vector, so
 * memory is 2 × chunk / page size bytes per worker, whatever the blob size.
 *
 * When to sample: our own sequential read-ahead fills pages ahead of the
 * read position, and must not count as "the machine had it". Chunks 0 and 1
 * are sampled before the first read. Chunk c+2 is sampled right after a read
 * carries `off` past the end of chunk c, so off < end(c) + B (B = read
 * size). Linux keeps at most two read-ahead windows ahead of the reader (the
 * one being consumed and the async one started at its marker), each at most
 * max_pages = max(read-ahead, min(request, max_sectors_kb)); with
 * read_ahead_kb = 8 MiB (a common disk setting, and this project's test VM),
 * doubled by POSIX_FADV_SEQUENTIAL, the read-ahead is 16 MiB,
 * so the cached frontier is below off + 2 × max(16 MiB, B). Chunk c+2 starts
 * at end(c) + CHUNK, and CHUNK = 3B + 32 MiB >= B + 2 × max(16 MiB, B):
 * nothing we read or read ahead can have reached it when it is sampled.
 * (A device whose read-ahead exceeds 16 MiB after the doubling can make us
 * keep some of our own pages; it never makes us drop the machine's.)
 *
 * CHUNK is rounded to 16 MiB so that chunk edges fall on large-folio edges
 * (2 MiB with 4 KiB pages): DONTNEED leaves a folio that straddles the end
 * of a range, and a straddling folio at a chunk edge would belong to neither.
 *
 * Pages whose residency is unknown (no mincore, or an error) are dropped as
 * far as we read them. At the end, or when the file is abandoned, the current
 * and next chunks' non-resident runs are dropped whole: that includes what
 * read-ahead brought in past the last read. */
#define DROP_ROUND ((size_t)16 << 20)

static size_t drop_chunk_size(size_t bufsize)
{
	size_t c = 3 * bufsize + ((size_t)32 << 20);
	return (c + DROP_ROUND - 1) / DROP_ROUND * DROP_ROUND;
}

struct dropper {
	int fd;
	bool open;
	uint64_t size;      /* of the file, at fstat */
	uint64_t chunk;     /* bytes per chunk, a multiple of the page size */
	size_t pg;
	size_t vec_pages;   /* chunk / pg: capacity of each vector */
	uint64_t start;     /* of the current chunk */
	int cur;            /* vec[cur] is the current chunk's, vec[!cur] the next's */
	long pages[2];      /* pages sampled, -1 = unknown */
	unsigned char *vec[2];
};

static void drop_sample(struct dropper *d, int which, uint64_t at)
{
	d->pages[which] = -1;
	if (at >= d->size)
		return;
	uint64_t left = d->size - at;
	size_t len = left < d->chunk ? (size_t)left : (size_t)d->chunk;
	d->pages[which] = oa_range_residency(d->fd, at, len, d->vec[which], d->vec_pages);
}

static void drop_begin(struct dropper *d, int fd, uint64_t size, size_t chunk, unsigned char *vec)
{
	d->fd = fd;
	d->size = size;
	d->chunk = chunk;
	d->pg = oa_page_size();
	d->vec_pages = chunk / d->pg;
	d->vec[0] = vec;
	d->vec[1] = vec + d->vec_pages;
	d->start = 0;
	d->cur = 0;
	drop_sample(d, 0, 0);
	drop_sample(d, 1, chunk);
	d->open = true;
}

/* Drop what we brought into the chunk at `cs` sampled in vec[which]: its
 * non-resident runs, and, where it was not sampled (unknown, or past the size
 * we sampled against), what we read of it: [cs, min(read_end, chunk end)). */
static void drop_runs(struct dropper *d, int which, uint64_t cs, uint64_t read_end)
{
	uint64_t ce = cs + d->chunk;
	uint64_t re = read_end < ce ? read_end : ce;
	long n = d->pages[which];
	if (n < 0) {
		if (re > cs)
			oa_advise_dontneed(d->fd, (off_t)cs, (off_t)(re - cs));
		return;
	}
	const unsigned char *v = d->vec[which];
	for (long i = 0; i < n;) {
		if (v[i]) {
			i++;
			continue;
		}
		long j = i;
		while (j < n && !v[j])
			j++;
		oa_advise_dontneed(d->fd, (off_t)(cs + (uint64_t)i * d->pg),
		                   (off_t)((uint64_t)(j - i) * d->pg));
		i = j;
	}
	uint64_t se = cs + (uint64_t)n * d->pg; /* the file grew while we read it */
	if (re > se)
		oa_advise_dontneed(d->fd, (off_t)se, (off_t)(re - se));
}

/* After a read that brought the position to `off`. */
static void drop_advance(struct dropper *d, uint64_t off)
{
	while (d->open && off >= d->start + d->chunk) {
		drop_runs(d, d->cur, d->start, off);
		d->cur = !d->cur;
		d->start += d->chunk;
		drop_sample(d, !d->cur, d->start + d->chunk);
	}
}

/* Done with the file (read to the end, failed, or abandoned at `off`). */
static void drop_end(struct dropper *d, uint64_t off)
{
	if (!d->open)
		return;
	d->open = false;
	drop_runs(d, d->cur, d->start, off);
	drop_runs(d, !d->cur, d->start + d->chunk, off);
}

/* The open file is a regular file of the expected size; else the status says
 * why not. */
static bool check_file(struct run *r, const oa_verify_job *job, int fd, const char *hex,
                       oa_verify_result *res)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0) {
		res->err = errno;
		res->status = OA_VERIFY_UNREADABLE;
		return false;
	}
	stamp_from_stat(&sb, &res->st);
	res->stat_valid = true;
	if (!S_ISREG(sb.st_mode)) {
		res->err = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
		res->status = OA_VERIFY_UNREADABLE;
		return false;
	}
	if (job->expected_size != OA_VERIFY_SIZE_UNKNOWN && job->expected_size != res->st.size) {
		res->status = OA_VERIFY_SIZE_MISMATCH;
		cache_forget(r, hex, &res->st);
		return false;
	}
	return true;
}

/* Read the whole file through the fingerprint (and sha256 unless quick),
 * dropping what was read from the page cache as it goes. False with the
 * status set when it stopped early. */
static bool hash_file(struct worker *w, int fd, bool quick, struct dropper *dr, oa_verify_result *res)
{
	struct run *r = w->r;
	if (!quick && EVP_DigestInit_ex(w->ctx, r->md, NULL) != 1) {
		res->status = OA_VERIFY_ERROR;
		return false;
	}
	if (XXH3_128bits_reset(w->xxh) == XXH_ERROR) {
		res->status = OA_VERIFY_ERROR;
		return false;
	}
	oa_advise_sequential(fd);
	uint64_t off = 0;
	drop_begin(dr, fd, res->st.size, r->drop_chunk, w->dropvec);
	for (;;) {
		if (should_stop(r)) {
			res->status = OA_VERIFY_NOT_DONE; /* abandoned at a chunk boundary */
			return false;
		}
		ssize_t got = oa_read_full(fd, w->buf, r->bufsize);
		if (got < 0) {
			res->err = errno;
			res->status = OA_VERIFY_UNREADABLE;
			return false;
		}
		if (got == 0)
			break;
		if (!quick && EVP_DigestUpdate(w->ctx, w->buf, (size_t)got) != 1) {
			res->status = OA_VERIFY_ERROR;
			return false;
		}
		if (XXH3_128bits_update(w->xxh, w->buf, (size_t)got) == XXH_ERROR) {
			res->status = OA_VERIFY_ERROR;
			return false;
		}
		off += (uint64_t)got;
		drop_advance(dr, off);
		res->bytes_hashed = off;
		atomic_fetch_add_explicit(&r->done, (uint_fast64_t)got, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->hashed, (uint_fast64_t)got, memory_order_relaxed);
		if ((size_t)got < r->bufsize)
			break;
	}
	drop_end(dr, off);
	XXH128_canonical_t canon;
	XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(w->xxh));
	to_hex(canon.digest, sizeof canon.digest, res->xxh128_hex);
	return true;
}

/* Remember what this file was found to be (failed: "" good, else the
 * finding code), when it did not change while it was read: a change would
 * leave the stamp describing content we did not hash. The result replaces
 * this file's own entry only: another store's copy of the blob keeps its
 * own, good or failed. */
static void cache_result(struct run *r, int fd, const char *hex, double read_started, const char *failed,
                         oa_verify_result *res)
{
	const oa_verify_opts *o = r->o;
	struct stat after;
	oa_file_stamp st2;
	if (failed[0])
		cache_forget(r, hex, &res->st);
	if (!o->cache || fstat(fd, &after) != 0 || res->bytes_hashed != res->st.size || !res->xxh128_hex[0])
		return;
	stamp_from_stat(&after, &st2);
	if (!oa_file_stamp_equal(&st2, &res->st))
		return;
	oa_verify_cache_entry ne;
	ne.st = res->st;
	memcpy(ne.xxh128, res->xxh128_hex, sizeof ne.xxh128);
	ne.verified_at = read_started;
	snprintf(ne.failed, sizeof ne.failed, "%s", failed);
	res->cache_updated = oa_verify_cache_update(o->cache, hex, &ne) == 0;
}

/* The sha256 against the name; a match is cached when the file did not
 * change while it was read (a change would leave the stamp describing
 * content we did not hash). */
static void judge_sha256(struct worker *w, int fd, const char *hex, double read_started,
                         oa_verify_result *res)
{
	struct run *r = w->r;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (EVP_DigestFinal_ex(w->ctx, md, &mdlen) != 1 || mdlen != 32) {
		res->status = OA_VERIFY_ERROR;
		return;
	}
	to_hex(md, 32, res->sha256_hex);
	if (strcmp(res->sha256_hex, hex) != 0) {
		res->status = OA_VERIFY_DIGEST_MISMATCH;
		cache_result(r, fd, hex, read_started, "digest-mismatch", res);
		return;
	}
	res->status = OA_VERIFY_OK;
	cache_result(r, fd, hex, read_started, "", res);
}

static void verify_one(struct worker *w, size_t i)
{
	struct run *r = w->r;
	const oa_verify_job *job = &r->jobs[i];
	const oa_verify_opts *o = r->o;
	oa_verify_result *res = &r->res[i];
	oa_digest_hex hex;
	struct dropper dr;
	memset(&dr, 0, sizeof dr);

	if (!job->path || !norm_hex64(job->expected_hex, hex)) {
		res->status = OA_VERIFY_ERROR;
		res->err = EINVAL;
		return;
	}
	/* The racy-window rule compares a file's ctime with the moment its
	 * content was first looked at, not when hashing ended: a write in the
	 * same timestamp tick as the stamp we take now leaves ctime unchanged,
	 * and a long hash must not make that moment look long ago. */
	double read_started = oa_wall_now();
	/* O_NONBLOCK: a FIFO planted in the store must not hang us. */
	int fd = oa_openat_ro(AT_FDCWD, job->path, O_NONBLOCK);
	if (fd < 0) {
		res->err = errno;
		res->status = (res->err == ENOENT || res->err == ENOTDIR) ? OA_VERIFY_MISSING
		                                                          : OA_VERIFY_UNREADABLE;
		return;
	}
	if (!check_file(r, job, fd, hex, res))
		goto out;
	oa_verify_cache_entry ce;
	/* This file's own entry, else (for --quick's fingerprint) another
	 * copy's good one. A failed entry is neither a fingerprint nor a
	 * reason to skip: the corrupt file is hashed and reported again. */
	bool own = o->cache && oa_verify_cache_lookup_file(o->cache, hex, res->st.dev, res->st.ino, &ce);
	bool cached = (own || (o->cache && oa_verify_cache_lookup(o->cache, hex, &ce))) && !ce.failed[0];
	if (cached && o->changed_only && oa_file_stamp_equal(&ce.st, &res->st) &&
	    (double)res->st.ctime_ns / 1e9 + (o->racy_window > 0 ? o->racy_window : 0) < ce.verified_at) {
		res->status = OA_VERIFY_SKIPPED_UNCHANGED;
		goto out;
	}
	bool quick = o->mode == OA_VERIFY_QUICK && cached && ce.st.size == res->st.size;
	if (!hash_file(w, fd, quick, &dr, res))
		goto out;
	if (quick) {
		res->by_fingerprint = true;
		if (strcmp(res->xxh128_hex, ce.xxh128) == 0) {
			res->status = OA_VERIFY_OK;
		} else {
			res->status = OA_VERIFY_FINGERPRINT_MISMATCH;
			cache_result(r, fd, hex, read_started, "fingerprint-mismatch", res);
		}
	} else {
		judge_sha256(w, fd, hex, read_started, res);
	}
out:
	drop_end(&dr, res->bytes_hashed);
	close(fd);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	for (;;) {
		if (should_stop(r))
			break;
		size_t k = atomic_fetch_add(&r->next, 1);
		if (k >= r->n)
			break;
		size_t i = r->order[k];
		atomic_store_explicit(&r->last_started, i + 1, memory_order_relaxed);
		verify_one(w, i);
		oa_verify_result *res = &r->res[i];
		/* Progress: count the rest of a finished job's planned bytes. */
		if (res->status != OA_VERIFY_NOT_DONE && r->planned[i] > res->bytes_hashed)
			atomic_fetch_add_explicit(&r->done, r->planned[i] - res->bytes_hashed,
			                          memory_order_relaxed);
		if (r->o->on_result)
			r->o->on_result(r->o->result_ctx, i, res);
	}
	pthread_mutex_lock(&r->mu);
	r->running--;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

struct ord {
	uint64_t size;
	size_t idx;
};

static int by_size_desc(const void *a, const void *b)
{
	const struct ord *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static void worker_free(struct worker *w)
{
	free(w->buf);
	free(w->dropvec);
	EVP_MD_CTX_free(w->ctx);
	XXH3_freeState(w->xxh);
}

static void progress(struct run *r, uint64_t total)
{
	uint64_t d = atomic_load(&r->done);
	size_t ls = atomic_load(&r->last_started);
	r->o->progress(r->o->progress_ctx, d > total ? total : d, total,
	               ls ? r->jobs[ls - 1].path : NULL);
}

/* The shared state of a run: buffer sizes, deadline, counters. */
static void run_init(struct run *r, const oa_verify_job *jobs, size_t n, const oa_verify_opts *opts,
                     oa_verify_result *results, double t0)
{
	memset(r, 0, sizeof *r);
	r->jobs = jobs;
	r->n = n;
	r->o = opts;
	r->res = results;
	size_t bs = opts->buffer_size ? opts->buffer_size : OA_VERIFY_DEFAULT_BUFFER;
	if (bs < MIN_BUFFER)
		bs = MIN_BUFFER;
	if (bs > MAX_BUFFER)
		bs = MAX_BUFFER;
	size_t pg = oa_page_size();
	r->bufsize = (bs + pg - 1) / pg * pg; /* whole pages: aligned_alloc and fadvise */
	r->drop_chunk = drop_chunk_size(r->bufsize);
	if (r->drop_chunk % pg) /* a page larger than 16 MiB */
		r->drop_chunk = (r->drop_chunk + pg - 1) / pg * pg;
	if (opts->max_duration > 0)
		r->deadline = t0 + opts->max_duration;
	atomic_init(&r->next, 0);
	atomic_init(&r->done, 0);
	atomic_init(&r->hashed, 0);
	atomic_init(&r->last_started, 0);
	atomic_init(&r->stop, 0);
}

static int thread_count(const oa_verify_opts *opts, size_t n)
{
	int nthreads = opts->jobs > 0 ? opts->jobs : oa_online_cpus();
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	if ((size_t)nthreads > n)
		nthreads = (int)n;
	return nthreads < 1 ? 1 : nthreads;
}

/* Each job's planned bytes (its expected size, or its size on disk) and the
 * order to take them in: largest first. -1 when out of memory. */
static int plan_order(struct run *r, uint64_t *bytes_total)
{
	size_t n = r->n;
	for (size_t i = 0; i < n; i++) {
		struct stat sb;
		const oa_verify_job *j = &r->jobs[i];
		if (j->expected_size != OA_VERIFY_SIZE_UNKNOWN)
			r->planned[i] = j->expected_size;
		else
			r->planned[i] = j->path && stat(j->path, &sb) == 0 && S_ISREG(sb.st_mode)
			                        ? (uint64_t)sb.st_size : 0;
		*bytes_total += r->planned[i];
	}
	struct ord *ord = malloc(n * sizeof *ord);
	if (!ord)
		return -1;
	for (size_t i = 0; i < n; i++)
		ord[i] = (struct ord){ r->planned[i], i };
	qsort(ord, n, sizeof *ord, by_size_desc);
	for (size_t i = 0; i < n; i++)
		r->order[i] = ord[i].idx;
	free(ord);
	return 0;
}

/* Start up to nthreads workers; returns how many run (a worker that cannot
 * get its buffers or thread is dropped: the run goes on with fewer). */
static int start_workers(struct run *r, struct worker *ws, int nthreads)
{
	size_t pg = oa_page_size();
	int started = 0;
	for (int t = 0; t < nthreads; t++) {
		struct worker *w = &ws[t];
		w->r = r;
		w->buf = aligned_alloc(pg, r->bufsize);
		w->dropvec = malloc(2 * (r->drop_chunk / pg));
		w->ctx = EVP_MD_CTX_new();
		w->xxh = XXH3_createState();
		pthread_mutex_lock(&r->mu);
		r->running++;
		pthread_mutex_unlock(&r->mu);
		if (!w->buf || !w->dropvec || !w->ctx || !w->xxh ||
		    pthread_create(&w->tid, NULL, worker_main, w) != 0) {
			worker_free(w);
			memset(w, 0, sizeof *w);
			pthread_mutex_lock(&r->mu);
			r->running--;
			pthread_mutex_unlock(&r->mu);
			break;
		}
		started++;
	}
	return started;
}

/* Coordinator: wait for the workers, reporting progress from this thread,
 * then join them. */
static void wait_workers(struct run *r, struct worker *ws, int started, uint64_t bytes_total)
{
	const oa_verify_opts *opts = r->o;
	double interval = opts->progress_interval > 0 ? opts->progress_interval : 0.1;
	double last = oa_now();
	pthread_mutex_lock(&r->mu);
	while (r->running > 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long ns = ts.tv_nsec + (long)(interval * 1e9);
		ts.tv_sec += ns / 1000000000L;
		ts.tv_nsec = ns % 1000000000L;
		(void)pthread_cond_timedwait(&r->cv, &r->mu, &ts);
		double now = oa_now();
		if (opts->progress && r->running > 0 && now - last >= interval * 0.999) {
			last = now;
			pthread_mutex_unlock(&r->mu);
			progress(r, bytes_total);
			pthread_mutex_lock(&r->mu);
		}
	}
	pthread_mutex_unlock(&r->mu);
	for (int t = 0; t < started; t++) {
		pthread_join(ws[t].tid, NULL);
		worker_free(&ws[t]);
	}
}

/* Hash with the workers; 0 when they ran, -1 (err set) when none could. */
static int run_workers(struct run *r, int nthreads, oa_verify_totals *tot, char *err, size_t errlen)
{
	struct worker *ws = calloc((size_t)nthreads, sizeof *ws);
	if (!ws) {
		oa_seterr(err, errlen, "out of memory");
		return -1;
	}
	if (pthread_mutex_init(&r->mu, NULL) != 0) {
		free(ws);
		oa_seterr(err, errlen, "pthread_mutex_init failed");
		return -1;
	}
	if (pthread_cond_init(&r->cv, NULL) != 0) {
		pthread_mutex_destroy(&r->mu);
		free(ws);
		oa_seterr(err, errlen, "pthread_cond_init failed");
		return -1;
	}
	int started = start_workers(r, ws, nthreads);
	if (started == 0)
		oa_seterr(err, errlen, "cannot start a verify worker (out of memory or threads)");
	else
		wait_workers(r, ws, started, tot->bytes_total);
	tot->threads = started;
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(ws);
	if (started == 0)
		return -1;
	if (r->o->progress)
		progress(r, tot->bytes_total);
	return 0;
}

/* Count the outcomes; 1 when some job was not done (stopped or timed out). */
static int finish_totals(const struct run *r, const oa_verify_result *results, oa_verify_totals *tot,
                         int rc)
{
	for (size_t i = 0; i < r->n; i++)
		tot->count[results[i].status]++;
	tot->bytes_hashed = atomic_load(&r->hashed);
	int stop = atomic_load(&r->stop);
	/* Only when it cost something: a stop seen after the last job is moot. */
	tot->interrupted = (stop & 1) && tot->count[OA_VERIFY_NOT_DONE] > 0;
	tot->timed_out = (stop & 2) && tot->count[OA_VERIFY_NOT_DONE] > 0;
	if (rc == 0 && tot->count[OA_VERIFY_NOT_DONE] > 0)
		rc = 1;
	return rc;
}

int oa_verify_run(const oa_verify_job *jobs, size_t n, const oa_verify_opts *opts,
                  oa_verify_result *results, oa_verify_totals *totals, char *err, size_t errlen)
{
	oa_verify_opts defaults;
	oa_verify_totals tot;
	double t0 = oa_now();
	int rc = 0;

	oa_seterr(err, errlen, "%s", "");
	if (!opts) {
		oa_verify_opts_init(&defaults);
		opts = &defaults;
	}
	memset(&tot, 0, sizeof tot);
	tot.jobs = n;
	if (n)
		memset(results, 0, n * sizeof *results); /* every status NOT_DONE */

	struct run r;
	run_init(&r, jobs, n, opts, results, t0);
	if (n > 0) {
		r.md = EVP_MD_fetch(NULL, "SHA256", NULL);
		r.order = malloc(n * sizeof *r.order);
		r.planned = malloc(n * sizeof *r.planned);
		if (!r.md) {
			oa_seterr(err, errlen, "OpenSSL: SHA-256 is not available");
			rc = -1;
		} else if (!r.order || !r.planned || plan_order(&r, &tot.bytes_total) < 0) {
			oa_seterr(err, errlen, "out of memory");
			rc = -1;
		} else {
			rc = run_workers(&r, thread_count(opts, n), &tot, err, errlen);
		}
	}
	rc = finish_totals(&r, results, &tot, rc);
	tot.seconds = oa_now() - t0;
	if (totals)
		*totals = tot;
	free(r.order);
	free(r.planned);
	EVP_MD_free(r.md);
	return rc;
}
