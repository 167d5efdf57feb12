/* cmd_du.c - `ollama-audit du`: disk usage per model and for the store. */
#include "cli.h"
#include "cli_multi.h"
#include "base/jsonutil.h"
#include "ollama_audit/du.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/reclaim.h"
#include "base/platform.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define DU_SCHEMA OA_SCHEMA_DU

static char *row_name(const oa_store *s, const oa_du_row *r, const char *sep)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < r->n_models; i++) {
		const oa_model *m = &s->models[r->models[i]];
		if (i)
			oa_buf_adds(&b, sep);
		oa_buf_add_escaped(&b, m->display, strlen(m->display));
		if (m->anchor)
			oa_buf_adds(&b, " (legacy anchor)");
	}
	if (!r->manifest_ok)
		oa_buf_adds(&b, " (unparseable manifest)");
	return oa_buf_take(&b);
}

typedef struct du_store {
	oa_du du;
	oa_junk_list junk;
	uint64_t reclaimable;
	size_t reclaimable_entries;
} du_store;

/* --unused-for: keep the rows none of whose tags the logs show loaded
 * within the duration (the totals stay the store's). */
static void keep_unused(cli *c, const oa_store *s, oa_du *du)
{
	size_t k = 0;
	for (size_t i = 0; i < du->n_rows; i++) {
		bool unused = true;
		for (size_t m = 0; m < du->rows[i].n_models; m++)
			unused &= cli_model_unused(c, s, du->rows[i].models[m]);
		if (unused)
			du->rows[k++] = du->rows[i];
		else
			free(du->rows[i].models);
	}
	du->n_rows = k;
}

/* --sort: reorder the rows (oa_du_compute sorts them by UNIQUE). */
static void sort_rows(cli *c, const oa_store *s, oa_du *du)
{
	if (c->sort == SORT_DEFAULT || c->sort == SORT_UNIQUE || du->n_rows < 2)
		return;
	cli_sort_key *k = oa_xcalloc(du->n_rows, sizeof *k);
	for (size_t i = 0; i < du->n_rows; i++) {
		const oa_du_row *r = &du->rows[i];
		k[i].idx = i;
		switch (c->sort) {
		case SORT_NAME: k[i].name = r->n_models ? s->models[r->models[0]].display : ""; break;
		case SORT_SIZE: k[i].num = (int64_t)r->allocated; break;
		case SORT_LAST_USED: k[i].num = cli_last_used_ns(c, s, r->models, r->n_models); break;
		case SORT_MODIFIED:
			k[i].num = INT64_MIN;
			for (size_t m = 0; m < r->n_models; m++)
				if (oa_stat_mtime_ns(&s->models[r->models[m]].st) > k[i].num)
					k[i].num = oa_stat_mtime_ns(&s->models[r->models[m]].st);
			break;
		default: break;
		}
	}
	cli_sort_keys(k, du->n_rows);
	oa_du_row *v = oa_xcalloc(du->n_rows, sizeof *v);
	for (size_t i = 0; i < du->n_rows; i++)
		v[i] = du->rows[k[i].idx];
	memcpy(du->rows, v, du->n_rows * sizeof *v);
	free(v);
	free(k);
}

static void compute(oa_store *s, du_store *d)
{
	oa_du_compute(s, &d->du);
	oa_reclaim r;
	oa_reclaim_plan(s, OA_JUNK_DEFAULT, OA_SERVER_GRACE_SECONDS, oa_wall_now(), &r);
	d->reclaimable = r.plan.freed;
	d->reclaimable_entries = r.plan.todo.n;
	d->junk = r.junk; /* kept for the junk table; the plan is not */
	oa_plan_free(&r.plan);
}

