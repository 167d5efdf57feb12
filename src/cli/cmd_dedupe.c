/* cmd_dedupe.c - `ollama-audit dedupe`: the blobs several stores hold,
 * replaced by reflinks or, for one owner, hard links (docs/multi-store.md).
 * The run is the library's (dedupe_run.h), its text too
 * (views/dedupe_text.h); the stores are opened and the result rendered as
 * du --duplicates does (dupes_steps.h). */
#include "cmd_dedupe.h"
#include "confirm.h"
#include "dupes_steps.h"
#include "output.h"
#include "usage.h"
#include "views/dedupe_text.h"
#include "ollama_audit/dedupe_run.h"
#include "base/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- dedupe ----------------------------------------------------------------------- */

/* --apply: leave alone the stores a server uses, confirm, apply. Returns
 * false when the user declined. */
static bool apply_dedupe(cli *c, oa_store *const *sv, size_t n, oa_dedupe_plan *p, oa_dedupe_outcome *o)
{
	oa_dedupe_busy *busy;
	size_t nb;
	if (oa_dedupe_hold_busy(p, sv, n, c->force, &busy, &nb))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	oa_dedupe_busy_text(cli_err, sv, busy, nb, c->force);
	free(busy);
	oa_dedupe_recount(p, o);
	if (!o->planned)
		return true;
	char *q = c->yes ? NULL : oa_dedupe_question(p, o, c->units), err[768];
	bool yes = !q || cli_confirm(q);
	free(q);
	if (!yes) {
		/* a "no" is an answer, not an interruption: exit 0 */
		cli_err("declined: nothing done");
		return false;
	}
	o->applied = true;
	p->force = c->force; /* else oa_dedupe_apply refuses a store in use by itself */
	p->no_lock = c->no_lock;
	if (oa_dedupe_apply_all(p, sv, n, cli_stop_flag(), err, sizeof err) < 0) {
		cli_err("%s", err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	} else if (p->unlocked) {
		cli_err("dedupe: applied without a lock on a store the filesystem cannot lock (--no-lock)");
	}
	return true;
}

int cmd_dedupe(cli *c)
{
	if (c->n_args) {
		cli_err("dedupe takes no arguments");
		return OA_EXIT_USAGE;
	}
	if (c->apply && !c->yes && !isatty(STDIN_FILENO)) {
		cli_err("dedupe --apply asks for confirmation; standard input is not a terminal: add --yes");
		return OA_EXIT_USAGE;
	}
	dd_stores x;
	int rc = cli_dupes_open(c, "dedupe", &x);
	if (rc >= 0)
		return rc;
	oa_dupes_refs_text(cli_err, &x.d);
	oa_dedupe_plan p;
	oa_dedupe_outcome o = { 0 };
	oa_dedupe_plan_make(x.sv, &x.d, c->hardlink ? OA_DEDUPE_HARDLINK : OA_DEDUPE_REFLINK, &p, &o);
	size_t planned_first = o.planned;
	/* SIGINT, SIGTERM, SIGHUP: finish or undo the current action (its
	 * .oa-dedupe.* temporary is removed), then stop. */
	cli_signals sigs;
	cli_signals_catch(&sigs);
	bool declined = c->apply && o.planned && !apply_dedupe(c, x.sv, x.n, &p, &o);
	cli_signals_restore(&sigs);
	oa_dedupe_tally(&p, &o);
	if (o.counts[OA_DD_FAILED] || o.counts[OA_DD_SERVER])
		c->exit_code |= OA_EXIT_OPERATIONAL;
	if (o.counts[OA_DD_MISMATCH] || o.keepers_bad)
		c->exit_code |= OA_EXIT_ERRORS;
	/* --apply that could not do what it was asked to (reflinks on a
	 * filesystem without them, or nothing of the plan done) is a failure. */
	if (c->apply && !declined && !*cli_stop_flag() && (o.counts[OA_DD_UNSUPPORTED] || (planned_first && !o.done)))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	cli_render(c, &(dedupe_view){ .sv = x.sv, .users = x.users, .p = &p, .o = &o });
	oa_dedupe_plan_free(&p);
	oa_dupes_free(&x.d);
	cli_dupes_close(&x);
	if (*cli_stop_flag() || o.counts[OA_DD_NOT_DONE])
		c->exit_code |= OA_EXIT_INTERRUPTED;
	return c->exit_code;
}
