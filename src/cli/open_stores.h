/* open_stores.h - the stores a command reads, opened and scanned, and the
 * MODEL arguments resolved in them. */
#ifndef OA_CLI_OPEN_STORES_H
#define OA_CLI_OPEN_STORES_H

#include "cli.h"

/* Open and scan every selected store; each failure is reported and ORs 8. */
opened_store *cli_open_stores(cli *c, size_t *n, int header_mode);
/* A store just opened (oa_open_candidate: the options set): says what it
 * lacks (no manifests/, no blobs/), then scans it and counts it read. */
void cli_scan_opened(cli *c, opened_store *o);
void cli_close_stores(opened_store *v, size_t n);
/* oa_store_resolve() for a MODEL argument; a name that several models match
 * only case-insensitively is reported ("ambiguous: ...") and ORs 16. */
long cli_resolve_model(cli *c, const oa_store *s, const char *query);
/* Every MODEL argument resolved (sel: room for c->n_args), each model
 * once; false (reported, exit 16 in c->exit_code) when one names none or
 * several. */
bool cli_resolve_models(cli *c, const oa_store *s, size_t *sel, size_t *ns);

#endif