static json_t *du_json(const cli *c, const oa_store *s, const du_store *d)
{
	json_t *o = oa_report_store(s);
	json_t *rows = json_array();
	for (size_t i = 0; i < d->du.n_rows; i++) {
		const oa_du_row *r = &d->du.rows[i];
		json_t *names = json_array();
		for (size_t k = 0; k < r->n_models; k++)
			json_array_append_new(names, json_string(s->models[r->models[k]].display));
		json_t *x = json_object();
		json_object_set_new(x, "name", json_string(r->n_models ? s->models[r->models[0]].display : ""));
		json_object_set_new(x, "names", names);
		json_object_set_new(x, "id", json_stringn(r->id, 12));
		json_object_set_new(x, "digest", json_string(r->id));
		json_object_set_new(x, "manifest_ok", json_boolean(r->manifest_ok));
		json_object_set_new(x, "unique_bytes", json_integer((json_int_t)r->unique));
		json_object_set_new(x, "shared_bytes", json_integer((json_int_t)r->shared));
		json_object_set_new(x, "disk_bytes", json_integer((json_int_t)r->allocated));
		json_object_set_new(x, "apparent_bytes", json_integer((json_int_t)r->apparent));
		json_object_set_new(x, "unique_apparent_bytes", json_integer((json_int_t)r->unique_apparent));
		json_object_set_new(x, "blob_files", json_integer(r->blobs));
		json_object_set_new(x, "missing_blobs", json_integer(r->missing));
		cli_usage_json(c, s, r->models, r->n_models, x);
		json_array_append_new(rows, x);
	}
	json_object_set_new(o, "models", rows);
	json_t *junk = json_object();
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++)
		json_object_set_new(junk, oa_junk_cat_key((enum oa_junk_cat)k),
		                    json_pack("{s:I,s:I,s:I}", "count", (json_int_t)d->junk.count[k],
		                              "disk_bytes", (json_int_t)d->junk.allocated[k], "apparent_bytes",
		                              (json_int_t)d->junk.apparent[k]));
	json_t *t = json_object();
	json_object_set_new(t, "referenced_bytes", json_integer((json_int_t)d->du.referenced));
	json_object_set_new(t, "referenced_apparent_bytes",
	                    json_integer((json_int_t)d->du.referenced_apparent));
	json_object_set_new(t, "junk", junk);
	json_object_set_new(t, "reclaimable_bytes", json_integer((json_int_t)d->reclaimable));
	json_object_set_new(t, "reclaimable_entries", json_integer((json_int_t)d->reclaimable_entries));
	json_object_set_new(t, "blobs_bytes", json_integer((json_int_t)d->du.blobs_total));
	json_object_set_new(t, "blobs_apparent_bytes", json_integer((json_int_t)d->du.blobs_total_apparent));
	json_object_set_new(o, "totals", t);
	return o;
}

static void du_table(cli *c, const oa_store *s, const du_store *d, bool first)
{
	static const char *head[6] = { "NAME", "UNIQUE", "SHARED", "ON DISK", "APPARENT", "LAST USED" };
	size_t n = d->du.n_rows;
	/* LAST USED when the store has server logs (docs/history.md). */
	int ncol = cli_usage_of(c, s)->have_logs ? 6 : 5;
	int64_t now = oa_wall_now_ns();
	char *(*cells)[6] = oa_xcalloc(n ? n : 1, sizeof *cells);
	size_t w[6];
	for (int k = 0; k < ncol; k++)
		w[k] = strlen(head[k]);
	for (size_t i = 0; i < n; i++) {
		const oa_du_row *r = &d->du.rows[i];
		uint64_t v[4] = { r->unique, r->shared, r->allocated, r->apparent };
		cells[i][0] = row_name(s, r, ", ");
		for (int k = 0; k < 4; k++) {
			char b[48];
			oa_format_size(v[k], c->units, b, sizeof b);
			cells[i][k + 1] = oa_xstrdup(b);
		}
		if (ncol > 5)
			cells[i][5] = cli_last_used_text(c, s, r->models, r->n_models, now);
		for (int k = 0; k < ncol; k++)
			if (cli_text_width(cells[i][k]) > w[k])
				w[k] = cli_text_width(cells[i][k]);
	}
	size_t rest = 0;
	for (int k = 1; k < ncol; k++)
		rest += 3 + w[k];
	w[0] = cli_name_width(w[0], rest);
	if (!c->no_header) {
		char *er = oa_escape(s->root, strlen(s->root));
		printf("%s%s\n", first ? "" : "\n", er);
		free(er);
	}
	/* Sizes right-aligned; the names and LAST USED left. */
	for (size_t i = 0; i <= n; i++) {
		if (i == 0 && c->no_header)
			continue;
		for (int k = 0; k < ncol; k++) {
			const char *cell = i == 0 ? head[k] : cells[i - 1][k];
			char *fit = k == 0 && i ? cli_fit(cell, w[0]) : NULL;
			if (k)
				fputs("   ", stdout);
			cli_put_cell(stdout, fit ? fit : cell, k == 5 ? 0 : w[k], k > 0 && k < 5);
			free(fit);
			if (i)
				free(cells[i - 1][k]);
		}
		printf("\n");
	}
	free(cells);
	char b1[48], b2[48];
	printf("\n");
	oa_format_size(d->du.referenced, c->units, b1, sizeof b1);
	oa_format_size(d->du.referenced_apparent, c->units, b2, sizeof b2);
	printf("referenced     %10s on disk (%s apparent)\n", b1, b2);
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		if (!d->junk.count[k])
			continue;
		oa_format_size(d->junk.allocated[k], c->units, b1, sizeof b1);
		printf("junk %-14s %6s  %zu entr%s\n", oa_junk_cat_name((enum oa_junk_cat)k), b1,
		       d->junk.count[k], d->junk.count[k] == 1 ? "y" : "ies");
	}
	oa_format_size(d->reclaimable, c->units, b1, sizeof b1);
	printf("reclaimable    %10s (`prune`: orphans, partials, temps older than 1 h)\n", b1);
	oa_format_size(d->du.blobs_total, c->units, b1, sizeof b1);
	oa_format_size(d->du.blobs_total_apparent, c->units, b2, sizeof b2);
	printf("blobs/ total   %10s on disk (%s apparent)\n", b1, b2);
}

