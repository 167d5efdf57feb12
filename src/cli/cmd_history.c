/* cmd_history.c - `ollama-audit history`: the model loads the server's logs
 * recorded, newest first, and per model its last load (docs/history.md). */
#include "cli_machine.h"
#include "cmd_history.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "views/csv.h"
#include "report_common.h"
#include "views/table.h"
#include "usage.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/history.h"
#include "ollama_audit/history_report.h"
#include "ollama_audit/log_usage.h"
#include "ollama_audit/logsrc.h"
#include "ollama_audit/manifest_list.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HISTORY_SCHEMA OA_SCHEMA_HISTORY

/* Says on stderr which logs a store's loads come from: a log of another
 * store read by mistake shows up here, not as silently wrong times. */
static void say_sources(const oa_store *s, const oa_log_sources *l, const char *what)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < l->n; i++)
		oa_buf_printf(&b, "%s%s", i ? ", " : "", oa_text_safe(l->names[i]));
	fprintf(stderr, "ollama-audit: %s: %s %s\n", oa_text_safe(s->root), what, b.data);
	oa_buf_free(&b);
}

/* Standard input can be read once. `history` of one store parses it as it
 * comes, in bounded memory; otherwise (several stores, list/du/rm reading
 * the logs per store) it is first copied to an unnamed temporary file
 * (tmpfile()) that each store reads. */
static struct {
	bool shared;   /* more than one store may read it */
	bool used, failed;
	FILE *spool;
} in = { .shared = true };

static FILE *spool_stdin(void)
{
	FILE *f = tmpfile();
	if (!f)
		return NULL;
	char chunk[65536];
	for (;;) {
		ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || fwrite(chunk, 1, (size_t)got, f) != (size_t)got) {
			int e = got < 0 ? errno : EIO;
			if (got == 0 && fflush(f) == 0)
				return f;
			fclose(f);
			errno = e;
			return NULL;
		}
	}
}

static int read_stdin(oa_history *h)
{
	if (in.failed)
		return -1;
	int fd = STDIN_FILENO;
	if (in.shared) {
		if (!in.used)
			in.spool = spool_stdin();
		if (!in.spool || lseek(fileno(in.spool), 0, SEEK_SET) < 0)
			fd = -1;
		else
			fd = fileno(in.spool);
	} else if (in.used) {
		errno = EBADF; /* read already: cannot happen with one store */
		fd = -1;
	}
	in.used = true;
	if (fd < 0 || oa_history_read_fd(h, fd, "(stdin)") < 0) {
		in.failed = true;
		return -1;
	}
	return 0;
}

/* Read what the options name, else what lies beside the store and the
 * journal. Problems are reported; returns false when a named source failed. */
static bool read_sources(cli *c, const oa_store *s, oa_history *h, oa_log_sources *used, bool report)
{
	char err[512];
	bool ok = true;
	for (size_t i = 0; i < c->n_logs; i++) {
		if (strcmp(c->logs[i], "-") == 0) {
			if (read_stdin(h) < 0) {
				if (report)
					cli_err("standard input: %s", strerror(errno));
				ok = false;
				continue;
			}
			oa_log_sources_add(used, "(stdin)");
		} else if (oa_logs_read_file(h, c->logs[i], false, err, sizeof err) < 0) {
			if (report)
				cli_err("%s", err);
			ok = false;
		} else {
			oa_log_sources_add(used, c->logs[i]);
		}
	}
	/* --log names the sources; --root asks for that system's journal too. */
	if (c->n_logs && !c->root)
		return ok;
	if (!c->n_logs)
		ok &= oa_logs_read_store_files(h, s->root, used);
	for (size_t i = 0; report && i < used->n_problems; i++)
		cli_err("%s", used->problems[i]);
	/* The tests' fake machine (OLLAMA_AUDIT_SYSROOT, docs/multi-store.md) has
	 * its own journal, as it has its own /etc. The machine's journal is read
	 * for the stores its service served; --root names the journal to read. */
	const char *sysroot = getenv("OLLAMA_AUDIT_SYSROOT");
	const char *root = c->root ? c->root : sysroot && *sysroot ? sysroot : NULL;
	long got = oa_logs_read_journal(h, root, "ollama.service", c->root ? NULL : s->root, err, sizeof err);
	if (got > 0) {
		oa_log_sources_add(used, c->root ? "journal (--root)" : "journal");
	} else if (c->root && report) {
		cli_err("--root %s: %s", c->root, got < 0 ? err : "no ollama.service entries in its journal");
		ok = false;
	}
	return ok;
}

