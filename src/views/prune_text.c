/* prune_text.c - prune's and rm's text: plans, outcomes, csv, notes and the
 * server start-up prediction (prune_text.h). */
#include "views/prune_text.h"
#include "views/csv.h"
#include "ollama_audit/humanize.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	if (!j || !e->hex[0] || !oa_str_has_suffix(e->path, "-partial"))
		return NULL;
	return oa_junk_group(j, e->hex);
}

static void put_progress(const oa_text_style *st, FILE *out, int wcat, const oa_partial_group *g)
{
	if (g->downloaded >= 0 && g->total > 0) {
		char a[48], b[48];
		oa_format_size((uint64_t)g->downloaded, st->units, a, sizeof a);
		oa_format_size((uint64_t)g->total, st->units, b, sizeof b);
		fprintf(out, "  %*s  download: %s of %s (%.0f%%) in %zu part file%s\n", wcat, "", a, b,
		        100.0 * (double)g->downloaded / (double)g->total, g->n_parts, g->n_parts == 1 ? "" : "s");
	} else {
		fprintf(out, "  %*s  download: progress unknown (%s)\n", wcat, "",
		        g->n_parts ? "a part file is unreadable or implausible" : "no part files");
	}
}

static void put_entries(const oa_text_style *st, FILE *out, const oa_plan_list *l, const oa_junk_list *junk,
                        bool kept)
{
	size_t wcat = 8;
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i].category) > wcat)
			wcat = strlen(l->v[i].category);
	fprintf(out, "  %-*s  %5s  %9s  %9s  %s\n", (int)wcat, "CATEGORY", "AGE", "ON DISK", kept ? "" : "FREED",
	        "PATH");
	for (size_t i = 0; i < l->n; i++) {
		const oa_plan_entry *e = &l->v[i];
		char age[16], al[48], fr[48];
		age_text(e->age, age, sizeof age);
		oa_format_size(e->allocated, st->units, al, sizeof al);
		oa_format_size(e->freed, st->units, fr, sizeof fr);
		char *p = oa_escape(e->path, strlen(e->path));
		const char *slash = e->type == 'd' ? "/" : "";
		if (kept) {
			/* the same columns as the plan, so a kept entry's kind and size show */
			fprintf(out, "  %-*s  %5s  %9s  %9s  %s%s: %s\n", (int)wcat, oa_text_safe(e->category), age, al,
			        "kept", p, slash, oa_text_safe(e->note ? e->note : "kept"));
			free(p);
			continue;
		}
		fprintf(out, "  %-*s  %5s  %9s  %9s  %s%s", (int)wcat, oa_text_safe(e->category), age, al, fr, p, slash);
		if (e->model)
			fprintf(out, "  [%s]", oa_text_safe(e->model));
		fprintf(out, "\n");
		if (e->note)
			fprintf(out, "  %*s  note: %s\n", (int)wcat, "", oa_text_safe(e->note));
		const oa_partial_group *g = group_of(junk, e);
		if (g)
			put_progress(st, out, (int)wcat, g);
		free(p);
	}
}

void oa_plan_text(const oa_text_style *st, FILE *out, const char *root, const oa_plan *p,
                  const oa_junk_list *junk, const char *from_file, bool first, bool dry_run,
                  const oa_plan_models *by_model)
{
	fprintf(out, "%s%s: %s plan%s%s%s\n", first ? "" : "\n", oa_text_safe(root), p->command,
	        from_file ? " from " : "", from_file ? oa_text_safe(from_file) : "",
	        !by_model || !(p->todo.n + p->kept.n) ? "" : strcmp(p->command, "rm") == 0
	        ? " (by model; -v lists every file)" : " (by kind; -v lists every file)");
	if (by_model)
		oa_plan_rows_text(st, out, p, junk, by_model);
	if (!by_model && p->todo.n)
		put_entries(st, out, &p->todo, junk, false);
	if (!by_model && p->kept.n) {
		fprintf(out, "kept (%zu):\n", p->kept.n);
		put_entries(st, out, &p->kept, junk, true);
	}
	char fr[48], al[48];
	oa_format_size(p->freed, st->units, fr, sizeof fr);
	oa_format_size(p->allocated, st->units, al, sizeof al);
	/* planned, not freed: whether anything goes is said after the prompt */
	fprintf(out, "%zu entr%s, %s to free (%s allocated)%s\n", p->todo.n, p->todo.n == 1 ? "y" : "ies", fr, al,
	        dry_run ? "; dry run, nothing removed: --apply removes" : "");
}

void oa_plan_model_names(FILE *out, const oa_plan *p)
{
	for (size_t i = 0; i < p->todo.n; i++) {
		const oa_plan_entry *e = &p->todo.v[i];
		bool seen = !e->model || strcmp(e->category, "manifest") != 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = p->todo.v[k].model && strcmp(p->todo.v[k].category, "manifest") == 0 &&
			       strcmp(p->todo.v[k].model, e->model) == 0;
		char *name = seen ? NULL : oa_escape(e->model, strlen(e->model));
		if (name)
			fprintf(out, "%s\n", name);
		free(name);
	}
}