/* ndjson: a "model" record per row of the json "models", then the store's
 * "summary": the json object without its models. */
static void du_ndjson(const cli *c, const oa_store *s, const du_store *d)
{
	json_t *o = du_json(c, s, d);
	json_t *rows = json_object_get(o, "models");
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *rec = json_pack("{s:s,s:s,s:s,s:o}", "type", "model", "schema", DU_SCHEMA, "host",
		                        cli_host(), "store", oa_json_str(s->root));
		json_object_update(rec, json_array_get(rows, i));
		oa_json_dump_line(rec, stdout);
		json_decref(rec);
	}
	json_object_del(o, "models");
	json_t *rec = json_pack("{s:s,s:s,s:s,s:o}", "type", "summary", "schema", DU_SCHEMA, "host", cli_host(),
	                        "store", oa_json_str(s->root));
	json_object_update_missing(rec, o);
	oa_json_dump_line(rec, stdout);
	json_decref(rec);
	json_decref(o);
}

/* Combined totals of several stores (--all-users, repeated --store): the
 * sum of the stores' own figures. A blob hard-linked between two stores
 * (dedupe --hardlink) counts in each; `du --duplicates` shows those. */
typedef struct du_total {
	size_t stores, models;
	uint64_t referenced, referenced_apparent, reclaimable, blobs, blobs_apparent;
	uint64_t junk_count[OA_JUNK_CAT_COUNT], junk_bytes[OA_JUNK_CAT_COUNT];
} du_total;

static void total_add(du_total *t, const du_store *d)
{
	t->stores++;
	t->models += d->du.n_rows;
	t->referenced += d->du.referenced;
	t->referenced_apparent += d->du.referenced_apparent;
	t->reclaimable += d->reclaimable;
	t->blobs += d->du.blobs_total;
	t->blobs_apparent += d->du.blobs_total_apparent;
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		t->junk_count[k] += d->junk.count[k];
		t->junk_bytes[k] += d->junk.allocated[k];
	}
}

static json_t *total_json(const du_total *t)
{
	json_t *junk = json_object();
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++)
		json_object_set_new(junk, oa_junk_cat_key((enum oa_junk_cat)k),
		                    json_pack("{s:I,s:I}", "count", (json_int_t)t->junk_count[k], "disk_bytes",
		                              (json_int_t)t->junk_bytes[k]));
	return json_pack("{s:I,s:I,s:I,s:I,s:o,s:I,s:I,s:I}", "stores", (json_int_t)t->stores,
	                 "model_rows", (json_int_t)t->models, "referenced_bytes",
	                 (json_int_t)t->referenced, "referenced_apparent_bytes",
	                 (json_int_t)t->referenced_apparent, "junk", junk, "reclaimable_bytes",
	                 (json_int_t)t->reclaimable, "blobs_bytes", (json_int_t)t->blobs,
	                 "blobs_apparent_bytes", (json_int_t)t->blobs_apparent);
}

static void total_table(cli *c, const du_total *t)
{
	char b1[48], b2[48];
	printf("\nall %zu stores (%zu model rows)\n", t->stores, t->models);
	oa_format_size(t->referenced, c->units, b1, sizeof b1);
	oa_format_size(t->referenced_apparent, c->units, b2, sizeof b2);
	printf("referenced     %10s on disk (%s apparent)\n", b1, b2);
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		if (!t->junk_count[k])
			continue;
		oa_format_size(t->junk_bytes[k], c->units, b1, sizeof b1);
		printf("junk %-14s %6s  %llu entr%s\n", oa_junk_cat_name((enum oa_junk_cat)k), b1,
		       (unsigned long long)t->junk_count[k], t->junk_count[k] == 1 ? "y" : "ies");
	}
	oa_format_size(t->reclaimable, c->units, b1, sizeof b1);
	printf("reclaimable    %10s\n", b1);
	oa_format_size(t->blobs, c->units, b1, sizeof b1);
	oa_format_size(t->blobs_apparent, c->units, b2, sizeof b2);
	printf("blobs/ total   %10s on disk (%s apparent)\n", b1, b2);
}

