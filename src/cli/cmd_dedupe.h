/* cmd_dedupe.h - `ollama-audit dedupe` and `du --duplicates`: the blobs
 * several stores hold (docs/multi-store.md). */
#ifndef OA_CLI_CMD_DEDUPE_H
#define OA_CLI_CMD_DEDUPE_H

#include "cli.h"

#include <stdbool.h>
#include <stdint.h>

int cmd_dedupe(cli *c);
/* Its renderers (the slots of its entry in commands.c); json also writes
 * ndjson, its records. */
void dedupe_render_table(cli *c, const void *view);
void dedupe_render_json(cli *c, const void *view);
void dedupe_render_csv(cli *c, const void *view);
/* What `dedupe` can really free among these stores here: reflinks where
 * the target filesystems can make them (tested), else hard links when they
 * free more (*hardlink set). */
struct oa_dupes;
uint64_t cli_dedupe_can_free(oa_store *const *sv, const struct oa_dupes *d, bool *hardlink);
/* du --duplicates [--all-users]: the cross-store duplicate report. */
int cmd_du_duplicates(cli *c);

#endif
