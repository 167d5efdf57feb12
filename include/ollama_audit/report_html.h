/*
 * report_html.h - `report` as one self-contained HTML file: inline CSS and
 * SVG, no script, no external address; readable without JavaScript. Every
 * string from a store is escaped (HTML, and control characters shown as
 * \xNN, as the tables show them). Draws what oa_overview_build computed.
 */
#ifndef OLLAMA_AUDIT_REPORT_HTML_H
#define OLLAMA_AUDIT_REPORT_HTML_H

#include "ollama_audit/export.h"

#include "ollama_audit/humanize.h"
#include "ollama_audit/overview.h"

#include <stdint.h>
#include <stdio.h>

typedef struct oa_report_html_opts {
	enum oa_units units;  /* of the sizes shown (exact bytes are shown too) */
	int64_t now_ns;       /* the report's time; last use is an age from it */
	const char *host;     /* the machine, for the title; may be NULL */
} oa_report_html_opts;

/* The page: with several stores a fleet summary first, then a section per
 * store (its owner, totals, treemap, models, findings). */
OA_EXPORT void oa_report_html(FILE *out, const oa_overview_store *stores, size_t n, const oa_overview_totals *fleet,
                    const oa_report_html_opts *o);

/* Text as HTML: oa_escape's \xNN for control and invalid bytes, then
 * &<>"' as entities, and C1 controls and bidirectional overrides (valid
 * UTF-8, but they reorder or hide what follows) as \u+XXXX. At most
 * max_chars characters of the escaped text (0: all), with an ellipsis
 * when cut. */
OA_EXPORT void oa_html_text(FILE *out, const char *s, size_t max_chars);

#endif
