/* cmd_show.h - `ollama-audit show` (its entry in commands.c). */
#ifndef OA_CLI_CMD_SHOW_H
#define OA_CLI_CMD_SHOW_H

#include "cli.h"

int cmd_show(cli *c);

#endif