char *oa_plan_question(const oa_plan *p, const char *quarantine, enum oa_units units)
{
	char b[48];
	oa_format_size(quarantine ? p->allocated : p->freed, units, b, sizeof b);
	if (quarantine)
		return oa_xasprintf("Move %zu entr%s (%s) from %s into %s?", p->todo.n, p->todo.n == 1 ? "y" : "ies", b,
		                    p->store, quarantine);
	return oa_xasprintf("Remove %zu entr%s from %s, freeing %s?", p->todo.n, p->todo.n == 1 ? "y" : "ies",
	                    p->store, b);
}

static void put_apply_result(const oa_text_style *st, FILE *out, const oa_apply_result *r, const char *quarantine)
{
	char fr[48], mv[48];
	oa_format_size(r->freed, st->units, fr, sizeof fr);
	oa_format_size(r->moved, st->units, mv, sizeof mv);
	const char *stopped = r->interrupted ? " (interrupted)" : "";
	if (!quarantine) {
		fprintf(out, "removed %zu, skipped %zu, failed %zu: %s freed%s\n", r->done, r->skipped, r->failed, fr,
		        stopped);
		return;
	}
	/* a move within one filesystem frees nothing until the quarantine is emptied */
	char held[48];
	oa_format_size(r->quarantine_bytes, st->units, held, sizeof held);
	fprintf(out, "moved %zu, skipped %zu, failed %zu: %s moved to %s (operation %s)%s\n", r->done, r->skipped,
	        r->failed, mv, oa_text_safe(quarantine), r->operation, stopped);
	fprintf(out, "%s freed on disk; the quarantine holds %s in %zu entr%s: `ollama-audit restore %s --empty` "
	        "frees it\n", fr, held, r->quarantine_entries, r->quarantine_entries == 1 ? "y" : "ies",
	        oa_text_safe(quarantine));
}

void oa_plan_outcome_text(const oa_text_style *st, FILE *out, const oa_plan_outcome *o)
{
	if (o->saved)
		fprintf(out, "plan written to %s\n", oa_text_safe(o->saved));
	if (o->r)
		put_apply_result(st, out, o->r, o->quarantine);
	else if (o->tried)
		fprintf(out, "nothing removed: %s\n", oa_text_safe(o->refusal));
	else if (o->apply)
		fprintf(out, "nothing to remove\n");
}

void oa_plan_csv(FILE *out, json_t *doc, const char *user, bool header)
{
	/* planned_bytes and then user (below) last: added after the others, which keep their places */
	static const char *const cols[] = { "path",        "category",    "type",   "apparent_bytes",
	                              "disk_bytes",  "freed_bytes", "mtime",  "digest",
	                              "model",       "note",        "planned_bytes" };
	const size_t ncols = sizeof cols / sizeof cols[0];
	if (header) {
		fprintf(out, "command,store,state");
		for (size_t k = 0; k < ncols; k++)
			fprintf(out, ",%s", cols[k]);
		fprintf(out, ",user\n");
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
				oa_csv_field(out, json_is_string(x) ? json_string_value(x) : num, false);
			}
			oa_csv_field(out, user, true);
		}
	}
}

void oa_plan_shared_text(oa_say_fn say, const char *root, const oa_plan *p)
{
	if (!p->n_shared)
		return;
	say("%s: also keeps what %zu other store%s sharing its blob files reference%s:", root, p->n_shared,
	    p->n_shared == 1 ? "" : "s", p->n_shared == 1 ? "s" : "");
	for (size_t i = 0; i < p->n_shared; i++)
		say("  %s: %s", p->shared_store[i], p->shared_how[i]);
}

void oa_reclaim_text(oa_say_fn say, const char *root, const oa_reclaim *r)
{
	if (r->incomplete)
		say("%s: %s: no complete blob can be proven unreferenced, so every one is kept; only partial "
		    "downloads and temp files can go", root, r->why);
}

void oa_plan_shadows_text(oa_say_fn say, enum oa_units units, const oa_plan *p)
{
	for (size_t i = 0; i < p->n_shadows; i++) {
		if (p->shadows[i].removed)
			continue;
		char h[32];
		oa_format_size(p->shadows[i].bytes_only_it_holds, units, h, sizeof h);
		say("%s: removing the %s leaves its compatibility shadow %s, %s%s only it holds; --with-shadow "
		    "removes it too", oa_text_safe(p->store), p->rewrite ? "converted child" : "tag",
		    oa_text_safe(p->shadows[i].name), h, units == OA_UNITS_BYTES ? " bytes" : "");
	}
}

void oa_plan_anchor_text(oa_say_fn say, const char *root, const oa_plan *p)
{
	for (const oa_plan_rewrite *rw = p->rewrite; rw; rw = rw->next)
		if (rw->anchor_removed)
			say("%s: the %s child's downgrade anchor %s goes too: an Ollama from before manifest lists "
			    "no longer sees %s (and its start-up prune deletes what only manifests-v2/ names)",
			    root, rw->runner, oa_text_safe(rw->anchor), oa_text_safe(rw->model));
}

