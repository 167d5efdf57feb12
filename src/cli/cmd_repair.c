/* cmd_repair.c - `ollama-audit repair [MODEL...]`: the damaged blobs of the
 * models mended from a good copy, or removed so that a pull fetches them;
 * a dry run unless --apply (docs/carry.md). */
#include "cmd_repair.h"
#include "cli_audit.h"
#include "cli_machine.h"
#include "confirm.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "usage.h"
#include "audit/audit_inputs.h"
#include "views/carry_text.h"
#include "ollama_audit/carry_report.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/repair_run.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void repair_render_table(cli *c, const void *view)
{
	oa_text_style st = cli_text_style(c);
	oa_repair_text(&st, stdout, view);
}

void repair_render_json(cli *c, const void *view)
{
	cli_emit_document(c, oa_repair_report(view, cli_host()));
}

void repair_render_ndjson(cli *c, const void *view)
{
	json_t *doc = oa_repair_report(view, cli_host()), *recs = oa_repair_records(doc);
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
	json_decref(doc);
}

void repair_render_csv(cli *c, const void *view)
{
	oa_repair_csv(cli_text_out(), view);
}

static bool args_ok(const cli *c)
{
	if (c->all_users || c->n_stores > 1) {
		cli_err("repair mends one store: name it with --store (the others are looked in for good copies)");
		return false;
	}
	if (c->quarantine && !c->apply) {
		cli_err("--quarantine is where --apply sets the damaged files aside: it needs --apply");
		return false;
	}
	if (c->apply && !c->yes && !isatty(STDIN_FILENO)) {
		cli_err("repair --apply asks for confirmation; standard input is not a terminal: add --yes");
		return false;
	}
	return true;
}

static int run(cli *c, oa_store *s, const size_t *sel, size_t ns, bool apply, oa_repair_result *r)
{
	char err[768] = "";
	/* the run's (audit.h): never a default cache inside a store, nor one another user could write */
	oa_verify_cache *vc = oa_audit_verify_cache(cli_audit(c), true);
	cli_audit_said(c);
	oa_repair_opts o = { .from = c->from, .verify = c->verify, .cache = vc, .quarantine = c->quarantine,
	                     .apply = apply, .no_lock = c->no_lock, .jobs = c->jobs, .stop = cli_stop_flag(),
	                     .pause_dir = getenv("OA_TEST_REPAIR_PAUSE") };
	int rc = oa_repair(s, sel, ns, &o, r, err, sizeof err);
	if (rc < 0)
		cli_fail(c, "cannot-repair", s->root, "%s: %s", s->root, err);
	if (r->unlocked)
		cli_err("%s: applied without a lock: the filesystem cannot lock it (--no-lock)", s->root);
	return rc;
}

static void tally(cli *c, const oa_repair_result *r)
{
	if (r->leftover) {
		cli_fail(c, "temporary-left", r->store, "%s: %s (prune removes it)", r->store, r->leftover);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	for (size_t i = 0; i < r->n_blobs; i++) {
		enum oa_repair_state st = r->blobs[i].state;
		if (st == OA_REPAIR_FAILED)
			c->exit_code |= OA_EXIT_OPERATIONAL;
		else if (st != OA_REPAIR_MENDED)
			c->exit_code |= OA_EXIT_ERRORS; /* the store stays broken until a pull, or is */
	}
	if (r->interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
}

/* On a terminal without --yes: the dry run, then the question. */
static bool confirmed(cli *c, oa_store *s, const size_t *sel, size_t ns)
{
	oa_repair_result dry;
	if (run(c, s, sel, ns, false, &dry) < 0)
		return false;
	oa_text_style st = cli_text_style(c);
	oa_repair_text(&st, stderr, &dry);
	size_t n = dry.n_blobs;
	oa_repair_result_free(&dry);
	if (!n) {
		cli_err("nothing to repair: nothing done");
		return false;
	}
	if (!cli_confirm("repair these blobs?")) {
		cli_err("declined: nothing done");
		return false;
	}
	return true;
}

static int repair_store(cli *c, oa_store *s)
{
	size_t *sel = oa_xcalloc(c->n_args + 1, sizeof *sel), ns = 0;
	if (!cli_resolve_models(c, s, sel, &ns)) {
		free(sel);
		return c->exit_code | OA_EXIT_USAGE;
	}
	if (c->apply && !c->yes && !confirmed(c, s, sel, ns)) {
		free(sel);
		return c->exit_code;
	}
	cli_signals sigs;
	cli_signals_catch(&sigs);
	oa_repair_result r;
	int rc = run(c, s, sel, ns, c->apply, &r);
	cli_signals_restore(&sigs);
	if (rc == 0) {
		tally(c, &r);
		cli_render(c, &r);
	} else {
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	oa_repair_result_free(&r);
	free(sel);
	return c->exit_code;
}

int cmd_repair(cli *c)
{
	if (!args_ok(c))
		return OA_EXIT_USAGE;
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	int rc = 0;
	if (n == 1 && st[0].ok)
		rc = repair_store(c, &st[0].s);
	cli_close_stores(st, n);
	return c->exit_code | rc;
}
