/* usage.h - usage errors: the message, then a pointer to the --help that
 * explains (the command's when the arguments name one). */
#ifndef OA_CLI_USAGE_H
#define OA_CLI_USAGE_H

/* The command the arguments name, known before the options are parsed. */
void cli_usage_hint_for(const char *cmd);
/* "Try 'ollama-audit [COMMAND] --help'." on stderr. */
void cli_usage_hint(void);
/* Says what is wrong and where to look; returns the usage exit status. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
