/* report_common.h - the findings report shared by check and verify. */
#ifndef OA_REPORT_COMMON_H
#define OA_REPORT_COMMON_H

#include "cli.h"
#include "ollama_audit/audit_totals.h"
#include "ollama_audit/finding.h"

#include <stdbool.h>

bool model_selected(const cli *c, const oa_store *s, const char *display);
/* The models check and verify count (docs/schema.md): selected, not anchors. */
size_t selected_models(const cli *c, const oa_store *s);
bool finding_selected(const cli *c, const oa_store *s, const oa_finding *f);
bool check_args_resolve(cli *c, const oa_store *s);
/* Print one store's findings in the chosen format and fold them into the
 * exit status. `sum` gets the counts added; `first` opens the JSON
 * document, report_finish() closes it (any: whether a store was reported). */
void report_findings(cli *c, const oa_store *s, const char *summary_line, oa_audit_summary *sum,
                     bool first);
void report_finish(cli *c, const char *schema, bool any);

#endif