/* --since / --until: an RFC 3339 time, a date (UTC midnight) or a duration
 * before now. */
static int parse_when(const char *s, int64_t now_ns, int64_t *out)
{
	size_t n = strlen(s);
	int tz;
	if (n && oa_log_parse_time(s, n, out, &tz) == n)
		return 0;
	if (n == 10) {
		char t[32];
		snprintf(t, sizeof t, "%sT00:00:00Z", s);
		if (oa_log_parse_time(t, strlen(t), out, &tz) == strlen(t))
			return 0;
	}
	double secs;
	if (oa_parse_duration(s, &secs) == 0) {
		*out = now_ns - (int64_t)(secs * 1e9);
		return 0;
	}
	return -1;
}

/* 2026-10-22 09:15:02-07:00: the time in the zone the server logged it in. */
static void local_time(const oa_load *e, char *buf, size_t len)
{
	if (!e->has_time) {
		snprintf(buf, len, "-");
		return;
	}
	time_t t = (time_t)(e->time_ns / 1000000000 + (int64_t)e->tz_min * 60);
	struct tm tm;
	gmtime_r(&t, &tm);
	int off = e->tz_min < 0 ? -e->tz_min : e->tz_min;
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, e->tz_min < 0 ? '-' : '+', off / 60, off % 60);
}

static void utc_time(int64_t ns, char *buf, size_t len)
{
	oa_iso8601((time_t)(ns / 1000000000), (long)(ns % 1000000000), buf, len);
}

static char *memory_text(cli *c, const oa_load *e)
{
	struct { const char *what; uint64_t v; } f[] = {
		{ "needed", e->mem_required }, { "peak", e->mem_peak },
		{ "gpu free", e->mem_gpu_free }, { "free", e->mem_sys_free },
	};
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		if (!f[i].v)
			continue;
		char sz[32];
		oa_format_size(f[i].v, c->units, sz, sizeof sz);
		oa_buf_printf(&b, "%s%s %s", b.len ? ", " : "", f[i].what, sz);
	}
	if (!b.len)
		oa_buf_adds(&b, "-");
	return oa_buf_take(&b);
}

static bool in_window(cli *c, const oa_load *e, bool has_since, int64_t since, bool has_until, int64_t until)
{
	if ((has_since || has_until) && !e->has_time)
		return false;
	return !(has_since && e->time_ns < since) && !(has_until && e->time_ns > until);
}

static bool load_selected(cli *c, const oa_store *s, const oa_load *e)
{
	if (!c->n_args)
		return true;
	for (size_t i = 0; i < e->n_models; i++)
		if (model_selected(c, s, s->models[e->models[i]].display))
			return true;
	return false;
}

