/* cmd_list.h - `ollama-audit list` (its entry in commands.c). */
#ifndef OA_CLI_CMD_LIST_H
#define OA_CLI_CMD_LIST_H

#include "cli.h"

int cmd_list(cli *c);
/* Its renderers, one per format (the slots of its entry in commands.c). */
void list_render_table(cli *c, const void *view);
void list_render_json(cli *c, const void *view);
void list_render_ndjson(cli *c, const void *view);
void list_render_csv(cli *c, const void *view);
void list_render_tags(cli *c, const void *view);

#endif
