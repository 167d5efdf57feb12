/* cmd_dedupe.c - `ollama-audit du --duplicates` (the same blob in several
 * stores) and `ollama-audit dedupe` (replace them by reflinks or, for one
 * owner, hard links). docs/multi-store.md. The run is the library's
 * (dedupe_run.h), its text too (views/dedupe_text.h). */
#include "cmd_dedupe.h"
#include "cli_machine.h"
#include "confirm.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "usage.h"
#include "views/dedupe_text.h"
#include "ollama_audit/dedupe_report.h"
#include "ollama_audit/dedupe_run.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* What every format of `du --duplicates` (p NULL) and `dedupe` renders. */
typedef struct dedupe_view {
	oa_store *const *sv;
	const char *const *users;
	const oa_dupes *d;
	size_t ok;                   /* the stores compared */
	const oa_dedupe_plan *p;
	const oa_dedupe_outcome *o;
} dedupe_view;

void dedupe_render_table(cli *c, const void *view)
{
	const dedupe_view *v = view;
	oa_text_style st = cli_text_style(c);
	if (v->p)
		oa_dedupe_text(&st, stdout, v->sv, v->users, v->p, v->o, c->apply, c->verbose);
	else
		oa_dupes_text(&st, stdout, v->sv, v->users, v->d, v->ok);
}

static json_t *report(const dedupe_view *v)
{
	return v->p ? oa_dedupe_report(v->sv, v->users, v->p, v->o, cli_host())
	            : oa_dupes_report(v->sv, v->users, v->d, v->ok, cli_host());
}

void dedupe_render_json(cli *c, const void *view)
{
	cli_emit_document(c, report(view));
}

void dedupe_render_ndjson(cli *c, const void *view)
{
	json_t *doc = report(view), *recs = ((const dedupe_view *)view)->p ? oa_dedupe_records(doc) : oa_dupes_records(doc);
	for (size_t i = 0; i < json_array_size(recs); i++)
		oa_json_dump_line(json_array_get(recs, i), stdout);
	json_decref(recs);
	json_decref(doc);
}

void dedupe_render_csv(cli *c, const void *view)
{
	const dedupe_view *v = view;
	if (v->p)
		oa_dedupe_csv(cli_text_out(), v->sv, v->users, v->p);
	else
		oa_dupes_csv(cli_text_out(), v->sv, v->users, v->d);
}

static const cli_renderer dupes_render[OUT_FORMATS] = {
	[OUT_TABLE] = dedupe_render_table, [OUT_JSON] = dedupe_render_json,
	[OUT_NDJSON] = dedupe_render_ndjson, [OUT_CSV] = dedupe_render_csv,
};

/* The stores opened (sv: NULL for one not open; users: their owners, as
 * the views name them) and the digests they share. */
typedef struct dd_stores {
	opened_store *st;
	size_t n, ok;
	oa_store **sv;
	const char **users;
	oa_dupes d;
} dd_stores;

static void close_dupes(dd_stores *x)
{
	free(x->users);
	free(x->sv);
	cli_close_stores(x->st, x->n);
}

/* Open the stores and find the digests they share. Returns -1 when there is
 * something to compare, else the exit code (nothing is left open then). */
static int open_dupes(cli *c, const char *what, dd_stores *x)
{
	x->st = cli_open_stores(c, &x->n, OA_HEADERS_NONE);
	x->sv = oa_xcalloc(x->n ? x->n : 1, sizeof *x->sv);
	x->users = oa_xcalloc(x->n ? x->n : 1, sizeof *x->users);
	x->ok = 0;
	for (size_t i = 0; i < x->n; i++)
		if (x->st[i].ok) {
			x->sv[i] = &x->st[i].s;
			x->users[i] = oa_report_owner(x->sv[i]);
			x->ok++;
		}
	/* Fewer than two stores to compare is a usage error (16) when the user
	 * named fewer than two; when two named paths turned out to be one store,
	 * or --all-users found one, there is simply nothing to share. 8 when
	 * stores were given but could not be opened; --all-users that found
	 * none has said so. */
	if (x->ok && (x->ok >= 2 || c->n_stores >= 2 || c->all_users)) {
		oa_dupes_find(x->sv, x->n, &x->d);
		return -1;
	}
	int rc = c->exit_code;
	if (!(c->all_users && (c->exit_code & OA_EXIT_OPERATIONAL) && !x->ok)) {
		cli_err("%s needs two or more stores: use --all-users or repeat --store", what);
		rc |= x->ok < x->n ? OA_EXIT_OPERATIONAL : OA_EXIT_USAGE;
	}
	close_dupes(x);
	return rc;
}

int cmd_du_duplicates(cli *c)
{
	dd_stores x;
	int rc = open_dupes(c, "du --duplicates", &x);
	if (rc >= 0)
		return rc;
	c->render = dupes_render;
	cli_render(c, &(dedupe_view){ .sv = x.sv, .users = x.users, .d = &x.d, .ok = x.ok });
	oa_dupes_free(&x.d);
	close_dupes(&x);
	return c->exit_code;
}

uint64_t cli_dedupe_can_free(oa_store *const *sv, const oa_dupes *d, bool *hardlink)
{
	return oa_dedupe_can_free(sv, d, hardlink);
}

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
	if (oa_dedupe_apply_all(p, sv, n, &interrupted, err, sizeof err) < 0) {
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
	int rc = open_dupes(c, "dedupe", &x);
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
	cli_signals_catch(&sigs, on_signal);
	bool declined = c->apply && o.planned && !apply_dedupe(c, x.sv, x.n, &p, &o);
	cli_signals_restore(&sigs);
	oa_dedupe_tally(&p, &o);
	if (o.counts[OA_DD_FAILED] || o.counts[OA_DD_SERVER])
		c->exit_code |= OA_EXIT_OPERATIONAL;
	if (o.counts[OA_DD_MISMATCH] || o.keepers_bad)
		c->exit_code |= OA_EXIT_ERRORS;
	/* --apply that could not do what it was asked to (reflinks on a
	 * filesystem without them, or nothing of the plan done) is a failure. */
	if (c->apply && !declined && !interrupted && (o.counts[OA_DD_UNSUPPORTED] || (planned_first && !o.done)))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	cli_render(c, &(dedupe_view){ .sv = x.sv, .users = x.users, .p = &p, .o = &o });
	oa_dedupe_plan_free(&p);
	oa_dupes_free(&x.d);
	close_dupes(&x);
	if (interrupted || o.counts[OA_DD_NOT_DONE])
		c->exit_code |= OA_EXIT_INTERRUPTED;
	return c->exit_code;
}
