/* keyed.c - items grouped by a two-part key (keyed.h). */
#include "base/keyed.h"

#include <stdlib.h>

static int cmp_keyed(const void *pa, const void *pb)
{
	const oa_keyed *x = pa, *y = pb;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void oa_keyed_sort(oa_keyed *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_keyed);
}

size_t oa_keyed_find(const oa_keyed *v, size_t n, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].a < a || (v[mid].a == a && v[mid].b < b))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t oa_keyed_run(const oa_keyed *v, size_t n, size_t start)
{
	size_t e = start + 1;
	while (e < n && v[e].a == v[start].a && v[e].b == v[start].b)
		e++;
	return e;
}
