/* headers_private.h - what headers.c shares with the rest of src/store/.
 * Private to src/store/. */
#ifndef OLLAMA_AUDIT_STORE_HEADERS_PRIVATE_H
#define OLLAMA_AUDIT_STORE_HEADERS_PRIVATE_H

#include "ollama_audit/headers.h"

/* After oa_headers_begin, on a scan with more than one thread: parse every
 * GGUF header the models' oa_headers_apply will take from the cache, each
 * blob once, on the scan's threads. */
void store_headers_prefetch(oa_store *s);

#endif
