/* runhere_text.h - show's "what can run here" paragraph (library-internal):
 * whether the machine can run a model, on which engine, whether its weights
 * fit the memory, and what keeps them from loading (missing, truncated,
 * corrupt as verify found them). */
#ifndef OA_VIEWS_RUNHERE_TEXT_H
#define OA_VIEWS_RUNHERE_TEXT_H

#include "ollama_audit/humanize.h"
#include "ollama_audit/runhere.h"
#include "ollama_audit/store.h"
#include "ollama_audit/verify_cache.h"

/* Where the model's facts come from that are read only when needed: the
 * verify cache (NULL: none) and the logs' newest failed load of the model
 * (NULL: none), each asked of ctx. */
typedef struct oa_runhere_inputs {
	oa_verify_cache *(*cache)(void *ctx);
	const char *(*failure)(void *ctx, const oa_store *s, const oa_model *m);
	void *ctx;
} oa_runhere_inputs;

/* The paragraph about model m of store s on machine mc, sizes in units;
 * NULL when no engine runs it (remote, unknown format). */
char *oa_runhere_text(enum oa_units units, const oa_machine *mc, const oa_store *s, const oa_model *m,
                      const oa_runhere_inputs *in);

#endif
