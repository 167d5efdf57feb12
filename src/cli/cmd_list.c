/* cmd_list.c - `ollama-audit list`: the models as `ollama list` shows them. */
#include "cmd_list.h"
#include "cli_machine.h"
#include "cmd_history.h"
#include "findings.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "views/csv.h"
#include "views/table.h"
#include "usage.h"
#include "ollama_audit/du.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/list_report.h"
#include "ollama_audit/model.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <stdio.h>
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

/* The selected models of a store in the order asked for (--sort); the
 * default is the store's own, newest first as ollama list sorts. */
static size_t *list_order(cli *c, oa_store *s, size_t *n)
{
	oa_sort_key *k = oa_xcalloc(s->n_models + 1, sizeof *k);
	size_t m = 0;
	oa_du du;
	bool have_du = c->sort == SORT_UNIQUE;
	if (have_du)
		oa_du_compute(s, &du);
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *mo = &s->models[j];
		if (!selected(c, s, mo))
			continue;
		oa_sort_key *x = &k[m++];
		x->idx = j;
		switch (c->sort) {
		case SORT_NAME: x->name = mo->display; break;
		case SORT_SIZE: x->num = mo->remote ? INT64_MIN : mo->m.size; break;
		case SORT_MODIFIED: x->num = mo->st.mtime_ns; break;
		case SORT_LAST_USED: x->num = cli_last_used_ns(c, s, &j, 1); break;
		case SORT_UNSERVABLE: x->num = mo->unservable ? 1 : 0; break; /* then the store's order */
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
	oa_sort_keys(k, m);
	size_t *v = oa_xcalloc(m + 1, sizeof *v);
	for (size_t i = 0; i < m; i++)
		v[i] = k[i].idx;
	free(k);
	*n = m;
	return v;
}

/* Which models of a store are listed (the prefix, --unused-for). */
static bool *selection(const cli *c, const oa_store *s)
{
	bool *sel = oa_xcalloc(s->n_models + 1, sizeof *sel);
	for (size_t j = 0; j < s->n_models; j++)
		sel[j] = selected(c, s, &s->models[j]);
	return sel;
}

static oa_list_total totals(const cli *c, const opened_store *st, size_t n)
{
	oa_list_total t = { 0, 0, 0, 0 };
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		bool *sel = selection(c, &st[i].s);
		oa_list_total_add(&t, &st[i].s, sel);
		free(sel);
	}
	return t;
}

/* The SHADOW OF column: the last one when a compatibility shadow is
 * listed, else 0. */
static size_t shadow_col(const oa_table *tb)
{
	return strcmp(tb->col[tb->ncol - 1].head, "SHADOW OF") == 0 ? tb->ncol - 1 : 0;
}

static char *escaped_or_dash(const char *s)
{
	return oa_escape(s ? s : "-", strlen(s ? s : "-"));
}

static void model_row(cli *c, oa_table *tb, const oa_store *s, size_t j, int64_t now)
{
	const oa_model *m = &s->models[j];
	char size[32], mod[64];
	/* ollama list prints "-" for any model /api/tags gives a remote_model,
	 * remote or not */
	if (m->remote || (m->config_state == OA_CONFIG_OK && *m->cfg.remote_model))
		snprintf(size, sizeof size, "-");
	else
		size_cell(c, m->m.size, size, sizeof size);
	oa_human_age(oa_age_ns(m->st.mtime_ns, now), mod, sizeof mod);
	size_t shadow = shadow_col(tb);
	char *cell[11] = {
		oa_escape(m->display, strlen(m->display)),
		oa_xasprintf("%.12s", m->m.id),
		oa_xstrdup(size),
		oa_xstrdup(mod),
		oa_xstrdup(m->manifest_ok ? oa_format_name(m->format) : "invalid"),
		/* "*": the child a load uses, when the tag lists several */
		m->manifest_ok ? oa_xasprintf("%s%s", oa_model_list_runner(m), oa_model_row_in_use(m) ? "*" : "")
		               : oa_xstrdup("-"),
		escaped_or_dash(m->arch),
		escaped_or_dash(m->params),
		escaped_or_dash(m->quant),
		tb->ncol > 9 && shadow != 9 ? cli_last_used_text(c, s, &j, 1, now) : NULL,
	};
	if (shadow) /* the tag whose converted child a llamacpp:<hex> shadow keeps */
		cell[shadow] = oa_xstrdup(!m->shadow ? "-" : m->shadow_of ? m->shadow_of : "(gone)");
	oa_table_add(tb, cell);
}

