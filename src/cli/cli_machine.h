/* cli_machine.h - what machine-readable output carries besides its data:
 * the errors of the run (docs/schema.md, "Errors and status"). */
#ifndef OA_CLI_MACHINE_H
#define OA_CLI_MACHINE_H

#include "cli.h"

#include <jansson.h>
#include <stdio.h>

/* An error machine output must carry: said on stderr, an {"type":"error"}
 * record with ndjson, and in the json document's "errors". code is a short
 * kebab-case word (docs/schema.md); path may be NULL. The exit status is the
 * caller's. */
void cli_fail(cli *c, const char *code, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same error kept for machine output only: the caller has said it. */
void cli_note_error(cli *c, const char *code, const char *path, const char *msg);
/* --format json: the command's document (the reference is taken), printed
 * once at the end of the run with "status" and "errors" added. */
void cli_emit_document(cli *c, json_t *doc);
/* The command wrote its json document to stdout itself, left open (its
 * members, no closing brace): the end of the run adds "status" and
 * "errors" and closes it. Only when it emits no other document. */
void cli_emit_written(cli *c);
/* One store of a {"schema":..., "stores":[...]} document, which the first
 * call emits; store NULL emits the document with no store yet. */
void cli_emit_store(cli *c, const char *schema, json_t *store);
/* Around the command: the json document is printed at the end with
 * "status" and "errors"; csv and tags are held in memory and printed at the
 * end unless an error left no store read (the csv stays empty). */
void cli_machine_begin(cli *c);
/* Where a command writes its csv or tags text: the memory held back for
 * the end of the run (stdout in the other formats). */
FILE *cli_text_out(void);
/* rc: the command's exit status. A run that failed (8, 16, 32) without a
 * cli_fail() still reports an error, with the last message said. */
void cli_machine_end(cli *c, int rc);

#endif
