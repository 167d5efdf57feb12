/* cli_audit.c - the run's audit as the commands read it (cli_audit.h). */
#include "cli_audit.h"
#include "cli_multi.h"
#include "usage.h"
#include "audit/audit_inputs.h"
#include "views/history_text.h"
#include "base/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A default verify cache inside a store is not read (cli_multi.h says so once). */
static bool cache_in_store(void *ctx, const char *path)
{
	return cli_default_cache_in_store(ctx, path);
}

oa_audit *cli_audit(cli *c)
{
	if (c->audit)
		return c->audit;
	oa_audit_options o = {
		.logs = (const char *const *)c->logs,
		.n_logs = c->n_logs,
		.root = c->root,
		.sysroot = getenv("OLLAMA_AUDIT_SYSROOT"),
		.cache_path = c->cache_path,
		.llm_library = getenv("OLLAMA_LLM_LIBRARY"),
		.gpu_overhead = getenv("OLLAMA_GPU_OVERHEAD"),
		.drop_tag_facts = c->drop_tag_facts,
		.default_cache_refused = cache_in_store,
		.ctx = c,
	};
	c->audit = oa_audit_new(&o);
	return c->audit;
}

void cli_audit_said(cli *c)
{
	oa_audit_problems p;
	oa_audit_take_problems(cli_audit(c), &p);
	for (size_t i = 0; i < p.n; i++)
		cli_err("%s", p.v[i]);
	if (p.failed)
		c->exit_code |= OA_EXIT_OPERATIONAL;
	oa_audit_problems_free(&p);
}

void cli_audit_release(cli *c)
{
	oa_audit_free(c->audit);
	c->audit = NULL;
}

void cli_audit_findings(cli *c, oa_store *s, enum oa_audit_scope scope)
{
	oa_audit_findings(cli_audit(c), s, scope);
	cli_audit_said(c);
}

const oa_log_usage *cli_usage_of(cli *c, const oa_store *s)
{
	bool fresh;
	const oa_log_usage *u = oa_audit_usage(cli_audit(c), s, &fresh);
	if (!fresh)
		return u;
	cli_audit_said(c);
	if (u->n_sources && c->format == OUT_TABLE && (strcmp(c->cmd, "list") == 0 || strcmp(c->cmd, "du") == 0))
		oa_history_say_sources(stderr, s, &(oa_log_sources){ .names = u->sources, .n = u->n_sources },
		                       "LAST USED from");
	return u;
}

bool cli_unused_for_ready(cli *c, const oa_store *s)
{
	const oa_log_usage *u = cli_usage_of(c, s);
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
