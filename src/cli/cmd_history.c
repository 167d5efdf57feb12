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

/* A store's logs into h, the sources read into used; problems reported
 * when report. Returns false when a named source failed. */
static bool read_sources(cli *c, const oa_store *s, oa_history *h, oa_log_sources *used, bool report)
{
	in.logs = (const char *const *)c->logs;
	in.n_logs = c->n_logs;
	in.root = c->root;
	in.sysroot = getenv("OLLAMA_AUDIT_SYSROOT");
	bool ok = oa_log_inputs_read(&in, s->root, h, used);
	for (size_t i = 0; report && i < used->n_problems; i++)
		cli_err("%s", used->problems[i]);
	return ok;
}

/* What every format of `history` renders, once per store (the slots in
 * commands.c): the loads selected, v[0..n). */
typedef struct history_view {
	const oa_store *s;
	const oa_history *h;
	const oa_log_sources *src;
	const oa_load **v;
	size_t n;
	bool first;
} history_view;

void history_render_table(cli *c, const void *view)
{
	const history_view *x = view;
	oa_text_style st = cli_text_style(c);
	oa_history_text(&st, stdout, x->s, x->h, x->src, x->v, x->n, x->first);
}

/* One document, {"schema":..., "stores":[...]}, a store at a time. */
void history_render_json(cli *c, const void *view)
{
	const history_view *x = view;
	cli_emit_store(c, OA_SCHEMA_HISTORY, oa_history_store_json(x->s, x->h, x->src->names, x->src->n, x->v, x->n));
}

void history_render_ndjson(cli *c, const void *view)
{
	(void)c;
	const history_view *x = view;
	json_t *so = oa_history_store_json(x->s, x->h, x->src->names, x->src->n, x->v, x->n);
	json_t *recs = oa_history_records(x->s, so, cli_host());
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
	json_decref(so);
}

void history_render_csv(cli *c, const void *view)
{
	(void)c;
	const history_view *x = view;
	oa_history_csv(cli_text_out(), x->s, x->v, x->n, x->first);
}

/* One store's history, in the chosen format. */
static void history_store(cli *c, oa_store *s, const oa_load_window *w, bool first)
{
	oa_history h;
	oa_history_init(&h);
	oa_log_sources src = { 0 };
	if (!read_sources(c, s, &h, &src, first))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	for (size_t i = 0; first && i < h.n_warnings; i++)
		fprintf(stderr, "ollama-audit: warning: %s\n", oa_text_safe(h.warnings[i]));
	if (first && h.warnings_dropped)
		fprintf(stderr, "ollama-audit: warning: %zu more lines could not be read\n", h.warnings_dropped);
	oa_history_match(&h, s);
	const oa_load **v = oa_xcalloc(h.n ? h.n : 1, sizeof *v);
	oa_model_args a = cli_model_args(c);
	size_t k = oa_history_pick(&h, s, w, &a, v);
	cli_render(c, &(history_view){ .s = s, .h = &h, .src = &src, .v = v, .n = k, .first = first });
	free(v);
	oa_log_sources_free(&src);
	oa_history_free(&h);
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
typedef struct usage_entry {
	const oa_store *s;
	cli_usage u;
} usage_entry;

static usage_entry *usage_cache;
static size_t usage_n;

static const cli_usage *usage_cached(const oa_store *s)
{
	for (size_t i = 0; i < usage_n; i++)
		if (usage_cache[i].s == s)
			return &usage_cache[i].u;
	return NULL;
}

const cli_usage *cli_usage_of(cli *c, const oa_store *s)
{
	const cli_usage *known = usage_cached(s);
	if (known)
		return known;
	usage_cache = oa_xreallocarray(usage_cache, usage_n + 1, sizeof *usage_cache);
	usage_entry *e = &usage_cache[usage_n++];
	memset(e, 0, sizeof *e);
	e->s = s;
	oa_history h;
	oa_history_init(&h);
	oa_log_sources src = { 0 };
	if (!read_sources(c, s, &h, &src, true))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	/* Matching only reads the store (the blobs a tag reaches). */
	oa_history_match(&h, (oa_store *)s);
	if (src.n && c->format == OUT_TABLE && (strcmp(c->cmd, "list") == 0 || strcmp(c->cmd, "du") == 0))
		oa_history_say_sources(stderr, s, &src, "LAST USED from");
	oa_log_usage_of(&e->u, &h, s, src.names, src.n); /* takes the names */
	oa_free_names(src.problems, src.n_problems);
	oa_history_free(&h);
	return &e->u;
}

bool cli_model_unused(const cli *c, const oa_store *s, size_t idx)
{
	int64_t cutoff = oa_wall_now_ns() - (int64_t)(c->unused_for * 1e9);
	return oa_log_usage_unused(usage_cached(s), s, idx, cutoff);
}

bool cli_unused_for_ready(cli *c, const oa_store *s)
{
	const cli_usage *u = cli_usage_of(c, s);
	if (!u->have_logs) {
		cli_err("%s: --unused-for needs the server's logs and none were found (server*.log beside "
		        "the store, the journal, or --log FILE): nothing is taken as unused", s->root);
		c->exit_code |= OA_EXIT_OPERATIONAL;
		return false;
	}
	oa_usage_say_span(stderr, s, u);
	return true;
}

void cli_usage_release(void)
{
	for (size_t i = 0; i < usage_n; i++)
		oa_log_usage_free(&usage_cache[i].u);
	free(usage_cache);
	usage_cache = NULL;
	usage_n = 0;
}

char *cli_last_used_text(const cli *c, const oa_store *s, const size_t *models, size_t n, int64_t now_ns)
{
	(void)c;
	const cli_usage *u = usage_cached(s);
	oa_last_used lu = u ? cli_usage_last_used(u) : (oa_last_used){ 0 };
	return oa_last_used_text(&lu, models, n, now_ns);
}

void cli_log_findings(cli *c, oa_store *s)
{
	oa_history h;
	oa_history_init(&h);
	oa_log_sources src = { 0 };
	if (!read_sources(c, s, &h, &src, true))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	oa_history_match(&h, s);
	oa_history_findings(&h, s);
	oa_log_sources_free(&src);
	oa_history_free(&h);
}

int64_t cli_last_used_ns(cli *c, const oa_store *s, const size_t *models, size_t n)
{
	return oa_usage_newest(cli_usage_of(c, s), models, n);
}
