/* hashpipe.c - sha256 beside the copy (hashpipe.h). */
#include "carry/hashpipe.h"
#include "base/platform.h"
#include "base/util.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#define SLOTS 4
#define SLOT_SIZE (1u << 20)

struct hashpipe {
	unsigned char *buf;        /* SLOTS * SLOT_SIZE */
	size_t len[SLOTS];
	size_t head, tail, pending; /* the next slot to fill, the next to hash, slots handed over */
	EVP_MD_CTX *ctx;
	bool failed;               /* an EVP call failed */
	bool threaded, quit;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void hash_slot(hashpipe *h, size_t slot)
{
	if (!h->failed && EVP_DigestUpdate(h->ctx, h->buf + slot * SLOT_SIZE, h->len[slot]) != 1)
		h->failed = true;
}

static void *hasher(void *arg)
{
	hashpipe *h = arg;
	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->pending && !h->quit)
			pthread_cond_wait(&h->cv, &h->mu);
		if (!h->pending)
			break;
		size_t slot = h->tail;
		pthread_mutex_unlock(&h->mu);
		hash_slot(h, slot);
		pthread_mutex_lock(&h->mu);
		h->tail = (h->tail + 1) % SLOTS;
		h->pending--;
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

hashpipe *hashpipe_new(void)
{
	hashpipe *h = oa_xcalloc(1, sizeof *h);
	h->buf = oa_xmalloc((size_t)SLOTS * SLOT_SIZE);
	h->ctx = EVP_MD_CTX_new();
	h->failed = !h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	h->threaded = oa_online_cpus() > 1 && pthread_create(&h->tid, NULL, hasher, h) == 0;
	return h;
}

/* Wait until at most `left` slots are still to hash. */
static void drain(hashpipe *h, size_t left)
{
	pthread_mutex_lock(&h->mu);
	while (h->pending > left)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

void hashpipe_free(hashpipe *h)
{
	if (!h)
		return;
	if (h->threaded) {
		pthread_mutex_lock(&h->mu);
		h->quit = true;
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->tid, NULL);
	}
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	EVP_MD_CTX_free(h->ctx);
	free(h->buf);
	free(h);
}

unsigned char *hashpipe_slot(hashpipe *h, size_t *cap)
{
	if (h->threaded)
		drain(h, SLOTS - 1);
	*cap = SLOT_SIZE;
	return h->buf + h->head * SLOT_SIZE;
}

void hashpipe_push(hashpipe *h, size_t n)
{
	size_t slot = h->head;
	h->len[slot] = n;
	h->head = (h->head + 1) % SLOTS;
	if (!h->threaded) {
		hash_slot(h, slot);
		return;
	}
	pthread_mutex_lock(&h->mu);
	h->pending++;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

int hashpipe_finish(hashpipe *h, oa_digest_hex out)
{
	if (h->threaded)
		drain(h, 0);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	bool ok = !h->failed && EVP_DigestFinal_ex(h->ctx, md, &mdlen) == 1 && mdlen == 32;
	static const char digits[] = "0123456789abcdef";
	for (unsigned i = 0; ok && i < 32; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 15];
	}
	out[ok ? 64 : 0] = '\0';
	h->failed = EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1;
	return ok ? 0 : -1;
}
