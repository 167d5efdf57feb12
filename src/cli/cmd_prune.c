/* cmd_prune.c - `ollama-audit prune` (docs/disk-space.md): its options,
 * its plan (reclaim.h), and --predict-server. The plan is rendered,
 * confirmed and applied by the steps rm shares (plan_steps.h); the text is
 * the library's (views/prune_text.h). */
#include "cmd_prune.h"
#include "cli_audit.h"
#include "cli_machine.h"
#include "open_stores.h"
#include "output.h"
#include "plan_steps.h"
#include "usage.h"
#include "views/prune_text.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/reclaim.h"
#include "base/platform.h"
#include "ollama_audit/prune_report.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- --predict-server ------------------------------------------------------------- */

typedef struct predict_view {
	const oa_store *s;
	const oa_server_prune *p; /* NULL: no store could be read */
	bool first, last;
} predict_view;

static void predict_table(cli *c, const void *view)
{
	const predict_view *v = view;
	oa_text_style st = cli_text_style(c);
	if (v->p)
		oa_server_prune_text(&st, stdout, v->s, v->p, c->server_version, v->first);
}

static void predict_json(cli *c, const void *view)
{
	const predict_view *v = view;
	if (v->p)
		cli_put_stream_item(c, OA_PREDICT_SERVER_SCHEMA, oa_report_server_prune(v->s, v->p), v->first, v->last);
	else
		cli_put_stream_end(c, OA_PREDICT_SERVER_SCHEMA, false);
}

static const cli_renderer predict_render[OUT_FORMATS] = { [OUT_TABLE] = predict_table, [OUT_JSON] = predict_json };

/* --predict-server: what the server's start-up prune does to each store. */
static int predict_all(cli *c, opened_store *st, size_t n)
{
	size_t last = 0, n_ok = 0;
	for (size_t i = 0; i < n; i++)
		if (st[i].ok)
			last = i, n_ok++;
	c->render = predict_render;
	for (size_t i = 0, k = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_server_prune p;
		const char *by;
		const char *v = oa_predict_server_version(c->server_version,
		                                          c->server_version ? NULL : cli_usage_of(c, &st[i].s), &by);
		oa_server_prune_predict_version(&st[i].s, oa_wall_now(), v, by, &p);
		cli_render(c, &(predict_view){ .s = &st[i].s, .p = &p, .first = !k++, .last = i == last });
		oa_server_prune_free(&p);
	}
	if (!n_ok)
		cli_render(c, &(predict_view){ 0 });
	cli_close_stores(st, n);
	return c->exit_code;
}

/* ---- prune ---------------------------------------------------------------------------- */

static bool prune_args_ok(cli *c, int *rc)
{
	*rc = OA_EXIT_USAGE;
	if (c->n_args) {
		cli_err("prune takes no arguments (to remove models: ollama-audit rm MODEL...)");
		return false;
	}
	if (c->server_version && !c->predict_server) {
		cli_err("--server-version goes with --predict-server");
		return false;
	}
	if (c->predict_server && (c->apply || c->plan_path || c->quarantine)) {
		cli_err("--predict-server only prints; it does not combine with --apply, --plan or --quarantine");
		return false;
	}
	if (c->predict_server && !predict_render[c->format]) {
		*rc = cli_refuse_format(c, "prune --predict-server", "table json");
		return false;
	}
	return cli_apply_options_ok(c);
}

/* What prune can free in this store now (reclaim.h). */
static bool plan_now(cli *c, oa_store *s, oa_plan *p, oa_junk_list *j)
{
	oa_reclaim r;
	oa_reclaim_plan(s, c->what ? c->what : OA_JUNK_DEFAULT,
	                c->min_age >= 0 ? c->min_age : OA_SERVER_GRACE_SECONDS, oa_wall_now(), &r);
	oa_reclaim_text(cli_err, s->root, &r);
	*p = r.plan; /* both handed to the caller */
	*j = r.junk;
	return true;
}

int cmd_prune(cli *c)
{
	int rc;
	if (!prune_args_ok(c, &rc))
		return rc;
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	size_t n_opened = 0;
	for (size_t i = 0; i < n; i++)
		n_opened += st[i].ok;
	if (c->plan_path && n_opened > 1) {
		cli_err("--plan works on one store at a time, and %zu were opened: name one with --store",
		        n_opened);
		cli_close_stores(st, n);
		return OA_EXIT_USAGE;
	}
	return c->predict_server ? predict_all(c, st, n) : cli_plan_stores(c, st, n, plan_now);
}
