/* cmd_restore.h - `ollama-audit restore` (its entry in commands.c). */
#ifndef OA_CLI_CMD_RESTORE_H
#define OA_CLI_CMD_RESTORE_H

#include "cli.h"

int cmd_restore(cli *c);

#endif
