/* table.c - the columns of the human tables: padded by display width (a CJK
 * character takes two columns, a combining mark none), and the NAME column
 * cut to fit a terminal narrower than the table (see table.h). */
/* wcwidth() is XSI */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include "table.h"
#include "cmd_history.h"
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

/* The user's LC_CTYPE for wcwidth, used only here: set globally it would
 * change what isspace() and friends say elsewhere (a Latin-1 locale calls
 * 0xA0 a blank; the server's parsers do not). */
static locale_t user_ctype(void)
{
	static int done;
	static locale_t loc;
	if (!done) {
		done = 1;
		loc = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
	}
	return loc;
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

/* Walks s up to `max` columns (SIZE_MAX: all); returns the columns and
 * the bytes they take in *bytes. */
static size_t walk(const char *s, size_t max, size_t *bytes)
{
	locale_t loc = user_ctype(), old = (locale_t)0;
	if (loc)
		old = uselocale(loc);
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), w = 0, used = 0;
	while (used < n) {
		size_t k;
		int cw = char_width(p + used, n - used, &k);
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

size_t cli_text_width(const char *s)
{
	char *e = printed(s);
	size_t w = walk(e ? e : s, (size_t)-1, NULL);
	free(e);
	return w;
}

void cli_put_cell(FILE *out, const char *s, size_t width, bool right)
{
	char *e = printed(s);
	if (e)
		s = e;
	size_t w = walk(s, (size_t)-1, NULL);
	size_t pad = w < width ? width - w : 0;
	if (right)
		fprintf(out, "%*s%s", (int)pad, "", s);
	else
		fprintf(out, "%s%*s", s, (int)pad, "");
	free(e);
}

char *cli_fit(const char *s, size_t width)
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

size_t cli_term_width(void)
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

size_t cli_name_width(size_t name_width, size_t rest)
{
	size_t cols = cli_term_width();
	if (!cols || name_width + rest <= cols)
		return name_width;
	/* NAME gives way down to a few columns; a terminal narrower than the
	 * other columns still gets whole rows, never wrapped by us. */
	size_t min = 8;
	size_t fit = cols > rest ? cols - rest : 0;
	if (fit < min)
		fit = min;
	return fit < name_width ? fit : name_width;
}

static int cmp_key(const void *a, const void *b)
{
	const cli_sort_key *x = a, *y = b;
	if (x->num != y->num)
		return x->num > y->num ? -1 : 1;
	if (x->name && y->name) {
		int r = strcasecmp(x->name, y->name);
		if (!r)
			r = strcmp(x->name, y->name);
		if (r)
			return r;
	}
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void cli_sort_keys(cli_sort_key *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_key);
}

int64_t cli_last_used_ns(cli *c, const oa_store *s, const size_t *models, size_t n)
{
	const cli_usage *u = cli_usage_of(c, s);
	int64_t best = INT64_MIN;
	for (size_t i = 0; u && u->have_logs && i < n; i++)
		if (u->loaded[models[i]] && u->last_ns[models[i]] > best)
			best = u->last_ns[models[i]];
	return best;
}
