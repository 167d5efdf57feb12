/* cmd_stores.c - `ollama-audit stores`: every store on the machine, with its
 * owner, size, model count and how it was found (docs/multi-store.md). */
#include "cmd_stores.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "cmd_dedupe.h"
#include "host.h"
#include "output.h"
#include "views/csv.h"
#include "views/table.h"
#include "usage.h"
#include "ollama_audit/discover.h"
#include "ollama_audit/dupes.h"
#include "ollama_audit/stores_report.h"
#include "ollama_audit/headers.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool shown(const cli *c, const oa_candidate *k)
{
	if (c->all)
		return true;
	if (k->state == OA_CAND_STORE || k->state == OA_CAND_DENIED || k->state == OA_CAND_UNKNOWN)
		return true; /* unknown: a private directory hides whether a store is there: say so */
	return oa_candidate_configured(k); /* configured somewhere: say what is (not) there */
}

typedef oa_stores_row row;

/* A found (or denied) store: open and scan it, then measure blobs/. */
static void open_row(cli *c, row *r)
{
	const oa_candidate *k = r->cand;
	char err[512];
	double t0 = oa_now();
	oa_open_options opt = { c->platform, OA_HEADERS_NONE, c->jobs };
	oa_store_source source = oa_store_source_of(k->found[0].source);
	if (oa_open_candidate(&r->s, k->root, source, k, &opt, err, sizeof err) < 0) {
		oa_store_close(&r->s);
		r->state = "permission-denied";
		r->error = oa_xstrdup(err);
		cli_fail(c, "store-unreadable", k->root, "%s (store of %s): skipped", err, k->user ? k->user : "?");
		c->exit_code |= OA_EXIT_OPERATIONAL;
		if (c->format == OUT_PROMETHEUS)
			cli_multi_failed(c, k->root, oa_store_source_name(source));
		return;
	}
	oa_store_scan(&r->s);
	r->seconds = oa_now() - t0;
	r->opened = true;
	c->stores_read++;
	for (size_t j = 0; j < r->s.findings.n; j++)
		r->unreadable += strcmp(r->s.findings.v[j].code, "unreadable") == 0;
	r->state = r->unreadable ? "incomplete" : "ok";
	if (r->unreadable) {
		cli_err("%s: %zu part%s could not be read (see `ollama-audit --store %s check`)", r->s.root,
		        r->unreadable, r->unreadable == 1 ? "" : "s", r->s.root);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	oa_stores_row_measure(r);
}

/* No store where --store said: that is an error; elsewhere only a row. */
static void explicit_missing(cli *c, row *r)
{
	const oa_candidate *k = r->cand;
	if (!oa_candidate_named(k))
		return;
	if (k->state == OA_CAND_MISSING)
		cli_fail(c, "store-unreadable", k->path, "%s: %s", k->path, strerror(k->err));
	else if (k->state == OA_CAND_NOT_STORE)
		cli_fail(c, "store-unreadable", k->path, "%s is not an Ollama store: no manifests/ or blobs/",
		         k->path);
	else
		cli_fail(c, "store-unreadable", k->path, "%s: %s", k->path, r->error);
	c->exit_code |= OA_EXIT_OPERATIONAL;
	if (c->format == OUT_PROMETHEUS && k->state != OA_CAND_UNKNOWN)
		cli_multi_failed(c, k->path, "--store");
}

static void read_row(cli *c, row *r)
{
	const oa_candidate *k = r->cand;
	switch (k->state) {
	case OA_CAND_STORE:
	case OA_CAND_DENIED:
		open_row(c, r);
		return;
	case OA_CAND_MISSING:
		r->state = "missing";
		break;
	case OA_CAND_NOT_STORE:
		r->state = "not-a-store";
		break;
	case OA_CAND_UNKNOWN:
		r->state = "unknown";
		r->error = oa_xasprintf("cannot tell whether a store is there: %s", strerror(k->err));
		break;
	}
	explicit_missing(c, r);
}

/* The rows shown: every candidate discovered that `shown` keeps, read. */
static row *read_rows(cli *c, const oa_discovery *d, size_t *n)
{
	row *rows = oa_xcalloc(d->n ? d->n : 1, sizeof *rows);
	*n = 0;
	for (size_t i = 0; i < d->n; i++) {
		if (!shown(c, &d->v[i]))
			continue; /* (an unknown candidate is always shown: its row says why) */
		row *r = &rows[(*n)++];
		r->cand = &d->v[i];
		read_row(c, r);
	}
	return rows;
}

/* The duplicates among the opened stores; returns how many were opened. */
static size_t find_dupes(row *rows, size_t n, oa_stores_dupes *d)
{
	oa_store **sv = oa_xcalloc(n ? n : 1, sizeof *sv);
	size_t opened = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].opened) {
			sv[i] = &rows[i].s;
			opened++;
		}
	oa_dupes_find(sv, n, &d->dupes);
	d->by_hardlink = false;
	d->dedupe_bytes = d->dupes.n ? cli_dedupe_can_free(sv, &d->dupes, &d->by_hardlink) : 0;
	free(sv);
	return opened;
}

