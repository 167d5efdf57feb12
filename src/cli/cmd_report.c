/* cmd_report.c - `ollama-audit report`: one self-contained HTML page of
 * the stores: du's totals and a treemap of where the bytes go, the models
 * as list shows them, the findings as check reports them. The library
 * computes (oa_du_store_compute, oa_overview_build) and draws
 * (oa_report_html); this file only chooses the stores. */
#include "cmd_report.h"
#include "cli_audit.h"
#include "cli_multi.h"
#include "findings.h"
#include "host.h"
#include "open_stores.h"
#include "usage.h"
#include "ollama_audit/du.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/overview.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/report_html.h"
#include "ollama_audit/restore.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One store: the findings check reports (the run's audit), folded into the
 * exit status as check does, then its overview. */
static void overview_of(cli *c, oa_store *s, oa_overview_store *o)
{
	cli_audit_findings(c, s, OA_AUDIT_ALL);
	cli_account_findings(c, s, false);
	oa_last_used lu = cli_last_used(c, s);
	oa_du_store d;
	oa_du_store_compute(s, oa_wall_now(), &d);
	oa_overview_build(s, &d, &lu, cli_store_user(s), o);
	oa_du_store_free(&d);
}

/* --quarantine DIR: what it holds, on the store it came from. */
static void add_quarantine(cli *c, const opened_store *st, size_t n, oa_overview_store *v)
{
	oa_quarantine_held q;
	char err[512];
	if (oa_quarantine_held_read(c->quarantine, &q, err, sizeof err) < 0) {
		cli_err("--quarantine: %s", err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
		return;
	}
	for (size_t i = 0, m = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_overview_totals *t = &v[m++].t;
		if ((uint64_t)st[i].s.root_st.st_dev == q.store_dev && (uint64_t)st[i].s.root_st.st_ino == q.store_ino) {
			t->quarantine_known = true;
			t->quarantine_entries = q.entries;
			t->quarantine_bytes = q.disk_bytes;
			return;
		}
	}
	cli_err("--quarantine %s holds files of a store this report does not show", c->quarantine);
	c->exit_code |= OA_EXIT_OPERATIONAL;
}

int cmd_report(cli *c)
{
	if (c->n_args) {
		cli_err("report takes no arguments");
		return OA_EXIT_USAGE;
	}
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_FULL);
	oa_overview_store *v = oa_xcalloc(n + 1, sizeof *v);
	oa_overview_totals fleet;
	memset(&fleet, 0, sizeof fleet);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (st[i].ok)
			overview_of(c, &st[i].s, &v[m++]);
	if (c->quarantine)
		add_quarantine(c, st, n, v);
	for (size_t i = 0; i < m; i++)
		oa_overview_totals_add(&fleet, &v[i].t);
	/* Nothing read: the errors said why, and an empty page would hide it. */
	if (m) {
		oa_report_html_opts o = { c->units, oa_wall_now_ns(), cli_host() };
		oa_report_html(stdout, v, m, &fleet, &o);
	}
	for (size_t i = 0; i < m; i++)
		oa_overview_free(&v[i]);
	free(v);
	cli_close_stores(st, n);
	return c->exit_code;
}
