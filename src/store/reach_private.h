/* reach_private.h - what reach.c shares with the rest of src/store/.
 * Private to src/store/. */
#ifndef OLLAMA_AUDIT_STORE_REACH_PRIVATE_H
#define OLLAMA_AUDIT_STORE_REACH_PRIVATE_H

#include "ollama_audit/reach.h"

#include <stdint.h>

/* Count a reference to every manifest blob m reaches, and say which child
 * of its list it uses (findings). */
void store_ref_manifest_blobs(oa_store *s, oa_model *m);
/* Allocated bytes of the blobs m reaches that no other tag reaches. */
uint64_t store_bytes_only_in(oa_store *s, const oa_model *m);

#endif
