/* csv.c - a csv field as every view writes it (RFC 4180 quoting, the
 * formula guard). */
#include "views/csv.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* A text cell a spreadsheet would run as a formula (OWASP's rule: =, +,
 * -, @, tab or CR first) gets a ' in front; a number such as -1 or +2.5
 * is no text and stays as it is. */
static bool csv_formula_like(const char *s)
{
	if (!*s || !strchr("=+-@\t\r", *s))
		return false;
	size_t digits = strspn(s + 1, "0123456789.");
	bool number = (*s == '-' || *s == '+') && digits > 0 && !s[1 + digits];
	return !number;
}

void oa_csv_field(FILE *out, const char *s, bool last)
{
	char *e = oa_printable(s);
	bool quote = strpbrk(e, ",\"\r\n") != NULL;
	if (quote)
		fputc('"', out);
	if (csv_formula_like(e))
		fputc('\'', out);
	for (const char *p = e; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	if (quote)
		fputc('"', out);
	fputc(last ? '\n' : ',', out);
	free(e);
}
