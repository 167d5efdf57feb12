/* cmd_history.h - `ollama-audit history`, and what the server's logs say
 * about each model of a store, for list, du, rm and check. */
#ifndef OA_CLI_CMD_HISTORY_H
#define OA_CLI_CMD_HISTORY_H

#include "cli.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/log_usage.h"
#include "views/select.h"

#include <stdbool.h>
#include <stdint.h>

int cmd_history(cli *c);
/* Its renderers, one per format (the slots of its entry in commands.c). */
void history_render_table(cli *c, const void *view);
void history_render_json(cli *c, const void *view);
void history_render_ndjson(cli *c, const void *view);
void history_render_csv(cli *c, const void *view);

/* What the server's logs say about each model of a store (log_usage.h),
 * read once per store on first use. */
typedef oa_log_usage cli_usage;
const cli_usage *cli_usage_of(cli *c, const oa_store *s);
/* The same, as the list and du views take it (reads the logs on first use). */
static inline oa_last_used cli_usage_last_used(const cli_usage *u)
{
	return (oa_last_used){ u->have_logs, u->loaded, u->last_ns, u->sources, u->n_sources };
}
static inline oa_last_used cli_last_used(cli *c, const oa_store *s)
{
	return cli_usage_last_used(cli_usage_of(c, s));
}
/* LAST USED of some models (the newest load of any) as list and du show it:
 * an age, "never" (not in the logs), "-" (no logs). */
char *cli_last_used_text(const cli *c, const oa_store *s, const size_t *models, size_t n, int64_t now_ns);
/* Before filtering on --unused-for: false (reported, exit 8) without logs;
 * otherwise says on stderr how far back the logs go. */
bool cli_unused_for_ready(cli *c, const oa_store *s);
/* Whether the selection asks what the logs say: --unused-for, --filter used. */
bool cli_selection_needs_logs(const cli *c);
/* The selection of list, du and rm (--unused-for, --filter, --sort,
 * --limit) as the library takes it (views/select.h); no prefix. */
oa_list_query cli_selection_query(cli *c, const oa_store *s);
void cli_usage_release(void);
/* check: load-failed and runner-changed findings from the server's logs. */
void cli_log_findings(cli *c, oa_store *s);

/* The newest load (ns) of any of the models in the server's logs, or
 * INT64_MIN when none is there: --sort last-used puts those last. */
int64_t cli_last_used_ns(cli *c, const oa_store *s, const size_t *models, size_t n);

#endif
