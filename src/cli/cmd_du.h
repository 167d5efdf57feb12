/* cmd_du.h - `ollama-audit du` (its entry in commands.c). */
#ifndef OA_CLI_CMD_DU_H
#define OA_CLI_CMD_DU_H

#include "cli.h"

int cmd_du(cli *c);

#endif
