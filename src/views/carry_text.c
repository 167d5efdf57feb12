/* carry_text.c - export, import and repair for a person (carry_text.h). */
#include "views/carry_text.h"

void oa_export_text(const oa_text_style *st, FILE *out, const oa_carry *c, const oa_export_result *r,
                    const oa_export_opts *o)
{
	char size[32];
	oa_format_size(r->bytes, st->units, size, sizeof size);
	fprintf(out, "exported %zu model%s to %s: %zu blob%s (%s), %zu tag file%s\n", c->n_models,
	        c->n_models == 1 ? "" : "s", o->dest == OA_DEST_STREAM ? "standard output" : oa_text_safe(o->path),
	        r->blobs, r->blobs == 1 ? "" : "s", size, r->tags, r->tags == 1 ? "" : "s");
	for (size_t i = 0; i < c->n_models; i++) {
		const oa_carry_model *cm = &c->models[i];
		oa_format_size(cm->bytes, st->units, size, sizeof size);
		fprintf(out, "  %s  %.12s  %zu blob%s, %s\n", oa_text_safe(cm->m->display), cm->m->m.id, cm->n_blobs,
		        cm->n_blobs == 1 ? "" : "s", size);
	}
	fprintf(out, "%zu blob%s hashed as read, %zu vouched for by the verify cache (the same file verified good)\n",
	        r->hashed, r->hashed == 1 ? "" : "s", r->trusted);
}
