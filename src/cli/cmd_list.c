/* cmd_list.c - `ollama-audit list`: the models as `ollama list` shows them. */
#include "cli.h"
#include "cli_multi.h"
#include "ollama_audit/du.h"
#include "ollama_audit/headers.h"
#include "base/jsonutil.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static bool selected(const cli *c, const oa_store *s, const oa_model *m)
{
	if (c->unused_for >= 0 && !cli_model_unused(c, s, (size_t)(m - s->models)))
		return false;
	/* A legacy tag that a manifests-v2 tag shadows is not listed (reads try
	 * manifests-v2 first); check reports it. */
	if (m->anchor)
		return false;
	/* ollama list [PREFIX]: a case-insensitive prefix match on NAME. */
	if (c->n_args == 0)
		return true;
	return oa_name_has_prefix_fold(m->display, c->args[0]);
}

/* Manifest sizes are signed: the server sums what each manifest declares,
 * and HumanBytes prints a negative total as the plain integer ("-1 B"). */
static void size_cell(const cli *c, int64_t size, char *buf, size_t len)
{
	if (size >= 0)
		oa_format_size((uint64_t)size, c->units, buf, len);
	else
		snprintf(buf, len, c->units == OA_UNITS_BYTES ? "%lld" : "%lld B", (long long)size);
}

#define COL_PAD "    "

/* The selected models of a store in the order asked for (--sort); the
 * default is the store's own, newest first as ollama list sorts. */
static size_t *list_order(cli *c, oa_store *s, size_t *n)
{
	cli_sort_key *k = oa_xcalloc(s->n_models + 1, sizeof *k);
	size_t m = 0;
	oa_du du;
	bool have_du = c->sort == SORT_UNIQUE;
	if (have_du)
		oa_du_compute(s, &du);
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *mo = &s->models[j];
		if (!selected(c, s, mo))
			continue;
		cli_sort_key *x = &k[m++];
		x->idx = j;
		switch (c->sort) {
		case SORT_NAME: x->name = mo->display; break;
		case SORT_SIZE: x->num = mo->remote ? INT64_MIN : mo->m.size; break;
		case SORT_MODIFIED: x->num = oa_stat_mtime_ns(&mo->st); break;
		case SORT_LAST_USED: x->num = cli_last_used_ns(c, s, &j, 1); break;
		case SORT_UNIQUE:
			for (size_t r = 0; r < du.n_rows; r++)
				for (size_t q = 0; q < du.rows[r].n_models; q++)
					if (du.rows[r].models[q] == j)
						x->num = (int64_t)du.rows[r].unique;
			break;
		default: break;
		}
	}
	if (have_du)
		oa_du_free(&du);
	cli_sort_keys(k, m);
	size_t *v = oa_xcalloc(m + 1, sizeof *v);
	for (size_t i = 0; i < m; i++)
		v[i] = k[i].idx;
	free(k);
	*n = m;
	return v;
}

typedef struct row {
	char *cell[10];
} row;

/* Combined totals over the stores listed: models shown, Ollama's SIZE
 * summed (declared bytes, as ollama list adds them), and the allocated bytes
 * of the distinct blob files the listed models use, store by store. */
typedef struct list_total {
	size_t stores, models;
	uint64_t size, disk;
} list_total;

static list_total totals(const cli *c, const opened_store *st, size_t n)
{
	list_total t = { 0, 0, 0, 0 };
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		t.stores++;
		bool *sel = oa_xcalloc(st[i].s.n_models + 1, sizeof *sel);
		for (size_t j = 0; j < st[i].s.n_models; j++) {
			const oa_model *m = &st[i].s.models[j];
			if (!selected(c, &st[i].s, m))
				continue;
			sel[j] = true;
			t.models++;
			t.size += m->m.size > 0 && !m->remote ? (uint64_t)m->m.size : 0;
		}
		t.disk += oa_store_models_disk_bytes(&st[i].s, sel);
		free(sel);
	}
	return t;
}

