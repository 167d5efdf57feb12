/* options.h - the command line's options (getopt_long), parsed into the
 * cli state and what main() decides afterwards. */
#ifndef OA_CLI_OPTIONS_H
#define OA_CLI_OPTIONS_H

#include "cli.h"

#include <stdbool.h>
#include <stddef.h>

/* What the options say beyond the cli state: decided once every option
 * is known (colour and progress depend on the format and the terminal),
 * or checked against the command's table. */
typedef struct cli_request {
	const char *color; /* --color WHEN */
	bool help;
	int progress;      /* --progress 1, --no-progress 0, neither -1 */
	const char *given[64]; /* the long names of the options given */
	size_t n_given;
} cli_request;

/* cli_parse_options(): every option parsed, go on. */
enum { CLI_GO_ON = -1 };

/* The first argument that is not an option or an option's value: the
 * command (getopt_long finds it only after every option is parsed). */
const char *cli_scan_command(int argc, char **argv);
/* Whether the long option NAME (without --) takes a value. */
bool cli_option_takes_value(const char *name);
/* Parse every option into c and r; the positional arguments are left at
 * argv + optind, in order. CLI_GO_ON, or the exit status when the command
 * line is wrong (said on stderr) or --version was printed. */
int cli_parse_options(cli *c, cli_request *r, int argc, char **argv);

#endif
