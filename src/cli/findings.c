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
		else if (listing && !c->fail_on_set)
			continue; /* list listed: like `ollama list`, 0 unless --fail-on asks */
		else if (f->severity == OA_SEV_ERROR)
			c->exit_code |= OA_EXIT_ERRORS;
		else if (f->severity == OA_SEV_WARNING)
			c->exit_code |= OA_EXIT_WARNINGS;
	}
}

void cli_print_finding(cli *c, FILE *out, const oa_store *s, const oa_finding *f)
{
	oa_text_style st = cli_text_style(c);
	if (out == stderr) {
		fputs("ollama-audit: ", out); /* like every other message there */
		/* several stores' findings mix on one stderr: each says whose */
		if (c->all_users || c->n_stores > 1)
			fprintf(out, "%s: ", oa_text_safe(s->root));
	}
	oa_finding_print(&st, out, f);
}

void cli_count_problems(cli_problems *n, const oa_finding *const *v, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = v[i]->model ? v[j]->model && strcmp(v[i]->model, v[j]->model) == 0
			                   : !v[j]->model && v[i]->path && v[j]->path && strcmp(v[i]->path, v[j]->path) == 0;
		if (seen)
			continue;
		if (v[i]->model)
			n->models++;
		else
			n->files++;
	}
}

void cli_say_problems(const cli *c, const cli_problems *n)
{
	if (!n->models && !n->files)
		return;
	oa_buf b;
	oa_buf_init(&b);
	if (n->models)
		oa_buf_printf(&b, "%zu model%s", n->models, n->models == 1 ? "" : "s");
	if (n->files)
		oa_buf_printf(&b, "%s%zu file%s", n->models ? " and " : "", n->files, n->files == 1 ? "" : "s");
	oa_buf_printf(&b, " ha%s problems: ollama-audit", n->models + n->files == 1 ? "s" : "ve");
	for (size_t i = 0; i < c->n_stores; i++) {
		oa_buf_adds(&b, " --store ");
		oa_buf_add_shell_word(&b, c->stores[i]);
	}
	oa_buf_printf(&b, "%s check", c->all_users ? " --all-users" : "");
	cli_err("%s", b.data);
	oa_buf_free(&b);
}
