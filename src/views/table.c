/* table.c - the columns of the human tables: padded by display width (a CJK
 * character takes two columns, a combining mark none), and the NAME column
 * layout of a table for the terminal: columns hidden by priority and cut
 * to fit (see table.h). */
/* wcwidth() is XSI */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include "views/table.h"
#include "ollama_audit/report.h"
#include "base/platform.h"
#include "base/util.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* Columns of a code point when the C library cannot say (a locale that is
 * not UTF-8): the East Asian wide and fullwidth blocks take two. */
static int fallback_width(uint32_t cp)
{
	static const uint32_t wide[][2] = {
		{ 0x1100, 0x115F },   { 0x2E80, 0x303E },   { 0x3041, 0x33FF },   { 0x3400, 0x4DBF },
		{ 0x4E00, 0x9FFF },   { 0xA000, 0xA4CF },   { 0xAC00, 0xD7A3 },   { 0xF900, 0xFAFF },
		{ 0xFE30, 0xFE4F },   { 0xFF00, 0xFF60 },   { 0xFFE0, 0xFFE6 },   { 0x1F300, 0x1F64F },
		{ 0x1F900, 0x1F9FF }, { 0x20000, 0x3FFFD },
	};
	if ((cp >= 0x300 && cp <= 0x36F) || cp == 0x200B)
		return 0; /* combining marks, zero width space */
	for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
		if (cp >= wide[i][0] && cp <= wide[i][1])
			return 2;
	return 1;
}

/* Columns of the character at p (n bytes left); *len gets its length. */
static int char_width(const unsigned char *p, size_t n, size_t *len)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	wchar_t wc;
	size_t k = mbrtowc(&wc, (const char *)p, n, &st);
	if (k != (size_t)-1 && k != (size_t)-2 && k != 0) {
		int w = wcwidth(wc);
		if (w >= 0) {
			*len = k;
			return w;
		}
	}
	/* Not a character of this locale: UTF-8 by our tables, else a byte. */
	k = oa_utf8_seq(p, n);
	if (!k) {
		*len = 1;
		return 1;
	}
	*len = k;
	return fallback_width(oa_utf8_cp(p, k));
}

/* Printable ASCII: one column in every locale, one byte, no C library call. */
static bool plain_ascii(unsigned char c)
{
	return c >= 0x20 && c < 0x7F;
}

/* Walks s up to `max` columns (SIZE_MAX: all); returns the columns and
 * the bytes they take in *bytes. The user's locale is switched to only
 * at the first character that is not printable ASCII. */
static size_t walk(const char *s, size_t max, size_t *bytes)
{
	locale_t loc = (locale_t)0, old = (locale_t)0;
	bool switched = false;
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), w = 0, used = 0;
	while (used < n) {
		size_t k = 1;
		int cw = 1;
		if (!plain_ascii(p[used])) {
			if (!switched) {
				switched = true;
				/* The user's LC_CTYPE for wcwidth, for this thread and only
				 * here: set globally it would change what isspace() says
				 * elsewhere (a Latin-1 locale calls 0xA0 a blank). */
				loc = oa_user_ctype();
				if (loc)
					old = uselocale(loc);
			}
			cw = char_width(p + used, n - used, &k);
		}
		if (w + (size_t)cw > max)
			break;
		w += (size_t)cw;
		used += k;
	}
	if (loc)
		uselocale(old);
	if (bytes)
		*bytes = used;
	return w;
}

/* A cell as printed: escaped (oa_printable) when it holds a control, bidi
 * or invalid byte, so widths are those of what the terminal gets. */
static char *printed(const char *s)
{
	return oa_is_printable(s) ? NULL : oa_printable(s);
}

size_t oa_text_width(const char *s)
{
	char *e = printed(s);
	size_t w = walk(e ? e : s, (size_t)-1, NULL);
	free(e);
	return w;
}

