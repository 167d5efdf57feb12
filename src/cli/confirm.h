/* confirm.h - the yes/no question before an --apply, and the signals that
 * stop one. */
#ifndef OA_CLI_CONFIRM_H
#define OA_CLI_CONFIRM_H

#include <signal.h>
#include <stdbool.h>

/* Ask a yes/no question on stderr and read the answer from stdin. Only
 * "y" or "yes" (any case, blanks around allowed) is yes; anything else, end
 * of input or a standard input that is not a terminal is no. */
bool cli_confirm(const char *question);

/* While an apply or a restore runs, SIGINT, SIGTERM and SIGHUP call
 * handler (which asks it to stop after the current entry);
 * cli_signals_restore puts back what was there. */
typedef struct cli_signals {
	struct sigaction old_int, old_term, old_hup;
} cli_signals;
void cli_signals_catch(cli_signals *s, void (*handler)(int));
void cli_signals_restore(const cli_signals *s);

#endif
