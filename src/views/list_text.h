/* list_text.h - `list` as a person reads it (the table of `ollama list`
 * plus format and runner), its -q names, csv and /api/tags, drawn from the
 * stores' oa_list_store views (library-internal). */
#ifndef OA_VIEWS_LIST_TEXT_H
#define OA_VIEWS_LIST_TEXT_H

#include "audit/select.h"
#include "views/table.h"
#include "ollama_audit/list_report.h"

#include <stdint.h>
#include <stdio.h>

/* A store's view: the models q lists, in its order, and the findings that
 * affect the listing (oa_finding_is_listing); lu is kept, not copied. */
void oa_list_store_make(oa_list_store *ls, const oa_list_query *q, oa_store *s, const oa_last_used *lu);
/* Frees v, n views oa_list_store_make made. */
void oa_list_stores_free(oa_list_store *v, size_t n);

/* LAST USED of some models (the newest load of any) as list and du show
 * it: an age, "never" (not in the logs), "-" (no logs, lu NULL). */
char *oa_last_used_text(const oa_last_used *lu, const size_t *models, size_t n, int64_t now_ns);

/* v: the stores read, n of them, each with its listed models in order. */
/* The combined total of the stores listed. */
void oa_list_totals(const oa_list_store *v, size_t n, oa_list_total *t);
/* The table (a "# STORE" line before each store's rows when there are
 * several, and the combined total under it); nothing when n is 0. */
void oa_list_text(const oa_text_style *st, FILE *out, const oa_list_store *v, size_t n);
/* -q: the names, as the table lists them, one a line. */
void oa_list_names(FILE *out, const oa_list_store *v, size_t n);
void oa_list_csv(FILE *out, const oa_list_store *v, size_t n);
/* /api/tags: every listed model that ollama list would show (not those
 * hidden-from-list names), newest first, as the server sorts. */
void oa_list_tags(FILE *out, const oa_list_store *v, size_t n);
/* The json document of the stores listed, written open as
 * oa_list_view_document_write leaves it, and the ndjson records (each
 * store's, then the total). */
void oa_list_document_write(FILE *out, const oa_list_store *v, size_t n);
void oa_list_ndjson(FILE *out, const oa_list_store *v, size_t n, const char *host);

#endif
