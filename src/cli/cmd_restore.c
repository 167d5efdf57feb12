/* cmd_restore.c - `ollama-audit restore DIR`: list the operations of a
 * quarantine (prune/rm --quarantine DIR), put back one or all of them, or
 * empty it for good. */
#include "cmd_restore.h"
#include "cli_machine.h"
#include "confirm.h"
#include "host.h"
#include "output.h"
#include "views/restore_text.h"
#include "usage.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/restore.h"
#include "ollama_audit/report.h"
#include "ollama_audit/restore_report.h"
#include "ollama_audit/trash.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* SIGINT, SIGTERM and SIGHUP stop the restore after the current entry,
 * with the index saved: run it again to finish. */
static int run_restore(const cli *c, const char *dir, oa_restore_result *r, char *err, size_t errlen)
{
	cli_signals sigs;
	cli_signals_catch(&sigs);
	oa_restore_opts o = { .store = c->n_stores ? c->stores[0] : NULL, .log = stdout, .stop = cli_stop_flag(),
	                      .last = c->last, .op = c->op, .model = c->n_args > 1 ? c->args[1] : NULL,
	                      .no_lock = c->no_lock };
	int rc = oa_quarantine_restore(dir, &o, r, err, errlen);
	cli_signals_restore(&sigs);
	if (rc == 0 && r->unlocked)
		cli_err("%s: restored without a lock: the filesystem cannot lock it (--no-lock)", dir);
	return rc;
}

