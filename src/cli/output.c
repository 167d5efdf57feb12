/* output.c - small printers every command shares: a csv field, a -q name,
 * and the renderers of a JSON view (an ndjson record, a json document). */
#include "output.h"
#include "cli_machine.h"
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

void csv_field(FILE *out, const char *s, bool last)
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

const char *cli_safe(const char *s)
{
	static char *ring[8];
	static size_t next;
	size_t k = next++ % (sizeof ring / sizeof ring[0]);
	free(ring[k]);
	ring[k] = oa_printable(s);
	return ring[k];
}

void cli_render(cli *c, const void *view)
{
	cli_renderer r = c->render ? c->render[c->format] : NULL;
	if (r)
		r(c, view);
}

void cli_put_record(json_t *rec)
{
	oa_json_dump_line(rec, stdout);
	json_decref(rec);
}

void cli_put_stream_item(cli *c, const char *schema, json_t *item, bool first, bool last)
{
	if (c->format == OUT_JSON) {
		cli_emit_store(c, schema, item);
		return;
	}
	if (first)
		printf("{\"schema\":\"%s\",\"stores\":[", schema);
	else
		printf(",");
	json_dumpf(item, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(item);
	if (last)
		printf("]}\n");
}

void cli_put_stream_end(cli *c, const char *schema, bool any)
{
	if (c->format == OUT_JSON) {
		cli_emit_store(c, schema, NULL);
		return;
	}
	if (any)
		printf("]}\n");
	else
		printf("{\"schema\":\"%s\",\"stores\":[]}\n", schema);
}
