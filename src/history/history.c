/*
 * history.c - fold log lines into load events (history.h).
 *
 * A load is told over several lines whose order changed across versions:
 * memory figures before the runner start (2024-2025) or after it (late
 * 2025 on), a model hint before the start (0.3x llama-server), then a
 * result line or none. So one load stays open from its start until its
 * result, the next start, or a server restart.
 */
#include "ollama_audit/history.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_CUT (1u << 20)
#define PRE_WINDOW_NS (120 * (int64_t)1000000000)
/* Lines telling of one failure come within this of each other. */
#define SAME_FAILURE_NS (10 * (int64_t)1000000000)

const char *oa_load_result_name(enum oa_load_result r)
{
	switch (r) {
	case OA_LOAD_OK: return "ok";
	case OA_LOAD_FAILED: return "failed";
	default: return "unknown";
	}
}

void oa_history_init(oa_history *h)
{
	memset(h, 0, sizeof *h);
	h->open = h->last = -1;
}

void oa_history_free(oa_history *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].logged);
		free(h->v[i].reason);
		free(h->v[i].version);
		free(h->v[i].source);
		free(h->v[i].models);
	}
	free(h->v);
	oa_free_names(h->warnings, h->n_warnings);
	free(h->src);
	free(h->version);
	free(h->started_version);
	oa_history_init(h);
}

static void warn(oa_history *h, unsigned long lineno, const char *what)
{
	if (h->n_warnings >= OA_HISTORY_WARN_MAX) {
		h->warnings_dropped++;
		return;
	}
	OA_ALLOC_GROW(h->warnings, h->n_warnings + 1, h->warn_cap);
	h->warnings[h->n_warnings++] = oa_xasprintf("%s:%lu: %s", h->src ? h->src : "?", lineno, what);
}

void oa_history_begin(oa_history *h, const char *source)
{
	free(h->src);
	free(h->version);
	h->src = oa_xstrdup(source);
	h->version = NULL;
	h->open = h->last = -1;
	h->open_started = false;
	memset(&h->pre, 0, sizeof h->pre);
	h->n_sources++;
}

void oa_history_end(oa_history *h)
{
	h->open = -1;
}

/* Memory figures go to the open load when it lacks them, else wait for the
 * next load: both orders occur. */
static void take_memory(oa_load *e, oa_log_line *m)
{
#define TAKE(f) do { if (m->f && !e->f) { e->f = m->f; m->f = 0; } } while (0)
	TAKE(mem_required);
	TAKE(mem_sys_total);
	TAKE(mem_sys_free);
	TAKE(mem_gpu_free);
	TAKE(mem_peak);
#undef TAKE
}

static void keep_memory(oa_log_line *pre, const oa_log_line *l)
{
	pre->has_time = l->has_time;
	pre->time_ns = l->time_ns;
#define KEEP(f) do { if (l->f) pre->f = l->f; } while (0)
	KEEP(mem_required);
	KEEP(mem_sys_total);
	KEEP(mem_sys_free);
	KEEP(mem_gpu_free);
	KEEP(mem_peak);
#undef KEEP
}

static oa_load *new_load(oa_history *h, const oa_log_line *l, unsigned long lineno)
{
	OA_ALLOC_GROW(h->v, h->n + 1, h->cap);
	oa_load *e = &h->v[h->n];
	memset(e, 0, sizeof *e);
	e->has_time = l->has_time;
	e->time_ns = l->time_ns;
	e->tz_min = l->tz_min;
	e->runner = l->runner;
	e->logged = oa_xstrdup(l->model);
	memcpy(e->digest, l->digest, sizeof e->digest);
	e->version = h->version ? oa_xstrdup(h->version) : NULL;
	e->source = oa_xstrdup(h->src ? h->src : "?");
	e->line = lineno;
	/* Figures logged just before the start are the load's; ones from long
	 * before (a server start, a load that left no start line) are not. */
	if (!(h->pre.has_time && l->has_time && l->time_ns - h->pre.time_ns > PRE_WINDOW_NS))
		take_memory(e, &h->pre);
	memset(&h->pre, 0, sizeof h->pre);
	h->open = h->last = (long)h->n;
	h->open_started = false;
	return &h->v[h->n++];
}

