/* findings.h - a store's findings as every command reports them: folded
 * into the exit code under --fail-on, and printed one per line. */
#ifndef OA_CLI_FINDINGS_H
#define OA_CLI_FINDINGS_H

#include "cli.h"
#include "ollama_audit/finding.h"

#include <stdbool.h>
#include <stdio.h>

/* Fold a store's findings into the exit code under --fail-on. `listing` limits
 * to what affects the list of models (oa_finding_is_listing), and then only
 * an unreadable part sets a bit unless --fail-on was given: list exits 0
 * when it listed, as `ollama list` does. */
void cli_account_findings(cli *c, const oa_store *s, bool listing);
/* A store just scanned: a directory or manifest of it that could not be
 * read (an `unreadable` finding outside blobs/ files) ORs 8 into the exit
 * code, whatever the command (a blob file is the commands' own business). */
void cli_account_unreadable(cli *c, const oa_store *s);
/* One finding of s on its line; on stderr after "ollama-audit: " and,
 * when several stores are audited (--all-users, --store twice), the store. */
void cli_print_finding(cli *c, FILE *out, const oa_store *s, const oa_finding *f);

/* What list found wrong, counted for its one line on stderr: the models
 * with a problem, and the files (a bad name, an unreadable directory)
 * that are no model's, each once. */
typedef struct cli_problems {
	size_t models, files;
} cli_problems;
void cli_count_problems(cli_problems *n, const oa_finding *const *v, size_t count);
/* "N models have problems: ollama-audit [--store DIR]... check", nothing
 * when there are none. */
void cli_say_problems(const cli *c, const cli_problems *n);

#endif
