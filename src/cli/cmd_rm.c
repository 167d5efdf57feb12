/* cmd_rm.c - `ollama-audit rm MODEL...`: the offline `ollama rm` (docs/disk-space.md). */
#include "cmd_rm.h"
#include "cli_audit.h"
#include "cli_machine.h"
#include "plan_steps.h"
#include "open_stores.h"
#include "suggest.h"
#include "usage.h"
#include "views/prune_text.h"
#include "audit/rm_select.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/prune.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

/* Manifest.Remove runs PruneDirectory over all of manifests/, so `ollama rm`
 * also removes empty directories that have nothing to do with the model.
 * We remove only the parents the model empties and say what else the
 * server would remove. */
static void report_other_empty_dirs(oa_store *s, const oa_plan *p)
{
	size_t n;
	char **dirs = oa_plan_rm_unrelated_dirs(s, p, &n);
	oa_rm_dirs_text(cli_err, stderr, s->root, dirs, n);
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

/* Whether rm selects among models (--unused-for, --filter, --limit);
 * without, the MODEL arguments are what it plans. */
static bool rm_selects(const cli *c)
{
	return c->unused_for >= 0 || c->n_filters || c->limit;
}

/* The models the selection keeps, among those named (*sel, ns of them;
 * every model when none are), exactly the ones `list` shows for it
 * (audit/rm_select.h). Returns how many, said when none. */
static size_t select_models(cli *c, oa_store *s, size_t **sel, size_t ns)
{
	if (cli_selection_needs_logs(c) && !cli_unused_for_ready(c, s))
		return 0;
	oa_list_query q = cli_selection_query(c, s);
	size_t k, *v = oa_rm_select(&q, s, *sel, c->n_args ? ns : 0, &k);
	free(*sel);
	*sel = v;
	if (!k)
		fprintf(stderr, "ollama-audit: %s: %s: nothing to plan\n", oa_text_safe(s->root),
		        c->unused_for >= 0 && !c->n_filters ? "no model went unused that long"
		        : "no model matches the selection");
	return k;
}

/* --child: the plan that rewrites the list without that child (the
 * library refuses a tag that is not a list, a child not here, the last
 * child: exit 16). */
static bool rm_child_plan(cli *c, oa_store *s, size_t model, oa_plan *p)
{
	char err[512];
	if (oa_plan_rm_child(s, model, c->child, c->min_age > 0 ? c->min_age : 0, c->with_shadow, p, err,
	                     sizeof err) < 0) {
		cli_err("%s: rm --child %s: %s", s->root, c->child, oa_text_safe(err));
		cli_note_error(c, "usage", s->root, err); /* machine output names it too */
		c->exit_code |= OA_EXIT_USAGE;
		return false;
	}
	oa_plan_anchor_text(cli_err, s->root, p);
	return true;
}

/* MODEL as the digest of a list's child (rm DIGEST, as Ollama's rm of a
 * digest): 1 with hex, 0 when it is not one (a name or a tag's own ID
 * keeps its meaning), -1 refused: an ambiguous prefix (exit 16). */
static int child_digest_arg(cli *c, const oa_store *s, const char *arg, oa_digest_hex hex)
{
	if (oa_store_resolve_name(s, arg) != -1)
		return 0;
	char err[4096];
	int r = oa_store_child_digest(s, arg, hex, err, sizeof err);
	if (r < 0) {
		cli_err("%s: rm %s: %s", s->root, oa_text_safe(arg), oa_text_safe(err));
		cli_note_error(c, "usage", s->root, err);
		c->exit_code |= OA_EXIT_USAGE;
	}
	return r;
}

/* rm DIGEST of a list's child: the plan that removes it from every list
 * holding it (the library refuses what it cannot rewrite: exit 16). */
static bool rm_digest_plan(cli *c, oa_store *s, const char *hex, oa_plan *p)
{
	char err[512];
	if (oa_plan_rm_digest(s, hex, c->min_age > 0 ? c->min_age : 0, c->with_shadow, p, err, sizeof err) < 0) {
		cli_err("%s: rm sha256:%.12s: %s", s->root, hex, oa_text_safe(err));
		cli_note_error(c, "usage", s->root, err);
		c->exit_code |= OA_EXIT_USAGE;
		return false;
	}
	oa_plan_anchor_text(cli_err, s->root, p);
	report_other_empty_dirs(s, p);
	return true;
}

/* Whether a MODEL argument is a list child's digest; false (reported) when
 * one is refused. *hex is set when one is: it must be the only MODEL. */
static bool find_child_digest(cli *c, const oa_store *s, oa_digest_hex hex, bool *found)
{
	*found = false;
	for (size_t a = 0; !c->child && !rm_selects(c) && a < c->n_args; a++) {
		int r = child_digest_arg(c, s, c->args[a], hex);
		if (r < 0)
			return false;
		if (r > 0 && c->n_args > 1) {
			cli_err("%s: rm %s: the digest of a list's child takes that one MODEL (it rewrites every list "
			        "holding the child)", s->root, oa_text_safe(c->args[a]));
			c->exit_code |= OA_EXIT_USAGE;
			return false;
		}
		*found |= r > 0;
	}
	return true;
}

/* The plan for the models named (or, with --unused-for, not used). */
static bool rm_plan_now(cli *c, oa_store *s, oa_plan *p, oa_junk_list *j)
{
	if (!c->n_args && !rm_selects(c)) {
		/* `rm $(ollama-audit list -q ...)` when that lists nothing: nothing asked, nothing done */
		cli_err("%s: no MODEL given: nothing to remove (name models, or select them with --unused-for "
		        "DURATION or --filter EXPR)", s->root);
		return false;
	}
	oa_digest_hex hex;
	bool child;
	if (!find_child_digest(c, s, hex, &child))
		return false;
	if (child) {
		bool ok = rm_digest_plan(c, s, hex, p);
		if (ok)
			oa_plan_shadows_text(cli_err, c->units, p);
		return ok;
	}
	size_t *sel = oa_xcalloc(c->n_args + 1, sizeof *sel);
	size_t ns = 0;
	bool ok = cli_resolve_models(c, s, sel, &ns) && (!rm_selects(c) || (ns = select_models(c, s, &sel, ns)));
	if (ok && c->child)
		ok = rm_child_plan(c, s, sel[0], p);
	else if (ok) {
		oa_plan_rm(s, sel, ns, c->min_age > 0 ? c->min_age : 0, c->with_shadow, p);
		report_other_empty_dirs(s, p);
	}
	if (ok)
		oa_plan_shadows_text(cli_err, c->units, p);
	free(sel);
	return ok;
}

static bool rm_args_ok(const cli *c, bool from_file)
{
	if (c->sort != SORT_DEFAULT && !c->limit) {
		cli_err("rm --sort chooses which models --limit N keeps (the plan's rows are by what they free): "
		        "without --limit it changes nothing");
		return false;
	}
	if (c->quiet && (c->apply || c->plan_path || c->child)) {
		cli_err("rm -q prints the names of the models a dry run plans, one a line: it takes no --apply, "
		        "--plan or --child");
		return false;
	}
	if (from_file && c->with_shadow) {
		cli_err("rm --apply --plan FILE removes exactly what the plan holds: plan with --with-shadow, "
		        "save it with --plan FILE, then apply that");
		return false;
	}
	if (c->child && (c->n_args != 1 || rm_selects(c) || c->plan_path)) {
		cli_err(c->plan_path ? "rm --child is not saved as a plan nor applied from one (the list's new bytes "
		        "are computed when it runs): plan it as a dry run, then rm MODEL --child RUNNER --apply, which "
		        "re-checks everything" : "rm --child RUNNER takes exactly one MODEL (a list tag) and no "
		        "--unused-for, --filter or --limit");
		return false;
	}
	if (rm_selects(c) && c->apply) {
		cli_err("rm %s only plans: review it, save it with --plan FILE, then "
		        "rm --apply --plan FILE removes exactly that",
		        c->unused_for >= 0 ? "--unused-for" : c->n_filters ? "--filter" : "--limit");
		return false;
	}
	return cli_apply_options_ok(c);
}

int cmd_rm(cli *c)
{
	if (!rm_args_ok(c, c->apply && c->plan_path))
		return OA_EXIT_USAGE;
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	return cli_plan_stores(c, st, n, rm_plan_now);
}
