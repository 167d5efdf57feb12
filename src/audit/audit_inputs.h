/* audit_inputs.h - what an audit reads once for the whole run, for the
 * commands that show it beside the findings (library-internal): the log
 * inputs history reads, the logs' record of each store's use, the machine
 * what-can-run-here describes, verify's cache. */
#ifndef OA_AUDIT_AUDIT_INPUTS_H
#define OA_AUDIT_AUDIT_INPUTS_H

#include "ollama_audit/audit.h"
#include "ollama_audit/log_usage.h"
#include "ollama_audit/runhere.h"
#include "ollama_audit/verify_cache.h"
#include "history/log_inputs.h"

#include <stdbool.h>

/* The logs the options name, as history reads them. */
oa_log_inputs *oa_audit_log_inputs(oa_audit *a);
/* Standard input is read by several stores: spool it (history.h). */
void oa_audit_stdin_shared(oa_audit *a, bool shared);
/* What the logs say about each model of s, read on the first call for s
 * (*fresh then true; its problems wait in oa_audit_take_problems). */
const oa_log_usage *oa_audit_usage(oa_audit *a, const oa_store *s, bool *fresh);
/* The same when already read, else NULL. */
const oa_log_usage *oa_audit_usage_known(const oa_audit *a, const oa_store *s);
/* The machine, probed on first use. */
const oa_machine *oa_audit_machine(oa_audit *a);
/* verify's cache, read on first use and never written; NULL when there is
 * none. failed_only: its failures alone are enough (a smaller read); a
 * later call for the whole cache reads it again. */
oa_verify_cache *oa_audit_verify_cache(oa_audit *a, bool failed_only);

#endif
