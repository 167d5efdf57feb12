/* cmd_stores.h - `ollama-audit stores` (its entry in commands.c). */
#ifndef OA_CLI_CMD_STORES_H
#define OA_CLI_CMD_STORES_H

#include "cli.h"

int cmd_stores(cli *c);
/* Its renderers, one per format (the slots of its entry in commands.c). */
void stores_render_table(cli *c, const void *view);
void stores_render_json(cli *c, const void *view);
void stores_render_ndjson(cli *c, const void *view);
void stores_render_csv(cli *c, const void *view);
void stores_render_prometheus(cli *c, const void *view);

#endif