int cmd_du(cli *c)
{
	if (c->n_args) {
		cli_err("du takes no arguments");
		return OA_EXIT_USAGE;
	}
	if (c->duplicates && c->quiet) {
		cli_err("du -q prints model names; --duplicates lists blobs");
		return OA_EXIT_USAGE;
	}
	if (c->duplicates) {
		if (c->format == OUT_PROMETHEUS)
			return cli_refuse_format(c, "du --duplicates", "table json ndjson csv");
		return cmd_du_duplicates(c); /* cmd_dedupe.c (docs/multi-store.md) */
	}
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	bool first = true;
	du_total total;
	memset(&total, 0, sizeof total);
	if (c->format == OUT_JSON)
		printf("{\"schema\":\"%s\",\"stores\":[", DU_SCHEMA);
	if (c->format == OUT_CSV)
		printf("store,name,id,digest,manifest_ok,unique_bytes,shared_bytes,disk_bytes,apparent_bytes\n");
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		cli_usage_of(c, s); /* LAST USED and --unused-for */
		if (c->unused_for >= 0 && !cli_unused_for_ready(c, s))
			continue;
		du_store d;
		compute(s, &d);
		if (c->unused_for >= 0)
			keep_unused(c, s, &d.du);
		sort_rows(c, s, &d.du);
		if (c->format == OUT_JSON) {
			json_t *o = du_json(c, s, &d);
			if (!first)
				printf(",");
			json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
			json_decref(o);
		} else if (c->format == OUT_NDJSON) {
			du_ndjson(c, s, &d);
		} else if (c->format == OUT_PROMETHEUS) {
			cli_multi_prom_store(c, s, s->scan_seconds);
		} else if (c->format == OUT_CSV) {
			for (size_t k = 0; k < d.du.n_rows; k++) {
				const oa_du_row *r = &d.du.rows[k];
				char *name = row_name(s, r, " ");
				char num[4][32];
				snprintf(num[0], sizeof num[0], "%llu", (unsigned long long)r->unique);
				snprintf(num[1], sizeof num[1], "%llu", (unsigned long long)r->shared);
				snprintf(num[2], sizeof num[2], "%llu", (unsigned long long)r->allocated);
				snprintf(num[3], sizeof num[3], "%llu", (unsigned long long)r->apparent);
				csv_field(stdout, s->root, false);
				csv_field(stdout, name, false);
				char id[13];
				snprintf(id, sizeof id, "%.12s", r->id);
				csv_field(stdout, id, false);
				csv_field(stdout, r->id, false);
				csv_field(stdout, r->manifest_ok ? "true" : "false", false);
				for (int q = 0; q < 4; q++)
					csv_field(stdout, num[q], q == 3);
				free(name);
			}
		} else if (c->quiet) {
			/* every tag of each row: removing them all frees UNIQUE */
			for (size_t k = 0; k < d.du.n_rows; k++)
				for (size_t m = 0; m < d.du.rows[k].n_models; m++)
					if (!s->models[d.du.rows[k].models[m]].anchor)
						cli_print_name(s->models[d.du.rows[k].models[m]].display);
		} else {
			du_table(c, s, &d, first);
		}
		first = false;
		total_add(&total, &d);
		oa_du_free(&d.du);
		oa_junk_free(&d.junk);
		/* The tables above have no room for why a size is missing: say
		 * which file could not be read, or exit 8 would be unexplained. */
		for (size_t k = 0; k < s->findings.n; k++) {
			const oa_finding *f = &s->findings.v[k];
			if (strcmp(f->code, "unreadable") != 0)
				continue;
			cli_err("%s: %s", s->root, f->message ? f->message : f->path ? f->path : "unreadable");
			c->exit_code |= OA_EXIT_OPERATIONAL;
		}
	}
	if (c->format == OUT_JSON) {
		/* "total" is there for one store too, so scripts need no special case. */
		json_t *t = total_json(&total);
		printf("],\"total\":");
		json_dumpf(t, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("}\n");
		json_decref(t);
	} else if (c->format == OUT_NDJSON) {
		json_t *rec = json_pack("{s:s,s:s,s:s}", "type", "total", "schema", DU_SCHEMA, "host", cli_host());
		json_t *t = total_json(&total);
		json_object_update(rec, t);
		oa_json_dump_line(rec, stdout);
		json_decref(t);
		json_decref(rec);
	} else if (c->format == OUT_TABLE && total.stores > 1 && !c->quiet) {
		total_table(c, &total);
	}
	cli_close_stores(st, n);
	return c->exit_code;
}
