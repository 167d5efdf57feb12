/* pool.c - a small pool of pthreads over an atomic item counter (pool.h). */
#include "base/pool.h"
#include "base/platform.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* The most threads one run starts, whatever --jobs or the CPU count says. */
#define POOL_MAX_THREADS 64

typedef struct pool_run {
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t n;
	atomic_size_t next;
} pool_run;

static void *pool_worker(void *arg)
{
	pool_run *r = arg;
	for (size_t i; (i = atomic_fetch_add(&r->next, 1)) < r->n;)
		r->fn(r->ctx, i);
	return NULL;
}

int oa_pool_threads(int jobs)
{
	int t = jobs > 0 ? jobs : oa_online_cpus();
	return t < 1 ? 1 : t > POOL_MAX_THREADS ? POOL_MAX_THREADS : t;
}

void oa_pool_run(int jobs, size_t n, size_t min_parallel, void (*fn)(void *ctx, size_t i), void *ctx)
{
	int threads = oa_pool_threads(jobs);
	if ((size_t)threads > n)
		threads = (int)n;
	if (threads <= 1 || n < min_parallel) {
		for (size_t i = 0; i < n; i++)
			fn(ctx, i);
		return;
	}
	pool_run r = { .fn = fn, .ctx = ctx, .n = n };
	atomic_init(&r.next, 0);
	pthread_t tid[POOL_MAX_THREADS];
	int started = 0;
	for (int t = 1; t < threads; t++) {
		if (pthread_create(&tid[started], NULL, pool_worker, &r) != 0)
			break; /* fewer threads: the others take its items */
		started++;
	}
	pool_worker(&r);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}

static void *task_main(void *arg)
{
	oa_task *t = arg;
	t->fn(t->ctx);
	return NULL;
}

void oa_task_start(oa_task *t, void (*fn)(void *ctx), void *ctx)
{
	*t = (oa_task){ .fn = fn, .ctx = ctx };
	t->started = pthread_create(&t->tid, NULL, task_main, t) == 0;
}

void oa_task_wait(oa_task *t)
{
	if (t->done)
		return;
	t->done = true;
	if (t->started)
		pthread_join(t->tid, NULL);
	else
		t->fn(t->ctx);
}
