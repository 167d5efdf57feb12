/* du_text.h - `du`'s table, -q names and csv (docs/disk-space.md), drawn
 * from du's typed results (du.h) and the rows a du view shows
 * (audit/du_view.h). Library-internal: the CLI links the static library. */
#ifndef OA_VIEWS_DU_TEXT_H
#define OA_VIEWS_DU_TEXT_H

#include "views/table.h"
#include "audit/du_view.h"
#include "ollama_audit/du.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/log_usage.h"
#include "ollama_audit/metrics.h"
#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One store's table: its root (unless st->header is off; a blank line
 * first unless first), a row per manifest (LAST USED when lu has logs,
 * ages against now_ns), then the store's totals, junk, reclaimable,
 * quarantine, blobs/, metadata/ and conversions. */
void oa_du_text_store(const oa_text_style *st, FILE *out, const oa_store *s, const oa_du_store *d,
                      const oa_last_used *lu, int64_t now_ns, bool first);
/* Under a selection (--unused-for, --filter): the line that ends the
 * store's table, what `rm` with the same selection frees; nothing without
 * one. */
void oa_du_text_selection(const oa_text_style *st, FILE *out, const oa_du_view *v);
/* The same in json: "selection" on the store object o. */
void oa_du_view_selection_json(const oa_du_view *v, json_t *o);
/* -q: every tag of each row (removing them all frees UNIQUE), one a line. */
void oa_du_text_names(FILE *out, const oa_store *s, const oa_du_store *d);
/* The combined total after several stores' tables. */
void oa_du_text_total(const oa_text_style *st, FILE *out, const oa_du_total *t);
/* csv: the header line, then each store's rows. */
void oa_du_csv_header(FILE *out);
void oa_du_csv_store(FILE *out, const oa_store *s, const oa_du_store *d);

#endif
