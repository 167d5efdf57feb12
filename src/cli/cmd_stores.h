/* cmd_stores.h - `ollama-audit stores` (its entry in commands.c). */
#ifndef OA_CLI_CMD_STORES_H
#define OA_CLI_CMD_STORES_H

#include "cli.h"

int cmd_stores(cli *c);

#endif
