/* cmd_history.c - `ollama-audit history`: the model loads the server's logs
 * recorded, newest first, and per model its last load (docs/history.md).
 * The library reads (the run's audit: audit/audit_inputs.h), selects
 * (audit/select.h) and draws (views/history_text.h). */
#include "cli_audit.h"
#include "cli_machine.h"
#include "cmd_history.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "report_common.h"
#include "usage.h"
#include "audit/audit_inputs.h"
#include "views/history_text.h"
#include "views/list_text.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/history_report.h"
#include "ollama_audit/report.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every format of `history` renders, once per store (the slots in
 * commands.c). */
typedef struct history_view {
	const oa_history_view *x;
	bool first;
} history_view;

void history_render_table(cli *c, const void *view)
{
	const history_view *v = view;
	oa_text_style st = cli_text_style(c);
	oa_history_text(&st, stdout, v->x, v->first);
}

/* One document, {"schema":..., "stores":[...]}, a store at a time. */
void history_render_json(cli *c, const void *view)
{
	const history_view *v = view;
	cli_emit_store(c, OA_SCHEMA_HISTORY, oa_history_view_json(v->x));
}

void history_render_ndjson(cli *c, const void *view)
{
	(void)c;
	const history_view *v = view;
	oa_history_ndjson(stdout, v->x, cli_host());
}

void history_render_csv(cli *c, const void *view)
{
	(void)c;
	const history_view *v = view;
	oa_history_csv(cli_text_out(), v->x, v->first);
}

/* One store's history, in the chosen format. */
static void history_store(cli *c, oa_store *s, const oa_load_window *w, bool first)
{
	oa_history_view x;
	oa_model_args a = cli_model_args(c);
	if (!oa_history_view_read(&x, oa_audit_log_inputs(cli_audit(c)), s, w, &a))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	for (size_t i = 0; first && i < x.src.n_problems; i++)
		cli_err("%s", x.src.problems[i]);
	if (first)
		oa_history_say_warnings(stderr, &x.h);
	cli_render(c, &(history_view){ .x = &x, .first = first });
	oa_history_view_free(&x);
}

int cmd_history(cli *c)
{
	int64_t now = oa_wall_now_ns();
	oa_load_window w = { .has_since = c->since != NULL, .has_until = c->until != NULL };
	bool bad_since = w.has_since && oa_when_parse(c->since, now, &w.since) < 0;
	if (bad_since || (w.has_until && oa_when_parse(c->until, now, &w.until) < 0)) {
		cli_err("--since/--until take an RFC 3339 time (2026-10-22T09:15:02Z), a date (2026-10-22) "
		        "or a duration ago: %s; not '%s'", OA_DURATION_GRAMMAR, bad_since ? c->since : c->until);
		return OA_EXIT_USAGE;
	}
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	size_t readable = 0;
	for (size_t i = 0; i < n; i++)
		readable += st[i].ok;
	oa_audit_stdin_shared(cli_audit(c), readable > 1); /* else read as it comes */
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok || (c->n_args && !check_args_resolve(c, &st[i].s)))
			continue;
		history_store(c, &st[i].s, &w, first);
		first = false;
	}
	cli_emit_store(c, OA_SCHEMA_HISTORY, NULL); /* no store reported: an empty document (json only) */
	cli_close_stores(st, n);
	return c->exit_code;
}