void oa_rm_dirs_text(oa_say_fn say, FILE *diag, const char *root, char *const *dirs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!i)
			say("%s: ollama rm would also remove these empty directories, which have nothing "
			    "to do with the model; kept (prune --what empty-dirs removes them):", root);
		fprintf(diag, "  %s/\n", oa_text_safe(dirs[i]));
	}
}

static void put_prediction_steps(const oa_text_style *st, FILE *out, const oa_server_prune *p)
{
	for (size_t i = 0; i < p->n_destroyed; i++) {
		const oa_sp_model *d = &p->destroyed[i];
		char b[48];
		oa_format_size(d->bytes, st->units, b, sizeof b);
		fprintf(out, "  destroys %s%s%s%s  (%zu blob%s%s, %s)\n", oa_text_safe(d->name), d->runner ? " [" : "",
		        d->runner ? d->runner : "", d->runner ? "]" : "", d->n_blobs, d->n_blobs == 1 ? "" : "s",
		        d->weights ? ", its weights included" : "", b);
	}
	for (size_t i = 0; i < p->n_deletes; i++)
		fprintf(out, "  delete  %s  (%s)\n", oa_text_safe(p->deletes[i].path), oa_text_safe(p->deletes[i].reason));
	for (size_t i = 0; i < p->n_later; i++) {
		char when[48];
		oa_iso8601((time_t)p->later[i].after, 0, when, sizeof when);
		fprintf(out, "  later   %s  (%s; younger than 1 h: kept until a start after %s)\n",
		        oa_text_safe(p->later[i].path), oa_text_safe(p->later[i].reason), when);
	}
	for (size_t i = 0; i < p->n_dirs; i++)
		fprintf(out, "  rmdir   %s\n", oa_text_safe(p->dirs[i]));
	for (size_t i = 0; i < p->n_metadata; i++)
		fprintf(out, "  delete  %s  (a metadata cache whose blob is gone)\n", oa_text_safe(p->metadata[i]));
	char fr[48];
	oa_format_size(p->bytes_freed, st->units, fr, sizeof fr);
	fprintf(out, "  %zu file%s deleted, %s freed%s\n", p->n_deletes, p->n_deletes == 1 ? "" : "s", fr,
	        p->n_deletes ? "" : " (nothing to delete)");
}

/* Which server, which of its three generations, and what chose it. */
static void put_server_line(FILE *out, const oa_server_prune *p)
{
	static const char *const gens[] = {
		[OA_SERVER_LEGACY] = ", before manifest lists (reads manifests/ only)",
		[OA_SERVER_LISTS] = ", manifest lists as at PR #16590's head (reads manifests/ and manifests-v2/)",
		[OA_SERVER_NEWEST] = ", the newest: retires conversions, then fails closed, then sweeps metadata/",
	};
	bool logs = p->chosen_by && strcmp(p->chosen_by, "logs") == 0;
	fprintf(out, "  server: Ollama %s%s (%s)\n", p->version ? oa_text_safe(p->version) : p->server,
	        p->era <= OA_SERVER_NEWEST && gens[p->era] ? gens[p->era] : "",
	        p->assumed ? "assumed: the newest this store's layout implies; --server-version to choose"
	        : logs ? "the version the server's logs last announced; --server-version to choose" : "--server-version");
}

void oa_server_prune_text(const oa_text_style *st, FILE *out, const oa_store *s, const oa_server_prune *p,
                          const char *server_version, bool first)
{
	(void)server_version; /* p->version says it */
	fprintf(out, "%s%s: what `ollama serve` does to this store at start-up\n", first ? "" : "\n",
	        oa_text_safe(s->root));
	put_server_line(out, p);
	for (size_t i = 0; i < p->n_renames; i++)
		fprintf(out, "  rename  %s -> %s\n", oa_text_safe(p->renames[i].from), oa_text_safe(p->renames[i].to));
	for (size_t i = 0; i < p->n_retired; i++)
		fprintf(out, "  retire  %s  (drops its ggml child sha256:%.12s and removes its downgrade anchor %s)\n",
		        oa_text_safe(p->retired[i].name), p->retired[i].child, oa_text_safe(p->retired[i].anchor));
	if (!p->nothing) {
		put_prediction_steps(st, out, p);
		return;
	}
	fprintf(out, "  prune: %s\n", p->nothing);
	if (s->prune_blocked && !p->noprune)
		for (size_t k = 0; k < s->findings.n; k++)
			if (s->findings.v[k].id == OA_FINDING_PRUNE_BLOCKER)
				fprintf(out, "    %s: %s\n", oa_text_safe(s->findings.v[k].path ? s->findings.v[k].path : "?"),
				        oa_text_safe(s->findings.v[k].message));
}