/* A cell padded to width columns (0: unpadded). */
static void add_cell(oa_buf *b, const char *s, size_t width, bool right)
{
	char *e = printed(s);
	if (e)
		s = e;
	size_t w = walk(s, (size_t)-1, NULL);
	size_t pad = w < width ? width - w : 0;
	if (!right)
		oa_buf_adds(b, s);
	for (size_t i = 0; i < pad; i++)
		oa_buf_addc(b, ' ');
	if (right)
		oa_buf_adds(b, s);
	free(e);
}

void oa_put_cell(FILE *out, const char *s, size_t width, bool right)
{
	oa_buf b;
	oa_buf_init(&b);
	add_cell(&b, s, width, right);
	fputs(b.data, out);
	oa_buf_free(&b);
}

char *oa_text_fit(const char *s, size_t width)
{
	char *e = printed(s);
	if (e)
		s = e;
	char *r;
	if (walk(s, (size_t)-1, NULL) <= width) {
		r = oa_xstrdup(s);
	} else if (width == 0) {
		r = oa_xstrdup("");
	} else {
		size_t bytes;
		walk(s, width - 1, &bytes);
		r = oa_xmalloc(bytes + sizeof ELLIPSIS);
		memcpy(r, s, bytes);
		memcpy(r + bytes, ELLIPSIS, sizeof ELLIPSIS);
	}
	free(e);
	return r;
}

/* The bytes of the first cols columns of s. */
static size_t head_bytes(const char *s, size_t cols)
{
	size_t b;
	walk(s, cols, &b);
	return b;
}

/* Where the last cols columns of s (at most) start. */
static size_t tail_at(const char *s, size_t cols)
{
	size_t b, total = walk(s, (size_t)-1, NULL);
	if (total <= cols)
		return 0;
	size_t w = walk(s, total - cols, &b);
	if (total - w > cols) /* a wide character across the cut goes too */
		walk(s, w + 2, &b);
	return b;
}

/* The n bytes at s, wider than room (at least 3) columns, in room columns:
 * their start and end around the ellipsis, the end one column longer when
 * the columns do not halve. */
static void add_middle_cut(oa_buf *out, const char *s, size_t n, size_t room)
{
	char *seg = oa_xstrndup(s, n);
	size_t keep = room - 1, tail = (keep + 1) / 2;
	size_t head = head_bytes(seg, keep - tail), end = tail_at(seg, tail);
	oa_buf_add(out, seg, head);
	oa_buf_adds(out, ELLIPSIS);
	oa_buf_adds(out, seg + (end > head ? end : head));
	free(seg);
}

char *oa_name_fit(const char *s, size_t width)
{
	char *e = printed(s);
	const char *p = e ? e : s;
	/* 8: "a…b:TAG" and the like; below that a name says nothing either way */
	if (walk(p, (size_t)-1, NULL) <= width || strchr(p, ' ') || width < 8) {
		char *r = oa_text_fit(p, width);
		free(e);
		return r;
	}
	const char *slash = strrchr(p, '/');
	const char *repo = slash ? slash + 1 : p;
	const char *tag = strchr(repo, ':');
	if (!tag)
		tag = repo + strlen(repo);
	char *head = oa_xstrndup(p, (size_t)(repo - p));
	size_t tag_w = walk(tag, (size_t)-1, NULL), head_w = walk(head, (size_t)-1, NULL);
	oa_buf b;
	oa_buf_init(&b);
	/* the host and namespace whole when the repository keeps 10 columns
	 * ("Qwen…-GGUF"); else the cut goes through them */
	if (width >= head_w + tag_w + 10) {
		oa_buf_adds(&b, head);
		add_middle_cut(&b, repo, (size_t)(tag - repo), width - head_w - tag_w);
	} else if (width >= tag_w + 5) {
		add_middle_cut(&b, p, (size_t)(tag - p), width - tag_w);
	} else {
		free(head);
		char *r = oa_text_fit(p, width);
		free(e);
		oa_buf_free(&b);
		return r;
	}
	oa_buf_adds(&b, tag);
	free(head);
	free(e);
	return oa_buf_take(&b);
}

