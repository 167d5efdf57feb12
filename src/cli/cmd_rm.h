/* cmd_rm.h - `ollama-audit rm` (its entry in commands.c). */
#ifndef OA_CLI_CMD_RM_H
#define OA_CLI_CMD_RM_H

#include "cli.h"

int cmd_rm(cli *c);

#endif
