/* cmd_prune.c - `ollama-audit prune` and the plan/confirm/apply steps that
 * `rm` shares (docs/disk-space.md). */
#include "cmd_prune.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "host.h"
#include "confirm.h"
#include "open_stores.h"
#include "output.h"
#include "views/csv.h"
#include "usage.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/reclaim.h"
#include "base/platform.h"
#include "ollama_audit/guard.h"
#include "ollama_audit/apply.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/plan_file.h"
#include "ollama_audit/prune_report.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void age_text(double age, char *buf, size_t len)
{
	if (age < 0)
		age = 0;
	if (age < 120)
		snprintf(buf, len, "%.0fs", age);
	else if (age < 7200)
		snprintf(buf, len, "%.0fm", age / 60);
	else if (age < 172800)
		snprintf(buf, len, "%.0fh", age / 3600);
	else
		snprintf(buf, len, "%.0fd", age / 86400);
}

/* The download a -partial data file holds, found by its digest. */
static const oa_partial_group *group_of(const oa_junk_list *j, const oa_plan_entry *e)
{
	if (!e->hex[0] || !oa_str_has_suffix(e->path, "-partial"))
		return NULL;
	return oa_junk_group(j, e->hex);
}

static void print_entries(cli *c, const oa_plan_list *l, const oa_junk_list *junk, bool kept)
{
	size_t wcat = 8;
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i].category) > wcat)
			wcat = strlen(l->v[i].category);
	printf("  %-*s  %5s  %9s  %9s  %s\n", (int)wcat, "CATEGORY", "AGE", "ON DISK", kept ? "" : "FREED", "PATH");
	for (size_t i = 0; i < l->n; i++) {
		const oa_plan_entry *e = &l->v[i];
		char age[16], al[48], fr[48];
		age_text(e->age, age, sizeof age);
		oa_format_size(e->allocated, c->units, al, sizeof al);
		oa_format_size(e->freed, c->units, fr, sizeof fr);
		char *p = oa_escape(e->path, strlen(e->path));
		if (kept) {
			/* the same columns as the plan, so a kept entry's kind and size show */
			printf("  %-*s  %5s  %9s  %9s  %s%s: %s\n", (int)wcat, oa_text_safe(e->category), age, al, "kept", p,
			       e->type == 'd' ? "/" : "", oa_text_safe(e->note ? e->note : "kept"));
		} else {
			printf("  %-*s  %5s  %9s  %9s  %s%s", (int)wcat, oa_text_safe(e->category), age, al, fr, p,
			       e->type == 'd' ? "/" : "");
			if (e->model)
				printf("  [%s]", oa_text_safe(e->model));
			printf("\n");
			if (e->note)
				printf("  %*s  note: %s\n", (int)wcat, "", oa_text_safe(e->note));
			const oa_partial_group *g = group_of(junk, e);
			if (g) {
				char a[48], b[48];
				if (g->downloaded >= 0 && g->total > 0) {
					oa_format_size((uint64_t)g->downloaded, c->units, a, sizeof a);
					oa_format_size((uint64_t)g->total, c->units, b, sizeof b);
					printf("  %*s  download: %s of %s (%.0f%%) in %zu part file%s\n", (int)wcat, "",
					       a, b, 100.0 * (double)g->downloaded / (double)g->total, g->n_parts,
					       g->n_parts == 1 ? "" : "s");
				} else {
					printf("  %*s  download: progress unknown (%s)\n", (int)wcat, "",
					       g->n_parts ? "a part file is unreadable or implausible" : "no part files");
				}
			}
		}
		free(p);
	}
}

static bool confirm(cli *c, const oa_plan *p)
{
	if (c->yes)
		return true;
	char fr[48];
	char *q;
	if (c->quarantine) {
		oa_format_size(p->allocated, c->units, fr, sizeof fr);
		q = oa_xasprintf("Move %zu entr%s (%s) from %s into %s?", p->todo.n,
		                 p->todo.n == 1 ? "y" : "ies", fr, p->store, c->quarantine);
	} else {
		oa_format_size(p->freed, c->units, fr, sizeof fr);
		q = oa_xasprintf("Remove %zu entr%s from %s, freeing %s?", p->todo.n,
		                 p->todo.n == 1 ? "y" : "ies", p->store, fr);
	}
	bool yes = cli_confirm(q);
	free(q);
	return yes;
}

