/* cmd_dedupe.h - `ollama-audit dedupe` and `du --duplicates`: the blobs
 * several stores hold (docs/multi-store.md). */
#ifndef OA_CLI_CMD_DEDUPE_H
#define OA_CLI_CMD_DEDUPE_H

#include "cli.h"

#include <stdbool.h>
#include <stdint.h>

int cmd_dedupe(cli *c);
/* What `dedupe` can really free among these stores here: reflinks where
 * the target filesystems can make them (tested), else hard links when they
 * free more (*hardlink set). */
struct oa_dupes;
uint64_t cli_dedupe_can_free(oa_store *const *sv, const struct oa_dupes *d, bool *hardlink);
/* du --duplicates [--all-users]: the cross-store duplicate report. */
int cmd_du_duplicates(cli *c);

#endif
