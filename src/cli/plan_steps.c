/* plan_steps.c - the steps of a prune or rm plan (plan_steps.h): render
 * it, save it (--plan), check the library's refusals, confirm and apply
 * it (--apply), render what became of it. */
#include "plan_steps.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "confirm.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "cli_audit.h"
#include "usage.h"
#include "views/prune_text.h"
#include "ollama_audit/plan_file.h"
#include "ollama_audit/prune_report.h"
#include "ollama_audit/report.h"
#include "ollama_audit/shared.h"
#include "base/platform.h"
#include "base/util.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a plan's renderers draw: the plan before anything is applied, then
 * (done) what became of it. p NULL: no store was planned. */
typedef struct plan_view {
	const oa_store *s;
	const oa_plan *p;
	const oa_junk_list *junk;
	bool from_file, first, done;
	oa_plan_outcome o;
	const char *not_applied;   /* "declined" or "refused", as machine output says it */
	FILE **log;                /* apply's line per entry: stderr, unless the table takes stdout */
} plan_view;

void plan_render_table(cli *c, const void *view)
{
	const plan_view *v = view;
	oa_text_style st = cli_text_style(c);
	if (v->p && v->done)
		oa_plan_outcome_text(&st, stdout, &v->o);
	else if (v->p && c->quiet)
		oa_plan_model_names(stdout, v->p);
	else if (v->p) {
		/* LAST USED: rm's models only (prune's junk has none) */
		oa_last_used lu = { 0 };
		if (!c->verbose && strcmp(c->cmd, "rm") == 0)
			lu = cli_last_used(c, v->s);
		oa_plan_models by_model = { .s = v->s, .lu = &lu, .now_ns = oa_wall_now_ns() };
		oa_plan_text(&st, stdout, v->s->root, v->p, v->junk, v->from_file ? c->plan_path : NULL, v->first,
		             !c->apply, c->verbose ? NULL : &by_model);
		*v->log = stdout;
	}
}

static json_t *plan_doc(const cli *c, const plan_view *v)
{
	return v->p && v->done ? oa_plan_report(v->p, !c->apply, v->o.r, v->not_applied) : NULL;
}

void plan_render_json(cli *c, const void *view)
{
	const plan_view *v = view;
	if (!v->p || v->done)
		cli_emit_store(c, oa_report_schema(c->cmd), plan_doc(c, view));
}

void plan_render_ndjson(cli *c, const void *view)
{
	json_t *doc = plan_doc(c, view), *recs = doc ? oa_plan_records(doc, cli_host()) : NULL;
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
	json_decref(doc);
}

void plan_render_csv(cli *c, const void *view)
{
	const plan_view *v = view;
	json_t *doc = plan_doc(c, view);
	if (doc)
		oa_plan_csv(cli_text_out(), doc, oa_report_owner(v->s), v->first);
	json_decref(doc);
}

