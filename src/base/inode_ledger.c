/* inode_ledger.c - the names of files by (device, inode) (inode_ledger.h). */
#include "ollama_audit/inode_ledger.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static int cmp_file(const oa_inode_use *x, const oa_inode_use *y)
{
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

static int cmp_use(const void *a, const void *b)
{
	const oa_inode_use *x = a, *y = b;
	int c = cmp_file(x, y);
	if (c)
		return c;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	return 0;
}

void oa_inode_ledger_add(oa_inode_ledger *l, oa_inode_use use)
{
	OA_ALLOC_GROW(l->v, l->n + 1, l->cap);
	l->v[l->n++] = use;
	l->sorted = false;
}

void oa_inode_ledger_add_file(oa_inode_ledger *l, dev_t dev, ino_t ino)
{
	oa_inode_ledger_add(l, (oa_inode_use){ .dev = dev, .ino = ino });
}

void oa_inode_ledger_sort(oa_inode_ledger *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, cmp_use);
	l->sorted = true;
}

void oa_inode_ledger_unique(oa_inode_ledger *l)
{
	oa_inode_ledger_sort(l);
	size_t w = 0;
	for (size_t i = 0; i < l->n; i = oa_inode_ledger_run(l, i))
		l->v[w++] = l->v[i];
	l->n = w;
}

bool oa_inode_ledger_has(const oa_inode_ledger *l, dev_t dev, ino_t ino)
{
	oa_inode_use key = { .dev = dev, .ino = ino };
	if (l->sorted) {
		size_t lo = 0, hi = l->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cmp_file(&l->v[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < l->n && cmp_file(&l->v[lo], &key) == 0;
	}
	for (size_t i = 0; i < l->n; i++)
		if (cmp_file(&l->v[i], &key) == 0)
			return true;
	return false;
}

size_t oa_inode_ledger_run(const oa_inode_ledger *l, size_t i)
{
	size_t j = i + 1;
	while (j < l->n && cmp_file(&l->v[j], &l->v[i]) == 0)
		j++;
	return j;
}

void oa_inode_ledger_bytes(const oa_inode_ledger *l, uint64_t *apparent, uint64_t *allocated)
{
	*apparent = *allocated = 0;
	for (size_t i = 0; i < l->n; i = oa_inode_ledger_run(l, i)) {
		*apparent += l->v[i].apparent;
		*allocated += l->v[i].allocated;
	}
}

void oa_inode_ledger_free(oa_inode_ledger *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}
