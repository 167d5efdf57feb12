/* cmd_repair.h - `ollama-audit repair` (its entry in commands.c). */
#ifndef OA_CLI_CMD_REPAIR_H
#define OA_CLI_CMD_REPAIR_H

#include "cli.h"

int cmd_repair(cli *c);
/* Its renderers, one per format (the slots of its entry in commands.c). */
void repair_render_table(cli *c, const void *view);
void repair_render_json(cli *c, const void *view);
void repair_render_ndjson(cli *c, const void *view);
void repair_render_csv(cli *c, const void *view);

#endif
