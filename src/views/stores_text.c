/* stores_text.c - `stores`' table and csv (stores_text.h). */
#include "views/stores_text.h"
#include "views/csv.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

void oa_stores_csv(FILE *out, const char *host, const oa_stores_row *rows, size_t n)
{
	fprintf(out, "host,store,state,user,uid,models,blob_files,disk_bytes,apparent_bytes,found_by,paths\n");
	for (size_t i = 0; i < n; i++) {
		const oa_stores_row *r = &rows[i];
		const oa_candidate *k = r->cand;
		char num[5][32] = { "", "", "", "", "" };
		if (k->have_uid)
			snprintf(num[0], 32, "%lu", (unsigned long)k->uid);
		if (r->opened) {
			snprintf(num[1], 32, "%zu", oa_store_listed_models(&r->s));
			snprintf(num[2], 32, "%zu", r->s.n_blobs);
			snprintf(num[3], 32, "%llu", (unsigned long long)r->bytes);
			snprintf(num[4], 32, "%llu", (unsigned long long)r->apparent);
		}
		oa_buf fb, pb;
		oa_buf_init(&fb);
		oa_buf_init(&pb);
		for (size_t j = 0; j < k->n_found; j++)
			oa_buf_printf(&fb, "%s%s:%s", j ? ";" : "", k->found[j].source, k->found[j].detail);
		for (size_t j = 0; j < k->n_paths; j++)
			oa_buf_printf(&pb, "%s%s", j ? ";" : "", k->paths[j]);
		oa_csv_field(out, host, false);
		oa_csv_field(out, oa_stores_row_root(r), false);
		oa_csv_field(out, r->state, false);
		oa_csv_field(out, k->user, false);
		for (int q = 0; q < 5; q++)
			oa_csv_field(out, num[q], false);
		oa_csv_field(out, fb.data ? fb.data : "", false);
		oa_csv_field(out, pb.data ? pb.data : "", true);
		oa_buf_free(&fb);
		oa_buf_free(&pb);
	}
}

char *oa_stores_text_problem(const oa_stores_row *r, const char **path, const char **how)
{
	const oa_candidate *k = r->cand;
	*path = k->path;
	*how = NULL;
	if (r->opened)
		return r->unreadable ? oa_xasprintf("%s: %zu part%s could not be read (see `ollama-audit --store %s check`)",
		                                    r->s.root, r->unreadable, r->unreadable == 1 ? "" : "s", r->s.root)
		                     : NULL;
	if (k->state == OA_CAND_STORE || k->state == OA_CAND_DENIED) {
		*path = k->root;
		*how = oa_store_source_name(oa_store_source_of(k->found[0].source));
		return oa_xasprintf("%s (store of %s): skipped", r->error, k->user ? k->user : "?");
	}
	if (!oa_candidate_named(k))
		return NULL;
	*how = k->state != OA_CAND_UNKNOWN ? "--store" : NULL;
	if (k->state == OA_CAND_NOT_STORE)
		return oa_xasprintf("%s is not an Ollama store: no manifests/ or blobs/", k->path);
	return oa_xasprintf("%s: %s", k->path, k->state == OA_CAND_MISSING ? strerror(k->err) : r->error);
}

/* Widths in display columns (a CJK user name takes two per character);
 * USER also fits the "total" row. */
static void table_widths(const oa_stores_row *rows, size_t n, size_t *w0, size_t *w1)
{
	*w0 = strlen("STORE");
	*w1 = strlen("total");
	for (size_t i = 0; i < n; i++) {
		const oa_candidate *k = rows[i].cand;
		const char *root = oa_stores_row_root(&rows[i]);
		char *er = oa_escape(root, strlen(root));
		if (oa_text_width(er) > *w0)
			*w0 = oa_text_width(er);
		free(er);
		if (oa_text_width(k->user ? k->user : "?") > *w1)
			*w1 = oa_text_width(k->user ? k->user : "?");
	}
}

