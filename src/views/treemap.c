/* treemap.c - the squarified treemap layout (treemap.h). */
#include "ollama_audit/treemap.h"
#include "base/util.h"

#include <stdbool.h>
#include <stdlib.h>

static int larger_first(const void *a, const void *b, const void *sizes)
{
	const double *sort_sizes = sizes;
	double x = sort_sizes[*(const size_t *)a], y = sort_sizes[*(const size_t *)b];
	if (x != y)
		return x > y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1; /* stable: equal sizes keep their order */
}

/* The worst aspect ratio of a row of areas (sum, largest, smallest) laid
 * along a side of length `side`: Bruls et al.'s worst(). */
static double worst(double sum, double largest, double smallest, double side)
{
	double s2 = sum * sum, w2 = side * side;
	double a = w2 * largest / s2, b = s2 / (w2 * smallest);
	return a > b ? a : b;
}

/* Place the row order[from..to) of areas along the shorter side of *free
 * and shrink *free by the strip the row took. */
static void place_row(const double *area, const size_t *order, size_t from, size_t to, double sum,
                      oa_rect *free, oa_rect *out)
{
	bool across = free->w >= free->h; /* a column on the left when the free space is wide */
	double thick = across ? (free->h > 0 ? sum / free->h : 0) : (free->w > 0 ? sum / free->w : 0);
	double pos = across ? free->y : free->x;
	for (size_t k = from; k < to; k++) {
		double len = thick > 0 ? area[order[k]] / thick : 0;
		oa_rect *r = &out[order[k]];
		if (across)
			*r = (oa_rect){ free->x, pos, thick, len };
		else
			*r = (oa_rect){ pos, free->y, len, thick };
		pos += len;
	}
	/* The last rect ends exactly at the edge: no gap from rounding. */
	oa_rect *last = &out[order[to - 1]];
	if (across) {
		last->h = free->y + free->h - last->y;
		free->x += thick;
		free->w -= thick;
	} else {
		last->w = free->x + free->w - last->x;
		free->y += thick;
		free->h -= thick;
	}
}

void oa_treemap_layout(const double *sizes, size_t n, oa_rect bounds, oa_rect *out)
{
	double total = 0;
	size_t live = 0;
	size_t *order = oa_xcalloc(n ? n : 1, sizeof *order);
	for (size_t i = 0; i < n; i++) {
		out[i] = (oa_rect){ bounds.x, bounds.y, 0, 0 };
		if (sizes[i] > 0) {
			total += sizes[i];
			order[live++] = i;
		}
	}
	if (!live || bounds.w <= 0 || bounds.h <= 0) {
		free(order);
		return;
	}
	oa_sort(order, live, sizeof *order, larger_first, sizes);
	/* Sizes become areas of the bounds. */
	double *area = oa_xcalloc(n, sizeof *area);
	for (size_t k = 0; k < live; k++)
		area[order[k]] = sizes[order[k]] / total * bounds.w * bounds.h;
	oa_rect free_space = bounds;
	size_t from = 0;
	while (from < live) {
		double side = free_space.w < free_space.h ? free_space.w : free_space.h;
		double sum = area[order[from]];
		size_t to = from + 1;
		/* Grow the row while its worst aspect ratio does not get worse. */
		while (to < live) {
			double a = area[order[to]];
			if (worst(sum + a, area[order[from]], a, side) >
			    worst(sum, area[order[from]], area[order[to - 1]], side))
				break;
			sum += a;
			to++;
		}
		if (to == live) /* the last row fills what is left, exactly */
			sum = free_space.w * free_space.h;
		place_row(area, order, from, to, sum, &free_space, out);
		from = to;
	}
	free(area);
	free(order);
}