char *oa_age_terse(const char *s)
{
	static const char *const lead[][2] = {
		{ "Less than a second", "0s" }, { "About a minute", "1m" }, { "About an hour", "1h" },
	};
	static const char *const units[][2] = {
		{ "second", "s" }, { "minute", "m" }, { "hour", "h" }, { "day", "d" },
		{ "week", "w" },   { "month", "mo" }, { "year", "y" },
	};
	char amount[32] = "";
	const char *rest = NULL;
	for (size_t i = 0; i < sizeof lead / sizeof lead[0] && !rest; i++)
		if (oa_str_has_prefix(s, lead[i][0])) {
			snprintf(amount, sizeof amount, "%s", lead[i][1]);
			rest = s + strlen(lead[i][0]);
		}
	size_t digits = strspn(s, "0123456789");
	if (!rest && digits && digits < 20 && s[digits] == ' ')
		for (size_t i = 0; i < sizeof units / sizeof units[0] && !rest; i++) {
			size_t n = strlen(units[i][0]);
			if (strncmp(s + digits + 1, units[i][0], n) == 0) {
				snprintf(amount, sizeof amount, "%.*s%s", (int)digits, s, units[i][1]);
				rest = s + digits + 1 + n + (s[digits + 1 + n] == 's');
			}
		}
	if (rest && strcmp(rest, " ago") == 0)
		return strcmp(amount, "0s") == 0 ? oa_xstrdup("now") : oa_xasprintf("%s ago", amount);
	if (rest && strcmp(rest, " from now") == 0)
		return strcmp(amount, "0s") == 0 ? oa_xstrdup("now") : oa_xasprintf("in %s", amount);
	return oa_xstrdup(s);
}

size_t oa_term_width(void)
{
	/* Piped or redirected (--output too): full names, whatever COLUMNS says. */
	if (!isatty(STDOUT_FILENO))
		return 0;
	const char *env = getenv("COLUMNS");
	if (env && oa_all_digits(env)) {
		long v = strtol(env, NULL, 10);
		if (v > 0 && v < 100000)
			return (size_t)v;
	}
	int cols = oa_terminal_columns(STDOUT_FILENO);
	return cols > 0 ? (size_t)cols : 0;
}

/* The cells' bytes: chunks of at least 64 KiB, newest first. */
struct oa_table_text {
	struct oa_table_text *next;
	size_t used, cap;
	char data[];
};

/* s (NULL: empty) copied into t's text, then freed. */
static char *keep_text(oa_table *t, char *s)
{
	size_t n = (s ? strlen(s) : 0) + 1;
	struct oa_table_text *c = t->text;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		c = oa_xmalloc(sizeof *c + cap);
		c->next = t->text;
		c->used = 0;
		c->cap = cap;
		t->text = c;
	}
	char *at = memcpy(c->data + c->used, s ? s : "", n);
	c->used += n;
	free(s);
	return at;
}

uint32_t oa_user_absent(const oa_text_style *st, size_t k)
{
	return st->owners || k >= 32 ? 0 : 1u << k;
}

char *oa_user_cell(const oa_text_style *st, const oa_store *s)
{
	return st->owners ? oa_xstrdup(oa_report_owner(s)) : NULL;
}

/* Room for one more row in cell and line. */
static void add_row(oa_table *t)
{
	if (t->rows == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->cell = oa_xreallocarray(t->cell, t->cap, t->ncol * sizeof *t->cell);
		t->line = oa_xreallocarray(t->line, t->cap, sizeof *t->line);
	}
}

void oa_table_add(oa_table *t, char **cells)
{
	add_row(t);
	for (size_t k = 0; k < t->ncol; k++)
		t->cell[t->rows * t->ncol + k] = keep_text(t, cells[k]);
	t->line[t->rows++] = NULL;
}

void oa_table_clear(oa_table *t)
{
	for (size_t r = 0; r < t->rows; r++)
		free(t->line[r]);
	while (t->text) {
		struct oa_table_text *next = t->text->next;
		free(t->text);
		t->text = next;
	}
	free(t->cell);
	free(t->line);
	t->cell = NULL;
	t->line = NULL;
	t->rows = t->cap = 0;
}

/* A line of its own (taken), as printed: lines are printed whole, not
 * through add_cell, so they are escaped here. */
