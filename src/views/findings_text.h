/* findings_text.h - the findings of check and verify as text and csv, and
 * one finding on its line for every command (library-internal). */
#ifndef OA_VIEWS_FINDINGS_TEXT_H
#define OA_VIEWS_FINDINGS_TEXT_H

#include "views/table.h"
#include "ollama_audit/audit_totals.h"
#include "ollama_audit/finding.h"
#include "ollama_audit/store.h"
#include "ollama_audit/verify_store.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* "error CODE: PATH: message", coloured by severity when st->color. */
void oa_finding_print(const oa_text_style *st, FILE *out, const oa_finding *f);
/* The findings of the model shown as model (NULL: the store-wide ones)
 * that selected keeps (NULL: all), each on its line after indent, under
 * heading (written before the first); false when there is none. */
bool oa_findings_group(const oa_text_style *st, FILE *out, const oa_store *s, const bool *selected,
                       const char *model, const char *heading, const char *indent);
/* verify's counts and totals of a store into sum (oa_verify_store's). */
void oa_audit_summary_verified(oa_audit_summary *sum, const oa_verify_store_result *res);
/* ndjson: a record per selected finding, then the store's summary. */
void oa_findings_ndjson(FILE *out, const oa_store *s, const bool *selected, const oa_audit_summary *sum,
                        const char *host);
/* The summary line of a store's pass: check's ("N models, N blob files
 * checked in S s") or verify's (sum->verify: models, blobs, bytes, rate,
 * what was skipped or not done). */
void oa_audit_summary_line(const oa_audit_summary *sum, char *line, size_t len);
/* A store's selected findings (selected[i]: finding i is reported): per
 * model, then store-wide, the summary line, then the one-screen answer
 * (models by severity, each with its fix). first: the first store drawn. */
void oa_findings_text(const oa_text_style *st, FILE *out, const oa_store *s, const bool *selected,
                      const char *summary_line, const oa_audit_summary *sum, bool first);
/* csv: a row per selected finding; first: the heading before them. */
void oa_findings_csv(FILE *out, const oa_store *s, const bool *selected, bool first);
/* verify's progress line (over itself: "\r", erase): percent, bytes, rate,
 * time left and the model whose blob started last. */
void oa_verify_progress_line(FILE *diag, uint64_t done, uint64_t total, double elapsed, const char *label);

#endif