static void table_fill(cli *c, oa_table *tb, opened_store *st, size_t n, size_t n_open)
{
	int64_t now = oa_wall_now_ns();
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		if (n_open > 1)
			oa_table_line(tb, oa_xasprintf("# %s", s->root)); /* a section header row per store */
		size_t n_sel;
		size_t *order = list_order(c, s, &n_sel);
		for (size_t o = 0; o < n_sel; o++)
			model_row(c, tb, s, order[o], now);
		free(order);
	}
}

static void print_table(cli *c, opened_store *st, size_t n)
{
	/* SIZE and PARAMS read better right-aligned, but ollama list aligns
	 * every column left: so do we. On a narrow terminal the columns beyond
	 * OA_PRIORITY_CORE (all but what `ollama list` shows) go first when
	 * that keeps names whole; else NAME keeps 24 columns while SHADOW OF,
	 * RUNNER, ARCH, PARAMS, QUANT, FORMAT and ID give way, in that order. */
	static const oa_column all[11] = {
		{ "NAME", 0, 24, false },   { "ID", 3, 0, false },     { "SIZE", 1, 0, false },
		{ "MODIFIED", 2, 0, false }, { "FORMAT", 4, 0, false }, { "RUNNER", 8, 0, false },
		{ "ARCH", 7, 0, false },    { "PARAMS", 6, 0, false }, { "QUANT", 5, 0, false },
		{ "LAST USED", 2, 0, false },
	};
	oa_column cols[11];
	memcpy(cols, all, sizeof cols);
	/* ollama list pads its table columns with four spaces (tablewriter's
	 * table padding in cmd.ListHandler). */
	oa_table tb = { .col = cols, .ncol = 9, .gap = "    " };
	size_t n_open = 0;
	bool shadows = false;
	for (size_t i = 0; i < n; i++) {
		n_open += st[i].ok;
		/* LAST USED only when some store has server logs (docs/history.md). */
		if (st[i].ok && cli_usage_of(c, &st[i].s)->have_logs)
			tb.ncol = 10;
		for (size_t j = 0; st[i].ok && j < st[i].s.n_models; j++)
			shadows |= st[i].s.models[j].shadow && selected(c, &st[i].s, &st[i].s.models[j]);
	}
	if (shadows) /* dropped first on a narrow terminal */
		cols[tb.ncol++] = (oa_column){ "SHADOW OF", 9, 0, false };
	if (!n_open)
		return; /* the error said it; an empty table would only add noise */
	table_fill(c, &tb, st, n, n_open);
	cli_table_print(c, &tb, stdout);
	if (n_open > 1) {
		oa_list_total t = totals(c, st, n);
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
	FILE *out = cli_text_out();
	/* last_used, as the JSON names it, when some store has server logs
	 * (docs/history.md): the newest load, empty when the logs have none */
	bool logs = false;
	for (size_t i = 0; i < n; i++)
		logs |= st[i].ok && cli_usage_of(c, &st[i].s)->have_logs;
	fprintf(out, "store,name,id,digest,size,modified_at,format,runner,arch,parameter_size,"
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
			oa_last_used lu = cli_last_used(c, s);
			json_t *o = oa_list_view_model(s, order[o_i], logs ? &lu : NULL);
			char num[32];
			oa_csv_field(out, s->root, false);
			oa_csv_field(out, m->display, false);
			oa_csv_field(out, json_string_value(json_object_get(o, "id")), false);
			oa_csv_field(out, m->m.id, false);
			snprintf(num, sizeof num, "%lld", (long long)m->m.size);
			oa_csv_field(out, num, false);
			oa_csv_field(out, json_string_value(json_object_get(o, "modified_at")), false);
			oa_csv_field(out, oa_format_name(m->format), false);
			oa_csv_field(out, oa_model_list_runner(m), false);
			oa_csv_field(out, m->arch, false);
			oa_csv_field(out, m->params, false);
			oa_csv_field(out, m->quant, false);
			snprintf(num, sizeof num, "%zu", m->m.n_layers);
			oa_csv_field(out, num, false);
			snprintf(num, sizeof num, "%u", m->missing_blobs);
			oa_csv_field(out, num, false);
			snprintf(num, sizeof num, "%llu", (unsigned long long)m->disk_bytes);
			oa_csv_field(out, num, false);
			snprintf(num, sizeof num, "%llu", (unsigned long long)m->apparent_bytes);
			oa_csv_field(out, num, false);
			oa_csv_field(out, m->hidden_from_list ? "true" : "false", !logs);
			if (logs)
				oa_csv_field(out, json_string_value(json_object_get(o, "last_used")), true);
			json_decref(o);
		}
		free(order);
	}
}

