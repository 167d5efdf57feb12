/* cmd_dedupe.h - `ollama-audit dedupe` and `du --duplicates`: the blobs
 * several stores hold (docs/multi-store.md). */
#ifndef OA_CLI_CMD_DEDUPE_H
#define OA_CLI_CMD_DEDUPE_H

#include "cli.h"

#include <stdbool.h>
#include <stdint.h>

int cmd_dedupe(cli *c);
/* Its renderers (the slots of its entry in commands.c), which also draw
 * du --duplicates. */
void dedupe_render_table(cli *c, const void *view);
void dedupe_render_json(cli *c, const void *view);
void dedupe_render_ndjson(cli *c, const void *view);
void dedupe_render_csv(cli *c, const void *view);
/* What `dedupe` can really free among these stores here: oa_dedupe_can_free
 * (dedupe_run.h), which `stores` can call itself. */
struct oa_dupes;
uint64_t cli_dedupe_can_free(oa_store *const *sv, const struct oa_dupes *d, bool *hardlink);
/* du --duplicates [--all-users]: the cross-store duplicate report. */
int cmd_du_duplicates(cli *c);

#endif
