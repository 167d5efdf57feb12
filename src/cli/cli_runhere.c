/* cli_runhere.c - "what can run here" for show (runhere.h,
 * docs/history.md), over the run's audit: its machine, its verify cache,
 * its logs. */
#include "cli_runhere.h"
#include "cli_audit.h"
#include "audit/audit_inputs.h"
#include "views/runhere_text.h"

oa_verify_cache *cli_runhere_cache(cli *c)
{
	oa_verify_cache *vc = oa_audit_verify_cache(cli_audit(c), false);
	cli_audit_said(c);
	return vc;
}

static oa_verify_cache *cache_of(void *ctx)
{
	return cli_runhere_cache(ctx);
}

/* The logs' newest failed load of m (read when first asked). */
static const char *failure_of(void *ctx, const oa_store *s, const oa_model *m)
{
	const oa_log_usage *u = s ? cli_usage_of(ctx, s) : NULL;
	return u && u->failure ? u->failure[m - s->models] : NULL;
}

char *cli_runhere_text(cli *c, const oa_store *s, const oa_model *m)
{
	oa_runhere_inputs in = { .cache = cache_of, .failure = failure_of, .ctx = c };
	return oa_runhere_text(c->units, cli_runhere_machine(c), s, m, &in);
}

const oa_machine *cli_runhere_machine(cli *c)
{
	return oa_audit_machine(cli_audit(c));
}
