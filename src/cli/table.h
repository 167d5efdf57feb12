/* table.h - the human tables. Columns are padded by display width (wcwidth
 * in the user's LC_CTYPE, UTF-8 tables when it cannot tell). On a terminal
 * (stdout a tty: COLUMNS if set, else the terminal's size) narrower than a
 * table, the NAME column is cut with an ellipsis; piped, never. */
#ifndef OA_CLI_TABLE_H
#define OA_CLI_TABLE_H

#include "cli.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

size_t cli_text_width(const char *s);
void cli_put_cell(FILE *out, const char *s, size_t width, bool right);
char *cli_fit(const char *s, size_t width); /* s cut to width columns, ending in U+2026 */
size_t cli_term_width(void);                /* 0: no limit (not a terminal) */
/* The NAME column's width, given its widest cell and the columns the rest
 * of a row takes. */
size_t cli_name_width(size_t name_width, size_t rest);

/* One row to order: sorted by num (largest first; INT64_MIN, "unknown",
 * last), then name (ascending, case folded first), then idx: stable. */
typedef struct cli_sort_key {
	int64_t num;
	const char *name;
	size_t idx;
} cli_sort_key;
void cli_sort_keys(cli_sort_key *v, size_t n);
/* The newest load (ns) of any of the models in the server's logs, or
 * INT64_MIN when none is there: --sort last-used puts those last. */
int64_t cli_last_used_ns(cli *c, const oa_store *s, const size_t *models, size_t n);

#endif