/* --plan FILE without --apply: save the plan (returns whether it was). */
static bool save_plan(cli *c, const oa_plan *p)
{
	char err[512];
	if (cli_refuse_store_path(c, "--plan", c->plan_path)) {
		c->exit_code |= OA_EXIT_USAGE;
		return false;
	}
	if (oa_plan_write(p, c->plan_path, err, sizeof err) < 0) {
		cli_err("%s", err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
		return false;
	}
	return true;
}

/* Why the last --apply removed nothing, for the line that says so. */
static char refusal[512];

/* A refusal: said on stderr after the store's path, kept for machine output
 * as the reason alone, with the store as its path, and in the exit status. */
static const char *refuse(cli *c, const oa_store *s, const char *code, const char *why)
{
	snprintf(refusal, sizeof refusal, "%s", why);
	cli_err("%s: %s", s->root, refusal);
	cli_note_error(c, code, s->root, refusal);
	c->exit_code |= strcmp(code, "usage") == 0 ? OA_EXIT_USAGE : OA_EXIT_OPERATIONAL;
	return "refused";
}

/* Apply the confirmed plan with SIGINT, SIGTERM and SIGHUP asking for a stop
 * after the current entry. Returns whether it ran (r then says how). */
static bool apply_plan(cli *c, oa_store *s, const oa_plan *p, FILE *log, oa_apply_result *r, uint64_t *freed_each)
{
	cli_signals sigs;
	cli_signals_catch(&sigs);
	const char *delay = getenv("OA_TEST_APPLY_DELAY_US");
	oa_apply_opts o = { .quarantine = c->quarantine, .min_age = p->min_age, .force = c->force,
	                    .no_lock = c->no_lock, .stop = cli_stop_flag(), .log = log, .pause_dir = getenv("OA_TEST_APPLY_PAUSE"),
	                    .delay_us = delay ? (unsigned)strtoul(delay, NULL, 10) : 0, .freed_each = freed_each };
	char err[768];
	bool ran = oa_plan_apply(s, p, &o, r, err, sizeof err) == 0;
	cli_signals_restore(&sigs);
	if (!ran)
		cli_err("%s: %s", s->root, err);
	if (ran && r->unlocked)
		cli_err("%s: applied without a lock: the filesystem cannot lock it (--no-lock)", s->root);
	if (!ran || r->failed)
		c->exit_code |= OA_EXIT_OPERATIONAL;
	if (ran && r->interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	if (ran && r->skipped && c->fail_on <= OA_SEV_WARNING)
		c->exit_code |= OA_EXIT_WARNINGS;
	return ran;
}

/* --apply: the library's refusals (apply.h) said in full, the
 * confirmation, then the plan. Returns NULL when it ran (r then says how),
 * else why not, as machine output says it: "declined" or "refused". */
static const char *run_apply(cli *c, oa_store *s, const oa_plan *p, FILE *log, oa_apply_result *r,
                             uint64_t *freed_each)
{
	oa_apply_refusal g;
	const char *no = NULL;
	oa_plan_refusal(s, p, c->force, &g);
	for (size_t i = 0; i < g.n_notes; i++)
		cli_err("%s: %s", s->root, g.notes[i]);
	if (g.refused)
		no = refuse(c, s, "refused", g.why);
	for (size_t i = 0; i < g.n_lines; i++)
		cli_err("%s", g.lines[i]);
	oa_apply_refusal_free(&g);
	if (!no && !c->yes && !isatty(STDIN_FILENO))
		no = refuse(c, s, "usage", "refusing to --apply without --yes: standard input is not a terminal, so "
		            "nothing can be confirmed");
	char *q = no || c->yes ? NULL : oa_plan_question(p, c->quarantine, c->units);
	if (q && !cli_confirm(q)) {
		/* a "no" is an answer, not an interruption: exit 0 */
		cli_err("declined: nothing done");
		snprintf(refusal, sizeof refusal, "declined at the prompt");
		no = "declined";
	}
	free(q);
	if (no)
		return no;
	snprintf(refusal, sizeof refusal, "the plan could not be applied (see above)");
	return apply_plan(c, s, p, log, r, freed_each) ? NULL : "refused";
}

void cli_run_plan(cli *c, oa_store *s, oa_plan *p, const oa_junk_list *junk, bool from_file, bool first)
{
	FILE *log = stderr;
	oa_apply_result r;
	plan_view v = { .s = s, .p = p, .junk = junk, .from_file = from_file, .first = first, .log = &log,
	                .o = { .apply = c->apply, .quarantine = c->quarantine, .refusal = refusal } };
	oa_plan_shared_text(cli_err, s->root, p);
	cli_render(c, &v);
	if (!c->apply && c->plan_path && save_plan(c, p))
		v.o.saved = c->plan_path;
	/* with nothing planned, a store that refuses says so all the same */
	char unfound[8];
	v.o.tried = c->apply && (p->todo.n || oa_store_unowned(s) || oa_peers_unfound(s, unfound, sizeof unfound));
	uint64_t *freed_each = oa_xcalloc(p->todo.n + 1, sizeof *freed_each); /* the report's entries */
	if (v.o.tried && !(v.not_applied = run_apply(c, s, p, log, &r, freed_each)))
		v.o.r = &r;
	v.done = true;
	cli_render(c, &v);
	free(freed_each);
}

/* --apply --plan FILE: the plan, if it is one of this command's for this
 * store (else said, exit 16 or 8). */
static bool plan_from_file(cli *c, const oa_store *s, oa_plan *p)
{
	char err[768];
	int rc = oa_plan_read_for(c->plan_path, s, c->cmd, c->min_age, p, err, sizeof err);
	/* rm says one thing of another store's or another command's plan */
	bool usage = rc == OA_PLAN_UNREADABLE || (rc == OA_PLAN_OTHER_COMMAND && strcmp(c->cmd, "rm") != 0);
	if (usage)
		cli_err("%s", err);
	else if (rc && strcmp(c->cmd, "rm") == 0)
		cli_err("%s: the plan %s is not an rm plan for this store", s->root, c->plan_path);
	else if (rc)
		cli_err("%s: %s", s->root, err);
	c->exit_code |= usage ? OA_EXIT_USAGE : rc ? OA_EXIT_OPERATIONAL : 0;
	return rc == 0;
}

int cli_plan_stores(cli *c, opened_store *st, size_t n, cli_plan_fn plan_now)
{
	bool from_file = c->apply && c->plan_path;
	oa_plan *p = oa_xcalloc(n ? n : 1, sizeof *p);
	oa_junk_list *j = oa_xcalloc(n ? n : 1, sizeof *j);
	oa_store **sv = oa_xcalloc(n ? n : 1, sizeof *sv);
	size_t np = 0;
	for (size_t i = 0; i < n; i++)
		if (st[i].ok && (from_file ? plan_from_file(c, &st[i].s, &p[np]) : plan_now(c, &st[i].s, &p[np], &j[np])))
			sv[np++] = &st[i].s;
	for (size_t i = 0; i < np; i++) {
		cli_run_plan(c, sv[i], &p[i], &j[i], from_file, i == 0);
		oa_plan_free(&p[i]);
		oa_junk_free(&j[i]);
	}
	if (!np)
		cli_render(c, &(plan_view){ 0 }); /* json still writes its (empty) document */
	free(p);
	free(j);
	free(sv);
	cli_close_stores(st, n);
	return c->exit_code;
}

bool cli_apply_options_ok(const cli *c)
{
	if ((c->plan_path || c->apply) && c->n_stores > 1) {
		cli_err("--apply and --plan work on one store at a time");
		return false;
	}
	/* One plan file per run: with several stores each would overwrite (or,
	 * with --apply, be checked against) the previous one. */
	if (c->plan_path && c->all_users) {
		cli_err("--plan works on one store at a time: name it with --store, not --all-users");
		return false;
	}
	if (c->quarantine && !c->apply) {
		cli_err("--quarantine needs --apply (without it nothing is moved)");
		return false;
	}
	return true;
}
