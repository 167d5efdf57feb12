/* cmd_report.h - `ollama-audit report` (its entry in commands.c). */
#ifndef OA_CLI_CMD_REPORT_H
#define OA_CLI_CMD_REPORT_H

#include "cli.h"

int cmd_report(cli *c);

#endif
