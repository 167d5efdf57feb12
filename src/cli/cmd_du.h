/* cmd_du.h - `ollama-audit du` (its entry in commands.c). */
#ifndef OA_CLI_CMD_DU_H
#define OA_CLI_CMD_DU_H

#include "cli.h"

int cmd_du(cli *c);
/* Its renderers of a store, one per format (the slots of its entry in
 * commands.c); du --duplicates and --quarantine choose by themselves. */
void du_render_table(cli *c, const void *view);
void du_render_json(cli *c, const void *view);
void du_render_ndjson(cli *c, const void *view);
void du_render_csv(cli *c, const void *view);
void du_render_prometheus(cli *c, const void *view);

#endif
