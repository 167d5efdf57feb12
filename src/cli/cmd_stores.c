/* cmd_stores.c - `ollama-audit stores`: every store on the machine, with its
 * owner, size, model count and how it was found (docs/multi-store.md). */
#include "cli_multi.h"
#include "base/jsonutil.h"
#include "ollama_audit/discover.h"
#include "ollama_audit/dupes.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/junk.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

void cli_multi_prom_store(cli *c, oa_store *s, double seconds);
void cli_multi_prom_add(const char *metric, double value);

#define STORES_SCHEMA OA_SCHEMA_STORES

typedef struct row {
	const oa_candidate *cand;
	oa_store s;
	bool opened;
	const char *state;    /* "ok", "incomplete", "permission-denied", "missing", ... */
	char *error;
	size_t unreadable;
	uint64_t bytes, apparent;
	oa_usage use;         /* blobs/ as `du -s` counts it (junk.h's walker) */
	double seconds;
} row;

/* Allocated and apparent bytes of blobs/ (the directory and everything in
 * it, as `du -s`) of the rows whose user is `user` (NULL = every row), each
 * inode once. */
static void sum_unique(const row *r, size_t n, const char *user, uint64_t *alloc, uint64_t *apparent)
{
	const oa_usage **v = oa_xcalloc(n ? n : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (r[i].opened && (!user || strcmp(r[i].cand->user, user) == 0))
			v[k++] = &r[i].use;
	oa_usage_sum(v, k, apparent, alloc);
	free(v);
}

/* One user's stores (found or denied), models and unique bytes. */
static void user_totals(const row *rows, size_t n, const char *user, size_t *ns, size_t *nm,
                        uint64_t *bytes, uint64_t *apparent)
{
	*ns = *nm = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].cand->user && strcmp(rows[i].cand->user, user) == 0 &&
		    (rows[i].cand->state == OA_CAND_STORE || rows[i].cand->state == OA_CAND_DENIED)) {
			(*ns)++;
			*nm += rows[i].opened ? oa_store_listed_models(&rows[i].s) : 0;
		}
	sum_unique(rows, n, user, bytes, apparent);
}

static bool shown(const cli *c, const oa_candidate *k)
{
	if (c->all)
		return true;
	if (k->state == OA_CAND_STORE || k->state == OA_CAND_DENIED || k->state == OA_CAND_UNKNOWN)
		return true; /* unknown: a private directory hides whether a store is there: say so */
	for (size_t i = 0; i < k->n_found; i++)
		if (strcmp(k->found[i].source, "home") != 0 && strcmp(k->found[i].source, "default") != 0)
			return true; /* configured somewhere: say what is (not) there */
	return false;
}

static json_t *row_json(const row *r)
{
	const oa_candidate *k = r->cand;
	json_t *o = json_object();
	json_object_set_new(o, "root", oa_json_str(r->opened ? r->s.root : k->root ? k->root : k->path));
	json_object_set_new(o, "state", json_string(r->state));
	json_object_set_new(o, "user", oa_json_str(k->user));
	json_object_set_new(o, "uid", k->have_uid ? json_integer((json_int_t)k->uid) : json_null());
	json_t *paths = json_array();
	for (size_t i = 0; i < k->n_paths; i++)
		json_array_append_new(paths, oa_json_str(k->paths[i]));
	json_object_set_new(o, "paths", paths);
	json_t *found = json_array();
	for (size_t i = 0; i < k->n_found; i++)
		json_array_append_new(found, json_pack("{s:o,s:o,s:o}", "source", oa_json_str(k->found[i].source),
		                                       "detail", oa_json_str(k->found[i].detail), "path",
		                                       oa_json_str(k->found[i].path)));
	json_object_set_new(o, "found_by", found);
	if (r->opened) {
		json_object_set_new(o, "models", json_integer((json_int_t)oa_store_listed_models(&r->s)));
		json_object_set_new(o, "blob_files", json_integer((json_int_t)r->s.n_blobs));
		json_object_set_new(o, "disk_bytes", json_integer((json_int_t)r->bytes));
		json_object_set_new(o, "apparent_bytes", json_integer((json_int_t)r->apparent));
		json_object_set_new(o, "unreadable_parts", json_integer((json_int_t)r->unreadable));
	}
	if (r->error)
		json_object_set_new(o, "error", oa_json_str(r->error));
	return o;
}

