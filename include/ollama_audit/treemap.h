/*
 * treemap.h - the squarified treemap layout (Bruls, Huizing, van Wijk,
 * "Squarified Treemaps", 2000): a rectangle cut into one rectangle per
 * size, each with an area proportional to its size and an aspect ratio
 * kept close to 1. A pure function: no I/O, no allocation the caller sees.
 */
#ifndef OLLAMA_AUDIT_TREEMAP_H
#define OLLAMA_AUDIT_TREEMAP_H

#include "ollama_audit/export.h"

#include <stddef.h>

typedef struct oa_rect {
	double x, y, w, h;
} oa_rect;

/* Lay out n sizes (any order; zero or negative ones get an empty rect at
 * the bounds' corner) inside bounds: out[i] is the rect of sizes[i]. The
 * rects tile bounds exactly when some size is positive; largest first,
 * rows laid along the shorter side. */
OA_EXPORT void oa_treemap_layout(const double *sizes, size_t n, oa_rect bounds, oa_rect *out);

#endif