static char *printed_line(char *text)
{
	char *e = printed(text);
	if (!e)
		return text;
	free(text);
	return e;
}

void oa_table_line(oa_table *t, char *text)
{
	text = printed_line(text);
	add_row(t);
	for (size_t k = 0; k < t->ncol; k++)
		t->cell[t->rows * t->ncol + k] = NULL;
	t->line[t->rows++] = text;
}

/* text in lines of cols columns at most, the first after first, the others
 * after indent: whole words, a word longer than a line on a line of its own. */
static void print_wrapped(FILE *out, size_t cols, const char *first, const char *indent, const char *text)
{
	const char *p = text, *lead = first;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t in = oa_text_width(lead), room = cols > in + 20 ? cols - in : 20;
		/* the longest run of whole words that fits */
		const char *end = p, *cut = NULL;
		size_t width = 0;
		while (*end) {
			const char *word = end;
			while (*end && *end != ' ')
				end++;
			char *w = oa_xstrndup(word, (size_t)(end - word));
			size_t ww = oa_text_width(w);
			free(w);
			if (cut && width + 1 + ww > room) {
				end = word;
				break;
			}
			width += (cut ? 1 : 0) + ww;
			cut = end;
			while (*end == ' ')
				end++;
		}
		fprintf(out, "%s%.*s\n", lead, (int)(cut - p), p);
		p = cut;
		lead = indent;
	}
}

/* Whether bit k of a table's column set (name_cols, age_cols) is set. */
static bool col_in(uint32_t set, size_t k)
{
	return k < 32 && (set >> k & 1);
}

/* The columns a row takes with the shown columns at widths w. */
static size_t row_width(const oa_table *t, const size_t *w, const bool *shown)
{
	size_t sum = 0, n = 0;
	for (size_t k = 0; k < t->ncol; k++)
		if (shown[k]) {
			sum += w[k];
			n++;
		}
	return sum + (n ? n - 1 : 0) * strlen(t->gap);
}

/* The shown column that can still give a column of width, the one most
 * above its floor first (so two cut columns shrink together). */
static size_t widest_cuttable(const oa_table *t, const size_t *w, const bool *shown, bool below_min)
{
	size_t best = t->ncol, best_over = 0;
	for (size_t k = 0; k < t->ncol; k++) {
		if (!shown[k] || !t->col[k].min)
			continue;
		size_t floor = below_min ? 4 : t->col[k].min; /* 4: three characters and the ellipsis */
		size_t over = w[k] > floor ? w[k] - floor : 0;
		if (over > best_over) {
			best = k;
			best_over = over;
		}
	}
	return best;
}

/* Hides the shown column of the largest priority above `above`; false
 * when there is none. */
static bool hide_lowest(const oa_table *t, bool *shown, unsigned above)
{
	size_t drop = t->ncol;
	for (size_t k = 0; k < t->ncol; k++)
		if (shown[k] && t->col[k].priority > above &&
		    (drop == t->ncol || t->col[k].priority >= t->col[drop].priority))
			drop = k;
	if (drop == t->ncol)
		return false;
	shown[drop] = false;
	return true;
}

/* Whole cells at the price of the columns beyond OA_PRIORITY_CORE, when
 * that price buys them; shown is changed only then. */
static bool fit_whole(const oa_table *t, size_t cols, const size_t *w, bool *shown)
{
	bool *try = oa_xcalloc(t->ncol, sizeof *try);
	memcpy(try, shown, t->ncol * sizeof *try);
	while (row_width(t, w, try) > cols && hide_lowest(t, try, OA_PRIORITY_CORE))
		;
	bool fits = row_width(t, w, try) <= cols;
	if (fits)
		memcpy(shown, try, t->ncol * sizeof *try);
	free(try);
	return fits;
}

/* Widths for a terminal of `cols` columns (0: no limit): whole cells if
 * hiding optional columns gets there; else the same with the ages short
 * (tw: their columns' widths then); else hide every optional column, then
 * the lowest-priority ones while the row cannot fit with every cuttable
 * column at its minimum, and cut those columns only as far as needed. True
 * when the ages are short. */
