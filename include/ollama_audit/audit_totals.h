/*
 * audit_totals.h - what check and verify found in one store, as numbers, and
 * those numbers added up per user and over every store (docs/multi-store.md).
 * The JSON "summary" of a store and the ndjson total records are views of
 * these structs; nothing is read back from JSON.
 */
#ifndef OLLAMA_AUDIT_AUDIT_TOTALS_H
#define OLLAMA_AUDIT_AUDIT_TOTALS_H

#include "ollama_audit/export.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One store's check or verify pass. */
typedef struct oa_audit_summary {
	bool verify;             /* a verify pass (else check) */
	size_t models;           /* models reported */
	size_t errors, warnings, infos; /* findings reported, by severity */
	double seconds;          /* check: the scan; verify: the hashing */
	/* check */
	size_t blob_files;
	bool prune_blocked;
	/* verify */
	size_t blobs, skipped_unchanged, not_done;
	uint64_t bytes_hashed;
	bool interrupted, timed_out;
} oa_audit_summary;

/* A store's "summary" object in docs/schema.md's field order (check or
 * verify, as s->verify says). */
OA_EXPORT json_t *oa_audit_summary_json(const oa_audit_summary *s);

/* Stores added up: every store counts, an unreadable one only as such. */
typedef struct oa_audit_total {
	char *user;              /* "" when the owner is unknown; NULL for the overall total */
	long long stores, unreadable_stores, models, errors, warnings;
	uint64_t bytes_hashed;
} oa_audit_total;

typedef struct oa_audit_totals {
	oa_audit_total *users;   /* in the order their first store was added */
	size_t n_users;
	oa_audit_total all;
	bool verify;             /* some store was verified: totals carry bytes_hashed */
} oa_audit_totals;

OA_EXPORT void oa_audit_totals_init(oa_audit_totals *t);
/* Add a store owned by `user` (NULL: unknown); `s` NULL: it could not be read. */
OA_EXPORT void oa_audit_totals_add(oa_audit_totals *t, const char *user, const oa_audit_summary *s);
OA_EXPORT void oa_audit_totals_free(oa_audit_totals *t);

/* The ndjson record of a total: {"type":"user_total"|"total", "host", ...}. */
OA_EXPORT json_t *oa_audit_total_record(const oa_audit_totals *t, const oa_audit_total *x, const char *host);

#endif
