/* output.c - small printers every command shares: a -q name, the text style,
 * and the renderers of a JSON view (an ndjson record, a json document). */
#include "output.h"
#include "cli_machine.h"
#include "ollama_audit/report.h"
#include "base/util.h"
#include "views/table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_print_name(const char *name)
{
	char *e = oa_escape(name, strlen(name));
	puts(e);
	free(e);
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

/* The program's, not the library's: a run says which columns it hid once. */
static bool hidden_said;

oa_text_style cli_text_style(const cli *c)
{
	return (oa_text_style){ .width = c->wide ? 0 : oa_term_width(), .header = !c->no_header, .color = c->color,
	                        .units = c->units, .diag = stderr, .hidden_said = &hidden_said,
	                        .owners = c->all_users };
}

void cli_table_print(const cli *c, oa_table *t, FILE *out)
{
	oa_text_style st = cli_text_style(c);
	oa_table_print(&st, t, out);
}

size_t cli_table_width(const cli *c)
{
	return cli_text_style(c).width;
}

void cli_print_wrapped(const cli *c, FILE *out, const char *indent, const char *text)
{
	oa_text_style st = cli_text_style(c);
	oa_print_wrapped(&st, out, indent, text);
}
