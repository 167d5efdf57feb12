/* log_inputs.h - the server logs a command reads for a store
 * (docs/history.md): the files --log names (standard input as "-"), else
 * the store's own files; the journal beside them, or that of --root's
 * system (library-internal). */
#ifndef OA_HISTORY_LOG_INPUTS_H
#define OA_HISTORY_LOG_INPUTS_H

#include "ollama_audit/history.h"
#include "ollama_audit/log_usage.h"
#include "ollama_audit/logsrc.h"

#include <stdbool.h>
#include <stdio.h>

/* Standard input can be read once. With one store it is parsed as it
 * comes, in bounded memory; when several may read it (stdin_shared) it is
 * first copied to an unnamed temporary file that each store reads. */
typedef struct oa_log_inputs {
	const char *const *logs; /* --log FILE ("-": standard input) */
	size_t n_logs;
	const char *root;        /* --root DIR: that system's journal, or NULL */
	const char *sysroot;     /* the tests' fake machine (OLLAMA_AUDIT_SYSROOT), or NULL */
	bool stdin_shared;
	bool stdin_used, stdin_failed; /* state */
	FILE *spool;
} oa_log_inputs;

/* Read a store's logs into h, each source read added to used, each problem
 * (a --log that failed, a store's file, --root without a journal) to
 * used->problems in order. Returns false when a named source failed. */
bool oa_log_inputs_read(oa_log_inputs *in, const char *store_root, oa_history *h, oa_log_sources *used);
/* What the logs say about each model of s (oa_log_usage_of): its logs read
 * as above and matched to it (which only reads the store); u takes the
 * names of the sources read (u->sources), used keeps the problems. */
bool oa_log_inputs_usage(oa_log_inputs *in, oa_store *s, oa_log_usage *u, oa_log_sources *used);
/* check's load-failed and runner-changed findings (oa_history_findings)
 * from s's logs, read as above. */
bool oa_log_inputs_findings(oa_log_inputs *in, oa_store *s, oa_log_sources *used);

/* The logs' record of use of each store, read once per store. */
typedef struct oa_usage_cache {
	struct oa_usage_entry **v;
	size_t n;
} oa_usage_cache;
/* s's, or NULL when not read yet. */
oa_log_usage *oa_usage_cache_find(const oa_usage_cache *c, const oa_store *s);
/* A new entry for s, zeroed, to fill (it stays where it is). */
oa_log_usage *oa_usage_cache_add(oa_usage_cache *c, const oa_store *s);
void oa_usage_cache_free(oa_usage_cache *c);

/* Drops the spooled standard input. */
void oa_log_inputs_close(oa_log_inputs *in);

#endif
