/* findings.h - a store's findings as every command reports them: folded
 * into the exit code under --fail-on, and printed one per line. */
#ifndef OA_CLI_FINDINGS_H
#define OA_CLI_FINDINGS_H

#include "cli.h"
#include "ollama_audit/finding.h"

#include <stdbool.h>
#include <stdio.h>

/* Fold a store's findings into the exit code under --fail-on. `listing` limits
 * to what affects the list of models (oa_finding_is_listing). */
void cli_account_findings(cli *c, const oa_store *s, bool listing);
/* A store just scanned: a directory or manifest of it that could not be
 * read (an `unreadable` finding outside blobs/ files) ORs 8 into the exit
 * code, whatever the command (a blob file is the commands' own business). */
void cli_account_unreadable(cli *c, const oa_store *s);
void cli_print_finding(cli *c, FILE *out, const oa_finding *f);

#endif
