/* cmd_verify.h - `ollama-audit verify` (its entry in commands.c). */
#ifndef OA_CLI_CMD_VERIFY_H
#define OA_CLI_CMD_VERIFY_H

#include "cli.h"

int cmd_verify(cli *c);

#endif
