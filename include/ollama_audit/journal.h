/*
 * journal.h - the systemd journal as a log source (journal.c), one of the
 * sources logsrc.h gathers.
 */
#ifndef OLLAMA_AUDIT_JOURNAL_H
#define OLLAMA_AUDIT_JOURNAL_H

#include "ollama_audit/export.h"

#include "ollama_audit/history.h"

#include <stdbool.h>

/* The systemd journal: entries of ollama.service, as `journalctl -u ollama`
 * shows them, from root's /var/log/journal and /run/log/journal (root NULL:
 * this machine's). With store_root, only when the unit served that store:
 * some entry names it as a log file must (oa_log_serves_store: a blob path
 * under it, or it as OLLAMA_MODELS; under root, as that machine names it:
 * its paths resolved inside root); else nothing is read (0). store_root
 * NULL reads the unit whatever store it served. Returns the entries read
 * (>= 0), or -1 with a reason (including a build without libsystemd). */
OA_EXPORT long oa_logs_read_journal(oa_history *h, const char *root, const char *unit, const char *store_root,
                                    char *err, size_t errlen);
OA_EXPORT bool oa_logs_have_journal(void); /* built with libsystemd */

#endif
