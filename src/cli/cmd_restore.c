/* cmd_restore.c - `ollama-audit restore DIR`: undo prune/rm --quarantine DIR. */
#include "cmd_restore.h"
#include "usage.h"
#include "ollama_audit/restore.h"

#include <stdio.h>

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
	if (oa_quarantine_restore(c->args[0], c->n_stores ? c->stores[0] : NULL, stdout, &r, err,
	                          sizeof err) < 0) {
		cli_err("%s", err);
		return OA_EXIT_OPERATIONAL;
	}
	printf("restored %zu, already in place %zu, conflicts %zu, missing %zu, failed %zu\n",
	       r.restored, r.already, r.conflicts, r.missing, r.failed);
	if (r.conflicts || r.missing)
		c->exit_code |= OA_EXIT_ERRORS;
	if (r.failed)
		c->exit_code |= OA_EXIT_OPERATIONAL;
	return c->exit_code;
}
