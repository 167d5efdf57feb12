/* cli_runhere.h - what can run here: a paragraph for show (NULL for a model
 * no engine runs), the machine its JSON describes, the verify cache that
 * says which weights are corrupt, and check's no-runtime-for-model findings. */
#ifndef OA_CLI_RUNHERE_H
#define OA_CLI_RUNHERE_H

#include "cli.h"

/* s: the model's store, whose logs may hold its last failed load. */
char *cli_runhere_text(cli *c, const oa_store *s, const oa_model *m);
/* verify's cache (--cache, else the default), read once, never written;
 * NULL when there is none to read. */
struct oa_verify_cache *cli_runhere_cache(const cli *c);
struct oa_machine;
const struct oa_machine *cli_runhere_machine(const cli *c); /* for oa_runhere_view() */
void cli_runhere_findings(const cli *c, oa_store *s);

#endif
