/* cmd_stores.c - `ollama-audit stores`: every store on the machine, with its
 * owner, size, model count and how it was found (docs/multi-store.md). The
 * library reads each row (stores_report.h) and draws them (views/stores_text.h). */
#include "cmd_stores.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "cmd_dedupe.h"
#include "host.h"
#include "output.h"
#include "usage.h"
#include "views/stores_text.h"
#include "ollama_audit/dupes.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

typedef oa_stores_row row;

/* What reading a row found: parts that could not be read, a store that
 * would not open, or no store where --store said (elsewhere only a row). */
static void report_row(cli *c, const row *r)
{
	const oa_candidate *k = r->cand;
	if (r->opened) {
		c->stores_read++;
		if (!r->unreadable)
			return;
		cli_err("%s: %zu part%s could not be read (see `ollama-audit --store %s check`)", r->s.root,
		        r->unreadable, r->unreadable == 1 ? "" : "s", r->s.root);
	} else if (k->state == OA_CAND_STORE || k->state == OA_CAND_DENIED) {
		cli_fail(c, "store-unreadable", k->root, "%s (store of %s): skipped", r->error, k->user ? k->user : "?");
		cli_multi_failed(c, k->root, oa_store_source_name(oa_store_source_of(k->found[0].source)));
	} else if (oa_candidate_named(k)) {
		bool not_store = k->state == OA_CAND_NOT_STORE;
		cli_fail(c, "store-unreadable", k->path, "%s%s%s", k->path, not_store ? " " : ": ",
		         not_store ? "is not an Ollama store: no manifests/ or blobs/"
		         : k->state == OA_CAND_MISSING ? strerror(k->err) : r->error);
		if (k->state != OA_CAND_UNKNOWN)
			cli_multi_failed(c, k->path, "--store");
	} else {
		return;
	}
	c->exit_code |= OA_EXIT_OPERATIONAL;
}

/* The duplicates among the opened stores, and what dedupe can free here. */
static void find_dupes(row *rows, size_t n, oa_stores_dupes *d)
{
	oa_store **sv = oa_xcalloc(n ? n : 1, sizeof *sv);
	for (size_t i = 0; i < n; i++)
		sv[i] = rows[i].opened ? &rows[i].s : NULL;
	oa_dupes_find(sv, n, &d->dupes);
	d->by_hardlink = false;
	d->dedupe_bytes = d->dupes.n ? cli_dedupe_can_free(sv, &d->dupes, &d->by_hardlink) : 0;
	free(sv);
}

/* What every format of `stores` renders (the slots in commands.c). */
typedef struct stores_view {
	const row *rows;
	size_t n;
	oa_stores_dupes d;
	oa_stores_totals t;
} stores_view;

void stores_render_table(cli *c, const void *view)
{
	const stores_view *v = view;
	oa_text_style st = cli_text_style(c);
	if (v->n == 0)
		cli_err("no Ollama store found (`stores --all` lists every place looked at)");
	oa_stores_text(&st, stdout, v->rows, v->n, &v->t, &v->d);
}

void stores_render_json(cli *c, const void *view)
{
	const stores_view *v = view;
	cli_emit_document(c, oa_stores_view_document(cli_host(), v->rows, v->n, &v->t, &v->d));
}

void stores_render_ndjson(cli *c, const void *view)
{
	const stores_view *v = view;
	json_t *recs = oa_stores_view_records(cli_host(), v->rows, v->n, &v->t, &v->d);
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
}

void stores_render_csv(cli *c, const void *view)
{
	const stores_view *v = view;
	oa_stores_csv(cli_text_out(), cli_host(), v->rows, v->n);
}

void stores_render_prometheus(cli *c, const void *view)
{
	const stores_view *v = view;
	size_t opened = 0;
	for (size_t i = 0; i < v->n; i++)
		if (v->rows[i].opened && ++opened)
			cli_multi_prom_store(c, &v->rows[i].s, v->rows[i].seconds, &v->rows[i].metrics);
	if (opened >= 2)
		cli_multi_prom_add("ollama_store_duplicate_bytes", (double)v->d.dupes.saving);
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
	row *rows = oa_xcalloc(d.n ? d.n : 1, sizeof *rows);
	stores_view v = { .rows = rows };
	oa_open_options opt = { c->platform, OA_HEADERS_NONE };
	for (size_t i = 0; i < d.n; i++)
		if (oa_stores_shown(&d.v[i], c->all)) { /* (an unknown candidate is: its row says why) */
			oa_stores_row_read(&rows[v.n], &d.v[i], &opt, oa_wall_now());
			report_row(c, &rows[v.n++]);
		}
	find_dupes(rows, v.n, &v.d);
	oa_stores_totals_compute(rows, v.n, &v.t);
	cli_render(c, &v);
	oa_stores_totals_free(&v.t);
	oa_dupes_free(&v.d.dupes);
	for (size_t i = 0; i < v.n; i++)
		oa_stores_row_free(&rows[i]);
	free(rows);
	oa_discovery_free(&d);
	return c->exit_code;
}
