/* history_text.h - `history` as text and csv, and the lines on stderr that
 * say which logs a store's loads come from (library-internal). */
#ifndef OA_VIEWS_HISTORY_TEXT_H
#define OA_VIEWS_HISTORY_TEXT_H

#include "audit/history_view.h"
#include "views/table.h"
#include "ollama_audit/history.h"
#include "ollama_audit/log_usage.h"
#include "ollama_audit/logsrc.h"
#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* "ollama-audit: STORE: WHAT SOURCE, SOURCE": a log of another store read
 * by mistake shows up here, not as silently wrong times. */
void oa_history_say_sources(FILE *diag, const oa_store *s, const oa_log_sources *l, const char *what);
/* --unused-for: how far back the logs go (a model not in them is unused). */
void oa_usage_say_span(FILE *diag, const oa_store *s, const oa_log_usage *u);
/* The lines of the logs that could not be read, on diag. */
void oa_history_say_warnings(FILE *diag, const oa_history *h);
/* A store's loads x->v, then per model its last
 * load; first: the first store drawn (no blank line before it). */
void oa_history_text(const oa_text_style *st, FILE *out, const oa_history_view *x, bool first);
/* ndjson: the records of the loads x->v (oa_history_records). */
void oa_history_ndjson(FILE *out, const oa_history_view *x, const char *host);
/* json: the store's part of the document (oa_history_store_json). */
json_t *oa_history_view_json(const oa_history_view *x);
/* csv: a row per load; first: the heading before them. */
void oa_history_csv(FILE *out, const oa_history_view *x, bool first);

#endif