static void print_table(cli *c, opened_store *st, size_t n)
{
	/* SIZE and PARAMS read better right-aligned, but ollama list aligns
	 * every column left: so do we. */
	static const char *head[10] = { "NAME", "ID", "SIZE", "MODIFIED", "FORMAT", "RUNNER",
	                                "ARCH", "PARAMS", "QUANT", "LAST USED" };
	/* LAST USED only when some store has server logs (docs/history.md). */
	int ncol = 9;
	for (size_t i = 0; i < n; i++)
		if (st[i].ok && cli_usage_of(c, &st[i].s)->have_logs)
			ncol = 10;
	size_t width[10];
	for (int k = 0; k < ncol; k++)
		width[k] = strlen(head[k]);
	row *rows = NULL;
	size_t nrows = 0;
	int64_t now = oa_wall_now_ns();
	size_t n_open = 0;
	for (size_t i = 0; i < n; i++)
		n_open += st[i].ok;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		if (n_open > 1) {
			/* a section header row per store */
			rows = oa_xreallocarray(rows, nrows + 1, sizeof *rows);
			memset(&rows[nrows], 0, sizeof rows[nrows]);
			rows[nrows++].cell[0] = oa_xasprintf("# %s", s->root);
		}
		size_t n_sel;
		size_t *order = list_order(c, s, &n_sel);
		for (size_t o = 0; o < n_sel; o++) {
			size_t j = order[o];
			const oa_model *m = &s->models[j];
			char size[32], mod[64];
			/* ollama list prints "-" for any model /api/tags gives a
			 * remote_model, remote or not */
			if (m->remote || (m->config_state == OA_CONFIG_OK && *m->cfg.remote_model))
				snprintf(size, sizeof size, "-");
			else
				size_cell(c, m->m.size, size, sizeof size);
			oa_human_age(oa_age_ns(oa_stat_mtime_ns(&m->st), now), mod, sizeof mod);
			rows = oa_xreallocarray(rows, nrows + 1, sizeof *rows);
			row *r = &rows[nrows++];
			r->cell[0] = oa_escape(m->display, strlen(m->display));
			r->cell[1] = oa_xasprintf("%.12s", m->m.id);
			r->cell[2] = oa_xstrdup(size);
			r->cell[3] = oa_xstrdup(mod);
			r->cell[4] = oa_xstrdup(m->manifest_ok ? oa_format_name(m->format) : "invalid");
			r->cell[5] = oa_xstrdup(m->manifest_ok ? oa_runner_name(m->runner) : "-");
			r->cell[6] = oa_escape(m->arch ? m->arch : "-", strlen(m->arch ? m->arch : "-"));
			r->cell[7] = oa_escape(m->params ? m->params : "-", strlen(m->params ? m->params : "-"));
			r->cell[8] = oa_escape(m->quant ? m->quant : "-", strlen(m->quant ? m->quant : "-"));
			r->cell[9] = ncol > 9 ? cli_last_used_text(c, s, &j, 1, now) : NULL;
			for (int k = 0; k < ncol; k++)
				if (cli_text_width(r->cell[k]) > width[k])
					width[k] = cli_text_width(r->cell[k]);
		}
		free(order);
	}
	bool any_store = false;
	for (size_t i = 0; i < n; i++)
		any_store |= st[i].ok;
	if (!any_store) {
		free(rows);
		return; /* the error said it; an empty table would only add noise */
	}
	/* ollama list pads its table columns with four spaces (tablewriter's
	 * table padding in cmd.ListHandler). On a narrow terminal NAME gives way. */
	size_t rest = 0;
	for (int k = 1; k < ncol; k++)
		rest += strlen(COL_PAD) + width[k];
	width[0] = cli_name_width(width[0], rest + strlen(COL_PAD));
	if (!c->no_header)
		for (int k = 0; k < ncol; k++) {
			cli_put_cell(stdout, head[k], k == ncol - 1 ? 0 : width[k], false);
			fputs(k == ncol - 1 ? "\n" : COL_PAD, stdout);
		}
	for (size_t r = 0; r < nrows; r++) {
		if (!rows[r].cell[1]) {
			printf("%s\n", rows[r].cell[0]);
			free(rows[r].cell[0]);
			continue;
		}
		for (int k = 0; k < ncol; k++) {
			char *cell = k == 0 ? cli_fit(rows[r].cell[k], width[k]) : rows[r].cell[k];
			cli_put_cell(stdout, cell, k == ncol - 1 ? 0 : width[k], false);
			fputs(k == ncol - 1 ? "\n" : COL_PAD, stdout);
			if (k == 0)
				free(cell);
			free(rows[r].cell[k]);
		}
	}
	free(rows);
	if (n_open > 1) {
		list_total t = totals(c, st, n);
		char size[32], disk[32];
		oa_format_size(t.size, c->units, size, sizeof size);
		oa_format_size(t.disk, c->units, disk, sizeof disk);
		printf("# all %zu stores: %zu models, SIZE %s, %s on disk\n", t.stores, t.models, size, disk);
	}
}

