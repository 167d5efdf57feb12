/* cmd_export.c - `ollama-audit export MODEL... -o FILE|-|DIR/`: the models'
 * tags and blobs as a bundle any tar unpacks into a store (docs/carry.md). */
#include "cmd_export.h"
#include "cli_audit.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "confirm.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "usage.h"
#include "audit/audit_inputs.h"
#include "views/carry_text.h"
#include "ollama_audit/bundle_write.h"
#include "ollama_audit/carry_report.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/verify.h"
#include "base/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where -o sends the bundle: "-" standard output, a name ending in '/' or
 * an existing directory an unpacked bundle, anything else a file. */
static int export_dest(cli *c, oa_export_opts *o)
{
	const char *out = c->output;
	if (!out || !*out) {
		cli_err("export needs -o FILE (a tar), -o - (the tar on standard output) or -o DIR/ (unpacked)");
		return OA_EXIT_USAGE;
	}
	struct stat st;
	size_t n = strlen(out);
	o->path = out;
	o->fd = STDOUT_FILENO;
	if (strcmp(out, "-") == 0)
		o->dest = OA_DEST_STREAM;
	else if (out[n - 1] == '/' || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)))
		o->dest = OA_DEST_DIR;
	else
		o->dest = OA_DEST_FILE;
	if (o->dest == OA_DEST_STREAM && c->format != OUT_TABLE) {
		cli_err("export -o - writes the bundle on standard output: it takes no --format");
		return OA_EXIT_USAGE;
	}
	if (o->dest == OA_DEST_STREAM && isatty(STDOUT_FILENO)) {
		cli_err("export -o -: standard output is a terminal; redirect it or pipe it (| ollama-audit import -)");
		return OA_EXIT_USAGE;
	}
	if (o->dest != OA_DEST_STREAM && cli_refuse_store_path(c, "-o", out))
		return OA_EXIT_USAGE;
	return 0;
}

static void render(cli *c, const oa_store *s, const oa_carry *k, const oa_export_result *r, const oa_export_opts *o)
{
	if (c->format == OUT_JSON) {
		cli_emit_document(c, oa_export_report(s, k, r, o, cli_host()));
		return;
	}
	oa_text_style st = cli_text_style(c);
	oa_export_text(&st, o->dest == OA_DEST_STREAM ? stderr : stdout, k, r, o);
}

static int export_store(cli *c, oa_store *s, oa_export_opts *o)
{
	size_t *sel = oa_xcalloc(c->n_args, sizeof *sel), ns = 0;
	char err[1024];
	oa_carry k;
	if (!cli_resolve_models(c, s, sel, &ns)) {
		free(sel);
		return c->exit_code | OA_EXIT_USAGE;
	}
	int rc = oa_carry_collect(s, sel, ns, &k, err, sizeof err);
	free(sel);
	if (rc < 0) {
		cli_fail(c, "cannot-export", s->root, "%s", err);
		return c->exit_code | OA_EXIT_ERRORS;
	}
	/* the run's (audit.h): never a default cache inside a store, nor one another user could write */
	o->cache = oa_audit_verify_cache(cli_audit(c), false);
	cli_audit_said(c);
	cli_signals sigs;
	cli_signals_catch(&sigs);
	oa_export_result r;
	rc = oa_export_write(s, &k, o, &r, err, sizeof err);
	cli_signals_restore(&sigs);
	o->cache = NULL; /* the audit's */
	if (rc < 0) {
		cli_fail(c, r.corrupt ? "blob-corrupt" : r.interrupted ? "interrupted" : "export-failed",
		         o->dest == OA_DEST_STREAM ? NULL : o->path, "export: %s; %s", err,
		         o->dest == OA_DEST_STREAM ? "the stream was cut off (no end-of-archive)" : "nothing was written");
		c->exit_code |= r.corrupt ? OA_EXIT_ERRORS : r.interrupted ? OA_EXIT_INTERRUPTED : OA_EXIT_OPERATIONAL;
	} else {
		render(c, s, &k, &r, o);
	}
	oa_carry_free(&k);
	return c->exit_code;
}

int cmd_export(cli *c)
{
	oa_export_opts o = { .racy_window = OA_VERIFY_DEFAULT_RACY_WINDOW, .stop = cli_stop_flag(),
	                     .tool = "ollama-audit " OA_VERSION };
	int rc = export_dest(c, &o);
	if (rc)
		return rc;
	if (!c->n_args) {
		cli_err("export needs at least one MODEL (a name or an ID prefix)");
		return OA_EXIT_USAGE;
	}
	if (c->all_users || c->n_stores > 1) {
		cli_err("export reads one store: name it with --store");
		return OA_EXIT_USAGE;
	}
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	if (n == 1 && st[0].ok)
		rc = export_store(c, &st[0].s, &o);
	cli_close_stores(st, n);
	return c->exit_code | rc;
}
