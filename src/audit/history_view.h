/* history_view.h - one store's history as every format of `history` draws
 * it (library-internal). */
#ifndef OA_AUDIT_HISTORY_VIEW_H
#define OA_AUDIT_HISTORY_VIEW_H

#include "audit/select.h"
#include "history/log_inputs.h"
#include "ollama_audit/history.h"
#include "ollama_audit/logsrc.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>

/* One store's history as every format draws it: its logs (h, read from
 * src), the loads selected, v[0..n). */
typedef struct oa_history_view {
	const oa_store *s;
	oa_history h;
	oa_log_sources src;
	const oa_load **v;
	size_t n;
} oa_history_view;
/* Read s's logs through in, match them to s and pick the loads in w of the
 * models a selects (oa_history_pick); the problems are in x->src, the lines
 * that could not be read in x->h. false when a named source failed. */
bool oa_history_view_read(oa_history_view *x, oa_log_inputs *in, oa_store *s, const oa_load_window *w,
                          const oa_model_args *a);
void oa_history_view_free(oa_history_view *x);

#endif