/* csv: one row per entry of the plan, planned then kept. */
static void plan_csv(json_t *doc, bool header)
{
	FILE *out = cli_text_out();
	static const char *cols[] = { "path",        "category",    "type",   "apparent_bytes",
	                              "disk_bytes",  "freed_bytes", "mtime",  "digest",
	                              "model",       "note" };
	const size_t ncols = sizeof cols / sizeof cols[0];
	if (header) {
		fprintf(out, "command,store,state");
		for (size_t k = 0; k < ncols; k++)
			fprintf(out, ",%s", cols[k]);
		fprintf(out, "\n");
	}
	const char *lists[] = { "entries", "kept" }, *states[] = { "planned", "kept" };
	for (size_t l = 0; l < 2; l++) {
		json_t *v = json_object_get(doc, lists[l]);
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i);
			oa_csv_field(out, json_string_value(json_object_get(doc, "command")), false);
			oa_csv_field(out, json_string_value(json_object_get(doc, "store")), false);
			oa_csv_field(out, states[l], false);
			for (size_t k = 0; k < ncols; k++) {
				json_t *x = json_object_get(e, cols[k]);
				char num[32] = "";
				if (json_is_integer(x))
					snprintf(num, sizeof num, "%lld", (long long)json_integer_value(x));
				oa_csv_field(out, json_is_string(x) ? json_string_value(x) : num, k + 1 == ncols);
			}
		}
	}
}

static void print_plan(cli *c, const oa_store *s, const oa_plan *p, const oa_junk_list *junk,
                       bool from_file, bool first)
{
	printf("%s%s: %s plan%s%s\n", first ? "" : "\n", oa_text_safe(s->root), p->command, from_file ? " from " : "",
	       from_file ? oa_text_safe(c->plan_path) : "");
	if (p->todo.n)
		print_entries(c, &p->todo, junk, false);
	if (p->kept.n) {
		printf("kept (%zu):\n", p->kept.n);
		print_entries(c, &p->kept, junk, true);
	}
	char fr[48], al[48];
	oa_format_size(p->freed, c->units, fr, sizeof fr);
	oa_format_size(p->allocated, c->units, al, sizeof al);
	/* planned, not freed: whether anything goes is said after the prompt */
	printf("%zu entr%s, %s to free (%s allocated)%s\n", p->todo.n, p->todo.n == 1 ? "y" : "ies", fr, al,
	       c->apply ? "" : "; dry run, nothing removed: --apply removes");
}

