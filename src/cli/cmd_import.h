/* cmd_import.h - `ollama-audit import` (its entry in commands.c). */
#ifndef OA_CLI_CMD_IMPORT_H
#define OA_CLI_CMD_IMPORT_H

#include "cli.h"

int cmd_import(cli *c);
/* Its renderers, one per format (the slots of its entry in commands.c). */
void import_render_table(cli *c, const void *view);
void import_render_json(cli *c, const void *view);
void import_render_ndjson(cli *c, const void *view);
void import_render_csv(cli *c, const void *view);

#endif