static int restore_some(cli *c, const char *dir)
{
	oa_restore_result r;
	char err[768];
	int rc = run_restore(c, dir, &r, err, sizeof err);
	if (rc < 0) {
		cli_err("%s", err);
		return rc == OA_RESTORE_AMBIGUOUS ? OA_EXIT_USAGE : OA_EXIT_OPERATIONAL;
	}
	oa_text_style st = cli_text_style(c);
	oa_restore_result_text(&st, stdout, dir, &r, !c->all);
	if (r.conflicts || r.missing)
		c->exit_code |= OA_EXIT_ERRORS;
	if (r.failed)
		c->exit_code |= OA_EXIT_OPERATIONAL;
	if (r.interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	return c->exit_code;
}

/* ---- the list of operations --------------------------------------------------------- */

/* What every format of the listing renders (the slots in commands.c):
 * putting back and --empty write tables only. */
typedef struct restore_view {
	const char *dir;
	const oa_quarantine_ops *ops;
	json_t *doc; /* oa_quarantine_ops_report's */
} restore_view;

void restore_render_table(cli *c, const void *view)
{
	const restore_view *v = view;
	oa_text_style st = cli_text_style(c);
	if (c->quiet) /* -q: the IDs --op takes, one per line */
		for (size_t k = 0; k < v->ops->n; k++)
			printf("%s\n", oa_text_safe(v->ops->v[k].id));
	else
		oa_restore_ops_text(&st, stdout, v->dir, v->ops);
}

void restore_render_json(cli *c, const void *view)
{
	const restore_view *v = view;
	cli_emit_document(c, json_incref(v->doc));
}

void restore_render_ndjson(cli *c, const void *view)
{
	(void)c;
	const restore_view *v = view;
	json_t *recs = oa_quarantine_ops_records(v->doc, cli_host());
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
}

void restore_render_csv(cli *c, const void *view)
{
	(void)c;
	const restore_view *v = view;
	oa_restore_ops_csv(cli_text_out(), v->doc);
}

static int list_ops(cli *c, const char *dir)
{
	oa_quarantine_ops ops;
	char err[768];
	if (oa_quarantine_ops_read(dir, &ops, err, sizeof err) < 0) {
		cli_fail(c, "quarantine-unreadable", dir, "%s", err);
		return c->exit_code | OA_EXIT_OPERATIONAL;
	}
	json_t *doc = oa_quarantine_ops_report(dir, &ops);
	cli_render(c, &(restore_view){ .dir = dir, .ops = &ops, .doc = doc });
	json_decref(doc);
	oa_quarantine_ops_free(&ops);
	return c->exit_code;
}

/* ---- --empty ------------------------------------------------------------------------ */

static bool empty_confirm(const cli *c, const oa_text_style *st, const char *dir, const oa_empty_result *dry)
{
	if (c->yes)
		return true;
	char *q = oa_empty_question(st, dir, dry);
	bool yes = cli_confirm(q);
	free(q);
	return yes;
}

static int empty(cli *c, const char *dir)
{
	oa_empty_opts o = { .older_than = c->older_than > 0 ? c->older_than : 0, .now = oa_wall_now(),
	                    .log = c->apply ? NULL : stdout, .no_lock = c->no_lock };
	oa_empty_result r;
	oa_text_style st = cli_text_style(c);
	char err[768];
	if (oa_quarantine_empty(dir, &o, &r, err, sizeof err) < 0) {
		cli_err("%s", err);
		return OA_EXIT_OPERATIONAL;
	}
	if (!c->apply) {
		oa_empty_result_text(&st, stdout, dir, &r, false);
		return c->exit_code;
	}
	if (!r.entries) {
		printf("nothing to delete: %s holds nothing%s\n", oa_text_safe(dir),
		       c->older_than > 0 ? " that old" : "");
		return c->exit_code;
	}
	if (!c->yes && !isatty(STDIN_FILENO)) {
		cli_err("refusing to --apply without --yes: standard input is not a terminal, so nothing can be "
		        "confirmed");
		return OA_EXIT_USAGE;
	}
	if (!empty_confirm(c, &st, dir, &r)) {
		cli_err("declined: nothing done");
		return c->exit_code;
	}
	o.apply = true;
	o.log = stdout;
	if (oa_quarantine_empty(dir, &o, &r, err, sizeof err) < 0) {
		cli_err("%s", err);
		return OA_EXIT_OPERATIONAL;
	}
	oa_empty_result_text(&st, stdout, dir, &r, true);
	if (r.unlocked)
		cli_err("%s: emptied without a lock: the filesystem cannot lock it (--no-lock)", dir);
	if (r.failed)
		c->exit_code |= OA_EXIT_OPERATIONAL;
	return c->exit_code;
}

/* ---- what was asked ----------------------------------------------------------------- */

static int restore_usage(const cli *c)
{
	int selectors = c->all + c->last + (c->op != NULL) + (c->n_args > 1) + c->empty;
	if (c->n_args < 1 || c->n_args > 2)
		return cli_usage_error("restore takes the quarantine directory, and at most one MODEL");
	if (selectors > 1)
		return cli_usage_error("restore: --all, --last, --op ID, MODEL and --empty exclude one another");
	if (c->older_than >= 0 && !c->empty)
		return cli_usage_error("restore: --older-than goes with --empty");
	if ((c->apply || c->yes) && !c->empty)
		return cli_usage_error("restore: --apply and --yes go with --empty (putting back needs no --apply)");
	if (c->n_stores && (!selectors || c->empty))
		return cli_usage_error("restore: --store names the store to put back into; listing and --empty "
		                       "do not touch a store");
	if (c->n_stores > 1)
		return cli_usage_error("restore puts files back into one store");
	if (c->quiet && selectors) {
		cli_err("restore: -q lists the operation IDs; it puts nothing back, empties nothing");
		return OA_EXIT_USAGE;
	}
	if (selectors && c->format != OUT_TABLE)
		return cli_refuse_format(c, c->empty ? "restore --empty" : "restore (putting back)", "table");
	return 0;
}

int cmd_restore(cli *c)
{
	int rc = restore_usage(c);
	if (rc)
		return rc;
	const char *dir = c->args[0];
	if (c->empty)
		return empty(c, dir);
	if (c->all || c->last || c->op || c->n_args > 1)
		return restore_some(c, dir);
	return list_ops(c, dir);
}