/* --plan FILE without --apply: save the plan. */
static void save_plan(cli *c, const oa_plan *p, bool json)
{
	char err[512];
	if (cli_refuse_store_path(c, "--plan", c->plan_path)) {
		c->exit_code |= OA_EXIT_USAGE;
	} else if (oa_plan_write(p, c->plan_path, err, sizeof err) < 0) {
		cli_err("%s", err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	} else if (!json) {
		printf("plan written to %s\n", oa_text_safe(c->plan_path));
	}
}

/* Why the last --apply removed nothing, for the line that says so. */
static char refusal[512];

/* A refusal: said on stderr after the store's path, and kept for machine
 * output as the reason alone, with the store as its path. */
__attribute__((format(printf, 4, 5)))
static void refuse(cli *c, const oa_store *s, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(refusal, sizeof refusal, fmt, ap);
	va_end(ap);
	cli_err("%s: %s", s->root, refusal);
	cli_note_error(c, code, s->root, refusal);
}

/* Refusal 1: a manifest that cannot be parsed or read (guard.h). */
static bool refused_for_blockers(cli *c, const oa_store *s, const oa_plan *p)
{
	oa_blocker *b;
	size_t nb = oa_plan_blockers(s, p, &b);
	bool refused = nb && !c->force;
	if (nb && c->force)
		cli_err("%s: %zu manifest%s cannot be parsed or read; going on because of --force", s->root, nb,
		        nb == 1 ? "" : "s");
	if (refused) {
		refuse(c, s, "refused", "refusing to %s: %zu manifest%s cannot be parsed or read (the server skips "
		       "its prune too); fix or remove %s, or pass --force:",
		       p->command, nb, nb == 1 ? "" : "s", nb == 1 ? "it" : "them");
		for (size_t i = 0; i < nb; i++)
			cli_err("  %s: %s", b[i].path, b[i].message);
	}
	free(b);
	return refused;
}

/* Refusal 2: an Ollama server or runner using the store (guard.h). */
static bool refused_for_servers(cli *c, const oa_store *s, const oa_plan *p)
{
	oa_store_user users[8];
	char why[256] = "";
	int nu = oa_store_in_use(s, users, 8, why, sizeof why);
	if (nu < 0) {
		cli_err("%s: %s; make sure no Ollama server uses the store", s->root, why);
		return false;
	}
	if (nu == 0)
		return false;
	if (c->force) {
		cli_err("%s: an Ollama server or runner uses the store; going on because of --force", s->root);
		return false;
	}
	refuse(c, s, "refused", "refusing to %s: %d Ollama server/runner process%s use%s the store (stop %s, or "
	       "pass --force):", p->command, nu, nu == 1 ? "" : "es", nu == 1 ? "s" : "", nu == 1 ? "it" : "them");
	for (int k = 0; k < nu && k < 8; k++)
		cli_err("  pid %ld (%s): %s", users[k].pid, users[k].cmd, users[k].how);
	return true;
}

static void print_apply_result(const cli *c, const oa_apply_result *r)
{
	char fr[48], mv[48];
	oa_format_size(r->freed, c->units, fr, sizeof fr);
	oa_format_size(r->moved, c->units, mv, sizeof mv);
	if (c->quarantine) {
		/* a move within one filesystem frees nothing until the quarantine is emptied */
		char held[48];
		oa_format_size(r->quarantine_bytes, c->units, held, sizeof held);
		printf("moved %zu, skipped %zu, failed %zu: %s moved to %s (operation %s)%s\n", r->done, r->skipped,
		       r->failed, mv, oa_text_safe(c->quarantine), r->operation, r->interrupted ? " (interrupted)" : "");
		printf("%s freed on disk; the quarantine holds %s in %zu entr%s: `ollama-audit restore %s --empty` "
		       "frees it\n", fr, held, r->quarantine_entries, r->quarantine_entries == 1 ? "y" : "ies",
		       oa_text_safe(c->quarantine));
	} else
		printf("removed %zu, skipped %zu, failed %zu: %s freed%s\n", r->done, r->skipped, r->failed, fr,
		       r->interrupted ? " (interrupted)" : "");
}

/* Apply the confirmed plan with SIGINT, SIGTERM and SIGHUP asking for a stop
 * after the current entry. Returns whether it ran (r then says how). */
static bool apply_plan(cli *c, oa_store *s, const oa_plan *p, bool json, oa_apply_result *r)
{
	cli_signals sigs;
	cli_signals_catch(&sigs, on_signal);
	const char *delay = getenv("OA_TEST_APPLY_DELAY_US");
	oa_apply_opts o = {
		.quarantine = c->quarantine,
		.min_age = p->min_age,
		.force = c->force,
		.stop = &stop_requested,
		.log = json ? stderr : stdout,
		.delay_us = delay ? (unsigned)strtoul(delay, NULL, 10) : 0,
		.pause_dir = getenv("OA_TEST_APPLY_PAUSE"),
	};
	char err[768];
	bool ran = oa_plan_apply(s, p, &o, r, err, sizeof err) == 0;
	if (!ran) {
		cli_err("%s: %s", s->root, err);
		c->exit_code |= OA_EXIT_OPERATIONAL;
	} else {
		if (!json)
			print_apply_result(c, r);
		if (r->failed)
			c->exit_code |= OA_EXIT_OPERATIONAL;
		if (r->interrupted)
			c->exit_code |= OA_EXIT_INTERRUPTED;
		if (r->skipped && c->fail_on <= OA_SEV_WARNING)
			c->exit_code |= OA_EXIT_WARNINGS;
	}
	cli_signals_restore(&sigs);
	return ran;
}

/* --apply: the refusals, the confirmation, then the plan. Returns NULL
 * when it ran (r then says how), else why not, as machine output says it:
 * "declined" or "refused". */
static const char *run_apply(cli *c, oa_store *s, const oa_plan *p, bool json, oa_apply_result *r)
{
	char why[768];
	if (refused_for_blockers(c, s, p) || refused_for_servers(c, s, p)) {
		c->exit_code |= OA_EXIT_OPERATIONAL;
		return "refused";
	}
	/* what --force never passes (a store without manifests) */
	if (oa_plan_check(s, p, true, why, sizeof why) < 0) {
		refuse(c, s, "refused", "%s", why);
		c->exit_code |= OA_EXIT_OPERATIONAL;
		return "refused";
	}
	if (!c->yes && !isatty(STDIN_FILENO)) {
		refuse(c, s, "usage", "refusing to --apply without --yes: standard input is not a terminal, so "
		       "nothing can be confirmed");
		c->exit_code |= OA_EXIT_USAGE;
		return "refused";
	}
	if (!confirm(c, p)) {
		/* a "no" is an answer, not an interruption: exit 0 */
		cli_err("declined: nothing done");
		snprintf(refusal, sizeof refusal, "declined at the prompt");
		return "declined";
	}
	snprintf(refusal, sizeof refusal, "the plan could not be applied (see above)");
	return apply_plan(c, s, p, json, r) ? NULL : "refused";
}

/* The other stores that reach this store's blob files: what they
 * reference is kept too (shared.h). */
static void print_shared(const oa_store *s, const oa_plan *p)
{
	if (!p->n_shared)
		return;
	cli_err("%s: also keeps what %zu other store%s sharing its blob files reference%s:", s->root,
	        p->n_shared, p->n_shared == 1 ? "" : "s", p->n_shared == 1 ? "s" : "");
	for (size_t i = 0; i < p->n_shared; i++)
		cli_err("  %s: %s", p->shared_store[i], p->shared_how[i]);
}

void cli_run_plan(cli *c, oa_store *s, oa_plan *p, const oa_junk_list *junk, bool from_file,
                  bool first)
{
	bool json = c->format != OUT_TABLE; /* json, ndjson, csv: from the plan's report */
	print_shared(s, p);
	if (!json)
		print_plan(c, s, p, junk, from_file, first);
	if (!c->apply && c->plan_path)
		save_plan(c, p, json);
	oa_apply_result r;
	const char *not_applied = NULL;
	bool ran = false;
	if (c->apply && (p->todo.n || oa_store_unowned(s))) {
		ran = !(not_applied = run_apply(c, s, p, json, &r));
		if (not_applied && !json)
			printf("nothing removed: %s\n", oa_text_safe(refusal));
	} else if (c->apply && !json)
		printf("nothing to remove\n");
	if (!json)
		return;
	json_t *doc = oa_plan_report(p, !c->apply, ran ? &r : NULL, not_applied);
	if (c->format == OUT_NDJSON) {
		json_t *recs = oa_plan_records(doc, cli_host());
		for (size_t i = 0; i < json_array_size(recs); i++)
			oa_json_dump_line(json_array_get(recs, i), stdout);
		json_decref(recs);
		json_decref(doc);
	} else if (c->format == OUT_CSV) {
		plan_csv(doc, first);
		json_decref(doc);
	} else {
		cli_emit_store(c, oa_report_schema(p->command), doc);
	}
}

/* ---- --predict-server ------------------------------------------------------------- */

static void print_prediction(cli *c, const oa_store *s, const oa_server_prune *p, bool first)
{
	printf("%s%s: what `ollama serve` does to this store at start-up\n", first ? "" : "\n", oa_text_safe(s->root));
	printf("  server: Ollama %s%s (%s)\n", c->server_version && !p->assumed ? c->server_version : p->server,
	       p->era == OA_SERVER_LISTS ? "" : ", before manifest lists",
	       p->assumed ? "assumed: the newest this store's layout implies; --server-version to choose"
	       : p->era == OA_SERVER_LISTS ? "reads manifests/ and manifests-v2/" : "reads manifests/ only");
	for (size_t i = 0; i < p->n_renames; i++)
		printf("  rename  %s -> %s\n", oa_text_safe(p->renames[i].from), oa_text_safe(p->renames[i].to));
	if (p->nothing) {
		printf("  prune: %s\n", p->nothing);
		if (s->prune_blocked && !p->noprune)
			for (size_t k = 0; k < s->findings.n; k++)
				if (s->findings.v[k].id == OA_FINDING_PRUNE_BLOCKER)
					printf("    %s: %s\n", oa_text_safe(s->findings.v[k].path ? s->findings.v[k].path : "?"),
					       oa_text_safe(s->findings.v[k].message));
		return;
	}
	for (size_t i = 0; i < p->n_destroyed; i++) {
		const oa_sp_model *d = &p->destroyed[i];
		char b[48];
		oa_format_size(d->bytes, c->units, b, sizeof b);
		printf("  destroys %s%s%s%s  (%zu blob%s%s, %s)\n", oa_text_safe(d->name), d->runner ? " [" : "",
		       d->runner ? d->runner : "", d->runner ? "]" : "", d->n_blobs, d->n_blobs == 1 ? "" : "s",
		       d->weights ? ", its weights included" : "", b);
	}
	for (size_t i = 0; i < p->n_deletes; i++)
		printf("  delete  %s  (%s)\n", oa_text_safe(p->deletes[i].path), oa_text_safe(p->deletes[i].reason));
	for (size_t i = 0; i < p->n_later; i++) {
		char when[48];
		oa_iso8601((time_t)p->later[i].after, 0, when, sizeof when);
		printf("  later   %s  (%s; younger than 1 h: kept until a start after %s)\n", oa_text_safe(p->later[i].path),
		       oa_text_safe(p->later[i].reason), when);
	}
	for (size_t i = 0; i < p->n_dirs; i++)
		printf("  rmdir   %s\n", oa_text_safe(p->dirs[i]));
	char fr[48];
	oa_format_size(p->bytes_freed, c->units, fr, sizeof fr);
	printf("  %zu file%s deleted, %s freed%s\n", p->n_deletes, p->n_deletes == 1 ? "" : "s", fr,
	       p->n_deletes ? "" : " (nothing to delete)");
}

static void predict(cli *c, oa_store *s, bool first, bool last)
{
	oa_server_prune p;
	oa_server_prune_predict(s, oa_wall_now(), (enum oa_server_era)c->server_era, &p);
	if (c->format == OUT_JSON || c->format == OUT_NDJSON)
		cli_put_stream_item(c, OA_PREDICT_SERVER_SCHEMA, oa_report_server_prune(s, &p), first, last);
	else
		print_prediction(c, s, &p, first);
	oa_server_prune_free(&p);
}

/* --predict-server: what the server's start-up prune does to each store. */
static int predict_all(cli *c, opened_store *st, size_t n)
{
	bool json = c->format == OUT_JSON || c->format == OUT_NDJSON;
	size_t last = 0, n_ok = 0;
	for (size_t i = 0; i < n; i++)
		if (st[i].ok)
			last = i, n_ok++;
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		predict(c, &st[i].s, first, i == last);
		first = false;
	}
	if (json && !n_ok)
		cli_put_stream_end(c, OA_PREDICT_SERVER_SCHEMA, false);
	cli_close_stores(st, n);
	return c->exit_code;
}

