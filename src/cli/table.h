/* table.h - the human tables. Columns are padded by display width (wcwidth
 * in the user's LC_CTYPE, UTF-8 tables when it cannot tell). On a terminal
 * (stdout a tty: COLUMNS if set, else the terminal's size) narrower than a
 * table, columns are hidden and cut (cli_table); piped, never. */
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

/* A table that fits the terminal. Each column has a priority (0: always
 * shown; the largest is hidden first) and a minimum width (0: never cut).
 * On a terminal narrower than the table the lowest-priority columns are
 * hidden until the rest fits with the cuttable columns at their minimum,
 * then those are cut (ellipsis) only as far as needed; no line is ever
 * wider than the terminal, and stderr says once which columns were hidden.
 * Piped, with --output or --wide: every column, nothing cut. */
typedef struct cli_column {
	const char *head;
	unsigned priority;
	size_t min;
	bool right;        /* right-aligned (sizes) */
} cli_column;

typedef struct cli_table {
	const cli_column *col;
	size_t ncol;
	const char *gap;   /* between two columns */
	char **cell;       /* rows x ncol, owned */
	char **line;       /* per row: a text line in place of cells (a section heading), or NULL */
	size_t rows;
} cli_table;

void cli_table_add(cli_table *t, char **cells); /* takes ncol cells (NULL: empty) */
void cli_table_line(cli_table *t, char *text);  /* takes text: a line of its own between rows */
/* Prints the heading (unless --no-header) and the rows, then empties t. */
void cli_table_print(const cli *c, cli_table *t, FILE *out);
size_t cli_table_width(const cli *c);           /* 0: no limit (piped, --output, --wide) */
/* A paragraph wrapped at the terminal's width (80 piped), each line after indent. */
void cli_print_wrapped(const cli *c, FILE *out, const char *indent, const char *text);

/* One row to order: sorted by num (largest first; INT64_MIN, "unknown",
 * last), then name (ascending, case folded first), then idx: stable. */
typedef struct cli_sort_key {
	int64_t num;
	const char *name;
	size_t idx;
} cli_sort_key;
void cli_sort_keys(cli_sort_key *v, size_t n);

#endif