static bool layout(const oa_table *t, size_t cols, size_t *w, const size_t *tw, bool *shown)
{
	if (!cols || fit_whole(t, cols, w, shown))
		return false;
	bool terse = false;
	for (size_t k = 0; k < t->ncol; k++)
		if (col_in(t->age_cols, k)) {
			w[k] = tw[k];
			terse = true;
		}
	if (terse && fit_whole(t, cols, w, shown))
		return true;
	/* Cells are cut whatever goes: the optional columns go before any is */
	while (hide_lowest(t, shown, OA_PRIORITY_CORE))
		;
	size_t *at_min = oa_xcalloc(t->ncol, sizeof *at_min);
	for (;;) {
		for (size_t k = 0; k < t->ncol; k++)
			at_min[k] = t->col[k].min && w[k] > t->col[k].min ? t->col[k].min : w[k];
		if (row_width(t, at_min, shown) <= cols || !hide_lowest(t, shown, 0))
			break;
	}
	free(at_min);
	for (int below_min = 0; below_min < 2; below_min++)
		while (row_width(t, w, shown) > cols) {
			size_t k = widest_cuttable(t, w, shown, below_min);
			if (k == t->ncol)
				break;
			w[k]--;
		}
	return terse;
}

/* Says which columns the terminal had no room for, in lines of that width
 * at most (wrapped at blanks, the rest indented): once per *said, the
 * caller's flag (the CLI's lasts the run), every time without one. */
static void note_hidden(FILE *diag, bool *said, const oa_table *t, const bool *shown, size_t cols)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t k = 0; k < t->ncol; k++)
		if (!shown[k] && !col_in(t->absent_cols, k))
			oa_buf_printf(&b, "%s%s", b.len ? ", " : "", t->col[k].head);
	if (b.len && !(said && *said) && diag) {
		if (said)
			*said = true;
		char *text = oa_xasprintf("ollama-audit: hidden to fit %zu columns: %s (--wide shows them)", cols,
		                          b.data);
		print_wrapped(diag, cols, "", "  ", text);
		free(text);
	}
	oa_buf_free(&b);
}

/* Column k's cell in width columns: cut as the column cuts, an age short
 * when the layout made the ages short. */
static char *cell_fit(const oa_table *t, size_t k, const char *cell, size_t width, bool terse)
{
	if (terse && col_in(t->age_cols, k)) {
		char *a = oa_age_terse(cell);
		char *r = oa_text_fit(a, width);
		free(a);
		return r;
	}
	return col_in(t->name_cols, k) ? oa_name_fit(cell, width) : oa_text_fit(cell, width);
}

/* One row: its shown cells, each cut to its column, the last one unpadded,
 * the whole cut to the terminal should the columns alone not fit. */
static void put_row(FILE *out, const oa_table *t, const char *const *cells, const size_t *w, const bool *shown,
                    size_t cols, bool terse)
{
	oa_buf b = { 0 };
	oa_buf_init(&b);
	size_t last = 0;
	for (size_t k = 0; k < t->ncol; k++)
		if (shown[k])
			last = k;
	bool first = true;
	for (size_t k = 0; k < t->ncol; k++) {
		if (!shown[k])
			continue;
		if (!first)
			oa_buf_adds(&b, t->gap);
		first = false;
		char *fit = cell_fit(t, k, cells[k], w[k], terse);
		add_cell(&b, fit, k == last && !t->col[k].right ? 0 : w[k], t->col[k].right);
		free(fit);
	}
	char *line = cols ? oa_text_fit(b.data, cols) : oa_xstrdup(b.data);
	fprintf(out, "%s\n", line);
	free(line);
	oa_buf_free(&b);
}

/* The rows a table prints: its own (fn NULL), or made on demand by fn. */
struct rows {
	oa_table *t;
	size_t n;
	oa_table_row_fn fn;
	void *ctx;
	char **made;      /* fn's cells, ncol (owned until row_done) */
	const char **view; /* the same, "" for NULL */
	char *line;       /* fn's line, escaped (owned until row_done) */
};

