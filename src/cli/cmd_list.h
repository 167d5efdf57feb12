/* cmd_list.h - `ollama-audit list` (its entry in commands.c). */
#ifndef OA_CLI_CMD_LIST_H
#define OA_CLI_CMD_LIST_H

#include "cli.h"

int cmd_list(cli *c);

#endif
