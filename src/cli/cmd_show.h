/* cmd_show.h - `ollama-audit show` (its entry in commands.c). */
#ifndef OA_CLI_CMD_SHOW_H
#define OA_CLI_CMD_SHOW_H

#include "cli.h"

int cmd_show(cli *c);
/* Its renderers, one per format (the slots of its entry in commands.c). */
void show_render_table(cli *c, const void *view);
void show_render_json(cli *c, const void *view);
void show_render_ndjson(cli *c, const void *view);
void show_render_csv(cli *c, const void *view);

#endif
