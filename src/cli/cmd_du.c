/* cmd_du.c - `ollama-audit du`: disk usage per model and for the store. */
#include "cmd_du.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "cmd_dedupe.h"
#include "cmd_history.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "views/csv.h"
#include "views/table.h"
#include "usage.h"
#include "ollama_audit/du.h"
#include "ollama_audit/du_report.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/junk.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "ollama_audit/restore.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *row_name(const oa_store *s, const oa_du_row *r, const char *sep)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < r->n_models; i++) {
		const oa_model *m = &s->models[r->models[i]];
		if (i)
			oa_buf_adds(&b, sep);
		oa_buf_add_escaped(&b, m->display, strlen(m->display));
		if (m->anchor)
			oa_buf_adds(&b, " (legacy anchor)");
	}
	if (!r->manifest_ok)
		oa_buf_adds(&b, " (unparseable manifest)");
	return oa_buf_take(&b);
}

/* --unused-for: keep the rows none of whose tags the logs show loaded
 * within the duration (the totals stay the store's). */
static void keep_unused(cli *c, const oa_store *s, oa_du *du)
{
	size_t k = 0;
	for (size_t i = 0; i < du->n_rows; i++) {
		bool unused = true;
		for (size_t m = 0; m < du->rows[i].n_models; m++)
			unused &= cli_model_unused(c, s, du->rows[i].models[m]);
		if (unused)
			du->rows[k++] = du->rows[i];
		else
			free(du->rows[i].models);
	}
	du->n_rows = k;
}

/* --sort: reorder the rows (oa_du_compute sorts them by UNIQUE). */
static void sort_rows(cli *c, const oa_store *s, oa_du *du)
{
	if (c->sort == SORT_DEFAULT || c->sort == SORT_UNIQUE || du->n_rows < 2)
		return;
	oa_sort_key *k = oa_xcalloc(du->n_rows, sizeof *k);
	for (size_t i = 0; i < du->n_rows; i++) {
		const oa_du_row *r = &du->rows[i];
		k[i].idx = i;
		switch (c->sort) {
		case SORT_NAME: k[i].name = r->n_models ? s->models[r->models[0]].display : ""; break;
		case SORT_SIZE: k[i].num = (int64_t)r->allocated; break;
		case SORT_LAST_USED: k[i].num = cli_last_used_ns(c, s, r->models, r->n_models); break;
		case SORT_UNSERVABLE: { /* what the server refuses first, then by UNIQUE as by default */
			bool refused = false;
			for (size_t m = 0; m < r->n_models; m++)
				refused = refused || s->models[r->models[m]].unservable;
			k[i].num = (int64_t)(r->unique < (uint64_t)INT64_MAX / 2 ? r->unique : (uint64_t)INT64_MAX / 2 - 1) +
			           (refused ? INT64_MAX / 2 : 0);
			break;
		}
		case SORT_MODIFIED:
			k[i].num = INT64_MIN;
			for (size_t m = 0; m < r->n_models; m++)
				if (s->models[r->models[m]].st.mtime_ns > k[i].num)
					k[i].num = s->models[r->models[m]].st.mtime_ns;
			break;
		default: break;
		}
	}
	oa_sort_keys(k, du->n_rows);
	oa_du_row *v = oa_xcalloc(du->n_rows, sizeof *v);
	for (size_t i = 0; i < du->n_rows; i++)
		v[i] = du->rows[k[i].idx];
	memcpy(du->rows, v, du->n_rows * sizeof *v);
	free(v);
	free(k);
}

