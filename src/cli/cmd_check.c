/* cmd_check.c - `ollama-audit check`: the structure pass. */
#include "cmd_check.h"
#include "cli_audit.h"
#include "open_stores.h"
#include "report_common.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>

int cmd_check(cli *c)
{
	size_t n;
	/* Prometheus' metrics read the tag facts after the audit; nothing else does. */
	c->drop_tag_facts = c->format != OUT_PROMETHEUS;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_FULL);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		if (!check_args_resolve(c, s))
			continue;
		cli_audit_findings(c, s, OA_AUDIT_ALL);
		oa_model_args a = cli_model_args(c);
		oa_audit_summary sum = { .models = oa_args_count(s, &a), .blob_files = s->n_blobs,
		                         .seconds = s->scan_seconds, .prune_blocked = s->prune_blocked };
		report_findings(c, s, &sum, first);
		first = false;
	}
	report_finish(c, OA_SCHEMA_CHECK);
	cli_close_stores(st, n);
	return c->exit_code;
}
