/* report_common.h - the findings report shared by check and verify. */
#ifndef OA_REPORT_COMMON_H
#define OA_REPORT_COMMON_H

#include "cli.h"
#include "audit/select.h"
#include "ollama_audit/audit_totals.h"
#include "ollama_audit/finding.h"

#include <stdbool.h>

/* The MODEL arguments, as the library selects by them (audit/select.h). */
oa_model_args cli_model_args(const cli *c);
bool check_args_resolve(cli *c, const oa_store *s);
/* Render one store's findings in the chosen format (cli_render) and fold
 * them into the exit status. `sum` gets the counts added (and gives the
 * summary line, oa_audit_summary_line); `first`: the first store rendered
 * (the csv header, the table's spacing). The json document is emitted a
 * store at a time; report_finish() emits it empty when no store was
 * reported. */
void report_findings(cli *c, const oa_store *s, oa_audit_summary *sum, bool first);
void report_finish(cli *c, const char *schema);
/* The renderers of a store's findings, one per format (the slots of check's
 * and verify's entries in commands.c). */
void findings_render_table(cli *c, const void *view);
void findings_render_json(cli *c, const void *view);
void findings_render_ndjson(cli *c, const void *view);
void findings_render_csv(cli *c, const void *view);

#endif