static void table_store_row(const oa_text_style *st, FILE *out, const oa_stores_row *r, size_t w0, size_t w1)
{
	const oa_candidate *k = r->cand;
	const char *root = oa_stores_row_root(r);
	char size[32] = "-", models[24] = "-";
	if (r->opened) {
		oa_format_size(r->bytes, st->units, size, sizeof size);
		snprintf(models, sizeof models, "%zu", oa_store_listed_models(&r->s));
	}
	oa_buf fb;
	oa_buf_init(&fb);
	for (size_t j = 0; j < k->n_found; j++)
		oa_buf_printf(&fb, "%s%s (%s)", j ? ", " : "", k->found[j].source, k->found[j].detail);
	for (size_t j = 0; j < k->n_paths; j++)
		if (strcmp(k->paths[j], root) != 0) {
			oa_buf_adds(&fb, "; also at ");
			oa_buf_add_escaped(&fb, k->paths[j], strlen(k->paths[j]));
		}
	for (size_t j = 0; j < k->n_blobs_shared; j++) {
		oa_buf_adds(&fb, j ? ", " : "; shares blobs/ with ");
		oa_buf_add_escaped(&fb, k->blobs_shared[j], strlen(k->blobs_shared[j]));
	}
	char *er = oa_escape(root, strlen(root));
	oa_put_cell(out, er, w0, false);
	fputs("   ", out);
	oa_put_cell(out, k->user ? k->user : "?", w1, false);
	fprintf(out, "   %6s   %10s   %-17s   %s\n", models, size, r->state, oa_text_safe(fb.data));
	free(er);
	oa_buf_free(&fb);
}

static void table_tally(const oa_text_style *st, FILE *out, const char *label, const oa_stores_tally *u, size_t w1)
{
	char size[32];
	oa_format_size(u->disk_bytes, st->units, size, sizeof size);
	oa_put_cell(out, label, w1, false);
	fprintf(out, "   %6zu   %6zu   %10s\n", u->stores, u->models, size);
}

static void table_users(const oa_text_style *st, FILE *out, const oa_stores_totals *t, size_t w1)
{
	if (!t->n_users)
		return;
	fputc('\n', out);
	oa_put_cell(out, "USER", w1, false);
	fprintf(out, "   %6s   %6s   %10s\n", "STORES", "MODELS", "SIZE");
	for (size_t j = 0; j < t->n_users; j++)
		table_tally(st, out, t->users[j].user, &t->users[j], w1);
	table_tally(st, out, "total", &t->all, w1);
}

static void table_dupes(const oa_text_style *st, FILE *out, const oa_stores_dupes *d)
{
	if (!d->dupes.n)
		return;
	char s1[32], s2[32], s3[32];
	oa_format_size(d->dupes.saving, st->units, s1, sizeof s1);
	oa_format_size(d->dedupe_bytes, st->units, s2, sizeof s2);
	oa_format_size(d->dupes.already_shared, st->units, s3, sizeof s3);
	/* what dedupe can really free here: tested reflinks, else hard links */
	fprintf(out, "\nduplicates: %zu blob%s in several stores; sharing would save %s, `dedupe%s` can free "
	        "%s of it here; %s already shared. See `du --all-users --duplicates`.\n",
	        d->dupes.n, d->dupes.n == 1 ? "" : "s", s1, d->by_hardlink ? " --hardlink" : "", s2, s3);
}

void oa_stores_text(const oa_text_style *st, FILE *out, const oa_stores_row *rows, size_t n,
                    const oa_stores_totals *t, const oa_stores_dupes *d)
{
	size_t w0, w1;
	table_widths(rows, n, &w0, &w1);
	oa_put_cell(out, "STORE", w0, false);
	fputs("   ", out);
	oa_put_cell(out, "USER", w1, false);
	fprintf(out, "   %6s   %10s   %-17s   %s\n", "MODELS", "SIZE", "STATE", "FOUND BY");
	for (size_t i = 0; i < n; i++)
		table_store_row(st, out, &rows[i], w0, w1);
	table_users(st, out, t, w1);
	table_dupes(st, out, d);
}