static void du_table(cli *c, const oa_store *s, const oa_du_store *d, bool first)
{
	/* On a narrow terminal NAME keeps 24 columns while APPARENT, SHARED,
	 * LAST USED and ON DISK give way; UNIQUE (what rm frees) stays. */
	static const oa_column cols[6] = {
		{ "NAME", 0, 24, false },    { "UNIQUE", 0, 0, true },   { "SHARED", 4, 0, true },
		{ "ON DISK", 2, 0, true }, { "APPARENT", 5, 0, true }, { "LAST USED", 3, 0, false },
	};
	size_t n = d->du.n_rows;
	/* LAST USED when the store has server logs (docs/history.md). */
	oa_table tb = { .col = cols, .ncol = cli_usage_of(c, s)->have_logs ? 6 : 5, .gap = "   " };
	int64_t now = oa_wall_now_ns();
	for (size_t i = 0; i < n; i++) {
		const oa_du_row *r = &d->du.rows[i];
		uint64_t v[4] = { r->unique, r->shared, r->allocated, r->apparent };
		char *cell[6] = { row_name(s, r, ", ") };
		for (int k = 0; k < 4; k++) {
			char b[48];
			oa_format_size(v[k], c->units, b, sizeof b);
			cell[k + 1] = oa_xstrdup(b);
		}
		if (tb.ncol > 5)
			cell[5] = cli_last_used_text(c, s, r->models, r->n_models, now);
		oa_table_add(&tb, cell);
	}
	if (!c->no_header) {
		char *er = oa_escape(s->root, strlen(s->root));
		printf("%s%s\n", first ? "" : "\n", er);
		free(er);
	}
	cli_table_print(c, &tb, stdout);
	char b1[48], b2[48];
	printf("\n");
	oa_format_size(d->du.referenced, c->units, b1, sizeof b1);
	oa_format_size(d->du.referenced_apparent, c->units, b2, sizeof b2);
	printf("referenced     %10s on disk (%s apparent)\n", b1, b2);
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		if (!d->junk.count[k])
			continue;
		oa_format_size(d->junk.allocated[k], c->units, b1, sizeof b1);
		printf("junk %-14s %6s  %zu entr%s\n", oa_junk_cat_name((enum oa_junk_cat)k), b1,
		       d->junk.count[k], d->junk.count[k] == 1 ? "y" : "ies");
	}
	oa_format_size(d->reclaimable, c->units, b1, sizeof b1);
	printf("reclaimable    %10s (`prune`: orphans, partials, temps older than 1 h)\n", b1);
	if (d->quarantine) {
		oa_format_size(d->quarantine_bytes, c->units, b1, sizeof b1);
		printf("quarantine     %10s  %zu entr%s in %s (`restore DIR --empty` frees them)\n", b1,
		       d->quarantine_entries, d->quarantine_entries == 1 ? "y" : "ies", oa_text_safe(d->quarantine));
	}
	oa_format_size(d->du.blobs_total, c->units, b1, sizeof b1);
	oa_format_size(d->du.blobs_total_apparent, c->units, b2, sizeof b2);
	printf("blobs/ total   %10s on disk (%s apparent)\n", b1, b2);
	if (s->n_metadata || s->n_stale_metadata) {
		oa_format_size(s->metadata_bytes, c->units, b1, sizeof b1);
		printf("metadata/      %10s  %zu cache%s, %zu stale\n", b1, s->n_metadata + s->n_stale_metadata,
		       s->n_metadata + s->n_stale_metadata == 1 ? "" : "s", s->n_stale_metadata);
	}
	oa_conversion *cv;
	size_t ncv = oa_store_conversions(s, &cv);
	for (size_t i = 0; i < ncv; i++) {
		char b3[48];
		oa_format_size(cv[i].duplicated, c->units, b1, sizeof b1);
		oa_format_size(cv[i].drop_llamacpp, c->units, b2, sizeof b2);
		oa_format_size(cv[i].drop_ggml, c->units, b3, sizeof b3);
		printf("converted      %s: the llamacpp child duplicates %s of its ggml source; dropping the "
		       "llamacpp child frees %s, the ggml child %s\n", cv[i].ggml->display, b1, b2, b3);
	}
	free(cv);
}

