/* restore_text.h - `restore`'s text: a quarantine's operations (a table,
 * or csv), what putting back did and what --empty did or would do
 * (library-internal). */
#ifndef OA_VIEWS_RESTORE_TEXT_H
#define OA_VIEWS_RESTORE_TEXT_H

#include "views/table.h"
#include "ollama_audit/restore.h"
#include "ollama_audit/trash.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The operations of quarantine dir, and how to put back or empty it. */
void oa_restore_ops_text(const oa_text_style *st, FILE *out, const char *dir, const oa_quarantine_ops *ops);
/* csv: a row per operation of doc (oa_quarantine_ops_report's). */
void oa_restore_ops_csv(FILE *out, json_t *doc);
/* "restored N, already in place N, ..." and, for one operation (not
 * --all: with_op), which one; for one model, from which operation and what
 * that operation still holds in dir. */
void oa_restore_result_text(const oa_text_style *st, FILE *out, const char *dir, const oa_restore_result *r,
                            bool with_op);
/* What --empty deleted (applied) or would delete, and what dir then holds. */
void oa_empty_result_text(const oa_text_style *st, FILE *out, const char *dir, const oa_empty_result *r,
                          bool applied);
/* --apply's question before it deletes what a dry run found (dry). */
char *oa_empty_question(const oa_text_style *st, const char *dir, const oa_empty_result *dry);

#endif
