/* serves.h - how a log names the store it served (serves.c): one rule for
 * the log files (logsrc.c) and the journal's entries (journal.c). Not
 * installed. */
#ifndef OA_HISTORY_SERVES_H
#define OA_HISTORY_SERVES_H

#include <stdbool.h>
#include <stddef.h>

/* The texts that show a log served the store: a blob path under its root
 * (<root>/blobs/sha256-, how a load names its model) or its root as
 * OLLAMA_MODELS on the server config line; for the root as given and as
 * realpath() resolves it, and, for the logs of the machine mounted at
 * machine_root (NULL: this one), as that machine names it (without
 * machine_root). Returns how many were made; free each. */
#define OA_STORE_NEEDLES_MAX 12
size_t oa_store_log_needles(const char *store_root, const char *machine_root,
                            char *needles[OA_STORE_NEEDLES_MAX]);
/* Is needle (len n) in hay (len h)? */
bool oa_has_bytes(const char *hay, size_t h, const char *needle, size_t n);

#endif