/* Does a runner start continue the open load (announced by a hint) rather
 * than begin another? */
static bool continues_open(const oa_history *h, const oa_log_line *l)
{
	if (h->open < 0 || h->open_started)
		return false;
	const oa_load *e = &h->v[h->open];
	return e->runner == l->runner && (!*l->digest || !*e->digest || strcmp(l->digest, e->digest) == 0);
}

/* Is a failure line (with no load open) a further word on the load that
 * failed last, rather than a failure of its own? Same blob (when the line
 * names one), within seconds. */
static bool same_failure(const oa_history *h, const oa_log_line *l)
{
	if (h->last < 0)
		return false;
	const oa_load *e = &h->v[h->last];
	if (e->result != OA_LOAD_FAILED)
		return false;
	if (*l->digest && *e->digest && strcmp(l->digest, e->digest) != 0)
		return false;
	if (!e->has_time || !l->has_time)
		return false;
	return l->time_ns >= e->failed_ns && l->time_ns - e->failed_ns <= SAME_FAILURE_NS;
}

/* The newest server start the logs show: by time; a start without one
 * counts only while no timed one is known. */
static void note_start(oa_history *h, const oa_log_line *l)
{
	if (h->started_version && (l->has_time ? h->started_timed && l->time_ns < h->started_ns : h->started_timed))
		return;
	free(h->started_version);
	h->started_version = oa_xstrdup(l->version);
	h->started_timed = l->has_time;
	h->started_ns = l->has_time ? l->time_ns : 0;
}

static void fold(oa_history *h, oa_log_line *l, unsigned long lineno)
{
	oa_load *open = h->open >= 0 ? &h->v[h->open] : NULL;
	switch (l->kind) {
	case OA_LOG_VERSION:
		free(h->version);
		h->version = oa_xstrdup(l->version);
		note_start(h, l);
		h->open = -1; /* a server restart: the open load's end was not logged */
		break;
	case OA_LOG_HINT:
		/* "loading model via llama-server" tells of the load just started;
		 * "using llama-server for model" always begins one (0.40 logs no
		 * result line we know, so the last one may still be open). */
		if (l->after_start && open && h->open_started && open->runner == l->runner &&
		    strcmp(open->digest, l->digest) == 0)
			break;
		new_load(h, l, lineno);
		break;
	case OA_LOG_LOAD:
		if (continues_open(h, l)) {
			if (!*open->digest && *l->model) {
				free(open->logged);
				open->logged = oa_xstrdup(l->model);
				memcpy(open->digest, l->digest, sizeof open->digest);
			}
		} else {
			new_load(h, l, lineno);
		}
		h->open_started = true;
		break;
	case OA_LOG_ENGINE:
		if (open)
			open->runner = OA_LR_MLX;
		break;
	case OA_LOG_LOADED:
		if (open && open->result == OA_LOAD_UNKNOWN)
			open->result = OA_LOAD_OK;
		h->open = -1;
		break;
	case OA_LOG_FAILED:
		/* Several lines may tell of one failure (0.40: "llama-server
		 * terminated", then "Load failed"): the later, fuller reason
		 * goes to the load that just failed. */
		if (!open && same_failure(h, l)) {
			oa_load *e = &h->v[h->last];
			if (strlen(l->reason) > strlen(e->reason ? e->reason : "")) {
				free(e->reason);
				e->reason = oa_xstrdup(l->reason);
			}
			break;
		}
		/* A failure before any runner started ("no suitable llama
		 * servers", a fit check) is a load of its own. */
		if (!open || open->result != OA_LOAD_UNKNOWN)
			open = new_load(h, l, lineno);
		open->result = OA_LOAD_FAILED;
		open->failed_ns = l->has_time ? l->time_ns : open->time_ns;
		free(open->reason);
		open->reason = oa_xstrdup(l->reason);
		h->open = -1;
		break;
	default:
		break;
	}
	if (!(l->mem_required || l->mem_sys_total || l->mem_sys_free || l->mem_gpu_free || l->mem_peak))
		return;
	if (h->open >= 0) {
		keep_memory(&h->pre, l);
		take_memory(&h->v[h->open], &h->pre); /* what it has already waits for the next */
	} else if (l->mem_peak && h->last >= 0) {
		/* A peak is measured after the load is done: the latest one's. */
		if (!h->v[h->last].mem_peak)
			h->v[h->last].mem_peak = l->mem_peak;
	} else {
		keep_memory(&h->pre, l);
		h->pre.mem_peak = 0;
	}
}