int cmd_stores(cli *c)
{
	if (c->n_args) {
		cli_err("stores takes no arguments");
		return OA_EXIT_USAGE;
	}
	oa_discovery d;
	oa_discover(&d, c->stores, c->n_stores);
	for (size_t i = 0; i < d.n_notes; i++) {
		char *e = oa_escape(d.notes[i], strlen(d.notes[i]));
		cli_err("discovery: %s", e);
		free(e);
	}
	row *rows = oa_xcalloc(d.n ? d.n : 1, sizeof *rows);
	size_t n = 0;
	for (size_t i = 0; i < d.n; i++) {
		const oa_candidate *k = &d.v[i];
		if (!shown(c, k))
			continue; /* (an unknown candidate is always shown: its row says why) */
		row *r = &rows[n++];
		r->cand = k;
		bool explicit_store = false;
		for (size_t j = 0; j < k->n_found; j++)
			explicit_store |= strcmp(k->found[j].source, "--store") == 0;
		switch (k->state) {
		case OA_CAND_STORE:
		case OA_CAND_DENIED: {
			char err[512];
			double t0 = oa_now();
			if (oa_store_open(&r->s, k->root, k->found[0].source, err, sizeof err) < 0) {
				oa_store_close(&r->s);
				r->state = "permission-denied";
				r->error = oa_xstrdup(err);
				cli_fail(c, "store-unreadable", k->root, "%s (store of %s): skipped", err,
				         k->user ? k->user : "?");
				c->exit_code |= OA_EXIT_OPERATIONAL;
				if (c->format == OUT_PROMETHEUS)
					cli_multi_failed(c, k->root, k->found[0].source);
				break;
			}
			oa_store_set_header_mode(&r->s, OA_HEADERS_NONE);
			oa_store_scan(&r->s);
			r->seconds = oa_now() - t0;
			r->opened = true;
			c->stores_read++;
			for (size_t j = 0; j < r->s.findings.n; j++)
				r->unreadable += strcmp(r->s.findings.v[j].code, "unreadable") == 0;
			r->state = r->unreadable ? "incomplete" : "ok";
			if (r->unreadable) {
				cli_err("%s: %zu part%s could not be read (see `ollama-audit --store %s check`)",
				        r->s.root, r->unreadable, r->unreadable == 1 ? "" : "s", r->s.root);
				c->exit_code |= OA_EXIT_OPERATIONAL;
			}
			oa_usage_walk(r->s.blobs_fd, &r->use);
			sum_unique(r, 1, NULL, &r->bytes, &r->apparent);
			break;
		}
		case OA_CAND_MISSING:
			r->state = "missing";
			if (explicit_store) {
				cli_fail(c, "store-unreadable", k->path, "%s: %s", k->path, strerror(k->err));
				c->exit_code |= OA_EXIT_OPERATIONAL;
				if (c->format == OUT_PROMETHEUS)
					cli_multi_failed(c, k->path, "--store");
			}
			break;
		case OA_CAND_NOT_STORE:
			r->state = "not-a-store";
			if (explicit_store) {
				cli_fail(c, "store-unreadable", k->path, "%s is not an Ollama store: no manifests/ or blobs/",
				         k->path);
				c->exit_code |= OA_EXIT_OPERATIONAL;
				if (c->format == OUT_PROMETHEUS)
					cli_multi_failed(c, k->path, "--store");
			}
			break;
		case OA_CAND_UNKNOWN:
			r->state = "unknown";
			r->error = oa_xasprintf("cannot tell whether a store is there: %s", strerror(k->err));
			if (explicit_store) {
				cli_fail(c, "store-unreadable", k->path, "%s: %s", k->path, r->error);
				c->exit_code |= OA_EXIT_OPERATIONAL;
			}
			break;
		}
	}

	/* per-user totals, the grand total and the duplicates */
	const char **users = oa_xcalloc(n ? n : 1, sizeof *users);
	size_t nu = 0;
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].cand->user ||
		    (rows[i].cand->state != OA_CAND_STORE && rows[i].cand->state != OA_CAND_DENIED))
			continue;
		size_t j = 0;
		while (j < nu && strcmp(users[j], rows[i].cand->user) != 0)
			j++;
		if (j == nu)
			users[nu++] = rows[i].cand->user;
	}
	oa_store **sv = oa_xcalloc(n ? n : 1, sizeof *sv);
	size_t opened = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].opened) {
			sv[i] = &rows[i].s;
			opened++;
		}
	oa_dupes dupes;
	oa_dupes_find(sv, n, &dupes);
	bool by_hardlink = false;
	uint64_t dedupe_frees = dupes.n ? cli_dedupe_can_free(sv, &dupes, &by_hardlink) : 0;

	uint64_t all_bytes, all_apparent;
	sum_unique(rows, n, NULL, &all_bytes, &all_apparent);
	size_t all_models = 0, n_real = 0;
	for (size_t i = 0; i < n; i++) {
		all_models += rows[i].opened ? oa_store_listed_models(&rows[i].s) : 0;
		n_real += rows[i].cand->state == OA_CAND_STORE || rows[i].cand->state == OA_CAND_DENIED;
	}

	if (c->format == OUT_JSON || c->format == OUT_NDJSON) {
		json_t *sa = json_array(), *ua = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(sa, row_json(&rows[i]));
		for (size_t j = 0; j < nu; j++) {
			size_t ns, nm;
			uint64_t b, a;
			user_totals(rows, n, users[j], &ns, &nm, &b, &a);
			json_array_append_new(ua, json_pack("{s:o,s:I,s:I,s:I,s:I}", "user", oa_json_str(users[j]), "stores",
			                                    (json_int_t)ns, "models", (json_int_t)nm, "disk_bytes",
			                                    (json_int_t)b, "apparent_bytes", (json_int_t)a));
		}
		json_t *tot = json_pack("{s:I,s:I,s:I,s:I}", "stores", (json_int_t)n_real, "models",
		                        (json_int_t)all_models, "disk_bytes", (json_int_t)all_bytes, "apparent_bytes",
		                        (json_int_t)all_apparent);
		json_t *dup = json_pack("{s:I,s:I,s:I,s:I,s:I,s:s}", "digests", (json_int_t)dupes.n, "saving_bytes",
		                        (json_int_t)dupes.saving, "linkable_bytes", (json_int_t)dupes.linkable,
		                        "already_shared_bytes", (json_int_t)dupes.already_shared,
		                        "dedupe_bytes", (json_int_t)dedupe_frees, "dedupe_method",
		                        by_hardlink ? "hardlink" : "reflink");
		if (c->format == OUT_JSON) {
			json_t *doc = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "schema", STORES_SCHEMA, "host",
			                        cli_host(), "stores", sa, "users", ua, "total", tot, "duplicates", dup);
			oa_json_dump_line(doc, stdout);
			json_decref(doc);
		} else {
			const char *types[4] = { "store", "user", "total", "duplicates" };
			json_t *lists[2] = { sa, ua };
			for (int t = 0; t < 4; t++) {
				size_t cnt = t < 2 ? json_array_size(lists[t]) : 1;
				for (size_t i = 0; i < cnt; i++) {
					json_t *rec = json_pack("{s:s,s:s,s:s}", "type", types[t], "schema", STORES_SCHEMA,
					                        "host", cli_host());
					json_object_update(rec, t < 2 ? json_array_get(lists[t], i) : t == 2 ? tot : dup);
					oa_json_dump_line(rec, stdout);
					json_decref(rec);
				}
			}
			json_decref(sa);
			json_decref(ua);
			json_decref(tot);
			json_decref(dup);
		}
	} else if (c->format == OUT_CSV) {
		printf("host,store,state,user,uid,models,blob_files,disk_bytes,apparent_bytes,found_by,paths\n");
		for (size_t i = 0; i < n; i++) {
			const row *r = &rows[i];
			const oa_candidate *k = r->cand;
			char num[5][32] = { "", "", "", "", "" };
			if (k->have_uid)
				snprintf(num[0], 32, "%lu", (unsigned long)k->uid);
			if (r->opened) {
				snprintf(num[1], 32, "%zu", oa_store_listed_models(&r->s));
				snprintf(num[2], 32, "%zu", r->s.n_blobs);
				snprintf(num[3], 32, "%llu", (unsigned long long)r->bytes);
				snprintf(num[4], 32, "%llu", (unsigned long long)r->apparent);
			}
			oa_buf fb, pb;
			oa_buf_init(&fb);
			oa_buf_init(&pb);
			for (size_t j = 0; j < k->n_found; j++)
				oa_buf_printf(&fb, "%s%s:%s", j ? ";" : "", k->found[j].source, k->found[j].detail);
			for (size_t j = 0; j < k->n_paths; j++)
				oa_buf_printf(&pb, "%s%s", j ? ";" : "", k->paths[j]);
			csv_field(stdout, cli_host(), false);
			csv_field(stdout, r->opened ? r->s.root : k->root ? k->root : k->path, false);
			csv_field(stdout, r->state, false);
			csv_field(stdout, k->user, false);
			for (int q = 0; q < 5; q++)
				csv_field(stdout, num[q], false);
			csv_field(stdout, fb.data ? fb.data : "", false);
			csv_field(stdout, pb.data ? pb.data : "", true);
			oa_buf_free(&fb);
			oa_buf_free(&pb);
		}
	} else if (c->format == OUT_PROMETHEUS) {
		for (size_t i = 0; i < n; i++)
			if (rows[i].opened)
				cli_multi_prom_store(c, &rows[i].s, rows[i].seconds);
		if (opened >= 2)
			cli_multi_prom_add("ollama_store_duplicate_bytes", (double)dupes.saving);
	} else {
		/* the table: one row per store, then per user, then duplicates */
		if (n == 0)
			cli_err("no Ollama store found (`stores --all` lists every place looked at)");
		/* Widths in display columns (a CJK user name takes two per
		 * character); USER also fits the "total" row below. */
		size_t w0 = strlen("STORE"), w1 = strlen("total");
		for (size_t i = 0; i < n; i++) {
			const oa_candidate *k = rows[i].cand;
			const char *root = rows[i].opened ? rows[i].s.root : k->root ? k->root : k->path;
			char *er = oa_escape(root, strlen(root));
			if (cli_text_width(er) > w0)
				w0 = cli_text_width(er);
			free(er);
			if (cli_text_width(k->user ? k->user : "?") > w1)
				w1 = cli_text_width(k->user ? k->user : "?");
		}
		cli_put_cell(stdout, "STORE", w0, false);
		fputs("   ", stdout);
		cli_put_cell(stdout, "USER", w1, false);
		printf("   %6s   %10s   %-17s   %s\n", "MODELS", "SIZE", "STATE", "FOUND BY");
		for (size_t i = 0; i < n; i++) {
			const row *r = &rows[i];
			const oa_candidate *k = r->cand;
			char size[32] = "-", models[24] = "-";
			if (r->opened) {
				oa_format_size(r->bytes, c->units, size, sizeof size);
				snprintf(models, sizeof models, "%zu", oa_store_listed_models(&r->s));
			}
			oa_buf fb;
			oa_buf_init(&fb);
			for (size_t j = 0; j < k->n_found; j++)
				oa_buf_printf(&fb, "%s%s (%s)", j ? ", " : "", k->found[j].source, k->found[j].detail);
			for (size_t j = 0; j < k->n_paths; j++) {
				const char *root = r->opened ? r->s.root : k->root ? k->root : k->path;
				if (strcmp(k->paths[j], root) != 0) {
					oa_buf_adds(&fb, "; also at ");
					oa_buf_add_escaped(&fb, k->paths[j], strlen(k->paths[j]));
				}
			}
			char *root = oa_escape(r->opened ? r->s.root : k->root ? k->root : k->path,
			                       strlen(r->opened ? r->s.root : k->root ? k->root : k->path));
			cli_put_cell(stdout, root, w0, false);
			fputs("   ", stdout);
			cli_put_cell(stdout, k->user ? k->user : "?", w1, false);
			printf("   %6s   %10s   %-17s   %s\n", models, size, r->state, fb.data ? fb.data : "");
			free(root);
			oa_buf_free(&fb);
		}
		if (nu) {
			fputc('\n', stdout);
			cli_put_cell(stdout, "USER", w1, false);
			printf("   %6s   %6s   %10s\n", "STORES", "MODELS", "SIZE");
			for (size_t j = 0; j < nu; j++) {
				size_t ns, nm;
				uint64_t b, a;
				user_totals(rows, n, users[j], &ns, &nm, &b, &a);
				char size[32];
				oa_format_size(b, c->units, size, sizeof size);
				cli_put_cell(stdout, users[j], w1, false);
				printf("   %6zu   %6zu   %10s\n", ns, nm, size);
			}
			char size[32];
			oa_format_size(all_bytes, c->units, size, sizeof size);
			cli_put_cell(stdout, "total", w1, false);
			printf("   %6zu   %6zu   %10s\n", n_real, all_models, size);
		}
		if (dupes.n) {
			char s1[32], s2[32], s3[32];
			oa_format_size(dupes.saving, c->units, s1, sizeof s1);
			oa_format_size(dedupe_frees, c->units, s2, sizeof s2);
			oa_format_size(dupes.already_shared, c->units, s3, sizeof s3);
			/* what dedupe can really free here: tested reflinks, else hard links */
			printf("\nduplicates: %zu blob%s in several stores; sharing would save %s, `dedupe%s` can free "
			       "%s of it here; %s already shared. See `du --all-users --duplicates`.\n",
			       dupes.n, dupes.n == 1 ? "" : "s", s1, by_hardlink ? " --hardlink" : "", s2, s3);
		}
	}

	oa_dupes_free(&dupes);
	free(sv);
	free(users);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].opened)
			oa_store_close(&rows[i].s);
		oa_usage_free(&rows[i].use);
		free(rows[i].error);
	}
	free(rows);
	oa_discovery_free(&d);
	return c->exit_code;
}
