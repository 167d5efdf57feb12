/* test_treemap.c - the squarified treemap layout (treemap.h): areas in
 * proportion to sizes, tiles that cover the bounds without overlapping,
 * Bruls et al.'s own example, and near-square tiles. */
#include "testutil.h"

#include "ollama_audit/treemap.h"

#include <math.h>
#include <stdbool.h>

#define EPS 1e-6

static bool inside(oa_rect r, oa_rect b)
{
	return r.x >= b.x - EPS && r.y >= b.y - EPS && r.x + r.w <= b.x + b.w + EPS &&
	       r.y + r.h <= b.y + b.h + EPS;
}

static bool overlap(oa_rect a, oa_rect b)
{
	double w = fmin(a.x + a.w, b.x + b.w) - fmax(a.x, b.x);
	double h = fmin(a.y + a.h, b.y + b.h) - fmax(a.y, b.y);
	return w > EPS && h > EPS;
}

static double aspect(oa_rect r)
{
	return r.w > r.h ? r.w / r.h : r.h / r.w;
}

/* Every tile inside the bounds, none overlapping another, each area in
 * proportion to its size, together the whole bounds. */
static void check_tiling(const double *sizes, size_t n, oa_rect b, const oa_rect *r)
{
	double total = 0, covered = 0;
	for (size_t i = 0; i < n; i++)
		total += sizes[i] > 0 ? sizes[i] : 0;
	for (size_t i = 0; i < n; i++) {
		CHECK(inside(r[i], b));
		double want = sizes[i] > 0 ? sizes[i] / total * b.w * b.h : 0;
		CHECK(fabs(r[i].w * r[i].h - want) < 1e-6 * b.w * b.h + EPS);
		covered += r[i].w * r[i].h;
		for (size_t k = i + 1; k < n; k++)
			CHECK(!overlap(r[i], r[k]));
	}
	if (total > 0)
		CHECK(fabs(covered - b.w * b.h) < 1e-6 * b.w * b.h);
}

static void test_paper_example(void)
{
	/* Bruls, Huizing, van Wijk (2000), figure 3: 6 6 4 3 2 2 1 in 6 x 4. */
	const double sizes[] = { 6, 6, 4, 3, 2, 2, 1 };
	oa_rect b = { 0, 0, 6, 4 }, r[7];
	oa_treemap_layout(sizes, 7, b, r);
	check_tiling(sizes, 7, b, r);
	/* The two 6s stand in a column along the short side, 3 wide. */
	CHECK(fabs(r[0].x) < EPS && fabs(r[0].y) < EPS && fabs(r[0].w - 3) < EPS && fabs(r[0].h - 2) < EPS);
	CHECK(fabs(r[1].x) < EPS && fabs(r[1].y - 2) < EPS && fabs(r[1].w - 3) < EPS && fabs(r[1].h - 2) < EPS);
	/* Then 4 and 3 in a row across the top of what is left. */
	CHECK(fabs(r[2].y) < EPS && fabs(r[3].y) < EPS && fabs(r[2].h - 7.0 / 3) < EPS);
	for (int i = 0; i < 7; i++)
		CHECK(aspect(r[i]) < 3);
}

static void test_order_and_zeros(void)
{
	/* Unsorted input, zeros and a negative: out[i] belongs to sizes[i]. */
	const double sizes[] = { 1, 0, 50, -3, 10, 10 };
	oa_rect b = { 10, 20, 300, 100 }, r[6];
	oa_treemap_layout(sizes, 6, b, r);
	check_tiling(sizes, 6, b, r);
	CHECK(r[1].w == 0 && r[1].h == 0);
	CHECK(r[3].w == 0 && r[3].h == 0);
	CHECK(r[2].w * r[2].h > r[4].w * r[4].h);
	CHECK(fabs(r[4].w * r[4].h - r[5].w * r[5].h) < EPS);
}

static void test_degenerate(void)
{
	oa_rect r[3];
	const double none[] = { 0, 0, 0 };
	oa_treemap_layout(none, 3, (oa_rect){ 0, 0, 10, 10 }, r);
	for (int i = 0; i < 3; i++)
		CHECK(r[i].w == 0 && r[i].h == 0);
	const double one[] = { 5 };
	oa_treemap_layout(one, 1, (oa_rect){ 1, 2, 30, 40 }, r);
	CHECK(r[0].x == 1 && r[0].y == 2 && fabs(r[0].w - 30) < EPS && fabs(r[0].h - 40) < EPS);
	oa_treemap_layout(one, 1, (oa_rect){ 0, 0, 0, 40 }, r);
	CHECK(r[0].w == 0 && r[0].h == 0);
	oa_treemap_layout(NULL, 0, (oa_rect){ 0, 0, 10, 10 }, NULL);
}

static void test_many(void)
{
	/* 500 tiles, sizes spread over three orders of magnitude: a tiling, and
	 * squarified (equal sizes in a square give near-squares). */
	enum { N = 500 };
	static double sizes[N];
	static oa_rect r[N];
	for (int i = 0; i < N; i++)
		sizes[i] = 1 + (i * 7919 % 1000);
	oa_rect b = { 0, 0, 1000, 420 };
	oa_treemap_layout(sizes, N, b, r);
	check_tiling(sizes, N, b, r);
	for (int i = 0; i < N; i++)
		sizes[i] = 1;
	oa_treemap_layout(sizes, N, (oa_rect){ 0, 0, 100, 100 }, r);
	double worst = 0;
	for (int i = 0; i < N; i++)
		worst = fmax(worst, aspect(r[i]));
	CHECK(worst < 2);
}

int main(void)
{
	test_paper_example();
	test_order_and_zeros();
	test_degenerate();
	test_many();
	TEST_MAIN_END();
}
