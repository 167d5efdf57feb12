/* completion.h - `ollama-audit completion bash|zsh|fish` (hidden): the
 * shell's completion script, written from the command table. */
#ifndef OA_CLI_COMPLETION_H
#define OA_CLI_COMPLETION_H

#include <stdio.h>

/* Print the script for SHELL on out: 0, or the usage exit status for a
 * shell it does not know (said on stderr). */
int cli_completion(FILE *out, const char *shell);
/* `ollama-audit help completion`. */
extern const char cli_completion_help[];

#endif
