/* cmd_check.h - `ollama-audit check` (its entry in commands.c). */
#ifndef OA_CLI_CMD_CHECK_H
#define OA_CLI_CMD_CHECK_H

#include "cli.h"

int cmd_check(cli *c);

#endif