static void print_table(cli *c, const oa_store *s, const oa_history *h, const oa_log_sources *src,
                        const oa_load **v, size_t n, bool first)
{
	if (!first)
		putchar('\n');
	char from[40] = "", to[40] = "";
	if (h->any_time) {
		utc_time(h->first_ns, from, sizeof from);
		utc_time(h->last_ns, to, sizeof to);
	}
	printf("%s: %zu load%s", oa_text_safe(s->root), n, n == 1 ? "" : "s");
	if (src->n)
		say_sources(s, src, "read");
	if (src->n) {
		printf(" in %zu log source%s", src->n, src->n == 1 ? "" : "s");
		if (h->any_time)
			printf(" covering %s to %s", from, to);
	} else {
		printf(": no server logs found (see `ollama-audit history --help`; --log FILE names one)");
	}
	printf("\n");
	if (!n)
		return;
	/* RESULT last: a failure's reason is the longest cell, cut first on a
	 * terminal and padding nothing after it. */
	static const oa_column load_cols[7] = {
		{ "TIME", 0, 0, false },   { "MODEL", 0, 20, false },  { "ID", 4, 0, false },
		{ "RUNNER", 3, 0, false }, { "MEMORY", 5, 0, false },  { "VERSION", 6, 0, false },
		{ "RESULT", 0, 30, false },
	};
	oa_table t = { .col = load_cols, .ncol = 7, .gap = "  " };
	for (size_t i = 0; i < n; i++) {
		char when[48], id[13];
		local_time(v[i], when, sizeof when);
		char *result = v[i]->result == OA_LOAD_FAILED && v[i]->reason ?
		               oa_xasprintf("failed: %s", v[i]->reason) :
		               oa_xstrdup(oa_load_result_name(v[i]->result));
		char *row[] = { oa_xstrdup(when), oa_history_load_label(s, v[i]), oa_xstrdup(oa_history_load_id(s, v[i], id)),
		                oa_xstrdup(oa_log_runner_name(v[i]->runner)), memory_text(c, v[i]),
		                oa_xstrdup(v[i]->version ? v[i]->version : "-"), result };
		oa_table_add(&t, row);
	}
	cli_table_print(c, &t, stdout);
	oa_history_model *sum;
	size_t k = oa_history_models(s, v, n, &sum);
	printf("\n");
	static const oa_column models[5] = {
		{ "MODEL", 0, 24, false }, { "ID", 3, 0, false },      { "LAST LOADED", 0, 0, false },
		{ "LOADS", 1, 0, false },  { "RUNNERS", 2, 0, false },
	};
	t = (oa_table){ .col = models, .ncol = 5, .gap = "  " };
	for (size_t i = 0; i < k; i++) {
		char when[48], runners[48];
		local_time(sum[i].last, when, sizeof when);
		oa_history_runners_text(sum[i].runners, runners, sizeof runners);
		char *loads = sum[i].failed ? oa_xasprintf("%zu (%zu failed)", sum[i].loads, sum[i].failed) :
		                              oa_xasprintf("%zu", sum[i].loads);
		char *row[] = { oa_xstrdup(sum[i].label), oa_xstrdup(sum[i].id), oa_xstrdup(when), loads,
		                oa_xstrdup(runners) };
		oa_table_add(&t, row);
	}
	cli_table_print(c, &t, stdout);
	oa_history_models_free(sum, k);
}

static void print_ndjson(const oa_store *s, const oa_history *h, const oa_log_sources *src, const oa_load **v,
                         size_t n)
{
	json_t *so = oa_history_store_json(s, h, src->names, src->n, v, n);
	json_t *recs = oa_history_records(s, so, cli_host());
	for (size_t i = 0; i < json_array_size(recs); i++)
		oa_json_dump_line(json_array_get(recs, i), stdout);
	json_decref(recs);
	json_decref(so);
}

static void print_csv(cli *c, const oa_store *s, const oa_load **v, size_t n, bool first)
{
	FILE *out = cli_text_out();
	if (first)
		fputs("store,time,model,id,runner,result,reason,memory_required,memory_peak,gpu_free,"
		      "system_free,server_version,source,line\n", out);
	for (size_t i = 0; i < n; i++) {
		const oa_load *e = v[i];
		char when[48] = "", id[13], num[5][24], line[24];
		if (e->has_time)
			utc_time(e->time_ns, when, sizeof when);
		uint64_t mem[5] = { e->mem_required, e->mem_peak, e->mem_gpu_free, e->mem_sys_free, 0 };
		for (size_t k = 0; k < 4; k++)
			if (mem[k])
				snprintf(num[k], sizeof num[k], "%llu", (unsigned long long)mem[k]);
			else
				num[k][0] = '\0';
		snprintf(line, sizeof line, "%lu", e->line);
		char *label = oa_history_load_label(s, e);
		oa_csv_field(out, s->root, false);
		oa_csv_field(out, when, false);
		oa_csv_field(out, label, false);
		oa_csv_field(out, oa_history_load_id(s, e, id), false);
		oa_csv_field(out, oa_log_runner_name(e->runner), false);
		oa_csv_field(out, oa_load_result_name(e->result), false);
		oa_csv_field(out, e->reason, false);
		for (size_t k = 0; k < 4; k++)
			oa_csv_field(out, num[k], false);
		oa_csv_field(out, e->version, false);
		oa_csv_field(out, e->source, false);
		oa_csv_field(out, line, true);
		free(label);
	}
	(void)c;
}

