/* history_view.c - one store's history as every format of `history`
 * draws it: its logs read and matched, the loads picked (history_view.h). */
#include "audit/history_view.h"
#include "base/util.h"

#include <stdlib.h>

bool oa_history_view_read(oa_history_view *x, oa_log_inputs *in, oa_store *s, const oa_load_window *w,
                          const oa_model_args *a)
{
	*x = (oa_history_view){ .s = s };
	oa_history_init(&x->h);
	bool ok = oa_log_inputs_read(in, s->root, &x->h, &x->src);
	oa_history_match(&x->h, s);
	x->v = oa_xcalloc(x->h.n ? x->h.n : 1, sizeof *x->v);
	x->n = oa_history_pick(&x->h, s, w, a, x->v);
	return ok;
}

void oa_history_view_free(oa_history_view *x)
{
	free(x->v);
	oa_log_sources_free(&x->src);
	oa_history_free(&x->h);
}
