/* cli_runhere.h - what can run here: a paragraph for show (NULL for a model
 * no engine runs), the machine its JSON describes, and the verify cache
 * that says which weights are corrupt: the run's audit's (cli_audit.h). */
#ifndef OA_CLI_RUNHERE_H
#define OA_CLI_RUNHERE_H

#include "cli.h"

/* s: the model's store, whose logs may hold its last failed load. */
char *cli_runhere_text(cli *c, const oa_store *s, const oa_model *m);
/* verify's cache (--cache, else the default), read once, never written;
 * NULL when there is none to read. */
struct oa_verify_cache *cli_runhere_cache(cli *c);
struct oa_machine;
/* for oa_show_view() */
const struct oa_machine *cli_runhere_machine(cli *c);

#endif
