/* test_views_text.c - the library's text views and the choices behind
 * them: --since/--until, list's order and table (over
 * fixtures/demo-store). */
#include "teststore.h"

#include "views/list_text.h"
#include "views/table.h"
#include "audit/select.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/scan.h"
#include "base/util.h"

#include <stdlib.h>
#include <strings.h>

static void test_when(void)
{
	int64_t now = 2000000000LL * 1000000000LL, t = 0;
	CHECK(oa_when_parse("2026-10-22", now, &t) == 0);
	CHECK(t == 1792627200LL * 1000000000LL);
	CHECK(oa_when_parse("2026-10-22T00:00:01Z", now, &t) == 0);
	CHECK(t == 1792627201LL * 1000000000LL);
	CHECK(oa_when_parse("1h", now, &t) == 0);
	CHECK(t == now - 3600LL * 1000000000LL);
	CHECK(oa_when_parse("yesterday-ish", now, &t) < 0);
}

/* The byte of line at display column col (a cut cell's U+2026 is three
 * bytes and one column), or strlen(line) when it is shorter. */
static size_t byte_at_column(const char *line, size_t col)
{
	size_t b = 0, n = strlen(line);
	char *prefix = oa_xstrdup(line);
	for (; b < n; b++) {
		if (((unsigned char)line[b] & 0xC0) == 0x80)
			continue; /* inside a character */
		prefix[b] = '\0';
		size_t w = oa_text_width(prefix);
		prefix[b] = line[b];
		if (w >= col)
			break;
	}
	free(prefix);
	return b;
}

static void test_list(void)
{
	oa_store s;
	demo_store_scan(&s, OA_HEADERS_QUICK);
	oa_list_query q = { .sort = OA_LIST_SORT_NAME };
	size_t n;
	size_t *order = oa_list_order(&q, &s, &n);
	CHECK(n > 1);
	for (size_t i = 1; i < n; i++)
		CHECK(strcasecmp(s.models[order[i - 1]].display, s.models[order[i]].display) <= 0);
	oa_model_args none = { 0 };
	CHECK(oa_args_count(&s, &none) >= n);
	/* a prefix nothing has lists nothing */
	q.prefix = "no-such-model-prefix";
	size_t m;
	free(oa_list_order(&q, &s, &m));
	CHECK(m == 0);
	oa_list_store ls = { .s = &s, .models = order, .n_models = n };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	oa_text_style st = { .width = 0, .header = true, .units = OA_UNITS_SI, .diag = stderr };
	oa_list_text(&st, out, &ls, 1);
	fclose(out);
	CHECK(strncmp(text, "NAME", 4) == 0);
	CHECK(strstr(text, s.models[order[0]].display) != NULL);
	free(text);

	/* Two stores (its rows are made as the table asks, twice, never held):
	 * a heading per store before its rows, every row's SIZE in one column
	 * (by display column: at 60 a long NAME is cut, whatever MODIFIED says
	 * of the fixture's age), the totals last; at 60 columns no line is wider. */
	oa_list_store two[2] = { ls, ls };
	for (size_t width = 0; width <= 60; width += 60) {
		st.width = width;
		out = open_memstream(&text, &len);
		oa_list_text(&st, out, two, 2);
		fclose(out);
		size_t lines = 0, headings = 0, rows = 0, size_at = 0;
		bool one_column = true, fits = true, totals = false;
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++) {
			fits &= !width || oa_text_width(line) <= width;
			if (lines == 0) {
				CHECK(strncmp(line, "NAME", 4) == 0);
				CHECK(strstr(line, "SIZE") != NULL);
				size_at = strstr(line, "SIZE") ? (size_t)(strstr(line, "SIZE") - line) : 0;
			} else if (strncmp(line, "# all 2 stores", 14) == 0) {
				totals = rows == 2 * n;
			} else if (line[0] == '#') {
				CHECK(strcmp(line + 2, s.root) == 0);
				CHECK(rows == headings * n); /* the first store's rows before the second heading */
				headings++;
			} else {
				rows++;
				size_t b = byte_at_column(line, size_at);
				one_column &= size_at > 0 && b > 0 && line[b - 1] == ' ' && line[b] && line[b] != ' ';
			}
		}
		CHECK_U64(headings, 2);
		CHECK_U64(rows, 2 * n);
		CHECK(one_column && fits && totals);
		free(text);
	}
	free(order);
	oa_store_close(&s);
}

