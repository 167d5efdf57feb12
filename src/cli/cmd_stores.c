/* cmd_stores.c - `ollama-audit stores`: every store on the machine, with its
 * owner, size, model count and how it was found (docs/multi-store.md). The
 * library reads each row (stores_report.h) and draws them (views/stores_text.h). */
#include "cmd_stores.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "ollama_audit/dedupe_run.h"
#include "host.h"
#include "output.h"
#include "usage.h"
#include "views/stores_text.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "ollama_audit/shared.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* What reading a row found: a store that would not open, or no store
 * where --store said, is a failure; parts that could not be read, said. */
static void report_row(cli *c, const oa_stores_row *r)
{
	const char *path, *how;
	char *why = oa_stores_text_problem(r, &path, &how);
	c->stores_read += r->opened;
	if (why && r->opened)
		cli_err("%s", why);
	else if (why)
		cli_fail(c, "store-unreadable", path, "%s", why);
	if (why && how)
		cli_multi_failed(c, path, how);
	if (why)
		c->exit_code |= OA_EXIT_OPERATIONAL;
	free(why);
}

/* What every format of `stores` renders (the slots in commands.c). */
typedef struct stores_view {
	const oa_stores_row *rows;
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
			cli_multi_prom_store(c, &v->rows[i].s, v->rows[i].seconds, &v->rows[i].metrics, NULL);
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
	oa_peer_index *peers = oa_peer_index_new(c->stores, c->n_stores);
	oa_open_options opt = { c->platform, OA_HEADERS_NONE, c->jobs, false, peers };
	stores_view v = { 0 };
	oa_stores_row *rows = oa_stores_read(&d, c->all, &opt, oa_wall_now(), &v.n);
	for (size_t i = 0; i < v.n; i++)
		report_row(c, &rows[i]);
	oa_stores_dupes_find(rows, v.n, oa_dedupe_can_free, &v.d);
	v.rows = rows;
	oa_stores_totals_compute(rows, v.n, &v.t);
	cli_render(c, &v);
	oa_stores_totals_free(&v.t);
	oa_dupes_free(&v.d.dupes);
	oa_stores_rows_free(rows, v.n);
	oa_peer_index_free(peers);
	oa_discovery_free(&d);
	return c->exit_code;
}
