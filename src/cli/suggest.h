/* suggest.h - did you mean: the name closest to one that names nothing. */
#ifndef OA_CLI_SUGGEST_H
#define OA_CLI_SUGGEST_H

/* The command closest to a mistyped one, or NULL when none is close. */
const char *cli_suggest_command(const char *typed);

#endif