/* Row r: its cells, or NULL with *line its line; valid until row_done. */
static const char *const *row_get(struct rows *rs, size_t r, const char **line)
{
	oa_table *t = rs->t;
	if (!rs->fn) {
		*line = t->line[r];
		return t->line[r] ? NULL : (const char *const *)t->cell + r * t->ncol;
	}
	rs->fn(rs->ctx, r, rs->made, &rs->line); /* (made and line: emptied by row_done) */
	if (rs->line) {
		*line = rs->line = printed_line(rs->line);
		return NULL;
	}
	*line = NULL;
	for (size_t k = 0; k < t->ncol; k++)
		rs->view[k] = rs->made[k] ? rs->made[k] : "";
	return rs->view;
}

static void row_done(struct rows *rs)
{
	if (!rs->fn)
		return;
	for (size_t k = 0; k < rs->t->ncol; k++) {
		free(rs->made[k]);
		rs->made[k] = NULL;
	}
	free(rs->line);
	rs->line = NULL;
}

static void print_rows(const oa_text_style *st, struct rows *rs, FILE *out)
{
	oa_table *t = rs->t;
	size_t cols = st->width, n = t->ncol;
	size_t *w = oa_xcalloc(n, sizeof *w), *tw = oa_xcalloc(n, sizeof *tw);
	bool *shown = oa_xcalloc(n, sizeof *shown);
	for (size_t k = 0; k < n; k++) {
		shown[k] = !col_in(t->absent_cols, k);
		w[k] = tw[k] = !st->header ? 0 : oa_text_width(t->col[k].head);
	}
	for (size_t r = 0; r < rs->n; r++) {
		const char *line;
		const char *const *cell = row_get(rs, r, &line);
		for (size_t k = 0; cell && k < n; k++) {
			size_t cw = oa_text_width(cell[k]);
			if (cw > w[k])
				w[k] = cw;
			if (cols && col_in(t->age_cols, k)) { /* the width it takes short */
				char *a = oa_age_terse(cell[k]);
				size_t aw = oa_text_width(a);
				free(a);
				if (aw > tw[k])
					tw[k] = aw;
			}
		}
		row_done(rs);
	}
	bool terse = layout(t, cols, w, tw, shown);
	if (cols)
		note_hidden(st->diag, st->hidden_said, t, shown, cols);
	if (st->header) {
		const char **head = oa_xcalloc(n, sizeof *head);
		for (size_t k = 0; k < n; k++)
			head[k] = t->col[k].head;
		put_row(out, t, head, w, shown, cols, false);
		free(head);
	}
	for (size_t r = 0; r < rs->n; r++) {
		const char *line;
		const char *const *cell = row_get(rs, r, &line);
		if (line) {
			char *fit = cols && !t->whole_lines ? oa_text_fit(line, cols) : oa_xstrdup(line);
			fprintf(out, "%s\n", fit);
			free(fit);
		} else {
			put_row(out, t, cell, w, shown, cols, terse);
		}
		row_done(rs);
	}
	free(w);
	free(tw);
	free(shown);
}

void oa_table_print(const oa_text_style *st, oa_table *t, FILE *out)
{
	struct rows rs = { .t = t, .n = t->rows };
	print_rows(st, &rs, out);
	oa_table_clear(t);
}

void oa_table_print_rows(const oa_text_style *st, oa_table *t, size_t rows, oa_table_row_fn fn, void *ctx,
                         FILE *out)
{
	struct rows rs = { .t = t, .n = rows, .fn = fn, .ctx = ctx };
	rs.made = oa_xcalloc(t->ncol + 1, sizeof *rs.made);
	rs.view = oa_xcalloc(t->ncol + 1, sizeof *rs.view);
	print_rows(st, &rs, out);
	free(rs.made);
	free(rs.view);
}

void oa_print_wrapped(const oa_text_style *st, FILE *out, const char *indent, const char *text)
{
	print_wrapped(out, st->width ? st->width : 80 /* piped: still lines a reader can take in */, indent,
	              indent, text);
}

const char *oa_text_safe(const char *s)
{
	return oa_printable_scratch(s);
}
