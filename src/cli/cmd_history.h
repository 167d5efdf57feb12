/* cmd_history.h - `ollama-audit history`. */
#ifndef OA_CLI_CMD_HISTORY_H
#define OA_CLI_CMD_HISTORY_H

#include "cli.h"

int cmd_history(cli *c);
/* Its renderers, one per format (the slots of its entry in commands.c). */
void history_render_table(cli *c, const void *view);
void history_render_json(cli *c, const void *view);
void history_render_ndjson(cli *c, const void *view);
void history_render_csv(cli *c, const void *view);

#endif
