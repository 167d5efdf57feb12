/*
 * dedupe_report.h - the documents of `du --duplicates` (docs/schema.md,
 * ollama-audit.duplicates/2) and `dedupe` (ollama-audit.dedupe/2), built from
 * the duplicates found (dupes.h) and a dedupe plan (dedupe.h). Stores are
 * named by root and owner: `users[i]` is the owner of `stores[i]`.
 */
#ifndef OLLAMA_AUDIT_DEDUPE_REPORT_H
#define OLLAMA_AUDIT_DEDUPE_REPORT_H

#include "ollama_audit/export.h"

#include "ollama_audit/dedupe.h"
#include "ollama_audit/dedupe_run.h"
#include "ollama_audit/dupes.h"

#include <jansson.h>

/* Per owner: the copies they hold and the allocated bytes of those that are
 * a distinct inode (a hard-linked name of an earlier copy costs nothing). */
typedef struct oa_dupes_user {
	const char *user;        /* borrowed from users[] */
	size_t copies;
	uint64_t bytes;
} oa_dupes_user;

/* The owners in the order their first copy appears; *n of them. */
OA_EXPORT oa_dupes_user *oa_dupes_users(const oa_dupes *d, const char *const *users, size_t *n);

/* {"schema", "host", "duplicates", "users", "total"}; stores_ok: the stores compared. */
OA_EXPORT json_t *oa_dupes_report(oa_store *const *stores, const char *const *users, const oa_dupes *d,
                        size_t stores_ok, const char *host);

/* {"schema", "host", "actions", "summary"}. */
OA_EXPORT json_t *oa_dedupe_report(oa_store *const *stores, const char *const *users, const oa_dedupe_plan *p,
                         const oa_dedupe_outcome *o, const char *host);

/* A report's ndjson records, in order: for du --duplicates "duplicate",
 * "user" and "summary" (the total); for dedupe "action" and "summary". */
OA_EXPORT json_t *oa_dupes_records(json_t *report);
OA_EXPORT json_t *oa_dedupe_records(json_t *report);

#endif
