/* cmd_prune.h - `ollama-audit prune`, and the plan it shares with rm. */
#ifndef OA_CLI_CMD_PRUNE_H
#define OA_CLI_CMD_PRUNE_H

#include "cli.h"

#include <stdbool.h>

int cmd_prune(cli *c);
/* The option rules prune and rm share (--apply/--plan on one store,
 * --quarantine only with --apply); says what is wrong and returns false. */
bool cli_apply_options_ok(const cli *c);
/* Print a plan, write it with --plan, and with --apply check the refusals,
 * confirm and apply it. `junk` (may be NULL) adds download progress to the
 * listing; `removing` lists the manifests an rm plan removes (their own
 * corruption does not block it). */
struct oa_plan;
struct oa_junk_list;
void cli_run_plan(cli *c, oa_store *s, struct oa_plan *p, const struct oa_junk_list *junk,
                  bool from_file, bool first);

#endif