/* What every format of `history` renders, once per store (the slots in
 * commands.c): the loads selected, v[0..n). */
typedef struct history_view {
	const oa_store *s;
	const oa_history *h;
	const oa_log_sources *src;
	const oa_load **v;
	size_t n;
	bool first;
} history_view;

void history_render_table(cli *c, const void *view)
{
	const history_view *x = view;
	print_table(c, x->s, x->h, x->src, x->v, x->n, x->first);
}

/* One document, {"schema":..., "stores":[...]}, a store at a time. */
void history_render_json(cli *c, const void *view)
{
	const history_view *x = view;
	cli_emit_store(c, HISTORY_SCHEMA, oa_history_store_json(x->s, x->h, x->src->names, x->src->n, x->v, x->n));
}

void history_render_ndjson(cli *c, const void *view)
{
	(void)c;
	const history_view *x = view;
	print_ndjson(x->s, x->h, x->src, x->v, x->n);
}

void history_render_csv(cli *c, const void *view)
{
	const history_view *x = view;
	print_csv(c, x->s, x->v, x->n, x->first);
}

/* --since / --until, parsed. */
typedef struct window {
	bool has_since, has_until;
	int64_t since, until;
} window;

/* One store's history, in the chosen format. */
static void history_store(cli *c, oa_store *s, const window *w, bool first)
{
	oa_history h;
	oa_history_init(&h);
	oa_log_sources src = { 0 };
	if (!read_sources(c, s, &h, &src, first))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	for (size_t i = 0; first && i < h.n_warnings; i++)
		fprintf(stderr, "ollama-audit: warning: %s\n", oa_text_safe(h.warnings[i]));
	if (first && h.warnings_dropped)
		fprintf(stderr, "ollama-audit: warning: %zu more lines could not be read\n", h.warnings_dropped);
	oa_history_match(&h, s);
	const oa_load **v = oa_xcalloc(h.n ? h.n : 1, sizeof *v);
	size_t k = 0;
	for (size_t j = 0; j < h.n; j++)
		if (in_window(c, &h.v[j], w->has_since, w->since, w->has_until, w->until) &&
		    load_selected(c, s, &h.v[j]))
			v[k++] = &h.v[j];
	cli_render(c, &(history_view){ .s = s, .h = &h, .src = &src, .v = v, .n = k, .first = first });
	free(v);
	oa_log_sources_free(&src);
	oa_history_free(&h);
}

int cmd_history(cli *c)
{
	if (c->format == OUT_TAGS || c->format == OUT_PROMETHEUS) {
		cli_err("history takes --format table, json, ndjson or csv");
		return OA_EXIT_USAGE;
	}
	int64_t now = oa_wall_now_ns();
	window w = { .has_since = c->since != NULL, .has_until = c->until != NULL };
	if ((w.has_since && parse_when(c->since, now, &w.since) < 0) ||
	    (w.has_until && parse_when(c->until, now, &w.until) < 0)) {
		cli_err("--since/--until take an RFC 3339 time (2026-10-22T09:15:02Z), a date (2026-10-22) "
		        "or a duration ago: %s; not '%s'", OA_DURATION_GRAMMAR,
		        w.has_since && parse_when(c->since, now, &w.since) < 0 ? c->since : c->until);
		return OA_EXIT_USAGE;
	}
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	size_t readable = 0;
	for (size_t i = 0; i < n; i++)
		readable += st[i].ok;
	in.shared = readable > 1;
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok || (c->n_args && !check_args_resolve(c, &st[i].s)))
			continue;
		history_store(c, &st[i].s, &w, first);
		first = false;
	}
	if (c->format == OUT_JSON) /* no store reported: an empty document */
		cli_emit_store(c, HISTORY_SCHEMA, NULL);
	if (in.spool)
		fclose(in.spool);
	cli_close_stores(st, n);
	return c->exit_code;
}
/* The logs' record of use for list, du and rm: read once per store. */
typedef struct usage_entry {
	const oa_store *s;
	cli_usage u;
} usage_entry;

