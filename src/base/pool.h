/*
 * pool.h - run independent pieces of work on several threads: item i of n
 * is fn(ctx, i), which writes only what belongs to item i (a slot of an
 * array sized beforehand), so the result does not depend on which thread
 * ran what, or in which order. The caller orders and reports afterwards.
 */
#ifndef OLLAMA_AUDIT_POOL_H
#define OLLAMA_AUDIT_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Fewer items than this run on the calling thread alone: starting threads
 * costs more than such a batch (and a small store stays single-threaded). */
#define OA_POOL_MIN_PARALLEL 32

/* How many threads oa_pool_run would use for jobs (0: one per online CPU). */
int oa_pool_threads(int jobs);

/* fn(ctx, i) for every i in [0, n), on up to `jobs` threads (0: one per
 * online CPU), the calling thread being one of them. With one thread, fewer
 * than min_parallel items, or no thread that can start, the calling thread
 * runs them all, in order. */
void oa_pool_run(int jobs, size_t n, size_t min_parallel, void (*fn)(void *ctx, size_t i), void *ctx);

/* One piece of work beside the caller's: fn(ctx) on a thread of its own,
 * started by oa_task_start and waited for by oa_task_wait. When no thread
 * can start, oa_task_wait runs it on the calling thread: either way it has
 * run once oa_task_wait returns. What fn writes belongs to it until then. */
typedef struct oa_task {
	void (*fn)(void *ctx);
	void *ctx;
	pthread_t tid;
	bool started, done;
} oa_task;

/* Start fn(ctx) on a thread of its own. */
void oa_task_start(oa_task *t, void (*fn)(void *ctx), void *ctx);
/* Wait for it (or run it now when its thread did not start); once is
 * enough, again does nothing. */
void oa_task_wait(oa_task *t);

#endif
