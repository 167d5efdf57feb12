/* cmd_dedupe.h - `ollama-audit dedupe`. */
#ifndef OA_CLI_CMD_DEDUPE_H
#define OA_CLI_CMD_DEDUPE_H

#include "cli.h"

int cmd_dedupe(cli *c);

#endif
