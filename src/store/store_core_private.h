/* store_core_private.h - what store_core.c shares with the rest of
 * src/store/. Private to src/store/. */
#ifndef OLLAMA_AUDIT_STORE_STORE_CORE_PRIVATE_H
#define OLLAMA_AUDIT_STORE_STORE_CORE_PRIVATE_H

#include "ollama_audit/store_core.h"

/* Free what the walk gathered and zero it. */
void store_free_tag_facts(oa_tag_facts *f);

#endif
