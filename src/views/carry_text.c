/* carry_text.c - export, import and repair for a person (carry_text.h). */
#include "views/carry_text.h"
#include "views/csv.h"
#include "base/util.h"

#include <stdlib.h>
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

static const char *repair_action(const oa_repair_blob *x)
{
	switch (x->state) {
	case OA_REPAIR_CAN_MEND: return "--apply puts the good copy in its place";
	case OA_REPAIR_CAN_REMOVE: return "no good copy: --apply removes it (into --quarantine DIR when given), so that a pull fetches it";
	case OA_REPAIR_ABSENT: return "no good copy here or elsewhere: a pull fetches it";
	case OA_REPAIR_MENDED: return "mended";
	case OA_REPAIR_REMOVED: return "moved into the quarantine: a pull fetches it now";
	case OA_REPAIR_KEPT: return "kept";
	case OA_REPAIR_DELETED: return "removed: a pull fetches it now";
	case OA_REPAIR_SKIPPED: return "left alone";
	case OA_REPAIR_FAILED: return "FAILED";
	}
	return "?";
}

static void repair_line(const oa_text_style *st, FILE *out, const oa_repair_blob *x)
{
	char want[32], have[32];
	oa_format_size((uint64_t)x->size, st->units, want, sizeof want);
	oa_format_size(x->size_here > 0 ? (uint64_t)x->size_here : 0, st->units, have, sizeof have);
	fprintf(out, "  %-15s sha256:%.12s  %s", oa_damage_name(x->damage), x->hex, want);
	if (x->damage != OA_DAMAGE_MISSING && x->damage != OA_DAMAGE_DIGEST)
		fprintf(out, " (%s here)", have);
	fprintf(out, ", known by %s; named by ", x->known_by);
	for (size_t k = 0; k < x->n_models; k++)
		fprintf(out, "%s%s", k ? ", " : "", oa_text_safe(x->models[k]));
	fputc('\n', out);
	if (x->source)
		fprintf(out, "                  good copy (hashed): %s (%s%s%s)\n", oa_text_safe(x->source), x->source_kind,
		        x->how ? ", " : "", x->how ? x->how : "");
	fprintf(out, "                  %s%s%s\n", repair_action(x), x->note ? ": " : "",
	        x->note ? oa_text_safe(x->note) : "");
}

void oa_repair_text(const oa_text_style *st, FILE *out, const oa_repair_result *r)
{
	fprintf(out, "%s: repair%s\n", oa_text_safe(r->store), r->applied ? "" : " (a dry run: nothing changed; --apply mends)");
	if (!r->n_blobs) {
		fprintf(out, "no damaged blob: nothing to repair (%s)\n",
		        r->verified ? "every blob hashed" : "sizes and the verify cache looked at; --verify hashes every blob");
		return;
	}
	for (size_t i = 0; i < r->n_blobs; i++)
		repair_line(st, out, &r->blobs[i]);
	fprintf(out, "good copies looked for in %zu place%s%s%s\n", r->searched, r->searched == 1 ? "" : "s",
	        r->source_error ? "; " : "", r->source_error ? oa_text_safe(r->source_error) : "");
	if (r->operation[0])
		fprintf(out, "the damaged files are in the quarantine, operation %s (`ollama-audit restore DIR --op %s`)\n",
		        r->operation, r->operation);
	bool in_the_way = false; /* a damaged file still there, which a pull would keep */
	for (size_t i = 0; i < r->n_blobs; i++)
		in_the_way |= r->blobs[i].state == OA_REPAIR_CAN_REMOVE || r->blobs[i].state == OA_REPAIR_KEPT;
	if (r->n_advice)
		fprintf(out, "what no good copy mends%s:\n",
		        in_the_way ? ", once repair --apply has moved the damaged files away" : "");
	bool pulls = false;
	for (size_t i = 0; i < r->n_advice; i++) {
		fprintf(out, "  %s\n", r->advice[i].command ? r->advice[i].command : oa_text_safe(r->advice[i].text));
		pulls |= r->advice[i].command != NULL;
	}
	if (pulls)
		fputs("(a pull fetches only the blobs that are missing: Ollama keeps any blob file that is there)\n", out);
}

void oa_repair_csv(FILE *out, const oa_repair_result *r)
{
	fputs("digest,size,size_here,damage,known_by,state,source,models,note\n", out);
	for (size_t i = 0; i < r->n_blobs; i++) {
		const oa_repair_blob *x = &r->blobs[i];
		fprintf(out, "sha256:%s,%lld,%lld,%s,%s,%s,", x->hex, (long long)x->size, (long long)x->size_here,
		        oa_damage_name(x->damage), x->known_by, oa_repair_state_name(x->state));
		oa_csv_field(out, x->source ? x->source : "", false);
		oa_buf models;
		oa_buf_init(&models);
		for (size_t k = 0; k < x->n_models; k++)
			oa_buf_printf(&models, "%s%s", k ? ";" : "", x->models[k]);
		char *joined = oa_buf_take(&models);
		oa_csv_field(out, joined, false);
		free(joined);
		oa_csv_field(out, x->note ? x->note : "", true);
	}
}
