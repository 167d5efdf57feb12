/* pack.c - moving a record's small strings into one allocation. */
#include "base/pack.h"
#include "base/util.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

static size_t aligned(size_t n)
{
	size_t a = alignof(max_align_t);
	return (n + a - 1) / a * a;
}

void oa_pack_room(oa_pack *p, size_t n)
{
	p->size = aligned(p->size) + aligned(n);
}

void oa_pack_count(oa_pack *p, const char *s)
{
	if (s && *s)
		p->size += strlen(s) + 1;
}

void oa_pack_start(oa_pack *p)
{
	p->size += 1; /* the shared "" */
	p->block = oa_xcalloc(1, p->size);
	p->used = 0;
}

void *oa_pack_take(oa_pack *p, size_t n)
{
	void *at = p->block + p->used;
	p->used += aligned(n);
	return at;
}

char *oa_pack_move(oa_pack *p, char *s)
{
	if (!s)
		return NULL;
	char *at = p->block + p->size - 1; /* the "" */
	if (*s) {
		size_t n = strlen(s) + 1;
		at = memcpy(p->block + p->used, s, n);
		p->used += n;
	}
	free(s);
	return at;
}

void oa_pack_str(oa_pack *p, char **s)
{
	if (p->block)
		*s = oa_pack_move(p, *s);
	else
		oa_pack_count(p, *s);
}

void *oa_pack_move_array(oa_pack *p, void *v, size_t n, size_t size)
{
	if (!v)
		return NULL;
	void *to = oa_pack_take(p, n * size);
	if (n)
		memcpy(to, v, n * size);
	free(v);
	return to;
}

void *oa_pack_record(const oa_pack_array *arrays, size_t n_arrays,
                     void (*strings)(oa_pack *p, void *rec), void *rec)
{
	oa_pack p = { 0 };
	for (size_t i = 0; i < n_arrays; i++)
		oa_pack_room(&p, arrays[i].n * arrays[i].size);
	strings(&p, rec);
	oa_pack_start(&p);
	for (size_t i = 0; i < n_arrays; i++) {
		void *v;
		memcpy(&v, arrays[i].at, sizeof v);
		v = oa_pack_move_array(&p, v, arrays[i].n, arrays[i].size);
		memcpy(arrays[i].at, &v, sizeof v);
	}
	strings(&p, rec);
	return p.block;
}
