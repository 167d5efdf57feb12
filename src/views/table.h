/* table.h - the human tables, the one table builder of every view that
 * draws text. Columns are padded by display width (wcwidth in the user's
 * LC_CTYPE, UTF-8 tables when it cannot tell). On a terminal (stdout a tty:
 * COLUMNS if set, else the terminal's size) narrower than a table, columns
 * are hidden and cut (oa_table); piped, never. Library-internal: the CLI
 * links the static library and fills an oa_text_style from its options
 * (cli_text_style). */
#ifndef OA_VIEWS_TABLE_H
#define OA_VIEWS_TABLE_H

#include "ollama_audit/humanize.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* How a view draws text for a person: the CLI's options, once. */
typedef struct oa_text_style {
	size_t width;      /* columns a line may take; 0: no limit (piped, --output, --wide) */
	bool header;       /* column headings (--no-header clears it) */
	bool color;        /* ANSI colour (a terminal, NO_COLOR unset) */
	enum oa_units units;
	FILE *diag;        /* where a table says which columns it hid (stderr) */
	bool *hidden_said; /* set once a table said so, which then says it no more; NULL: every table says it */
	bool owners;       /* --all-users: tables name each row's store owner (OA_COLUMN_USER) */
} oa_text_style;

size_t oa_text_width(const char *s);
/* Text from a store as printed (oa_printable: controls, bidi and invalid
 * UTF-8 escaped), for a printf argument. The result stays valid for the
 * next 7 calls. */
const char *oa_text_safe(const char *s);
void oa_put_cell(FILE *out, const char *s, size_t width, bool right);
char *oa_text_fit(const char *s, size_t width); /* s cut to width columns, ending in U+2026 */
/* A model name cut to width columns in the middle of its repository, the
 * host and namespace before it and its :TAG kept whole when they leave
 * room (hf.co/bartowski/Qwen…-GGUF:Q4_K_M), else in the middle of what
 * comes before the tag; a cell that is not one name (a blank in it) is cut
 * at its end, as oa_text_fit does. */
char *oa_name_fit(const char *s, size_t width);
/* The short form of an age as oa_human_age writes it: "2 weeks ago" is
 * "2w ago", "About an hour ago" "1h ago", "Less than a second ago" "now",
 * "3 days from now" "in 3d"; any other text comes back as it is. */
char *oa_age_terse(const char *s);
size_t oa_term_width(void);                /* 0: no limit (not a terminal) */

/* A table that fits the terminal. Each column has a priority (0: always
 * shown; the largest is hidden first) and a minimum width (0: never cut).
 * On a terminal narrower than the table, columns of a priority above
 * OA_PRIORITY_CORE (the ones `ollama list` does not show) are hidden first
 * when that lets every cell show whole: a cut name costs more than an extra
 * column. Else the ages (age_cols) take their short form ("2w ago") and
 * that is tried again; then the lowest-priority columns are hidden until
 * the rest fits with the cuttable columns at their minimum, and those are
 * cut (ellipsis; a name column, name_cols, in the middle of its
 * repository, keeping :TAG) only as far as needed. No line is ever wider than the
 * terminal, and stderr says once, within that width, which columns were
 * hidden. Piped, with --output or --wide: every column, nothing cut. */
#define OA_PRIORITY_CORE 3
/* USER, the owner of a row's store under --all-users: above every other
 * priority, so the first column a narrow terminal hides (the rows' store
 * headings still say whose they are). Without --all-users a table leaves it
 * out (absent_cols) and its cells are NULL (oa_user_cell). */
#define OA_PRIORITY_USER 100
#define OA_COLUMN_USER { "USER", OA_PRIORITY_USER, 0, false }

typedef struct oa_column {
	const char *head;
	unsigned priority;
	size_t min;
	bool right;        /* right-aligned (sizes) */
} oa_column;

typedef struct oa_table {
	const oa_column *col;
	size_t ncol;
	const char *gap;   /* between two columns */
	uint32_t name_cols; /* bit k: column k holds model names, cut as oa_name_fit cuts */
	uint32_t age_cols;  /* bit k: column k holds ages (oa_human_age), shortened before a column goes */
	uint32_t absent_cols; /* bit k: column k is not drawn at all, and not said to be hidden */
	char **cell;       /* rows x ncol, into text (read-only) */
	char **line;       /* per row: a text line in place of cells (a section heading), or NULL */
	size_t rows, cap;  /* cap: rows cell and line have room for */
	bool whole_lines;  /* lines are printed whole, never cut to the width (commands to copy) */
	struct oa_table_text *text; /* the cells' bytes, in large chunks: a cell is not a malloc
	                               chunk of its own (90,000 of them in a list of 10,000 tags) */
} oa_table;

/* USER's bit of absent_cols for column k: set unless st->owners. */
uint32_t oa_user_absent(const oa_text_style *st, size_t k);
/* A row's USER cell: the owner of s (oa_report_owner) under --all-users,
 * else NULL. */
struct oa_store;
char *oa_user_cell(const oa_text_style *st, const struct oa_store *s);

/* Takes ncol cells (NULL: empty): each is copied into the table and freed. */
void oa_table_add(oa_table *t, char **cells);
/* Empties t without printing it. */
void oa_table_clear(oa_table *t);
void oa_table_line(oa_table *t, char *text);  /* takes text: a line of its own between rows */
/* Prints the heading (unless --no-header) and the rows, then empties t. */
void oa_table_print(const oa_text_style *st, oa_table *t, FILE *out);
/* A table too long to hold at once (`list` of 10,000 tags: 3 MiB of cells,
 * issue 21): t gives the columns (and holds no rows); fn makes row r each
 * time it is asked, once to size the columns and once to print, r from 0
 * to rows - 1 in order each time. fn fills either cells (t->ncol malloc'd
 * strings, NULL for empty) or *line (malloc'd: a line of its own, as
 * oa_table_line), and must make the same row both times. */
typedef void (*oa_table_row_fn)(void *ctx, size_t r, char **cells, char **line);
void oa_table_print_rows(const oa_text_style *st, oa_table *t, size_t rows, oa_table_row_fn fn, void *ctx,
                         FILE *out);
/* A paragraph wrapped at st's width (80 when unlimited), each line after indent. */
void oa_print_wrapped(const oa_text_style *st, FILE *out, const char *indent, const char *text);

#endif