void oa_history_line(oa_history *h, const char *p, size_t n, unsigned long lineno, int64_t fallback_ns)
{
	oa_log_line l;
	char why[160];
	int rc = oa_log_parse_line(p, n, &l, why, sizeof why);
	if (!l.has_time && fallback_ns >= 0) {
		l.has_time = true;
		l.time_ns = fallback_ns;
	}
	if (l.has_time) {
		if (!h->any_time || l.time_ns < h->first_ns)
			h->first_ns = l.time_ns;
		if (!h->any_time || l.time_ns > h->last_ns)
			h->last_ns = l.time_ns;
		h->any_time = true;
	}
	if (rc < 0) {
		warn(h, lineno, why);
		/* A cut-off start line still tells of a load; anything else
		 * from a broken line is not trusted. */
		if (l.kind != OA_LOG_LOAD && l.kind != OA_LOG_HINT)
			return;
	}
	fold(h, &l, lineno);
}

/* Lines of a stream arriving in chunks of any size. */
typedef struct splitter {
	oa_buf line;
	unsigned long lineno;
	bool cut;
} splitter;

static void flush_line(oa_history *h, splitter *sp)
{
	size_t n = sp->line.len;
	if (n && sp->line.data[n - 1] == '\r')
		n--;
	if (sp->cut)
		warn(h, sp->lineno, "a line longer than 1 MiB: read up to there");
	oa_history_line(h, sp->line.data, n, sp->lineno++, -1);
	sp->line.len = 0;
	sp->cut = false;
}

static void split(oa_history *h, splitter *sp, const char *p, size_t len)
{
	const char *end = p + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t k = (size_t)((nl ? nl : end) - p);
		size_t room = sp->line.len < LINE_CUT ? LINE_CUT - sp->line.len : 0;
		if (k > room)
			sp->cut = true;
		oa_buf_add(&sp->line, p, k < room ? k : room);
		if (!nl)
			break;
		flush_line(h, sp);
		p = nl + 1;
	}
}

int oa_history_read_fd(oa_history *h, int fd, const char *source)
{
	oa_history_begin(h, source);
	splitter sp = { .lineno = 1 };
	oa_buf_init(&sp.line);
	char chunk[65536];
	int rc = 0;
	for (;;) {
		ssize_t got = oa_read_some(fd, chunk, sizeof chunk);
		if (got <= 0) {
			rc = got < 0 ? -1 : 0;
			break;
		}
		split(h, &sp, chunk, (size_t)got);
	}
	int saved = errno;
	if (sp.line.len)
		flush_line(h, &sp); /* a last line without newline */
	oa_buf_free(&sp.line);
	oa_history_end(h);
	errno = saved;
	return rc;
}

void oa_history_read_mem(oa_history *h, const void *data, size_t len, const char *source)
{
	oa_history_begin(h, source);
	splitter sp = { .lineno = 1 };
	oa_buf_init(&sp.line);
	split(h, &sp, data, len);
	if (sp.line.len)
		flush_line(h, &sp);
	oa_buf_free(&sp.line);
	oa_history_end(h);
}

