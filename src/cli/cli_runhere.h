/* cli_runhere.h - what can run here: a paragraph for show (NULL for a model
 * no engine runs), the machine its JSON describes and check's findings are
 * about (oa_runhere_findings), and the verify cache that says which
 * weights are corrupt. */
#ifndef OA_CLI_RUNHERE_H
#define OA_CLI_RUNHERE_H

#include "cli.h"

/* s: the model's store, whose logs may hold its last failed load. */
char *cli_runhere_text(cli *c, const oa_store *s, const oa_model *m);
/* verify's cache (--cache, else the default), read once, never written;
 * NULL when there is none to read. After cli_runhere_failed_cache, the
 * table it returned is closed and the whole file read: a command uses one. */
struct oa_verify_cache *cli_runhere_cache(const cli *c);
/* The cache's failures alone (oa_verify_cache_open_failed), for check's
 * cached findings; the whole cache when it is already open. */
struct oa_verify_cache *cli_runhere_failed_cache(const cli *c);
struct oa_machine;
/* for oa_runhere_view() and oa_runhere_findings() */
const struct oa_machine *cli_runhere_machine(const cli *c);

#endif
