/* report_common.c - the findings report shared by check and verify: the
 * library selects (audit/select.h) and draws (views/findings_text.h). */
#include "cli_machine.h"
#include "report_common.h"
#include "cli_multi.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "suggest.h"
#include "views/findings_fix.h"
#include "views/findings_text.h"
#include "ollama_audit/findings_report.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

static const char *report_schema(const oa_audit_summary *sum)
{
	return sum->verify ? OA_SCHEMA_VERIFY : OA_SCHEMA_CHECK;
}

oa_model_args cli_model_args(const cli *c)
{
	return (oa_model_args){ .v = c->args, .n = c->n_args };
}

bool check_args_resolve(cli *c, const oa_store *s)
{
	bool ok = true;
	for (size_t i = 0; i < c->n_args; i++) {
		long idx = cli_resolve_model(c, s, c->args[i]);
		if (idx == OA_RESOLVE_AMBIGUOUS_NAME) {
			ok = false;
		} else if (idx < 0) {
			cli_model_unresolved(c, s, c->args[i], idx);
			ok = false;
		}
	}
	if (!ok)
		c->exit_code |= OA_EXIT_USAGE;
	return ok;
}

/* What every format of check and verify renders, once per store (the
 * slots of their entries in commands.c); prometheus has none: cli_multi.c
 * writes it from the totals. */
typedef struct findings_view {
	const oa_store *s;
	const bool *selected;
	const oa_audit_summary *sum;
	bool first;
} findings_view;

void findings_render_table(cli *c, const void *view)
{
	const findings_view *v = view;
	oa_text_style st = cli_text_style(c);
	char line[320];
	oa_audit_summary_line(v->sum, line, sizeof line);
	oa_findings_text(&st, stdout, v->s, v->selected, line, v->sum, v->first);
}

/* One document, {"schema":..., "stores":[...]}, a store at a time. */
void findings_render_json(cli *c, const void *view)
{
	const findings_view *v = view;
	cli_emit_store(c, report_schema(v->sum), oa_findings_store_json(v->s, v->selected, v->sum));
}

void findings_render_ndjson(cli *c, const void *view)
{
	(void)c;
	const findings_view *v = view;
	oa_findings_ndjson(stdout, v->s, v->selected, v->sum, cli_host());
}

void findings_render_csv(cli *c, const void *view)
{
	(void)c;
	const findings_view *v = view;
	oa_findings_csv(cli_text_out(), v->s, v->selected, v->first);
}

void report_findings(cli *c, const oa_store *s, oa_audit_summary *sum, bool first)
{
	oa_model_args a = cli_model_args(c);
	bool *selected = oa_args_findings(s, &a);
	unsigned fails = oa_findings_tally(s, selected, c->fail_on, sum);
	c->exit_code |= (fails & OA_FAILS_UNREADABLE ? OA_EXIT_OPERATIONAL : 0) |
	                (fails & OA_FAILS_ERRORS ? OA_EXIT_ERRORS : 0) | (fails & OA_FAILS_WARNINGS ? OA_EXIT_WARNINGS : 0);
	/* combined totals, and --format prometheus (cli_multi.c) */
	cli_multi_store_done(c, (oa_store *)s, sum);
	cli_render(c, &(findings_view){ .s = s, .selected = selected, .sum = sum, .first = first });
	free(selected);
}

void report_finish(cli *c, const char *schema)
{
	/* The JSON document is closed here, not after "the last store", so a
	 * store skipped at the end (unreadable, a MODEL it lacks, an interrupt)
	 * cannot leave it open. Only --format json prints the document. */
	cli_emit_store(c, schema, NULL);
}