/* /api/tags: every model of every store that ollama list would show (not
 * those hidden-from-list names), newest first, as the server sorts. */
static void print_tags(cli *c, opened_store *st, size_t n)
{
	FILE *out = cli_text_out();
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
	json_t *root = oa_list_view_tags(v, k);
	oa_json_dump_go(root, out);
	fputc('\n', out);
	json_decref(root);
	free(v);
}

/* A store's view of the models listed and the problems that affect the
 * listing, in the caller's storage. */
static void list_store(cli *c, oa_store *s, oa_list_store *ls, oa_last_used *lu)
{
	*lu = cli_last_used(c, s);
	const oa_finding **problems = oa_xcalloc(s->findings.n + 1, sizeof *problems);
	size_t np = 0;
	for (size_t j = 0; j < s->findings.n; j++)
		if (cli_finding_is_listing(&s->findings.v[j]))
			problems[np++] = &s->findings.v[j];
	ls->s = s;
	ls->models = list_order(c, s, &ls->n_models);
	ls->problems = problems;
	ls->n_problems = np;
	ls->lu = lu;
}

static void print_json(cli *c, opened_store *st, size_t n, bool ndjson)
{
	json_t *stores = json_array();
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_list_store ls;
		oa_last_used lu;
		list_store(c, &st[i].s, &ls, &lu);
		if (ndjson) {
			json_t *recs = oa_list_view_records(&ls, cli_host());
			oa_json_dump_lines(recs, stdout);
			json_decref(recs);
		} else {
			json_array_append_new(stores, oa_list_view_store(&ls));
		}
		free((void *)ls.models);
		free((void *)ls.problems);
	}
	oa_list_total t = totals(c, st, n);
	if (ndjson)
		cli_put_record(oa_list_view_total_record(&t, cli_host()));
	else
		cli_emit_document(c, oa_list_view_document(json_incref(stores), &t));
	json_decref(stores);
}

/* What every format of `list` renders (the slots in commands.c). */
typedef struct list_view {
	opened_store *st;
	size_t n;
} list_view;

void list_render_table(cli *c, const void *view)
{
	const list_view *v = view;
	if (c->quiet)
		print_names(c, v->st, v->n);
	else
		print_table(c, v->st, v->n);
}

void list_render_json(cli *c, const void *view)
{
	const list_view *v = view;
	print_json(c, v->st, v->n, false);
}

void list_render_ndjson(cli *c, const void *view)
{
	const list_view *v = view;
	print_json(c, v->st, v->n, true);
}

void list_render_csv(cli *c, const void *view)
{
	const list_view *v = view;
	print_csv(c, v->st, v->n);
}

void list_render_tags(cli *c, const void *view)
{
	const list_view *v = view;
	print_tags(c, v->st, v->n);
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
	cli_render(c, &(list_view){ .st = st, .n = n });
	cli_close_stores(st, n);
	return c->exit_code;
}
