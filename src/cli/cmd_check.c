/* cmd_check.c - `ollama-audit check`: the structure pass. */
#include "cmd_check.h"
#include "cli_multi.h"
#include "cli_runhere.h"
#include "cmd_history.h"
#include "open_stores.h"
#include "report_common.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/report.h"
#include "ollama_audit/runhere.h"
#include "ollama_audit/verify_store.h"
#include "base/util.h"

#include <stdio.h>

int cmd_check(cli *c)
{
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_FULL);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		if (!check_args_resolve(c, s))
			continue;
		oa_findings_drop_referenced(s); /* what prune keeps is no orphan */
		cli_multi_drop_tag_facts(c, s); /* their last reader: memory for what follows */
		cli_log_findings(c, s); /* docs/history.md */
		oa_runhere_findings(cli_runhere_machine(c), s);
		oa_verify_cached_findings(s, cli_runhere_failed_cache(c)); /* what verify found, still true */
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
