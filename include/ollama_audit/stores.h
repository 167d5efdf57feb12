/*
 * stores.h - `stores` (docs/multi-store.md): every store on the machine as
 * a row, opened, scanned and measured once; per-user and overall totals
 * computed from the rows; the duplicates among them.
 */
#ifndef OLLAMA_AUDIT_STORES_H
#define OLLAMA_AUDIT_STORES_H

#include "ollama_audit/export.h"

#include "ollama_audit/discover.h"
#include "ollama_audit/dupes.h"
#include "ollama_audit/metrics.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>

/* One candidate store and what reading it gave. */
typedef struct oa_stores_row {
	const oa_candidate *cand;
	oa_store s;
	bool opened;          /* s is open and scanned */
	const char *state;    /* "ok", "incomplete", "permission-denied", "missing", ... */
	char *error;
	size_t unreadable;    /* "unreadable" findings of the scan */
	uint64_t bytes, apparent; /* blobs/ as `du -s` counts it */
	oa_store_metrics metrics; /* an opened row's (metrics.h): its walk gives bytes and apparent */
	double seconds;       /* time taken to open and scan */
} oa_stores_row;

/* The rows of `stores`: each candidate discovered that it shows (a store,
 * a denied or unknown one, one configured somewhere; all: every place
 * looked at), read: a found (or denied) store is opened with o, scanned and
 * measured once (oa_store_metrics_compute at now, Unix seconds); otherwise
 * state (and error, when unknown) says why not. The caller reports
 * failures: a row not opened whose candidate is a found or denied store is
 * "permission-denied", with error. Free with oa_stores_rows_free. */
OA_EXPORT oa_stores_row *oa_stores_read(const oa_discovery *d, bool all, const oa_open_options *o, double now,
                                        size_t *n);
OA_EXPORT void oa_stores_rows_free(oa_stores_row *rows, size_t n);
/* The root a row shows: the store's when opened, else the candidate's. */
OA_EXPORT const char *oa_stores_row_root(const oa_stores_row *r);

/* Stores (found or denied), models listed and blobs/ bytes, each inode once. */
typedef struct oa_stores_tally {
	const char *user;     /* NULL: every row */
	size_t stores, models;
	uint64_t disk_bytes, apparent_bytes;
} oa_stores_tally;

typedef struct oa_stores_totals {
	oa_stores_tally *users; /* one per owner, in the rows' order */
	size_t n_users;
	oa_stores_tally all;
} oa_stores_totals;
OA_EXPORT void oa_stores_totals_compute(const oa_stores_row *rows, size_t n, oa_stores_totals *out);
OA_EXPORT void oa_stores_totals_free(oa_stores_totals *t);

/* The duplicates among the opened stores and what `dedupe` can free of them. */
typedef struct oa_stores_dupes {
	oa_dupes dupes;
	uint64_t dedupe_bytes;
	bool by_hardlink;
} oa_stores_dupes;

/* Find them (oa_dupes_find over the opened rows); can_free says what
 * dedupe can really free of them here (sv indexed like the rows, NULL
 * where a row is not opened; *hardlink: by hard links). Free d->dupes. */
typedef uint64_t oa_stores_can_free(oa_store *const *sv, const oa_dupes *d, bool *hardlink);
OA_EXPORT void oa_stores_dupes_find(oa_stores_row *rows, size_t n, oa_stores_can_free *can_free,
                                    oa_stores_dupes *d);

#endif
