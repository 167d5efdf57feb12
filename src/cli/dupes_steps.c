/* dupes_steps.c - the stores du --duplicates and dedupe compare, opened
 * once, and the renderers both draw through (dupes_steps.h). */
#include "dupes_steps.h"
#include "cli_machine.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "usage.h"
#include "views/dedupe_text.h"
#include "ollama_audit/dedupe_report.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

void dedupe_render_table(cli *c, const void *view)
{
	const dedupe_view *v = view;
	oa_text_style st = cli_text_style(c);
	if (v->p)
		oa_dedupe_text(&st, stdout, v->sv, v->users, v->p, v->o, c->apply, c->verbose);
	else
		oa_dupes_text(&st, stdout, v->sv, v->users, v->d, v->ok);
}

static json_t *report(const dedupe_view *v)
{
	return v->p ? oa_dedupe_report(v->sv, v->users, v->p, v->o, cli_host())
	            : oa_dupes_report(v->sv, v->users, v->d, v->ok, cli_host());
}

void dedupe_render_json(cli *c, const void *view)
{
	cli_emit_document(c, report(view));
}

void dedupe_render_ndjson(cli *c, const void *view)
{
	json_t *doc = report(view), *recs = ((const dedupe_view *)view)->p ? oa_dedupe_records(doc) : oa_dupes_records(doc);
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
	json_decref(doc);
}

void dedupe_render_csv(cli *c, const void *view)
{
	const dedupe_view *v = view;
	if (v->p)
		oa_dedupe_csv(cli_text_out(), v->sv, v->users, v->p);
	else
		oa_dupes_csv(cli_text_out(), v->sv, v->users, v->d);
}

static const cli_renderer dupes_render[OUT_FORMATS] = {
	[OUT_TABLE] = dedupe_render_table, [OUT_JSON] = dedupe_render_json,
	[OUT_NDJSON] = dedupe_render_ndjson, [OUT_CSV] = dedupe_render_csv,
};


void cli_dupes_close(dd_stores *x)
{
	free(x->users);
	free(x->sv);
	cli_close_stores(x->st, x->n);
}

/* Open the stores and find the digests they share. Returns -1 when there is
 * something to compare, else the exit code (nothing is left open then). */
int cli_dupes_open(cli *c, const char *what, dd_stores *x)
{
	x->st = cli_open_stores(c, &x->n, OA_HEADERS_NONE);
	x->sv = oa_xcalloc(x->n ? x->n : 1, sizeof *x->sv);
	x->users = oa_xcalloc(x->n ? x->n : 1, sizeof *x->users);
	x->ok = 0;
	for (size_t i = 0; i < x->n; i++)
		if (x->st[i].ok) {
			x->sv[i] = &x->st[i].s;
			x->users[i] = oa_report_owner(x->sv[i]);
			x->ok++;
		}
	/* Fewer than two stores to compare is a usage error (16) when the user
	 * named fewer than two; when two named paths turned out to be one store,
	 * or --all-users found one, there is simply nothing to share. 8 when
	 * stores were given but could not be opened; --all-users that found
	 * none has said so. */
	if (x->ok && (x->ok >= 2 || c->n_stores >= 2 || c->all_users)) {
		oa_dupes_find(x->sv, x->n, &x->d);
		return -1;
	}
	int rc = c->exit_code;
	if (!(c->all_users && (c->exit_code & OA_EXIT_OPERATIONAL) && !x->ok)) {
		cli_err("%s needs two or more stores: use --all-users or repeat --store", what);
		rc |= x->ok < x->n ? OA_EXIT_OPERATIONAL : OA_EXIT_USAGE;
	}
	cli_dupes_close(x);
	return rc;
}

int cli_du_duplicates(cli *c)
{
	dd_stores x;
	int rc = cli_dupes_open(c, "du --duplicates", &x);
	if (rc >= 0)
		return rc;
	c->render = dupes_render;
	cli_render(c, &(dedupe_view){ .sv = x.sv, .users = x.users, .d = &x.d, .ok = x.ok });
	oa_dupes_free(&x.d);
	cli_dupes_close(&x);
	return c->exit_code;
}
