/* cmd_restore.c - `ollama-audit restore DIR`: undo prune/rm --quarantine DIR. */
#include "cmd_restore.h"
#include "confirm.h"
#include "usage.h"
#include "ollama_audit/restore.h"

#include <stdio.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGINT, SIGTERM and SIGHUP stop the restore after the current entry,
 * with the index saved: run it again to finish. */
static int run_restore(const char *dir, const char *store, oa_restore_result *r, char *err, size_t errlen)
{
	cli_signals sigs;
	cli_signals_catch(&sigs, on_signal);
	oa_restore_opts o = { .store = store, .log = stdout, .stop = &stop_requested };
	int rc = oa_quarantine_restore(dir, &o, r, err, errlen);
	cli_signals_restore(&sigs);
	return rc;
}

int cmd_restore(cli *c)
{
	if (c->n_args != 1) {
		cli_err("restore takes one argument: the quarantine directory");
		return OA_EXIT_USAGE;
	}
	if (c->n_stores > 1) {
		cli_err("restore puts files back into one store");
		return OA_EXIT_USAGE;
	}
	oa_restore_result r;
	char err[768];
	if (run_restore(c->args[0], c->n_stores ? c->stores[0] : NULL, &r, err, sizeof err) < 0) {
		cli_err("%s", err);
		return OA_EXIT_OPERATIONAL;
	}
	printf("restored %zu, already in place %zu, conflicts %zu, missing %zu, failed %zu%s\n",
	       r.restored, r.already, r.conflicts, r.missing, r.failed,
	       r.interrupted ? " (interrupted: run restore again to finish)" : "");
	if (r.conflicts || r.missing)
		c->exit_code |= OA_EXIT_ERRORS;
	if (r.failed)
		c->exit_code |= OA_EXIT_OPERATIONAL;
	if (r.interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	return c->exit_code;
}
