/* hashpipe.h - sha256 of a stream on a thread of its own, beside whoever
 * reads and writes it: the reader fills a slot, hands it over, and writes
 * it while the hasher reads the same bytes. Export, import and repair copy
 * a blob at the speed of the slower of the two, not of their sum. Private
 * to src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_HASHPIPE_H
#define OLLAMA_AUDIT_CARRY_HASHPIPE_H

#include "ollama_audit/digest.h"

#include <stddef.h>

typedef struct hashpipe hashpipe;

/* A pipe for one stream at a time; its thread starts when there is more
 * than one CPU (else each slot is hashed as it is handed over). */
hashpipe *hashpipe_new(void);
void hashpipe_free(hashpipe *h);
/* A slot to fill (waits until the hasher is done with it); *cap its size. */
unsigned char *hashpipe_slot(hashpipe *h, size_t *cap);
/* The slot's first n bytes are the stream's next. The caller may go on
 * reading them (to write them) until its next hashpipe_slot call. */
void hashpipe_push(hashpipe *h, size_t n);
/* Every byte pushed is hashed: the digest, and the pipe is ready for the
 * next stream. -1 when OpenSSL failed. */
int hashpipe_finish(hashpipe *h, oa_digest_hex out);

#endif
