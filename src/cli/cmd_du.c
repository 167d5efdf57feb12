/* cmd_du.c - `ollama-audit du`: disk usage per model and for the store. The
 * library measures (metrics.h) and draws (du_report.h, views/du_text.h). */
#include "cmd_du.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "dupes_steps.h"
#include "cli_audit.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "usage.h"
#include "views/du_text.h"
#include "ollama_audit/du_report.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "base/platform.h"

#include <string.h>

/* What every format of `du` renders (the slots in commands.c): each store
 * (dv), then the end (the json document of `docs`, the ndjson total record,
 * the combined table; csv's header when no store came before). */
typedef struct du_view {
	const oa_du_view *dv;
	oa_du_total total; /* of the stores so far */
	bool end;
	json_t *docs;
} du_view;

void du_render_table(cli *c, const void *view)
{
	const du_view *v = view;
	oa_text_style st = cli_text_style(c);
	if (v->dv && c->quiet)
		oa_du_text_names(stdout, v->dv->s, &v->dv->shown);
	else if (v->dv) {
		oa_du_text_store(&st, stdout, v->dv->s, &v->dv->shown, &v->dv->lu, oa_wall_now_ns(), !v->total.stores);
		oa_du_text_selection(&st, stdout, v->dv);
	}
	else if (v->end && v->total.stores > 1 && !c->quiet)
		oa_du_text_total(&st, stdout, &v->total);
}

void du_render_json(cli *c, const void *view)
{
	const du_view *v = view;
	if (v->dv) {
		json_t *o = oa_du_view_store(v->dv->s, &v->dv->shown, &v->dv->lu);
		oa_du_view_selection_json(v->dv, o);
		json_array_append_new(v->docs, o);
	}
	else if (v->end) /* "total" is there for one store too: scripts need no special case */
		cli_emit_document(c, oa_du_view_document(json_incref(v->docs), &v->total));
}

void du_render_ndjson(cli *c, const void *view)
{
	const du_view *v = view;
	json_t *recs = v->dv ? oa_du_view_records(v->dv->s, &v->dv->shown, &v->dv->lu, cli_host()) : json_array();
	for (size_t i = 0; v->dv && i < json_array_size(recs); i++) { /* the summary: the json store object */
		const char *type = json_string_value(json_object_get(json_array_get(recs, i), "type"));
		if (type && strcmp(type, "summary") == 0)
			oa_du_view_selection_json(v->dv, json_array_get(recs, i));
	}
	if (v->end)
		json_array_append_new(recs, oa_du_view_total_record(&v->total, cli_host()));
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
}

void du_render_csv(cli *c, const void *view)
{
	const du_view *v = view;
	if (!v->total.stores) /* the first store, or the end of a run that showed none */
		oa_du_csv_header(cli_text_out());
	if (v->dv)
		oa_du_csv_store(cli_text_out(), v->dv->s, &v->dv->shown);
}

void du_render_prometheus(cli *c, const void *view)
{
	const du_view *v = view;
	if (v->dv)
		cli_multi_prom_store(c, v->dv->s, v->dv->s->scan_seconds, &v->dv->m, &v->dv->lu);
}

static int du_options_ok(cli *c)
{
	const char *why = c->n_args ? "du takes no arguments"
	                : c->quarantine && (c->duplicates || c->quiet || strcmp(c->format_name, "csv") == 0)
	                ? "du --quarantine adds to the store's totals: table, json, ndjson or prometheus, "
	                  "without -q or --duplicates"
	                : c->duplicates && c->quiet ? "du -q prints model names; --duplicates lists blobs" : NULL;
	if (why) {
		cli_err("%s", why);
		return OA_EXIT_USAGE;
	}
	if (c->duplicates && strcmp(c->format_name, "prometheus") == 0)
		return cli_refuse_format(c, "du --duplicates", "table json ndjson csv");
	return 0;
}

/* One store, measured once and rendered (held: --quarantine's, or NULL);
 * whether the quarantine holds files of it. The tables have no room for
 * why a size is missing: say which file could not be read. */
static bool du_store(cli *c, oa_store *s, du_view *v, const oa_quarantine_held *held)
{
	static const enum oa_du_sort sort_of[] = { [SORT_NAME] = OA_DU_SORT_NAME, [SORT_SIZE] = OA_DU_SORT_SIZE,
		[SORT_MODIFIED] = OA_DU_SORT_MODIFIED, [SORT_LAST_USED] = OA_DU_SORT_LAST_USED,
		[SORT_UNSERVABLE] = OA_DU_SORT_UNSERVABLE };
	oa_list_query rm = cli_selection_query(c, s);
	rm.sort = OA_LIST_SORT_DEFAULT; /* the footer says what `rm SELECTION` frees: no --sort, no --limit */
	rm.reverse = false;
	rm.limit = 0;
	oa_du_select sel = { sort_of[c->sort], cli_last_used(c, s), c->unused_for >= 0 ? cli_usage_of(c, s) : NULL,
	                     rm.cutoff_ns, .reverse = c->sort_reverse, .filters = c->filters,
	                     .n_filters = c->n_filters, .usage = rm.usage, .now_ns = rm.now_ns, .limit = c->limit,
	                     .rm = c->selection ? &rm : NULL, .rm_args = c->selection };
	oa_du_view dv;
	oa_du_view_make(s, oa_wall_now(), &sel, c->quarantine, held, &dv);
	oa_store_drop_tag_facts(s); /* the view holds what du shows: memory for rendering it */
	bool holds = dv.holds;
	v->dv = &dv;
	cli_render(c, v);
	v->dv = NULL;
	oa_du_total_add(&v->total, &dv.shown);
	oa_du_view_free(&dv);
	for (size_t k = 0; k < s->findings.n; k++)
		if (s->findings.v[k].id == OA_FINDING_UNREADABLE) {
			const oa_finding *f = &s->findings.v[k];
			cli_err("%s: %s", s->root, f->message ? f->message : f->path ? f->path : "unreadable");
			c->exit_code |= OA_EXIT_OPERATIONAL;
		}
	return holds;
}

int cmd_du(cli *c)
{
	int rc = du_options_ok(c);
	if (rc || c->duplicates)
		return rc ? rc : cli_du_duplicates(c); /* dupes_steps.c (docs/multi-store.md) */
	oa_quarantine_held held;
	char err[512]; /* --quarantine DIR: what it holds (named on the command line, the store never written) */
	if (c->quarantine && oa_quarantine_held_read(c->quarantine, &held, err, sizeof err) < 0) {
		cli_err("--quarantine: %s", err);
		return c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	bool held_shown = false;
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	du_view v = { .docs = json_array() };
	for (size_t i = 0; i < n; i++) /* (cli_unused_for_ready and du_store read the store's logs first) */
		if (st[i].ok && (!cli_selection_needs_logs(c) || cli_unused_for_ready(c, &st[i].s)))
			held_shown |= du_store(c, &st[i].s, &v, c->quarantine ? &held : NULL);
	if (c->quarantine && !held_shown) {
		cli_err("--quarantine %s holds files of a store du does not show", c->quarantine);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	v.end = true;
	cli_render(c, &v);
	json_decref(v.docs);
	cli_close_stores(st, n);
	return c->exit_code;
}
