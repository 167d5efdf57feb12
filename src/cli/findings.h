/* findings.h - a store's findings as every command reports them: folded
 * into the exit code under --fail-on, and printed one per line. */
#ifndef OA_CLI_FINDINGS_H
#define OA_CLI_FINDINGS_H

#include "cli.h"
#include "ollama_audit/finding.h"

#include <stdbool.h>
#include <stdio.h>

/* Fold a store's findings into the exit code under --fail-on. `listing` limits
 * to what affects the list of models. */
void cli_account_findings(cli *c, const oa_store *s, bool listing);
bool cli_finding_is_listing(const oa_finding *f);
void cli_print_finding(cli *c, FILE *out, const oa_finding *f);

#endif
