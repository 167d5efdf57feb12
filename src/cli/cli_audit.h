/* cli_audit.h - the run's audit (audit.h) as the commands read it: each
 * store's findings, what the server's logs say about its models (LAST
 * USED, --unused-for), with what could not be read said on stderr. */
#ifndef OA_CLI_CLI_AUDIT_H
#define OA_CLI_CLI_AUDIT_H

#include "cli.h"
#include "ollama_audit/audit.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/log_usage.h"
#include "audit/select.h"

#include <stdbool.h>
#include <stdint.h>

/* The run's audit, made from the options on first use. */
oa_audit *cli_audit(cli *c);
/* What the audit could not read, each on stderr; a source the options
 * named that failed ORs 8. */
void cli_audit_said(cli *c);
void cli_audit_release(cli *c);
/* The findings of s, as every command reports them (oa_audit_findings). */
void cli_audit_findings(cli *c, oa_store *s, enum oa_audit_scope scope);

/* What the server's logs say about each model of a store (log_usage.h),
 * read once per store on first use. */
const oa_log_usage *cli_usage_of(cli *c, const oa_store *s);
/* The same, as the list and du views take it (reads the logs on first use). */
static inline oa_last_used cli_usage_last_used(const oa_log_usage *u)
{
	return (oa_last_used){ u->have_logs, u->loaded, u->last_ns, u->sources, u->n_sources };
}
static inline oa_last_used cli_last_used(cli *c, const oa_store *s)
{
	return cli_usage_last_used(cli_usage_of(c, s));
}
/* Before filtering on --unused-for: false (reported, exit 8) without logs;
 * otherwise says on stderr how far back the logs go. */
bool cli_unused_for_ready(cli *c, const oa_store *s);
/* Whether the selection asks what the logs say: --unused-for, --filter used. */
bool cli_selection_needs_logs(const cli *c);
/* The selection of list, du and rm (--unused-for, --filter, --sort,
 * --limit) as the library takes it (audit/select.h); no prefix. */
oa_list_query cli_selection_query(cli *c, const oa_store *s);

#endif
