/* cli_multi.h - every store on the machine (docs/multi-store.md): --all-users,
 * the host name in ndjson records, --output FILE, --format prometheus, the
 * combined totals of check/verify, and the stores / dedupe / du --duplicates
 * commands. Implemented in cli_multi.c, cmd_stores.c and cmd_dedupe.c. */
#ifndef OA_CLI_MULTI_H
#define OA_CLI_MULTI_H

#include "cli.h"

#include <jansson.h>

/* The host name (gethostname), for ndjson records and metrics. */
const char *cli_host(void);

/* The owner of a store's root as a user name (or decimal uid). */
const char *cli_store_user(const oa_store *s);

/* cli_open_stores() with --all-users: discovered stores plus every --store,
 * one per device+inode. Candidates we may not read are reported and OR 8. */
opened_store *cli_open_discovered(cli *c, size_t *n, int header_mode);

/* A store could not be opened (reported as a metric with --format prometheus). */
void cli_multi_failed(cli *c, const char *path, const char *how);

/* Called by report_findings() for every store check/verify reports: keeps
 * the combined totals, and with --format prometheus the store's metrics. */
struct oa_audit_summary;
void cli_multi_store_done(cli *c, oa_store *s, const struct oa_audit_summary *sum);

/* A store's metrics for --format prometheus (stores, du): sizes, models,
 * audit time; du leaves out the findings, which it does not look for. */
void cli_multi_prom_store(cli *c, oa_store *s, double seconds);

/* Whether `path` (written by option `opt`) lies inside a store on the
 * command line, the default store, or with --all-users any store found:
 * then says so (the tool never writes to a store) and returns true. */
bool cli_refuse_store_path(const cli *c, const char *opt, const char *path);

/* Around the command (main.c): --output redirects stdout to a temporary
 * file next to FILE; the end writes the prometheus text and the combined
 * totals, then renames the file into place (not on a usage error). */
int cli_output_begin(cli *c);
int cli_output_end(cli *c, int rc);

int cmd_stores(cli *c);
int cmd_dedupe(cli *c);
/* What `dedupe` can really free among these stores here: reflinks where
 * the target filesystems can make them (tested), else hard links when they
 * free more (*hardlink set). */
struct oa_dupes;
uint64_t cli_dedupe_can_free(oa_store *const *sv, const struct oa_dupes *d, bool *hardlink);
/* du --duplicates [--all-users]: the cross-store duplicate report. */
int cmd_du_duplicates(cli *c);

#endif
