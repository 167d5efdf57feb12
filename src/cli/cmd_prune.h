/* cmd_prune.h - `ollama-audit prune`. */
#ifndef OA_CLI_CMD_PRUNE_H
#define OA_CLI_CMD_PRUNE_H

#include "cli.h"

int cmd_prune(cli *c);

#endif