static usage_entry *usage_cache;
static size_t usage_n;

static const cli_usage *usage_cached(const oa_store *s)
{
	for (size_t i = 0; i < usage_n; i++)
		if (usage_cache[i].s == s)
			return &usage_cache[i].u;
	return NULL;
}

const cli_usage *cli_usage_of(cli *c, const oa_store *s)
{
	const cli_usage *known = usage_cached(s);
	if (known)
		return known;
	usage_cache = oa_xreallocarray(usage_cache, usage_n + 1, sizeof *usage_cache);
	usage_entry *e = &usage_cache[usage_n++];
	memset(e, 0, sizeof *e);
	e->s = s;
	oa_history h;
	oa_history_init(&h);
	oa_log_sources src = { 0 };
	if (!read_sources(c, s, &h, &src, true))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	/* Matching only reads the store (the blobs a tag reaches). */
	oa_history_match(&h, (oa_store *)s);
	if (src.n && c->format == OUT_TABLE && (strcmp(c->cmd, "list") == 0 || strcmp(c->cmd, "du") == 0))
		say_sources(s, &src, "LAST USED from");
	oa_log_usage_of(&e->u, &h, s, src.names, src.n); /* takes the names */
	oa_free_names(src.problems, src.n_problems);
	oa_history_free(&h);
	return &e->u;
}

bool cli_model_unused(const cli *c, const oa_store *s, size_t idx)
{
	int64_t cutoff = oa_wall_now_ns() - (int64_t)(c->unused_for * 1e9);
	return oa_log_usage_unused(usage_cached(s), s, idx, cutoff);
}

bool cli_unused_for_ready(cli *c, const oa_store *s)
{
	const cli_usage *u = cli_usage_of(c, s);
	if (!u->have_logs) {
		cli_err("%s: --unused-for needs the server's logs and none were found (server*.log beside "
		        "the store, the journal, or --log FILE): nothing is taken as unused", s->root);
		c->exit_code |= OA_EXIT_OPERATIONAL;
		return false;
	}
	char from[48] = "?", to[48] = "?";
	if (u->logs_known) {
		utc_time(u->logs_from, from, sizeof from);
		utc_time(u->logs_to, to, sizeof to);
	}
	/* Never loaded means: not in the logs we have. */
	fprintf(stderr, "ollama-audit: %s: the logs go back to %s (newest line %s): a model not loaded "
	        "in them is taken as unused\n", oa_text_safe(s->root), from, to);
	return true;
}

void cli_usage_release(void)
{
	for (size_t i = 0; i < usage_n; i++)
		oa_log_usage_free(&usage_cache[i].u);
	free(usage_cache);
	usage_cache = NULL;
	usage_n = 0;
}

/* The newest load of any of the models; false when none is in the logs. */
static bool newest_load(const cli_usage *u, const size_t *models, size_t n, int64_t *ns)
{
	oa_last_used lu = cli_usage_last_used(u);
	return oa_last_used_newest(&lu, models, n, ns);
}

char *cli_last_used_text(const cli *c, const oa_store *s, const size_t *models, size_t n, int64_t now_ns)
{
	const cli_usage *u = usage_cached(s);
	int64_t last = 0;
	if (!u || !u->have_logs)
		return oa_xstrdup("-");
	if (!newest_load(u, models, n, &last))
		return oa_xstrdup("never");
	char age[64];
	oa_human_age(oa_age_ns(last, now_ns), age, sizeof age);
	(void)c;
	return oa_xstrdup(age);
}

void cli_log_findings(cli *c, oa_store *s)
{
	oa_history h;
	oa_history_init(&h);
	oa_log_sources src = { 0 };
	if (!read_sources(c, s, &h, &src, true))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	oa_history_match(&h, s);
	oa_history_findings(&h, s);
	oa_log_sources_free(&src);
	oa_history_free(&h);
}

int64_t cli_last_used_ns(cli *c, const oa_store *s, const size_t *models, size_t n)
{
	int64_t last;
	return newest_load(cli_usage_of(c, s), models, n, &last) ? last : INT64_MIN;
}
