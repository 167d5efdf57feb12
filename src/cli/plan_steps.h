/* plan_steps.h - the steps of a prune or rm plan, which both commands run
 * (docs/disk-space.md). */
#ifndef OA_CLI_PLAN_STEPS_H
#define OA_CLI_PLAN_STEPS_H

#include "cli.h"

#include <stdbool.h>

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
/* The plans of the opened stores, each made by plan_now (which says why
 * not and returns false; j may stay empty) or, with --apply --plan FILE,
 * read from the file; all made before any is run (cli_run_plan), so what
 * cannot be planned is said first. Closes the stores; returns the exit code. */
typedef bool (*cli_plan_fn)(cli *c, oa_store *s, struct oa_plan *p, struct oa_junk_list *j);
int cli_plan_stores(cli *c, opened_store *st, size_t n, cli_plan_fn plan_now);
/* The renderers of a prune or rm plan (the slots of their entries in
 * commands.c): before anything is applied, then what became of it. */
void plan_render_table(cli *c, const void *view);
void plan_render_json(cli *c, const void *view);
void plan_render_ndjson(cli *c, const void *view);
void plan_render_csv(cli *c, const void *view);

#endif
