/* output.c - small printers every command shares: a csv field, a -q name. */
#include "cli.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

void cli_print_name(const char *name)
{
	char *e = oa_escape(name, strlen(name));
	puts(e);
	free(e);
}

void csv_field(FILE *out, const char *s, bool last)
{
	if (!s)
		s = "";
	if (strpbrk(s, ",\"\r\n")) {
		fputc('"', out);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', out);
			fputc(*s, out);
		}
		fputc('"', out);
	} else {
		fputs(s, out);
	}
	fputc(last ? '\n' : ',', out);
}
