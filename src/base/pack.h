/*
 * pack.h - the many small strings (and their pointer arrays) of one parsed
 * record moved into a single allocation, so that a store of 10,000 tags
 * holds 10,000 blocks instead of 200,000 malloc chunks (each with its own
 * 16-byte header and 32-byte minimum). Two passes: count what will move,
 * then move it; the record frees the block alone.
 *
 *     oa_pack p = { 0 };
 *     oa_pack_room(&p, n * sizeof *arr);    (arrays first, in take order)
 *     oa_pack_count(&p, s1); ...
 *     oa_pack_start(&p);
 *     arr = oa_pack_take(&p, n * sizeof *arr);
 *     s1 = oa_pack_move(&p, s1); ...        (frees the old copy)
 *
 * or, with one walk for both passes, oa_pack_str(&p, &s1) before and after
 * oa_pack_start.
 *     record->block = p.block;
 */
#ifndef OLLAMA_AUDIT_PACK_H
#define OLLAMA_AUDIT_PACK_H

#include <stddef.h>

typedef struct oa_pack {
	size_t size;  /* bytes the block needs */
	char *block;  /* after oa_pack_start */
	size_t used;
} oa_pack;

/* Room for n bytes of arrays (aligned for any object). */
void oa_pack_room(oa_pack *p, size_t n);
/* Room for s (NULL and "" take none: every "" is the block's one NUL). */
void oa_pack_count(oa_pack *p, const char *s);
void oa_pack_start(oa_pack *p);
/* The next array room, zeroed, in the order oa_pack_room counted them. */
void *oa_pack_take(oa_pack *p, size_t n);
/* s copied into the block and freed; NULL stays NULL. */
char *oa_pack_move(oa_pack *p, char *s);
/* The array v of n elements of size bytes moved to the next room (counted
 * by oa_pack_room) and freed; NULL stays NULL. */
void *oa_pack_move_array(oa_pack *p, void *v, size_t n, size_t size);
/* One call for both passes: before oa_pack_start counts *s, after moves it. */
void oa_pack_str(oa_pack *p, char **s);

/* A record's whole pack in one call: each array (the address of its
 * pointer, its length and element size) gets a room and moves first, then
 * strings() runs once to count and once to move. Returns the block. */
typedef struct oa_pack_array {
	void *at;     /* T **: where the record keeps the array */
	size_t n, size;
} oa_pack_array;
void *oa_pack_record(const oa_pack_array *arrays, size_t n_arrays,
                     void (*strings)(oa_pack *p, void *rec), void *rec);

#endif
