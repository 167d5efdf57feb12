/* cmd_rm.c - `ollama-audit rm MODEL...`: the offline `ollama rm` (docs/disk-space.md). */
#include "cmd_rm.h"
#include "cmd_history.h"
#include "cli_machine.h"
#include "cmd_prune.h"
#include "open_stores.h"
#include "suggest.h"
#include "usage.h"
#include "views/prune_text.h"
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

/* --unused-for: of the models named (all listed models when none are),
 * those the logs show no load of within the duration. Returns how many. */
static size_t select_unused(cli *c, const oa_store *s, size_t **sel, size_t ns)
{
	if (!cli_unused_for_ready(c, s))
		return 0;
	if (!c->n_args) {
		*sel = oa_xreallocarray(*sel, s->n_models + 1, sizeof **sel);
		for (size_t i = 0; i < s->n_models; i++)
			if (!s->models[i].anchor && !s->models[i].sibling) /* a list's other child goes with its tag */
				(*sel)[ns++] = i;
	}
	size_t k = 0;
	for (size_t i = 0; i < ns; i++)
		if (cli_model_unused(c, s, (*sel)[i]))
			(*sel)[k++] = (*sel)[i];
	if (!k)
		fprintf(stderr, "ollama-audit: %s: no model went unused that long: nothing to plan\n", oa_text_safe(s->root));
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
	for (size_t a = 0; !c->child && c->unused_for < 0 && a < c->n_args; a++) {
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
	size_t *sel = oa_xcalloc(c->n_args, sizeof *sel);
	size_t ns = 0;
	bool ok = cli_resolve_models(c, s, sel, &ns) && (c->unused_for < 0 || (ns = select_unused(c, s, &sel, ns)));
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
	if (c->n_args == 0 && !from_file && c->unused_for < 0) {
		cli_err("rm needs at least one MODEL (a name or an ID prefix), or --unused-for DURATION");
		return false;
	}
	if (from_file && c->with_shadow) {
		cli_err("rm --apply --plan FILE removes exactly what the plan holds: plan with --with-shadow, "
		        "save it with --plan FILE, then apply that");
		return false;
	}
	if (c->child && (c->n_args != 1 || c->unused_for >= 0 || c->plan_path)) {
		cli_err(c->plan_path ? "rm --child is not saved as a plan nor applied from one (the list's new bytes "
		        "are computed when it runs): plan it as a dry run, then rm MODEL --child RUNNER --apply, which "
		        "re-checks everything" : "rm --child RUNNER takes exactly one MODEL (a list tag) and no --unused-for");
		return false;
	}
	if (c->unused_for >= 0 && c->apply) {
		cli_err("rm --unused-for only plans: review it, save it with --plan FILE, then "
		        "rm --apply --plan FILE removes exactly that");
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
