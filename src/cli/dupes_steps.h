/* dupes_steps.h - the blobs several stores hold (docs/multi-store.md):
 * the stores du --duplicates and dedupe compare, opened once, and the
 * renderers both draw through. */
#ifndef OA_CLI_DUPES_STEPS_H
#define OA_CLI_DUPES_STEPS_H

#include "cli.h"
#include "ollama_audit/dedupe_run.h"
#include "ollama_audit/dupes.h"

#include <stddef.h>

/* What every format of `du --duplicates` (p NULL) and `dedupe` renders. */
typedef struct dedupe_view {
	oa_store *const *sv;
	const char *const *users;
	const oa_dupes *d;
	size_t ok;                   /* the stores compared */
	const oa_dedupe_plan *p;
	const oa_dedupe_outcome *o;
} dedupe_view;
/* Its renderers (the slots of dedupe's entry in commands.c, and of du
 * --duplicates). */
void dedupe_render_table(cli *c, const void *view);
void dedupe_render_json(cli *c, const void *view);
void dedupe_render_ndjson(cli *c, const void *view);
void dedupe_render_csv(cli *c, const void *view);

/* The stores opened (sv: NULL for one not open; users: their owners, as
 * the views name them) and the digests they share. */
typedef struct dd_stores {
	opened_store *st;
	size_t n, ok;
	oa_store **sv;
	const char **users;
	oa_dupes d;
} dd_stores;
/* Open the stores and find the digests they share (what: the command, for
 * messages). Returns -1 when there is something to compare, else the exit
 * code (nothing is left open then). */
int cli_dupes_open(cli *c, const char *what, dd_stores *x);
void cli_dupes_close(dd_stores *x);

/* du --duplicates [--all-users]: the cross-store duplicate report. */
int cli_du_duplicates(cli *c);

#endif