/* (digest, model) pairs sorted by digest, for the blob-path matches. */
static void add_model(oa_load *e, size_t idx)
{
	for (size_t i = 0; i < e->n_models; i++)
		if (e->models[i] == idx)
			return;
	e->models = oa_xreallocarray(e->models, e->n_models + 1, sizeof *e->models);
	e->models[e->n_models++] = idx;
}

static int cmp_entry_digest(const void *a, const void *b)
{
	const oa_load *const *x = a, *const *y = b;
	return strcmp((*x)->digest, (*y)->digest);
}

/* The entries that name digest hex: [*lo, return) of the sorted index. */
static size_t entries_of(oa_load **idx, size_t n, const char *hex, size_t *lo)
{
	size_t a = 0, b = n;
	while (a < b) { /* the first entry >= hex */
		size_t mid = a + (b - a) / 2;
		if (strcmp(idx[mid]->digest, hex) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	while (b < n && strcmp(idx[b]->digest, hex) == 0)
		b++;
	return b;
}

/* Every model whose tag reaches (or whose layers name) a digest that a
 * history entry loaded, each entry's models in ascending order. The index
 * is of the history's digests, not the store's: memory in the log's size,
 * not in the number of tags times their layers. */
static void match_digests(oa_history *h, oa_store *s)
{
	oa_load **idx = oa_xcalloc(h->n ? h->n : 1, sizeof *idx);
	size_t n = 0;
	for (size_t i = 0; i < h->n; i++)
		if (*h->v[i].digest)
			idx[n++] = &h->v[i];
	if (n)
		qsort(idx, n, sizeof *idx, cmp_entry_digest);
	for (size_t i = 0; n && i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (m->anchor || m->sibling) /* a list's other rows: the tag reaches their blobs */
			continue;
		oa_blob **bl;
		size_t nb = oa_model_reach(s, m, &bl);
		size_t nl = m->manifest_ok ? m->m.n_layers : 0;
		for (size_t k = 0; k < nb + nl; k++) {
			/* The layers too: a blob deleted since still names its model. */
			const char *hex = k < nb ? bl[k]->hex : m->m.layers[k - nb].digest_valid ?
			                  m->m.layers[k - nb].hex : NULL;
			if (!hex || !*hex)
				continue;
			size_t lo, hi = entries_of(idx, n, hex, &lo);
			for (; lo < hi; lo++)
				add_model(idx[lo], i);
		}
		free(bl);
	}
	free(idx);
}

static int cmp_load(const void *a, const void *b)
{
	const oa_load *x = a, *y = b;
	if (x->has_time != y->has_time)
		return x->has_time ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	int c = strcmp(x->source, y->source);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

void oa_history_match(oa_history *h, oa_store *s)
{
	for (size_t i = 0; s && i < h->n; i++)
		h->v[i].n_models = 0; /* matched again against another store */
	if (s)
		match_digests(h, s);
	for (size_t i = 0; s && i < h->n; i++) {
		oa_load *e = &h->v[i];
		if (!*e->digest && *e->logged && e->runner == OA_LR_MLX) {
			long idx = oa_store_resolve(s, e->logged);
			if (idx >= 0)
				add_model(e, (size_t)idx);
		}
	}
	if (h->n)
		qsort(h->v, h->n, sizeof *h->v, cmp_load);
}

bool oa_history_last_load(const oa_history *h, size_t idx, int64_t *ns)
{
	for (size_t i = 0; i < h->n; i++) /* newest first after match */
		for (size_t k = 0; k < h->v[i].n_models; k++)
			if (h->v[i].models[k] == idx && h->v[i].has_time) {
				*ns = h->v[i].time_ns;
				return true;
			}
	return false;
}
