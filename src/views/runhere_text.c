/* runhere_text.c - show's "what can run here" paragraph (docs/history.md). */
#include "views/runhere_text.h"
#include "ollama_audit/show_report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "cannot run": the weights verify found corrupt, whatever the engine. */
static char *failed_verify_text(oa_verify_cache *vc, const oa_store *s, const oa_model *m, const char *where)
{
	oa_verify_cache_entry e;
	long i = oa_weights_failed_verify(s, m, vc, &e);
	if (i < 0)
		return NULL;
	char when[64];
	oa_iso8601((time_t)e.verified_at, 0, when, sizeof when);
	return oa_xasprintf("cannot run %s: its weights blob %s failed verify at %s (%s) and has not "
	                    "changed since; `ollama-audit repair %s --apply` mends it", where, m->m.layers[i].digest,
	                    when, e.failed, m->display);
}

static bool is_weights(enum oa_layer_kind k)
{
	return k == OA_LAYER_MODEL || k == OA_LAYER_TENSOR || k == OA_LAYER_PROJECTOR || k == OA_LAYER_ADAPTER ||
	       k == OA_LAYER_DRAFT;
}

/* What keeps the weights from loading at all, into b; false when nothing
 * does: a weight blob missing or shorter than the manifest says. */
static bool weights_broken(enum oa_units units, const oa_model *m, oa_buf *b)
{
	for (size_t i = 0; i < m->m.n_layers; i++) {
		const oa_layer *l = &m->m.layers[i];
		const oa_blob *bl = m->layer_blobs ? m->layer_blobs[i] : NULL;
		if (!is_weights(l->kind))
			continue;
		char dg[13];
		snprintf(dg, sizeof dg, "%.12s", l->digest_valid ? l->digest + 7 : "?");
		if (!bl || !bl->stat_ok || bl->dangling) {
			oa_buf_printf(b, "its %s weights (sha256:%s) are missing", oa_layer_kind_name(l->kind), dg);
			return true;
		}
		if (l->size >= 0 && bl->st.size < l->size) {
			char have[32], want[32];
			oa_format_size((uint64_t)bl->st.size, units, have, sizeof have);
			oa_format_size((uint64_t)l->size, units, want, sizeof want);
			oa_buf_printf(b, "its %s weights (sha256:%s) are truncated: %s of %s", oa_layer_kind_name(l->kind),
			              dg, have, want);
			return true;
		}
	}
	return false;
}

char *oa_runhere_text(enum oa_units units, const oa_machine *mc, const oa_store *s, const oa_model *m,
                      const oa_runhere_inputs *in)
{
	oa_runhere r;
	oa_runhere_model(mc, m, &r);
	if (!r.engine)
		return NULL;
	oa_buf b;
	oa_buf_init(&b);
	const char *where = mc->root ? "on that machine" : "here";
	const char *failure = in->failure(in->ctx, s, m);
	oa_buf broken;
	oa_buf_init(&broken);
	if (weights_broken(units, m, &broken)) {
		oa_buf_printf(&b, "cannot run %s: %s (`ollama-audit repair %s --apply` mends them)", where, broken.data,
		              m->display);
		if (failure)
			oa_buf_printf(&b, "; the logs' last failed load: %s", failure);
		oa_buf_free(&broken);
		return oa_buf_take(&b);
	}
	oa_buf_free(&broken);
	char *corrupt = failed_verify_text(in->cache(in->ctx), s, m, where);
	if (corrupt) {
		oa_buf_adds(&b, corrupt);
		free(corrupt);
		if (failure)
			oa_buf_printf(&b, "; the logs' last failed load: %s", failure);
		return oa_buf_take(&b);
	}
	if (!r.can_run) {
		oa_buf_printf(&b, "cannot run %s: a safetensors model runs only on MLX, ", where);
		if (!mc->mlx_platform_ok)
			oa_buf_adds(&b, "which on macOS needs Apple Silicon");
		else
			oa_buf_printf(&b, "and Ollama's MLX runtime (libmlxc) is in none of %s", mc->searched);
		return oa_buf_take(&b);
	}
	char w[32], av[32], tot[32], res[32];
	oa_format_size(r.weights, units, w, sizeof w);
	oa_format_size(r.reserve, units, res, sizeof res);
	oa_buf_printf(&b, "runs %s on %s", where, r.engine);
	if (*mc->mlx_lib && strcmp(r.engine, "mlx") == 0)
		oa_buf_printf(&b, " (%s)", mc->mlx_lib);
	else if (strcmp(r.engine, "llamacpp") == 0)
		oa_buf_adds(&b, " (every install has it)");
	if (r.fit == OA_FIT_UNKNOWN) {
		oa_buf_printf(&b, "; weights %s; memory unknown, so the fit is unknown", w);
		return oa_buf_take(&b);
	}
	oa_format_size(mc->mem_available, units, av, sizeof av);
	oa_format_size(mc->mem_total, units, tot, sizeof tot);
	oa_buf_printf(&b, "; weights %s against %s free of %s memory, less a %s reserve: %s", w, av, tot, res,
	              oa_fit_name(r.fit));
	if (r.fit == OA_FIT_TIGHT)
		oa_buf_adds(&b, " (within total memory, not what is free now)");
	if (strcmp(r.engine, "mlx") == 0)
		oa_buf_adds(&b, r.fit == OA_FIT_NO || r.fit == OA_FIT_TIGHT ?
		                " - the MLX runner refuses a model that does not fit what is free" : "");
	else
		oa_buf_adds(&b, " (llama.cpp keeps what the GPU cannot hold in system memory)");
	oa_buf_adds(&b, ". GPU memory is not visible offline: system memory stands in, as on Apple Silicon");
	if (failure)
		oa_buf_printf(&b, ". The logs' last failed load: %s", failure);
	return oa_buf_take(&b);
}
