/* cli_multi.h - every store on the machine (docs/multi-store.md): --all-users,
 * --output FILE, --format prometheus, the combined totals of check/verify
 * (cli_multi.c). The host name in ndjson records is host.h's;
 * the stores, dedupe and du --duplicates commands are cmd_stores.h's and
 * cmd_dedupe.h's. */
#ifndef OA_CLI_MULTI_H
#define OA_CLI_MULTI_H

#include "cli.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/metrics.h"

#include <stdbool.h>

/* The owner of a store's root as a user name (or decimal uid). */
const char *cli_store_user(const oa_store *s);


/* A store could not be opened (reported as a metric with --format prometheus). */
void cli_multi_failed(cli *c, const char *path, const char *how);

/* Called by report_findings() for every store check/verify reports: keeps
 * the combined totals, and with --format prometheus the store's metrics. */
struct oa_audit_summary;
void cli_multi_store_done(cli *c, oa_store *s, const struct oa_audit_summary *sum);

/* A store's metrics for --format prometheus (stores, du): sizes, models,
 * audit time, from m (oa_store_metrics_compute; its du's quarantine fields
 * set by du --quarantine), each model's last use when lu (du's, from the
 * logs) is given; du leaves out the findings, which it does not look for. */
void cli_multi_prom_store(cli *c, const oa_store *s, double seconds, const oa_store_metrics *m,
                          const oa_last_used *lu);
/* One more sample of a metric for --format prometheus (stores). */
void cli_multi_prom_add(const char *metric, double value);

/* Whether `path` (written by option `opt`) lies inside a store on the
 * command line, the default store, or any store discovery finds: then
 * says so (the tool never writes to a store) and returns true. */
bool cli_refuse_store_path(const cli *c, const char *opt, const char *path);
/* Whether the default verify cache `path` lies inside a store on the
 * command line or the default store: then says so once (the command goes
 * on without a cache) and returns true. */
bool cli_default_cache_in_store(const cli *c, const char *path);

/* Around the command (main.c): --output redirects stdout to a temporary
 * file next to FILE; the end writes the prometheus text and the combined
 * totals, then renames the file into place (not on a usage error). */
int cli_output_begin(cli *c);
int cli_output_end(cli *c, int rc);


#endif