/* -q: the names, as the table lists them, nothing else. */
static void print_names(cli *c, opened_store *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		size_t n_sel;
		size_t *order = list_order(c, &st[i].s, &n_sel);
		for (size_t o = 0; o < n_sel; o++)
			cli_print_name(st[i].s.models[order[o]].display);
		free(order);
	}
}

static void print_csv(cli *c, opened_store *st, size_t n)
{
	/* last_used, as the JSON names it, when some store has server logs
	 * (docs/history.md): the newest load, empty when the logs have none */
	bool logs = false;
	for (size_t i = 0; i < n; i++)
		logs |= st[i].ok && cli_usage_of(c, &st[i].s)->have_logs;
	printf("store,name,id,digest,size,modified_at,format,runner,arch,parameter_size,"
	       "quantization_level,layers,missing_blobs,disk_bytes,apparent_bytes,hidden_from_list%s\n",
	       logs ? ",last_used" : "");
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		size_t n_sel;
		size_t *order = list_order(c, s, &n_sel);
		for (size_t o_i = 0; o_i < n_sel; o_i++) {
			const oa_model *m = &s->models[order[o_i]];
			json_t *o = oa_report_model(s, m);
			char num[32];
			csv_field(stdout, s->root, false);
			csv_field(stdout, m->display, false);
			csv_field(stdout, json_string_value(json_object_get(o, "id")), false);
			csv_field(stdout, m->m.id, false);
			snprintf(num, sizeof num, "%lld", (long long)m->m.size);
			csv_field(stdout, num, false);
			csv_field(stdout, json_string_value(json_object_get(o, "modified_at")), false);
			csv_field(stdout, oa_format_name(m->format), false);
			csv_field(stdout, oa_runner_name(m->runner), false);
			csv_field(stdout, m->arch, false);
			csv_field(stdout, m->params, false);
			csv_field(stdout, m->quant, false);
			snprintf(num, sizeof num, "%zu", m->m.n_layers);
			csv_field(stdout, num, false);
			snprintf(num, sizeof num, "%u", m->missing_blobs);
			csv_field(stdout, num, false);
			snprintf(num, sizeof num, "%llu", (unsigned long long)m->disk_bytes);
			csv_field(stdout, num, false);
			snprintf(num, sizeof num, "%llu", (unsigned long long)m->apparent_bytes);
			csv_field(stdout, num, false);
			csv_field(stdout, m->hidden_from_list ? "true" : "false", !logs);
			if (logs) {
				size_t j = order[o_i];
				cli_usage_json(c, s, &j, 1, o);
				csv_field(stdout, json_string_value(json_object_get(o, "last_used")), true);
			}
			json_decref(o);
		}
		free(order);
	}
}

/* /api/tags: every model of every store that ollama list would show (not
 * those hidden-from-list names), newest first, as the server sorts. */
static int cmp_mtime(const void *a, const void *b)
{
	const oa_model *x = *(const oa_model *const *)a, *y = *(const oa_model *const *)b;
	if (x->st.st_mtime != y->st.st_mtime)
		return x->st.st_mtime > y->st.st_mtime ? -1 : 1;
	return 0;
}

static void print_tags(cli *c, opened_store *st, size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += st[i].ok ? st[i].s.n_models : 0;
	const oa_model **v = oa_xcalloc(total, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; st[i].ok && j < st[i].s.n_models; j++)
			if (st[i].s.models[j].manifest_ok && !st[i].s.models[j].hidden_from_list &&
			    selected(c, &st[i].s, &st[i].s.models[j]))
				v[k++] = &st[i].s.models[j];
	/* a stable sort: insertion keeps equal mtimes in walk order */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && cmp_mtime(&v[j - 1], &v[j]) > 0; j--) {
			const oa_model *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	json_t *models = json_array();
	for (size_t i = 0; i < k; i++)
		json_array_append_new(models, oa_report_tags_model(v[i]));
	json_t *root = json_object();
	json_object_set_new(root, "models", models);
	oa_json_dump_go(root, stdout);
	fputc('\n', stdout);
	json_decref(root);
	free(v);
}

