/* cmd_history.c - `ollama-audit history`: the model loads the server's logs
 * recorded, newest first, and per model its last load (docs/history.md);
 * and, for list, du, rm and check, what the logs say about each model of a
 * store. The library reads (history/log_inputs.h), selects (views/select.h)
 * and draws (views/history_text.h). */
#include "cli_machine.h"
#include "cmd_history.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "report_common.h"
#include "usage.h"
#include "history/log_inputs.h"
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

/* Standard input is spooled for several readers until history knows it
 * reads one store. */
static oa_log_inputs in = { .stdin_shared = true };

/* The logs the options name (--log, --root). */
static void set_inputs(const cli *c)
{
	in.logs = (const char *const *)c->logs;
	in.n_logs = c->n_logs;
	in.root = c->root;
	in.sysroot = getenv("OLLAMA_AUDIT_SYSROOT");
}

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
	set_inputs(c);
	if (!oa_history_view_read(&x, &in, s, w, &a))
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
	in.stdin_shared = readable > 1;
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok || (c->n_args && !check_args_resolve(c, &st[i].s)))
			continue;
		history_store(c, &st[i].s, &w, first);
		first = false;
	}
	cli_emit_store(c, OA_SCHEMA_HISTORY, NULL); /* no store reported: an empty document (json only) */
	oa_log_inputs_close(&in);
	cli_close_stores(st, n);
	return c->exit_code;
}

/* The logs' record of use for list, du and rm: read once per store. */
static oa_usage_cache usage;

/* The sources' problems on stderr; true when every named source was read. */
static bool say_problems(cli *c, oa_log_sources *src, bool ok)
{
	for (size_t i = 0; i < src->n_problems; i++)
		cli_err("%s", src->problems[i]);
	oa_log_sources_free(src);
	if (!ok)
		c->exit_code |= OA_EXIT_OPERATIONAL;
	return ok;
}

const cli_usage *cli_usage_of(cli *c, const oa_store *s)
{
	cli_usage *u = oa_usage_cache_find(&usage, s);
	if (u)
		return u;
	u = oa_usage_cache_add(&usage, s);
	oa_log_sources src = { 0 };
	set_inputs(c);
	say_problems(c, &src, oa_log_inputs_usage(&in, (oa_store *)s, u, &src));
	if (u->n_sources && c->format == OUT_TABLE && (strcmp(c->cmd, "list") == 0 || strcmp(c->cmd, "du") == 0))
		oa_history_say_sources(stderr, s, &(oa_log_sources){ .names = u->sources, .n = u->n_sources },
		                       "LAST USED from");
	return u;
}

bool cli_unused_for_ready(cli *c, const oa_store *s)
{
	const cli_usage *u = cli_usage_of(c, s);
	if (!u->have_logs) {
		cli_err("%s: %s needs the server's logs and none were found (server*.log beside "
		        "the store, the journal, or --log FILE): nothing is taken as unused", s->root,
		        c->unused_for >= 0 ? "--unused-for" : "--filter used");
		c->exit_code |= OA_EXIT_OPERATIONAL;
		return false;
	}
	oa_usage_say_span(stderr, s, u);
	return true;
}

bool cli_selection_needs_logs(const cli *c)
{
	return c->unused_for >= 0 || oa_model_filters_need_logs(c->filters, c->n_filters);
}

oa_list_query cli_selection_query(cli *c, const oa_store *s)
{
	static const enum oa_list_sort sorts[] = {
		[SORT_DEFAULT] = OA_LIST_SORT_DEFAULT,   [SORT_NAME] = OA_LIST_SORT_NAME,
		[SORT_SIZE] = OA_LIST_SORT_SIZE,         [SORT_UNIQUE] = OA_LIST_SORT_UNIQUE,
		[SORT_MODIFIED] = OA_LIST_SORT_MODIFIED, [SORT_LAST_USED] = OA_LIST_SORT_LAST_USED,
		[SORT_UNSERVABLE] = OA_LIST_SORT_UNSERVABLE,
	};
	int64_t now = oa_wall_now_ns();
	return (oa_list_query){ .usage = cli_usage_of(c, s), .unused_only = c->unused_for >= 0,
	                        .cutoff_ns = now - (int64_t)(c->unused_for * 1e9), .sort = sorts[c->sort],
	                        .reverse = c->sort_reverse, .filters = c->filters, .n_filters = c->n_filters,
	                        .now_ns = now, .limit = c->limit };
}

void cli_usage_release(void)
{
	oa_usage_cache_free(&usage);
}

char *cli_last_used_text(const cli *c, const oa_store *s, const size_t *models, size_t n, int64_t now_ns)
{
	(void)c;
	const cli_usage *u = oa_usage_cache_find(&usage, s);
	oa_last_used lu = u ? cli_usage_last_used(u) : (oa_last_used){ 0 };
	return oa_last_used_text(&lu, models, n, now_ns);
}

void cli_log_findings(cli *c, oa_store *s)
{
	oa_log_sources src = { 0 };
	set_inputs(c);
	say_problems(c, &src, oa_log_inputs_findings(&in, s, &src));
}

int64_t cli_last_used_ns(cli *c, const oa_store *s, const size_t *models, size_t n)
{
	return oa_usage_newest(cli_usage_of(c, s), models, n);
}
