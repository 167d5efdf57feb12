/* cmd_restore.h - `ollama-audit restore` (its entry in commands.c). */
#ifndef OA_CLI_CMD_RESTORE_H
#define OA_CLI_CMD_RESTORE_H

#include "cli.h"

int cmd_restore(cli *c);
/* The renderers of its listing, one per format (the slots of its entry in
 * commands.c). */
void restore_render_table(cli *c, const void *view);
void restore_render_json(cli *c, const void *view);
void restore_render_ndjson(cli *c, const void *view);
void restore_render_csv(cli *c, const void *view);

#endif
