/* usage.h - errors on stderr, and usage errors: the message, then a pointer
 * to the --help that explains (the command's when the arguments name one). */
#ifndef OA_CLI_USAGE_H
#define OA_CLI_USAGE_H

#include "cli.h"

/* An error: "ollama-audit: " and the message on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last message said on stderr ("" when none): what machine output
 * reports for a failure no cli_fail() described. */
const char *cli_last_error(void);
/* The command the arguments name, known before the options are parsed. */
void cli_usage_hint_for(const char *cmd);
/* "Try 'ollama-audit [COMMAND] --help'." on stderr, once a run. */
void cli_usage_hint(void);
/* Says what is wrong and where to look; returns the usage exit status. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A format this mode of a command does not produce: says so, exit 16. */
int cli_refuse_format(const cli *c, const char *what, const char *formats);

#endif