static void total_table(cli *c, const oa_du_total *t)
{
	char b1[48], b2[48];
	printf("\nall %zu stores (%zu model rows)\n", t->stores, t->models);
	oa_format_size(t->referenced, c->units, b1, sizeof b1);
	oa_format_size(t->referenced_apparent, c->units, b2, sizeof b2);
	printf("referenced     %10s on disk (%s apparent)\n", b1, b2);
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		if (!t->junk_count[k])
			continue;
		oa_format_size(t->junk_bytes[k], c->units, b1, sizeof b1);
		printf("junk %-14s %6s  %llu entr%s\n", oa_junk_cat_name((enum oa_junk_cat)k), b1,
		       (unsigned long long)t->junk_count[k], t->junk_count[k] == 1 ? "y" : "ies");
	}
	oa_format_size(t->reclaimable, c->units, b1, sizeof b1);
	printf("reclaimable    %10s\n", b1);
	oa_format_size(t->blobs, c->units, b1, sizeof b1);
	oa_format_size(t->blobs_apparent, c->units, b2, sizeof b2);
	printf("blobs/ total   %10s on disk (%s apparent)\n", b1, b2);
}

static void du_csv(const oa_store *s, const oa_du_store *d)
{
	FILE *out = cli_text_out();
	for (size_t k = 0; k < d->du.n_rows; k++) {
		const oa_du_row *r = &d->du.rows[k];
		char *name = row_name(s, r, " ");
		char num[4][32];
		snprintf(num[0], sizeof num[0], "%llu", (unsigned long long)r->unique);
		snprintf(num[1], sizeof num[1], "%llu", (unsigned long long)r->shared);
		snprintf(num[2], sizeof num[2], "%llu", (unsigned long long)r->allocated);
		snprintf(num[3], sizeof num[3], "%llu", (unsigned long long)r->apparent);
		oa_csv_field(out, s->root, false);
		oa_csv_field(out, name, false);
		char id[13];
		snprintf(id, sizeof id, "%.12s", r->id);
		oa_csv_field(out, id, false);
		oa_csv_field(out, r->id, false);
		oa_csv_field(out, r->manifest_ok ? "true" : "false", false);
		for (int q = 0; q < 4; q++)
			oa_csv_field(out, num[q], q == 3);
		free(name);
	}
}

/* -q: every tag of each row: removing them all frees UNIQUE. */
static void du_names(const oa_store *s, const oa_du_store *d)
{
	for (size_t k = 0; k < d->du.n_rows; k++)
		for (size_t m = 0; m < d->du.rows[k].n_models; m++)
			if (!s->models[d->du.rows[k].models[m]].anchor && !s->models[d->du.rows[k].models[m]].sibling)
				cli_print_name(s->models[d->du.rows[k].models[m]].display);
}

/* What every format of `du` renders, once per store (the slots in
 * commands.c); json collects the stores into `docs` for du_finish(). */
typedef struct du_view {
	oa_store *s; /* not const: cli_multi_prom_store() takes the store */
	const oa_du_store *d;
	bool first;
	json_t *docs;
} du_view;

void du_render_table(cli *c, const void *view)
{
	const du_view *v = view;
	if (c->quiet)
		du_names(v->s, v->d);
	else
		du_table(c, v->s, v->d, v->first);
}

void du_render_json(cli *c, const void *view)
{
	const du_view *v = view;
	oa_last_used lu = cli_last_used(c, v->s);
	json_array_append_new(v->docs, oa_du_view_store(v->s, v->d, &lu));
}

void du_render_ndjson(cli *c, const void *view)
{
	const du_view *v = view;
	oa_last_used lu = cli_last_used(c, v->s);
	json_t *recs = oa_du_view_records(v->s, v->d, &lu, cli_host());
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
}

void du_render_csv(cli *c, const void *view)
{
	(void)c;
	const du_view *v = view;
	du_csv(v->s, v->d);
}

void du_render_prometheus(cli *c, const void *view)
{
	const du_view *v = view;
	/* its rows, unless --unused-for or --sort changed them */
	bool all_rows = c->unused_for < 0 && (c->sort == SORT_DEFAULT || c->sort == SORT_UNIQUE);
	cli_multi_prom_store(c, v->s, v->s->scan_seconds, all_rows ? v->d : NULL, v->d);
}

/* The tables have no room for why a size is missing: say which file could
 * not be read, or exit 8 would be unexplained. */
