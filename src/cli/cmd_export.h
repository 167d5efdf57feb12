/* cmd_export.h - `ollama-audit export` (its entry in commands.c). */
#ifndef OA_CLI_CMD_EXPORT_H
#define OA_CLI_CMD_EXPORT_H

#include "cli.h"

int cmd_export(cli *c);

#endif
