/* confirm.h - the yes/no question before an --apply. */
#ifndef OA_CLI_CONFIRM_H
#define OA_CLI_CONFIRM_H

#include <stdbool.h>

/* Ask a yes/no question on stderr and read the answer from stdin. Only
 * "y" or "yes" (any case, blanks around allowed) is yes; anything else, end
 * of input or a standard input that is not a terminal is no. */
bool cli_confirm(const char *question);

#endif