/* s cut by oa_name_fit to width is want, and takes at most width columns. */
static void name_fit_is(const char *s, size_t width, const char *want)
{
	char *got = oa_name_fit(s, width);
	CHECK_STR(got, want);
	CHECK(oa_text_width(got) <= width);
	free(got);
}

static void age_terse_is(const char *s, const char *want)
{
	char *got = oa_age_terse(s);
	CHECK_STR(got, want);
	free(got);
}

/* Narrow tables: a name cut in the middle of its repository keeps the host,
 * the namespace and the :TAG that tell two quants apart; ages shorten. */
static void test_fit(void)
{
	const char *q = "hf.co/bartowski/Qwen2.5-Coder-32B-Instruct-GGUF:Q4_K_M";
	name_fit_is(q, 60, q);
	name_fit_is(q, 33, "hf.co/bartowski/Qwen\xe2\x80\xa6-GGUF:Q4_K_M");
	name_fit_is("hf.co/bartowski/Qwen2.5-Coder-32B-Instruct-GGUF:Q8_0", 33,
	            "hf.co/bartowski/Qwen2\xe2\x80\xa6t-GGUF:Q8_0");
	/* no room for the namespace and 10 columns of the repository: the cut goes through it */
	name_fit_is("hf.co/lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF:Q8_0", 33,
	            "hf.co/lmstudi\xe2\x80\xa6-Instruct-GGUF:Q8_0");
	name_fit_is("a-model-with-a-really-long-name:latest", 24, "a-model-\xe2\x80\xa6ong-name:latest");
	/* a wide character across the cut is not split */
	name_fit_is("\xe6\xa8\xa1\xe5\x9e\x8b\xe6\xa8\xa1\xe5\x9e\x8b\xe6\xa8\xa1\xe5\x9e\x8b:tag", 14,
	            "\xe6\xa8\xa1\xe5\x9e\x8b\xe2\x80\xa6\xe6\xa8\xa1\xe5\x9e\x8b:tag");
	/* too narrow to keep a tag, or not one name: cut at the end */
	name_fit_is("some-model:a-very-long-tag-indeed", 12, "some-model:\xe2\x80\xa6");
	name_fit_is("a:1, b-very-long-second-name:2", 12, "a:1, b-very\xe2\x80\xa6");
	name_fit_is("tiny:latest", 7, "tiny:l\xe2\x80\xa6");
	age_terse_is("2 weeks ago", "2w ago");
	age_terse_is("About an hour ago", "1h ago");
	age_terse_is("About a minute ago", "1m ago");
	age_terse_is("1 second ago", "1s ago");
	age_terse_is("Less than a second ago", "now");
	age_terse_is("3 months ago", "3mo ago");
	age_terse_is("12 years ago", "12y ago");
	age_terse_is("3 days from now", "in 3d");
	age_terse_is("never", "never");
	age_terse_is("-", "-");
	age_terse_is("Forever", "Forever");
	age_terse_is("2 fortnights ago", "2 fortnights ago");
	/* every age oa_human_age writes has a short form */
	static const int64_t ages[] = { 0, 1, 59, 60, 119, 3599, 3600, 7200, 86400, 3 * 86400, 20 * 86400,
		                        100 * 86400, 800 * 86400, -3 * 86400 };
	for (size_t i = 0; i < sizeof ages / sizeof ages[0]; i++) {
		char human[64];
		oa_human_age(ages[i] * 1000000000LL, human, sizeof human);
		char *t = oa_age_terse(human);
		CHECK(strcmp(t, human) != 0 && strlen(t) <= 7);
		free(t);
	}
}

int main(void)
{
	test_fit();
	test_when();
	test_list();
	TEST_MAIN_END();
}
