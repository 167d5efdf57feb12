/* stores_text.h - `stores`' table and csv (docs/multi-store.md), drawn from
 * its rows, totals and duplicates (stores_report.h). Library-internal: the
 * CLI links the static library. */
#ifndef OA_VIEWS_STORES_TEXT_H
#define OA_VIEWS_STORES_TEXT_H

#include "views/table.h"
#include "ollama_audit/stores_report.h"

#include <stddef.h>
#include <stdio.h>

/* The table: one row per store, then per user, then the duplicates. */
void oa_stores_text(const oa_text_style *st, FILE *out, const oa_stores_row *rows, size_t n,
                    const oa_stores_totals *t, const oa_stores_dupes *d);
/* What reading a row found that the command says (a line, malloc'd), or
 * NULL: parts of an opened store that could not be read, a store that
 * would not open, no store where --store named one (elsewhere a missing
 * store is only a row). For a row not opened, *path is the one it names
 * and *how how it was found (NULL: not a failure the Prometheus text shows). */
char *oa_stores_text_problem(const oa_stores_row *r, const char **path, const char **how);
/* csv: the header line and a line per row; host names the machine. */
void oa_stores_csv(FILE *out, const char *host, const oa_stores_row *rows, size_t n);

#endif
