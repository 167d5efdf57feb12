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

/* While an apply, a restore or a copy runs, SIGINT, SIGTERM and SIGHUP set
 * the run's stop flag (cli_stop_flag: what the command passes the library
 * as its stop, which ends the work after the current entry);
 * cli_signals_restore puts back what was there. */
typedef struct cli_signals {
	struct sigaction old_int, old_term, old_hup;
} cli_signals;
void cli_signals_catch(cli_signals *s);
void cli_signals_restore(const cli_signals *s);
/* The one flag those signals set; it stays set for the rest of the run. */
volatile sig_atomic_t *cli_stop_flag(void);

#endif