/* ---- prune ---------------------------------------------------------------------------- */

static bool prune_args_ok(cli *c, int *rc)
{
	*rc = OA_EXIT_USAGE;
	if (c->n_args) {
		cli_err("prune takes no arguments (to remove models: ollama-audit rm MODEL...)");
		return false;
	}
	if (c->server_version && !c->predict_server) {
		cli_err("--server-version goes with --predict-server");
		return false;
	}
	if (c->predict_server && (c->apply || c->plan_path || c->quarantine)) {
		cli_err("--predict-server only prints; it does not combine with --apply, --plan or --quarantine");
		return false;
	}
	if (c->predict_server && c->format != OUT_TABLE && c->format != OUT_JSON) {
		*rc = cli_refuse_format(c, "prune --predict-server", "table json");
		return false;
	}
	return cli_apply_options_ok(c);
}

/* --apply --plan FILE: the saved plan, if it is a prune plan for this store. */
static bool plan_from_file(cli *c, const oa_store *s, oa_plan *p)
{
	char err[768];
	if (oa_plan_read(c->plan_path, p, err, sizeof err) < 0) {
		cli_err("%s", err);
		c->exit_code |= OA_EXIT_USAGE;
		return false;
	}
	if (p->store_dev != (uint64_t)s->root_st.st_dev || p->store_ino != (uint64_t)s->root_st.st_ino) {
		cli_err("%s: the plan %s was made for another store (%s)", s->root, c->plan_path, p->store);
		c->exit_code |= OA_EXIT_OPERATIONAL;
		oa_plan_free(p);
		return false;
	}
	if (strcmp(p->command, "prune") != 0) {
		cli_err("%s is a plan for `%s`; apply it with `ollama-audit %s --apply --plan %s`", c->plan_path,
		        p->command, p->command, c->plan_path);
		c->exit_code |= OA_EXIT_USAGE;
		oa_plan_free(p);
		return false;
	}
	if (c->min_age >= 0)
		p->min_age = c->min_age;
	return true;
}

