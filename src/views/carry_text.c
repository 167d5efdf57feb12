/* carry_text.c - export, import and repair for a person (carry_text.h). */
#include "views/carry_text.h"
#include "views/csv.h"

#include <string.h>

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

void oa_import_text(const oa_text_style *st, FILE *out, const oa_import_result *r)
{
	char a[32], b[32];
	fprintf(out, "%s: import from %s%s\n", oa_text_safe(r->store ? r->store : "?"),
	        strcmp(r->source, "-") == 0 ? "standard input" : oa_text_safe(r->source),
	        r->applied ? "" : " (a dry run: nothing written; --apply writes)");
	for (size_t i = 0; i < r->n_models; i++) {
		const oa_import_model *m = &r->models[i];
		oa_format_size(m->bytes_new, st->units, a, sizeof a);
		fprintf(out, "  %-8s %s", oa_import_state_name(m->state), oa_text_safe(m->name));
		if (m->state == OA_IMP_NEW || m->state == OA_IMP_ADDED)
			fprintf(out, "  (%s of new blobs)", a);
		if (m->why)
			fprintf(out, ": %s", oa_text_safe(m->why));
		fputc('\n', out);
	}
	if (r->refused)
		fprintf(out, "refused: %s; nothing written%s\n", oa_text_safe(r->refused),
		        r->applied ? " (the temporary files are removed)" : "");
	oa_format_size(r->bytes_new, st->units, a, sizeof a);
	oa_format_size(r->bytes_present, st->units, b, sizeof b);
	fprintf(out, "blobs: %s %s, %s here already", a, r->applied ? "added" : "to add", b);
	if (r->free_known) {
		char f[32];
		oa_format_size(r->free_bytes, st->units, f, sizeof f);
		fprintf(out, "; %s free on the store's file system%s", f,
		        !r->applied && r->bytes_new > r->free_bytes ? ": NOT ENOUGH" : "");
	}
	fputc('\n', out);
	if (!r->refused && r->bytes_new)
		fprintf(out, "%s\n", r->hashed ? "every new blob hashed: each is what its name says"
		                                : "blobs not hashed (a dry run reads names and sizes; --verify hashes them, "
		                                  "--apply always does)");
}

void oa_import_csv(FILE *out, const oa_import_result *r)
{
	fputs("kind,path,digest,size,state,model,note\n", out);
	for (size_t i = 0; i < r->n_blobs; i++) {
		const oa_import_blob *b = &r->blobs[i];
		fprintf(out, "blob,blobs/sha256-%s,sha256:%s,%lld,", b->hex, b->hex, (long long)b->size);
		oa_csv_field(out, oa_import_state_name(b->state), false);
		oa_csv_field(out, b->model ? b->model : "", false);
		oa_csv_field(out, b->how ? b->how : "", true);
	}
	for (size_t i = 0; i < r->n_tags; i++) {
		const oa_import_tag *t = &r->tags[i];
		fputs("tag,", out);
		oa_csv_field(out, t->path, false);
		fprintf(out, "sha256:%s,%zu,", t->sha256, t->len);
		oa_csv_field(out, oa_import_state_name(t->state), false);
		oa_csv_field(out, t->model, false);
		oa_csv_field(out, "", true);
	}
}
