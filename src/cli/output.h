/* output.h - small printers every command shares, and the renderers of a
 * JSON view (each takes the json_t and frees it). */
#ifndef OA_CLI_OUTPUT_H
#define OA_CLI_OUTPUT_H

#include "cli.h"
#include "views/table.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The text style of c's options (views/table.h), and the table printers
 * over it. */
oa_text_style cli_text_style(const cli *c);
void cli_table_print(const cli *c, oa_table *t, FILE *out);
size_t cli_table_width(const cli *c); /* 0: no limit (piped, --output, --wide) */
void cli_print_wrapped(const cli *c, FILE *out, const char *indent, const char *text);
/* -q (list, du): one name per line. */
void cli_print_name(const char *name);

/* The command's view in the format asked for: its renderer in the command
 * table (commands.c); a format without one writes nothing. */
void cli_render(cli *c, const void *view);
/* One ndjson record on its line. */
void cli_put_record(json_t *rec);
/* A document {"schema":..., "stores":[...]} store by store (prune
 * --predict-server, the one document it writes for ndjson too): with --format
 * json it is emitted (cli_emit_store), with ndjson written on one line as
 * it comes: `first` opens it, `last` closes it; cli_put_stream_end() closes
 * it when no item was last (any: whether an item was written; none: an
 * empty document). */
void cli_put_stream_item(cli *c, const char *schema, json_t *item, bool first, bool last);
void cli_put_stream_end(cli *c, const char *schema, bool any);

#endif
