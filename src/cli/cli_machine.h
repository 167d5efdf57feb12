/* cli_machine.h - what machine-readable output carries besides its data:
 * the errors of the run (docs/schema.md, "Errors and status"). */
#ifndef OA_CLI_MACHINE_H
#define OA_CLI_MACHINE_H

#include "cli.h"

/* An error machine output must carry: said on stderr, an {"type":"error"}
 * record with ndjson, and in the json document's "errors". code is a short
 * kebab-case word (docs/schema.md); path may be NULL. The exit status is the
 * caller's. */
void cli_fail(cli *c, const char *code, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same error kept for machine output only: the caller has said it. */
void cli_note_error(cli *c, const char *code, const char *path, const char *msg);
/* Around the command: json and csv are held back until the end, which adds
 * "status" and "errors" to the json document and keeps a csv empty when no
 * store could be read. */
void cli_capture_begin(cli *c);
/* rc: the command's exit status. A run that failed (8, 16, 32) without a
 * cli_fail() still reports an error, with the last message said. */
void cli_capture_end(cli *c, int rc);

#endif