static void print_json(cli *c, opened_store *st, size_t n, bool ndjson)
{
	json_t *stores = json_array();
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		json_t *so = oa_report_store(s);
		json_t *models = json_array();
		size_t n_sel;
		size_t *order = list_order(c, s, &n_sel);
		for (size_t o = 0; o < n_sel; o++) {
			size_t j = order[o];
			json_t *mo = oa_report_model(s, &s->models[j]);
			cli_usage_json(c, s, &j, 1, mo);
			if (ndjson) {
				json_t *rec = json_pack("{s:s,s:s,s:s,s:o}", "type", "model", "schema",
				                        OA_SCHEMA_LIST, "host", cli_host(),
				                        "store", oa_json_str(s->root));
				json_object_update(rec, mo);
				oa_json_dump_line(rec, stdout);
				json_decref(rec);
				json_decref(mo);
			} else {
				json_array_append_new(models, mo);
			}
		}
		free(order);
		json_t *problems = json_array();
		for (size_t j = 0; j < s->findings.n; j++) {
			if (!cli_finding_is_listing(&s->findings.v[j]))
				continue;
			json_t *fo = oa_report_finding(&s->findings.v[j]);
			if (ndjson) {
				json_t *rec = json_pack("{s:s,s:s,s:o}", "type", "problem", "host", cli_host(), "store",
				                        oa_json_str(s->root));
				json_object_update(rec, fo);
				oa_json_dump_line(rec, stdout);
				json_decref(rec);
				json_decref(fo);
			} else {
				json_array_append_new(problems, fo);
			}
		}
		json_object_set_new(so, "models", models);
		json_object_set_new(so, "problems", problems);
		if (!ndjson)
			json_array_append_new(stores, so);
		else
			json_decref(so);
	}
	list_total t = totals(c, st, n);
	json_t *total = json_pack("{s:I,s:I,s:I,s:I}", "stores", (json_int_t)t.stores, "models",
	                          (json_int_t)t.models, "size", (json_int_t)t.size, "disk_bytes",
	                          (json_int_t)t.disk);
	if (!ndjson) {
		json_t *root = json_pack("{s:s,s:o,s:o}", "schema", OA_SCHEMA_LIST,
		                         "stores", stores, "total", total);
		oa_json_dump_line(root, stdout);
		json_decref(root);
	} else {
		json_t *rec = json_pack("{s:s,s:s,s:s}", "type", "total", "schema",
		                        OA_SCHEMA_LIST, "host", cli_host());
		json_object_update(rec, total);
		oa_json_dump_line(rec, stdout);
		json_decref(rec);
		json_decref(total);
		json_decref(stores);
	}
}

int cmd_list(cli *c)
{
	if (c->n_args > 1) {
		cli_err("list takes at most one PREFIX");
		return OA_EXIT_USAGE;
	}
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_QUICK);
	/* The logs give LAST USED and --unused-for (docs/history.md). */
	for (size_t i = 0; i < n; i++)
		if (st[i].ok && cli_usage_of(c, &st[i].s) && c->unused_for >= 0 &&
		    !cli_unused_for_ready(c, &st[i].s)) {
			cli_close_stores(st, n);
			return c->exit_code;
		}
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		const oa_store *s = &st[i].s;
		for (size_t j = 0; j < s->findings.n; j++)
			if (cli_finding_is_listing(&s->findings.v[j]))
				cli_print_finding(c, stderr, &s->findings.v[j]);
		cli_account_findings(c, s, true);
	}
	switch (c->format) {
	case OUT_TAGS: print_tags(c, st, n); break;
	case OUT_CSV: print_csv(c, st, n); break;
	case OUT_JSON: print_json(c, st, n, false); break;
	case OUT_NDJSON: print_json(c, st, n, true); break;
	default:
		if (c->quiet)
			print_names(c, st, n);
		else
			print_table(c, st, n);
		break;
	}
	cli_close_stores(st, n);
	return c->exit_code;
}
