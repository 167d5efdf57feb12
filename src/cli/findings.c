/* findings.c - a store's findings as the command line shows them: printed
 * on a line each, and folded into the exit status under --fail-on. */
#include "findings.h"
#include "output.h"
#include "usage.h"
#include "views/findings_text.h"
#include "audit/select.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

/* Commands that report a store's unreadable parts themselves (as findings,
 * or du's and prune's own lines); the others are told here, so exit 8
 * never comes unexplained. */
static bool says_unreadable(const cli *c)
{
	static const char *cmds[] = { "list", "check", "verify", "du", "prune" };
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (c->cmd && strcmp(c->cmd, cmds[i]) == 0)
			return true;
	return false;
}

void cli_account_unreadable(cli *c, const oa_store *s)
{
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (f->id != OA_FINDING_UNREADABLE || (f->path && oa_str_has_prefix(f->path, "blobs/")))
			continue;
		c->exit_code |= OA_EXIT_OPERATIONAL;
		if (!says_unreadable(c))
			cli_err("%s: %s%s%s", s->root, f->path ? f->path : "", f->path ? ": " : "",
			        f->message ? f->message : "unreadable");
	}
}

void cli_account_findings(cli *c, const oa_store *s, bool listing)
{
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (listing && !oa_finding_is_listing(f))
			continue;
		if ((int)f->severity < c->fail_on)
			continue;
		if (oa_finding_is(f, OA_FC_IO))
			c->exit_code |= OA_EXIT_OPERATIONAL;
		else if (f->severity == OA_SEV_ERROR)
			c->exit_code |= OA_EXIT_ERRORS;
		else if (f->severity == OA_SEV_WARNING)
			c->exit_code |= OA_EXIT_WARNINGS;
	}
}

void cli_print_finding(cli *c, FILE *out, const oa_finding *f)
{
	oa_text_style st = cli_text_style(c);
	if (out == stderr)
		fputs("ollama-audit: ", out); /* like every other message there */
	oa_finding_print(&st, out, f);
}