/* What prune can free in this store now (reclaim.h). */
static void plan_now(const cli *c, oa_store *s, oa_plan *p, oa_junk_list *j)
{
	oa_reclaim r;
	oa_reclaim_plan(s, c->what ? c->what : OA_JUNK_DEFAULT,
	                c->min_age >= 0 ? c->min_age : OA_SERVER_GRACE_SECONDS, oa_wall_now(), &r);
	if (r.incomplete)
		cli_err("%s: %s: no complete blob can be proven unreferenced, so every one is kept; only partial "
		        "downloads and temp files can go", s->root, r.why);
	*p = r.plan; /* both handed to the caller */
	*j = r.junk;
}

int cmd_prune(cli *c)
{
	int rc;
	if (!prune_args_ok(c, &rc))
		return rc;
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	size_t n_opened = 0;
	for (size_t i = 0; i < n; i++)
		n_opened += st[i].ok;
	if (c->plan_path && n_opened > 1) {
		cli_err("--plan works on one store at a time, and %zu were opened: name one with --store",
		        n_opened);
		cli_close_stores(st, n);
		return OA_EXIT_USAGE;
	}
	if (c->predict_server)
		return predict_all(c, st, n);
	/* Plan every store first: what cannot be planned is said before any
	 * plan is printed. */
	typedef struct planned {
		oa_store *s;
		oa_plan p;
		oa_junk_list j;
	} planned;
	planned *pl = oa_xcalloc(n ? n : 1, sizeof *pl);
	size_t np = 0;
	bool from_file = c->apply && c->plan_path;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		planned *x = &pl[np];
		x->s = &st[i].s;
		if (from_file && !plan_from_file(c, x->s, &x->p))
			continue;
		if (!from_file)
			plan_now(c, x->s, &x->p, &x->j);
		np++;
	}
	for (size_t i = 0; i < np; i++) {
		cli_run_plan(c, pl[i].s, &pl[i].p, &pl[i].j, from_file, i == 0);
		oa_plan_free(&pl[i].p);
		oa_junk_free(&pl[i].j);
	}
	if (c->format == OUT_JSON && !np)
		cli_emit_store(c, OA_SCHEMA_PRUNE, NULL);
	free(pl);
	cli_close_stores(st, n);
	return c->exit_code;
}

bool cli_apply_options_ok(const cli *c)
{
	if ((c->plan_path || c->apply) && c->n_stores > 1) {
		cli_err("--apply and --plan work on one store at a time");
		return false;
	}
	/* One plan file per run: with several stores each would overwrite (or,
	 * with --apply, be checked against) the previous one. */
	if (c->plan_path && c->all_users) {
		cli_err("--plan works on one store at a time: name it with --store, not --all-users");
		return false;
	}
	if (c->quarantine && !c->apply) {
		cli_err("--quarantine needs --apply (without it nothing is moved)");
		return false;
	}
	return true;
}
