/* prune_text.h - prune's and rm's text: a plan as the table format prints
 * it, the lines after it (saved, applied, or why nothing was removed), its
 * csv, the notes said on stderr about it, and the server start-up
 * prediction of `prune --predict-server`. Library-internal (the CLI links
 * the static library); nothing here decides what a plan holds. */
#ifndef OA_VIEWS_PRUNE_TEXT_H
#define OA_VIEWS_PRUNE_TEXT_H

#include "views/plan_rows.h"
#include "views/table.h"
#include "ollama_audit/apply.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/reclaim.h"
#include "ollama_audit/server_prune.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* How a note is said on stderr (the CLI's cli_err: the program's name
 * first, the whole message escaped). */
typedef void (*oa_say_fn)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The plan of store `root`: its heading ("ROOT: prune plan", " from FILE"
 * when from_file is not NULL; a blank line before it unless first), its
 * rows by model and kind of junk (plan_rows.h) or, when by_model is NULL
 * (-v), every entry (junk, may be NULL, adds a partial download's
 * progress) and every kept entry, then the total; dry_run adds that
 * nothing was removed. */
void oa_plan_text(const oa_text_style *st, FILE *out, const char *root, const oa_plan *p,
                  const oa_junk_list *junk, const char *from_file, bool first, bool dry_run,
                  const oa_plan_models *by_model);

/* rm -q: the names of the models whose manifests the plan removes, in
 * its order, one a line. */
void oa_plan_model_names(FILE *out, const oa_plan *p);

/* The question before --apply (a move into the quarantine, else a removal). */
char *oa_plan_question(const oa_plan *p, const char *quarantine, enum oa_units units);

/* What became of a plan, for the lines after it. */
typedef struct oa_plan_outcome {
	const char *saved;            /* the file the plan was written to (--plan), or NULL */
	bool apply;                   /* --apply was asked */
	bool tried;                   /* and there was something to apply */
	const oa_apply_result *r;     /* it ran: what it did; NULL otherwise */
	const char *refusal;          /* it did not: why */
	const char *quarantine;       /* --quarantine DIR, or NULL */
} oa_plan_outcome;
void oa_plan_outcome_text(const oa_text_style *st, FILE *out, const oa_plan_outcome *o);

/* The csv of a plan's report (oa_plan_report): a row per entry, planned
 * then kept, each ending with user (the store's owner); header: the column
 * names first. */
void oa_plan_csv(FILE *out, json_t *report, const char *user, bool header);

/* The notes on stderr: the other stores whose references the plan keeps
 * (shared.h); the compatibility shadows an rm plan leaves; the downgrade
 * anchor of a child a list rewrite drops going too; the empty
 * directories `ollama rm` would also remove and rm keeps (dirs, n of
 * them, from oa_plan_rm_unrelated_dirs), listed on diag. */
void oa_plan_shared_text(oa_say_fn say, const char *root, const oa_plan *p);
/* prune's plan when the references could not all be read (r->incomplete). */
void oa_reclaim_text(oa_say_fn say, const char *root, const oa_reclaim *r);
void oa_plan_shadows_text(oa_say_fn say, enum oa_units units, const oa_plan *p);
void oa_plan_anchor_text(oa_say_fn say, const char *root, const oa_plan *p);
void oa_rm_dirs_text(oa_say_fn say, FILE *diag, const char *root, char *const *dirs, size_t n);

/* `prune --predict-server`: what the server's start-up prune does to store
 * s (server_version: --server-version as given, or NULL). */
void oa_server_prune_text(const oa_text_style *st, FILE *out, const oa_store *s, const oa_server_prune *p,
                          const char *server_version, bool first);

#endif