static void du_unreadable(cli *c, const oa_store *s)
{
	for (size_t k = 0; k < s->findings.n; k++) {
		const oa_finding *f = &s->findings.v[k];
		if (strcmp(f->code, "unreadable") != 0)
			continue;
		cli_err("%s: %s", s->root, f->message ? f->message : f->path ? f->path : "unreadable");
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
}

/* After the stores: the json document, the ndjson total record, or the
 * combined table. "total" is there for one store too, so scripts need no
 * special case. */
static void du_finish(cli *c, const oa_du_total *total, json_t *docs)
{
	if (c->format == OUT_JSON) {
		cli_emit_document(c, oa_du_view_document(json_incref(docs), total));
	} else if (c->format == OUT_NDJSON) {
		json_t *rec = oa_du_view_total_record(total, cli_host());
		oa_json_dump_line(rec, stdout);
		json_decref(rec);
	} else if (c->format == OUT_TABLE && total->stores > 1 && !c->quiet) {
		total_table(c, total);
	}
}

/* --quarantine DIR: what it holds (the store is never written: the
 * quarantine is named on the command line, not found from the store). */
static int read_quarantine(cli *c, oa_quarantine_held *q)
{
	char err[512];
	if (oa_quarantine_held_read(c->quarantine, q, err, sizeof err) == 0)
		return 0;
	cli_err("--quarantine: %s", err);
	c->exit_code |= OA_EXIT_OPERATIONAL;
	return -1;
}

static bool quarantine_of(const oa_store *s, const oa_quarantine_held *q)
{
	return (uint64_t)s->root_st.st_dev == q->store_dev && (uint64_t)s->root_st.st_ino == q->store_ino;
}

static int du_options_ok(cli *c)
{
	if (c->n_args) {
		cli_err("du takes no arguments");
		return OA_EXIT_USAGE;
	}
	if (c->quarantine && (c->duplicates || c->quiet || c->format == OUT_CSV)) {
		cli_err("du --quarantine adds to the store's totals: table, json, ndjson or prometheus, "
		        "without -q or --duplicates");
		return OA_EXIT_USAGE;
	}
	if (c->duplicates && c->quiet) {
		cli_err("du -q prints model names; --duplicates lists blobs");
		return OA_EXIT_USAGE;
	}
	return 0;
}

int cmd_du(cli *c)
{
	int rc = du_options_ok(c);
	if (rc)
		return rc;
	if (c->duplicates) {
		if (c->format == OUT_PROMETHEUS)
			return cli_refuse_format(c, "du --duplicates", "table json ndjson csv");
		return cmd_du_duplicates(c); /* cmd_dedupe.c (docs/multi-store.md) */
	}
	oa_quarantine_held held;
	if (c->quarantine && read_quarantine(c, &held) < 0)
		return c->exit_code;
	bool held_shown = false;
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	bool first = true;
	oa_du_total total;
	memset(&total, 0, sizeof total);
	json_t *docs = json_array();
	if (c->format == OUT_CSV)
		fprintf(cli_text_out(), "store,name,id,digest,manifest_ok,unique_bytes,shared_bytes,disk_bytes,apparent_bytes\n");
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		cli_usage_of(c, s); /* LAST USED and --unused-for */
		if (c->unused_for >= 0 && !cli_unused_for_ready(c, s))
			continue;
		oa_du_store d;
		oa_du_store_compute(s, oa_wall_now(), &d);
		if (c->unused_for >= 0)
			keep_unused(c, s, &d.du);
		sort_rows(c, s, &d.du);
		if (c->quarantine && quarantine_of(s, &held)) {
			d.quarantine = c->quarantine;
			d.quarantine_entries = held.entries;
			d.quarantine_bytes = held.disk_bytes;
			held_shown = true;
		}
		cli_render(c, &(du_view){ .s = s, .d = &d, .first = first, .docs = docs });
		first = false;
		oa_du_total_add(&total, &d);
		oa_du_store_free(&d);
		du_unreadable(c, s);
	}
	if (c->quarantine && !held_shown) {
		cli_err("--quarantine %s holds files of a store du does not show", c->quarantine);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	du_finish(c, &total, docs);
	json_decref(docs);
	cli_close_stores(st, n);
	return c->exit_code;
}
