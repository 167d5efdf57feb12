/*
 * logsrc.h - where an Ollama server's logs are, offline: the server*.log
 * files the macOS/Windows app and `ollama serve` write beside the store
 * (~/.ollama/logs next to ~/.ollama/models) or in its owner's home, and the
 * systemd journal of a Linux service (journal.c).
 */
#ifndef OLLAMA_AUDIT_LOGSRC_H
#define OLLAMA_AUDIT_LOGSRC_H

#include "ollama_audit/export.h"

#include "ollama_audit/history.h"
#include "ollama_audit/journal.h" /* the journal, the other source */

#include <stdbool.h>
#include <stddef.h>

/* server.log and its rotated siblings server-1.log, server-2.log, ... (a
 * higher number is older), oldest first, from <store root>/../logs and then
 * from the store owner's ~/.ollama/logs when that is another directory, of
 * those only the files that served this store (oa_log_serves_store).
 * NULL with *n = 0 when there are none. Free with oa_free_names. */
OA_EXPORT char **oa_logs_of_store(const char *store_root, size_t *n);
/* Does the log file name the store: a blob path under it (a load) or the
 * store as OLLAMA_MODELS (the server config line), by a path that resolves
 * to the store's directory (device and inode, through any symlink), or,
 * where a path resolves to none, by the same text (normalised)? */
OA_EXPORT bool oa_log_serves_store(const char *log_path, const char *store_root);

/* Read one log file into h as a source. Returns 0, or -1 with a reason.
 * regular_only: a file found rather than named by the user must be a
 * regular file (a FIFO or device planted as server.log is refused, never
 * waited on). */
OA_EXPORT int oa_logs_read_file(oa_history *h, const char *path, bool regular_only, char *err, size_t errlen);

/* The sources a store's history was read from, and what could not be read. */
typedef struct oa_log_sources {
	char **names;       /* a file, "(stdin)", "journal" or "journal (--root)", in reading order */
	size_t n;
	char **problems;    /* "FILE: why" of each source that could not be read */
	size_t n_problems;
} oa_log_sources;
OA_EXPORT void oa_log_sources_add(oa_log_sources *l, const char *name);
OA_EXPORT void oa_log_sources_problem(oa_log_sources *l, const char *what);
OA_EXPORT void oa_log_sources_free(oa_log_sources *l);

/* Read the store's own log files (oa_logs_of_store) into h, each added to
 * used, or its problem when it cannot be read. Returns false when one could
 * not be read. */
OA_EXPORT bool oa_logs_read_store_files(oa_history *h, const char *store_root, oa_log_sources *used);

#endif
