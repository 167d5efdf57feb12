/* cmd_import.c - `ollama-audit import FILE|DIR|-` and `import --from STORE
 * MODEL...`: models into the store, a dry run unless --apply
 * (docs/carry.md). */
#include "cmd_import.h"
#include "cli_machine.h"
#include "confirm.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "usage.h"
#include "views/carry_text.h"
#include "ollama_audit/carry_report.h"
#include "ollama_audit/discover.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/import_run.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void import_render_table(cli *c, const void *view)
{
	oa_text_style st = cli_text_style(c);
	oa_import_text(&st, stdout, view);
}

void import_render_json(cli *c, const void *view)
{
	cli_emit_document(c, oa_import_report(view, cli_host()));
}

void import_render_ndjson(cli *c, const void *view)
{
	json_t *doc = oa_import_report(view, cli_host()), *recs = oa_import_records(doc);
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
	json_decref(doc);
}

void import_render_csv(cli *c, const void *view)
{
	oa_import_csv(cli_text_out(), view);
}

static bool args_ok(const cli *c)
{
	if (c->from && !c->n_args) {
		cli_err("import --from STORE needs the MODELs to copy from it");
		return false;
	}
	if (!c->from && c->n_args != 1) {
		cli_err("import takes one bundle: a FILE (tar), a DIR (unpacked) or - (a tar on standard input); "
		        "or --from STORE MODEL...");
		return false;
	}
	if (c->all_users || c->n_stores > 1) {
		cli_err("import writes into one store: name it with --store");
		return false;
	}
	if (c->verify && (c->apply || c->from)) {
		cli_err("import --verify hashes a bundle in a dry run (--apply always hashes)");
		return false;
	}
	bool stream = !c->from && strcmp(c->args[0], "-") == 0;
	if (stream && isatty(STDIN_FILENO)) {
		cli_err("import -: standard input is a terminal; pipe the bundle in (ollama-audit export ... -o - | ...)");
		return false;
	}
	if (c->apply && !c->yes && (stream || !isatty(STDIN_FILENO))) {
		cli_err(stream ? "import - --apply reads the bundle on standard input: it cannot ask, add --yes"
		               : "import --apply asks for confirmation; standard input is not a terminal: add --yes");
		return false;
	}
	return true;
}

/* The source store of --from, opened and scanned. */
static bool open_from(cli *c, oa_store *from)
{
	char err[512];
	oa_open_options opt = { .platform = c->platform, .header_mode = OA_HEADERS_NONE, .jobs = c->jobs };
	if (oa_open_candidate(from, c->from, OA_SOURCE_STORE_OPTION, NULL, &opt, err, sizeof err) < 0) {
		cli_fail(c, "store-unreadable", c->from, "--from %s: %s", c->from, err);
		oa_store_close(from);
		return false;
	}
	oa_store_scan(from);
	return true;
}

/* One run, a dry run or the real one. */
static int run(cli *c, const char *target, oa_store *from, const size_t *sel, size_t ns, bool apply,
               oa_import_result *r)
{
	oa_import_opts o = { .apply = apply, .verify = c->verify, .no_lock = c->no_lock, .stop = cli_stop_flag(),
	                     .pause_dir = getenv("OA_TEST_IMPORT_PAUSE") };
	char err[1024] = "";
	int rc = from ? oa_import_store(target, from, sel, ns, &o, r, err, sizeof err)
	              : oa_import_bundle(target, c->args[0], STDIN_FILENO, &o, r, err, sizeof err);
	if (rc < 0)
		cli_fail(c, "cannot-import", target, "%s", err);
	if (r->unlocked)
		cli_err("%s: applied without a lock: the filesystem cannot lock it (--no-lock)", r->store);
	return rc;
}

static void tally(cli *c, const oa_import_result *r)
{
	if (r->leftover) {
		cli_fail(c, "temporary-left", r->store, "%s: %s (prune removes it)", r->store, r->leftover);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	if (r->refused)
		c->exit_code |= r->interrupted ? OA_EXIT_INTERRUPTED : r->corrupt ? OA_EXIT_ERRORS : OA_EXIT_OPERATIONAL;
	for (size_t i = 0; i < r->n_models; i++)
		if (r->models[i].state == OA_IMP_REFUSED && !r->refused)
			c->exit_code |= OA_EXIT_ERRORS;
	if (r->interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
}

/* --apply on a terminal without --yes: the dry run, then the question. */
static bool confirmed(cli *c, const char *target, oa_store *from, const size_t *sel, size_t ns)
{
	oa_import_result dry;
	if (run(c, target, from, sel, ns, false, &dry) < 0)
		return false;
	oa_text_style st = cli_text_style(c);
	oa_import_text(&st, stderr, &dry);
	bool go = !dry.refused && dry.bytes_new + dry.n_tags > 0;
	for (size_t i = 0; go && i < dry.n_models; i++)
		go = dry.models[i].state != OA_IMP_REFUSED;
	oa_import_result_free(&dry);
	if (!go) {
		cli_err("nothing to import as it stands: nothing done");
		return false;
	}
	if (!cli_confirm("import these models?")) {
		cli_err("declined: nothing done");
		return false;
	}
	return true;
}

static int import_into(cli *c, const char *target, oa_store *from, const size_t *sel, size_t ns)
{
	if (c->apply && !c->yes && !confirmed(c, target, from, sel, ns))
		return c->exit_code;
	cli_signals sigs;
	cli_signals_catch(&sigs);
	oa_import_result r;
	int rc = run(c, target, from, sel, ns, c->apply, &r);
	cli_signals_restore(&sigs);
	if (rc == 0) {
		c->stores_read++;
		tally(c, &r);
		cli_render(c, &r);
	} else {
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	oa_import_result_free(&r);
	return c->exit_code;
}

int cmd_import(cli *c)
{
	if (!args_ok(c))
		return OA_EXIT_USAGE;
	const char *how;
	char *def = c->n_stores ? NULL : oa_store_default_path(&how);
	const char *target = c->n_stores ? c->stores[0] : def;
	int rc;
	if (!c->from) {
		rc = import_into(c, target, NULL, NULL, 0);
	} else {
		oa_store from;
		size_t *sel = oa_xcalloc(c->n_args, sizeof *sel), ns = 0;
		rc = OA_EXIT_OPERATIONAL;
		if (open_from(c, &from)) {
			rc = cli_resolve_models(c, &from, sel, &ns) ? import_into(c, target, &from, sel, ns)
			                                            : c->exit_code | OA_EXIT_USAGE;
			oa_store_close(&from);
		}
		free(sel);
	}
	free(def);
	return c->exit_code | rc;
}
