/* cmd_list.c - `ollama-audit list`: the models as `ollama list` shows them.
 * The library selects, orders and draws (audit/select.h, views/list_text.h). */
#include "cmd_list.h"
#include "cli_machine.h"
#include "cli_audit.h"
#include "findings.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "usage.h"
#include "views/list_text.h"
#include "audit/select.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/list_report.h"
#include "ollama_audit/report.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

/* What every format of `list` renders (the slots in commands.c): the
 * stores read, each with its listed models in order and its problems. */
typedef struct list_view {
	oa_list_store *v;
	size_t n;
} list_view;

void list_render_table(cli *c, const void *view)
{
	const list_view *x = view;
	oa_text_style st = cli_text_style(c);
	if (c->quiet)
		oa_list_names(stdout, x->v, x->n);
	else
		oa_list_text(&st, stdout, x->v, x->n);
}

void list_render_json(cli *c, const void *view)
{
	const list_view *x = view;
	oa_list_document_write(stdout, x->v, x->n);
	cli_emit_written(c);
}

void list_render_ndjson(cli *c, const void *view)
{
	(void)c;
	const list_view *x = view;
	oa_list_ndjson(stdout, x->v, x->n, cli_host());
}

void list_render_csv(cli *c, const void *view)
{
	(void)c;
	const list_view *x = view;
	oa_list_csv(cli_text_out(), x->v, x->n);
}

void list_render_tags(cli *c, const void *view)
{
	(void)c;
	const list_view *x = view;
	oa_list_tags(cli_text_out(), x->v, x->n);
}

/* A store's view: the models listed (the prefix, --unused-for, --sort) and
 * the problems that affect the listing, reported on stderr. */
static void list_store(cli *c, oa_store *s, oa_list_store *ls, oa_last_used *lu, cli_problems *problems)
{
	oa_list_query q = cli_selection_query(c, s);
	q.prefix = c->n_args ? c->args[0] : NULL;
	*lu = cli_last_used(c, s);
	cli_audit_findings(c, s, OA_AUDIT_LISTING);
	oa_list_store_make(ls, &q, s, lu);
	/* each problem with -v; what sets exit 8 always, so it never comes unexplained */
	for (size_t j = 0; j < ls->n_problems; j++)
		if (c->verbose || oa_finding_is(ls->problems[j], OA_FC_IO))
			cli_print_finding(c, stderr, s, ls->problems[j]);
	cli_count_problems(problems, ls->problems, ls->n_problems);
	cli_account_findings(c, s, true);
}

int cmd_list(cli *c)
{
	if (c->n_args > 1) {
		cli_err("list takes at most one PREFIX");
		return OA_EXIT_USAGE;
	}
	size_t n;
	c->no_tag_facts = true; /* nothing here reads them: memory (issue 21) */
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_QUICK);
	/* The logs give LAST USED and --unused-for (docs/history.md). */
	for (size_t i = 0; i < n; i++)
		if (st[i].ok && cli_selection_needs_logs(c) && !cli_unused_for_ready(c, &st[i].s)) {
			cli_close_stores(st, n);
			return c->exit_code;
		}
	oa_list_store *v = oa_xcalloc(n + 1, sizeof *v);
	oa_last_used *lu = oa_xcalloc(n + 1, sizeof *lu);
	size_t k = 0;
	cli_problems problems = { 0, 0 };
	for (size_t i = 0; i < n; i++)
		if (st[i].ok) {
			list_store(c, &st[i].s, &v[k], &lu[k], &problems);
			k++;
		}
	cli_render(c, &(list_view){ .v = v, .n = k });
	cli_say_problems(c, &problems); /* last: after the table's own notes */
	oa_list_stores_free(v, k);
	free(lu);
	cli_close_stores(st, n);
	return c->exit_code;
}
