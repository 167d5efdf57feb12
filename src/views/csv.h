/* csv.h - the fields of every view's --format csv (docs/schema.md, "csv").
 * Library-internal. */
#ifndef OA_VIEWS_CSV_H
#define OA_VIEWS_CSV_H

#include <stdbool.h>
#include <stdio.h>

/* One csv field, as printed (oa_printable), quoted when it needs to be,
 * a text a spreadsheet would run as a formula led by ', then ',' or
 * (last) '\n'. */
void oa_csv_field(FILE *out, const char *s, bool last);

#endif
