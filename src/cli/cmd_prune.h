/* cmd_prune.h - `ollama-audit prune`, and the plan it shares with rm. */
#ifndef OA_CLI_CMD_PRUNE_H
#define OA_CLI_CMD_PRUNE_H

#include "cli.h"

#include <stdbool.h>

int cmd_prune(cli *c);
/* The option rules prune and rm share (--apply/--plan on one store,
 * --quarantine only with --apply); says what is wrong and returns false. */
bool cli_apply_options_ok(const cli *c);
/* Render a plan, write it with --plan, and with --apply check the
 * refusals, confirm and apply it, then render what became of it. `junk`
 * (may be NULL) adds download progress to the listing. */
struct oa_plan;
struct oa_junk_list;
void cli_run_plan(cli *c, oa_store *s, struct oa_plan *p, const struct oa_junk_list *junk,
                  bool from_file, bool first);
/* No store was planned: json still writes its (empty) document. */
void cli_render_no_plan(cli *c);
/* --apply --plan FILE: the plan, if it is one of this command's for this
 * store (else said, exit 16 or 8). */
bool cli_plan_from_file(cli *c, const oa_store *s, struct oa_plan *p);
/* The renderers of a prune or rm plan (the slots of their entries in
 * commands.c): before anything is applied, then what became of it. */
void plan_render_table(cli *c, const void *view);
void plan_render_json(cli *c, const void *view);
void plan_render_ndjson(cli *c, const void *view);
void plan_render_csv(cli *c, const void *view);

#endif