static void print_csv(const row *rows, size_t n)
{
	FILE *out = cli_text_out();
	fprintf(out, "host,store,state,user,uid,models,blob_files,disk_bytes,apparent_bytes,found_by,paths\n");
	for (size_t i = 0; i < n; i++) {
		const row *r = &rows[i];
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
		oa_csv_field(out, cli_host(), false);
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

/* Widths in display columns (a CJK user name takes two per character);
 * USER also fits the "total" row. */
static void table_widths(const row *rows, size_t n, size_t *w0, size_t *w1)
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

static void table_store_row(cli *c, const row *r, size_t w0, size_t w1)
{
	const oa_candidate *k = r->cand;
	const char *root = oa_stores_row_root(r);
	char size[32] = "-", models[24] = "-";
	if (r->opened) {
		oa_format_size(r->bytes, c->units, size, sizeof size);
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
	oa_put_cell(stdout, er, w0, false);
	fputs("   ", stdout);
	oa_put_cell(stdout, k->user ? k->user : "?", w1, false);
	printf("   %6s   %10s   %-17s   %s\n", models, size, r->state, oa_text_safe(fb.data));
	free(er);
	oa_buf_free(&fb);
}

static void table_tally(cli *c, const char *label, const oa_stores_tally *u, size_t w1)
{
	char size[32];
	oa_format_size(u->disk_bytes, c->units, size, sizeof size);
	oa_put_cell(stdout, label, w1, false);
	printf("   %6zu   %6zu   %10s\n", u->stores, u->models, size);
}

static void table_users(cli *c, const oa_stores_totals *t, size_t w1)
{
	if (!t->n_users)
		return;
	fputc('\n', stdout);
	oa_put_cell(stdout, "USER", w1, false);
	printf("   %6s   %6s   %10s\n", "STORES", "MODELS", "SIZE");
	for (size_t j = 0; j < t->n_users; j++)
		table_tally(c, t->users[j].user, &t->users[j], w1);
	table_tally(c, "total", &t->all, w1);
}

static void table_dupes(cli *c, const oa_stores_dupes *d)
{
	if (!d->dupes.n)
		return;
	char s1[32], s2[32], s3[32];
	oa_format_size(d->dupes.saving, c->units, s1, sizeof s1);
	oa_format_size(d->dedupe_bytes, c->units, s2, sizeof s2);
	oa_format_size(d->dupes.already_shared, c->units, s3, sizeof s3);
	/* what dedupe can really free here: tested reflinks, else hard links */
	printf("\nduplicates: %zu blob%s in several stores; sharing would save %s, `dedupe%s` can free "
	       "%s of it here; %s already shared. See `du --all-users --duplicates`.\n",
	       d->dupes.n, d->dupes.n == 1 ? "" : "s", s1, d->by_hardlink ? " --hardlink" : "", s2, s3);
}

/* The table: one row per store, then per user, then duplicates. */
static void print_table(cli *c, const row *rows, size_t n, const oa_stores_totals *t,
                        const oa_stores_dupes *d)
{
	if (n == 0)
		cli_err("no Ollama store found (`stores --all` lists every place looked at)");
	size_t w0, w1;
	table_widths(rows, n, &w0, &w1);
	oa_put_cell(stdout, "STORE", w0, false);
	fputs("   ", stdout);
	oa_put_cell(stdout, "USER", w1, false);
	printf("   %6s   %10s   %-17s   %s\n", "MODELS", "SIZE", "STATE", "FOUND BY");
	for (size_t i = 0; i < n; i++)
		table_store_row(c, &rows[i], w0, w1);
	table_users(c, t, w1);
	table_dupes(c, d);
}

/* What every format of `stores` renders (the slots in commands.c). */
typedef struct stores_view {
	row *rows; /* not const: cli_multi_prom_store() takes the store */
	size_t n, opened;
	const oa_stores_dupes *d;
	oa_stores_totals t;
} stores_view;

void stores_render_table(cli *c, const void *view)
{
	const stores_view *v = view;
	print_table(c, v->rows, v->n, &v->t, v->d);
}

void stores_render_json(cli *c, const void *view)
{
	const stores_view *v = view;
	cli_emit_document(c, oa_stores_view_document(cli_host(), v->rows, v->n, &v->t, v->d));
}

void stores_render_ndjson(cli *c, const void *view)
{
	(void)c;
	const stores_view *v = view;
	json_t *recs = oa_stores_view_records(cli_host(), v->rows, v->n, &v->t, v->d);
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
}

void stores_render_csv(cli *c, const void *view)
{
	(void)c;
	const stores_view *v = view;
	print_csv(v->rows, v->n);
}

void stores_render_prometheus(cli *c, const void *view)
{
	const stores_view *v = view;
	for (size_t i = 0; i < v->n; i++)
		if (v->rows[i].opened)
			cli_multi_prom_store(c, &v->rows[i].s, v->rows[i].seconds, NULL, NULL);
	if (v->opened >= 2)
		cli_multi_prom_add("ollama_store_duplicate_bytes", (double)v->d->dupes.saving);
}

static void render(cli *c, row *rows, size_t n, size_t opened, const oa_stores_dupes *d)
{
	stores_view v = { .rows = rows, .n = n, .opened = opened, .d = d };
	oa_stores_totals_compute(rows, n, &v.t);
	cli_render(c, &v);
	oa_stores_totals_free(&v.t);
}

int cmd_stores(cli *c)
{
	if (c->n_args) {
		cli_err("stores takes no arguments");
		return OA_EXIT_USAGE;
	}
	oa_discovery d;
	oa_discover(&d, c->stores, c->n_stores);
	for (size_t i = 0; i < d.n_notes; i++) {
		char *e = oa_escape(d.notes[i], strlen(d.notes[i]));
		cli_err("discovery: %s", e);
		free(e);
	}
	size_t n;
	row *rows = read_rows(c, &d, &n);
	oa_stores_dupes dupes;
	size_t opened = find_dupes(rows, n, &dupes);
	render(c, rows, n, opened, &dupes);
	oa_dupes_free(&dupes.dupes);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].opened)
			oa_store_close(&rows[i].s);
		oa_usage_free(&rows[i].use);
		free(rows[i].error);
	}
	free(rows);
	oa_discovery_free(&d);
	return c->exit_code;
}
