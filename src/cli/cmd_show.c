/* cmd_show.c - `ollama-audit show MODEL`: one model in full. */
#include "cmd_show.h"
#include "cli_audit.h"
#include "cli_machine.h"
#include "cli_runhere.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "suggest.h"
#include "views/show_text.h"
#include "usage.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "ollama_audit/show_report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every format of `show` renders, once per store that has the model
 * (the slots in commands.c); first: the csv header goes before it. */
typedef struct show_view {
	const oa_store *s;
	const oa_model *m;
	bool first;
} show_view;

static json_t *show_json(cli *c, const show_view *v)
{
	return oa_show_view(v->s, v->m, c->tensors, cli_runhere_machine(c), cli_runhere_cache(c));
}

void show_render_table(cli *c, const void *view)
{
	const show_view *v = view;
	oa_text_style st = cli_text_style(c);
	char *here = cli_runhere_text(c, v->s, v->m);
	oa_show_text(&st, stdout, v->s, v->m, c->tensors, here);
	free(here);
}

void show_render_json(cli *c, const void *view)
{
	cli_emit_document(c, show_json(c, view));
}

void show_render_ndjson(cli *c, const void *view)
{
	const show_view *v = view;
	json_t *o = show_json(c, v);
	oa_show_ndjson(stdout, v->s, o, cli_host());
	json_decref(o);
}

void show_render_csv(cli *c, const void *view)
{
	const show_view *v = view;
	json_t *o = show_json(c, v);
	oa_show_csv(cli_text_out(), v->s, v->m, o, v->first);
	json_decref(o);
}

int cmd_show(cli *c)
{
	if (c->n_args != 1) {
		cli_err("show takes exactly one MODEL");
		return OA_EXIT_USAGE;
	}
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_FULL);
	bool found = false;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		long idx = cli_resolve_model(c, s, c->args[0]);
		if (idx == OA_RESOLVE_AMBIGUOUS_ID) {
			cli_err("%s: ID prefix '%s' matches more than one model; name one:", s->root, c->args[0]);
			oa_show_ambiguous(stderr, s, c->args[0]);
			c->exit_code |= OA_EXIT_USAGE;
			continue;
		}
		if (idx < 0)
			continue;
		cli_audit_findings(c, s, OA_AUDIT_ALL);
		const oa_model *m = &s->models[idx];
		cli_render(c, &(show_view){ .s = s, .m = m, .first = !found });
		found = true;
		for (size_t j = 0; j < s->findings.n; j++) {
			const oa_finding *f = &s->findings.v[j];
			if (f->model && strcmp(f->model, m->display) == 0 && (int)f->severity >= c->fail_on)
				c->exit_code |= f->severity == OA_SEV_ERROR ? OA_EXIT_ERRORS : OA_EXIT_WARNINGS;
		}
	}
	if (!found && !(c->exit_code & (OA_EXIT_OPERATIONAL | OA_EXIT_USAGE))) {
		const char *near = NULL;
		for (size_t i = 0; i < n && !near; i++)
			if (st[i].ok)
				near = cli_suggest_model(&st[i].s, c->args[0]);
		if (near)
			cli_fail(c, "model-not-found", NULL, "model '%s' not found; did you mean %s?", c->args[0], near);
		else
			cli_fail(c, "model-not-found", NULL, "model '%s' not found", c->args[0]);
		c->exit_code |= OA_EXIT_USAGE;
	}
	cli_close_stores(st, n);
	return c->exit_code;
}
