/* output.c - small printers every command shares: a csv field, a -q name,
 * and the renderers of a JSON view (an ndjson record, a json document). */
#include "output.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>
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

void cli_put_record(json_t *rec)
{
	oa_json_dump_line(rec, stdout);
	json_decref(rec);
}

void cli_put_stream_item(const char *schema, json_t *item, bool first, bool last)
{
	if (first)
		printf("{\"schema\":\"%s\",\"stores\":[", schema);
	else
		printf(",");
	json_dumpf(item, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(item);
	if (last)
		printf("]}\n");
}

void cli_put_stream_end(const char *schema, bool any)
{
	if (any)
		printf("]}\n");
	else
		printf("{\"schema\":\"%s\",\"stores\":[]}\n", schema);
}
