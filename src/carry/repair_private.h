/* repair_private.h - what repair.c does for the run (repair_run.c):
 * finding the damaged blobs, and what to say about the models no good copy
 * mends. Private to src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_REPAIR_PRIVATE_H
#define OLLAMA_AUDIT_CARRY_REPAIR_PRIVATE_H

#include "ollama_audit/repair.h"
#include "ollama_audit/verify_cache.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct repair_find_opts {
	oa_verify_cache *cache;       /* its failed entries count (may be NULL) */
	bool verify;                  /* hash the blobs whose size is right */
	int jobs;                     /* threads for that (0: one per CPU) */
	volatile sig_atomic_t *stop;
} repair_find_opts;

/* The damaged blobs of the models s->models[models[i]] (every model when
 * n is 0), each once, with every tag of the store that names it. 0, or -1
 * with err when the hashing could not start. */
int repair_find_damage(oa_store *s, const size_t *models, size_t n, const repair_find_opts *o, oa_repair_result *r,
                       char *err, size_t errlen);
/* For every model that names a blob left unmended: `ollama pull NAME`, or
 * how to recreate a model no registry has. */
void repair_advise(oa_repair_result *r, const oa_store *s);

#endif
