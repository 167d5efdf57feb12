/* output.h - small printers every command shares, and the renderers of a
 * JSON view (each takes the json_t and frees it). */
#ifndef OA_CLI_OUTPUT_H
#define OA_CLI_OUTPUT_H

#include "cli.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* One csv field, quoted when it needs to be, then ',' or (last) '\n'. */
void csv_field(FILE *out, const char *s, bool last);
/* Text from a store as printed (oa_printable: controls, bidi and invalid
 * UTF-8 escaped), for a printf argument. The result stays valid for the
 * next 7 calls. */
const char *cli_safe(const char *s);
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
