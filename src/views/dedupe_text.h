/* dedupe_text.h - the text and csv of `du --duplicates` (the blobs several
 * stores hold) and `dedupe` (its plan or what it did), and dedupe's notes
 * on the stores a server uses. Stores are named by root and owner:
 * users[i] owns sv[i]. Library-internal (the CLI links the static library). */
#ifndef OA_VIEWS_DEDUPE_TEXT_H
#define OA_VIEWS_DEDUPE_TEXT_H

#include "views/prune_text.h"
#include "views/table.h"
#include "ollama_audit/dedupe.h"
#include "ollama_audit/dedupe_run.h"
#include "ollama_audit/dupes.h"

#include <stdbool.h>
#include <stdio.h>

/* du --duplicates: each digest with its copies, the owners' totals and
 * what sharing saves among the stores_ok stores compared. */
void oa_dupes_text(const oa_text_style *st, FILE *out, oa_store *const *sv, const char *const *users,
                   const oa_dupes *d, size_t stores_ok);
void oa_dupes_csv(FILE *out, oa_store *const *sv, const char *const *users, const oa_dupes *d);

/* dedupe: a line per store pair and outcome (each: a line per action),
 * then the dry run's promise (apply false) or what was replaced, what
 * reflinks left alone and what to do instead, and the junk left alone. */
void oa_dedupe_text(const oa_text_style *st, FILE *out, oa_store *const *sv, const char *const *users,
                    const oa_dedupe_plan *p, const oa_dedupe_outcome *o, bool apply, bool each);
void oa_dedupe_csv(FILE *out, oa_store *const *sv, const char *const *users, const oa_dedupe_plan *p);

/* The question before --apply: o->planned actions freeing p->bytes. */
char *oa_dedupe_question(const oa_dedupe_plan *p, const oa_dedupe_outcome *o, enum oa_units units);

/* Why no copy in a store can be taken for junk (d->refs_incomplete), if so. */
void oa_dupes_refs_text(oa_say_fn say, const oa_dupes *d);

/* What oa_dedupe_hold_busy found, said on stderr store by store. */
void oa_dedupe_busy_text(oa_say_fn say, oa_store *const *sv, const oa_dedupe_busy *b, size_t n, bool force);

#endif
