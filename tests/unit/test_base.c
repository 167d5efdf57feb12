/* test_base.c - the mechanisms of src/base/ that the rest of the library
 * shares: the read and write loops (fed interruptions and short counts
 * through their test seam) and the one hash index (growth, colliding
 * hashes, removal inside and across the end of probe runs), and the one
 * inode ledger (hard links counted once, runs per file, membership), and
 * the bounded escaper of the parsers. */
#include "testutil.h"

#include "base/hash_index.h"
#include "ollama_audit/inode_ledger.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

/* ---- the read and write loops ----------------------------------------------- */

/* A file of its own to the fake calls: `data`, handed out at most `step`
 * bytes a call, every other call interrupted first (EINTR). */
static struct fake_io {
	const char *data;
	size_t len, pos, step;
	unsigned calls, interrupts;
	int fail_at;          /* the call that fails with EACCES (0: none) */
	bool zero_writes;     /* write() takes nothing */
	char written[64];
	size_t n_written;
} F;

static void fake_reset(const char *data, size_t step)
{
	memset(&F, 0, sizeof F);
	F.data = data;
	F.len = data ? strlen(data) : 0;
	F.step = step;
}

/* The call's fate before any bytes move: -1 with errno, or 0 to go on. */
static int fake_fate(void)
{
	F.calls++;
	if (F.fail_at && (int)F.calls == F.fail_at) {
		errno = EACCES;
		return -1;
	}
	if (F.calls % 2 == 1) {
		F.interrupts++;
		errno = EINTR;
		return -1;
	}
	return 0;
}

static ssize_t fake_pread(int fd, void *buf, size_t len, off_t off)
{
	(void)fd;
	if (fake_fate() < 0)
		return -1;
	size_t at = (size_t)off, n = at < F.len ? F.len - at : 0;
	n = n < len ? n : len;
	n = n < F.step ? n : F.step;
	memcpy(buf, F.data + at, n);
	return (ssize_t)n;
}

static ssize_t fake_read(int fd, void *buf, size_t len)
{
	ssize_t n = fake_pread(fd, buf, len, (off_t)F.pos);
	if (n > 0)
		F.pos += (size_t)n;
	return n;
}

static ssize_t fake_write(int fd, const void *buf, size_t len)
{
	(void)fd;
	if (fake_fate() < 0)
		return -1;
	if (F.zero_writes)
		return 0;
	size_t n = len < F.step ? len : F.step;
	if (n > sizeof F.written - F.n_written)
		n = sizeof F.written - F.n_written;
	memcpy(F.written + F.n_written, buf, n);
	F.n_written += n;
	return (ssize_t)n;
}

static const oa_io_calls fake_calls = { fake_read, fake_write, fake_pread };

static void test_read_some(void)
{
	fake_reset("abcdef", 4);
	char buf[16] = "";
	CHECK(oa_read_some(3, buf, sizeof buf) == 4); /* one read: what it gave, after the interruption */
	CHECK(memcmp(buf, "abcd", 4) == 0);
	CHECK(F.interrupts == 1 && F.calls == 2);
	CHECK(oa_read_some(3, buf, sizeof buf) == 2);
	CHECK(oa_read_some(3, buf, sizeof buf) == 0); /* the end */
	fake_reset("abc", 4);
	F.fail_at = 2;
	errno = 0;
	CHECK(oa_read_some(3, buf, sizeof buf) == -1 && errno == EACCES);
}

static void test_read_full(void)
{
	/* one byte a call, every other call interrupted: still the whole of it */
	fake_reset("the quick brown fox", 1);
	char buf[32] = "";
	CHECK(oa_read_full(3, buf, 9) == 9);
	CHECK(memcmp(buf, "the quick", 9) == 0);
	CHECK(F.interrupts == 9);
	/* asked for more than there is: what there is, the end said by a short count */
	memset(buf, 0, sizeof buf);
	CHECK(oa_read_full(3, buf, sizeof buf) == 10);
	CHECK_STR(buf, " brown fox");
	CHECK(oa_read_full(3, buf, sizeof buf) == 0);
	CHECK(oa_read_full(3, buf, 0) == 0);
	/* an error half-way is an error, not a short count */
	fake_reset("0123456789", 2);
	F.fail_at = 6;
	errno = 0;
	CHECK(oa_read_full(3, buf, 10) == -1 && errno == EACCES);
}

static void test_pread_full(void)
{
	fake_reset("0123456789", 3);
	char buf[16] = "";
	CHECK(oa_pread_full(3, buf, 5, 4) == 5); /* 3 + 2 bytes, each call at its own offset */
	CHECK(memcmp(buf, "45678", 5) == 0);
	CHECK(F.pos == 0); /* the file offset is not moved */
	CHECK(oa_pread_full(3, buf, 8, 6) == 4);
	CHECK(memcmp(buf, "6789", 4) == 0);
	CHECK(oa_pread_full(3, buf, 4, 10) == 0);
}

static void test_write_all(void)
{
	fake_reset(NULL, 3);
	const char *text = "write all of this";
	CHECK(oa_write_all(3, text, strlen(text)) == 0);
	CHECK(F.n_written == strlen(text) && memcmp(F.written, text, strlen(text)) == 0);
	CHECK(F.interrupts == (strlen(text) + 2) / 3);
	CHECK(oa_write_all(3, text, 0) == 0);
	/* a write that takes nothing ends the loop: EIO, never a spin */
	fake_reset(NULL, 3);
	F.zero_writes = true;
	errno = 0;
	CHECK(oa_write_all(3, text, 4) == -1 && errno == EIO);
	CHECK(F.calls == 2);
	fake_reset(NULL, 3);
	F.fail_at = 4;
	errno = 0;
	CHECK(oa_write_all(3, text, strlen(text)) == -1 && errno == EACCES);
	CHECK(F.n_written == 3);
}

/* The system's calls again, on a pipe: what is written is read back. */
static void test_real_pipe(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	CHECK(oa_write_all(p[1], "over a pipe", 11) == 0);
	close(p[1]);
	char buf[32] = "";
	CHECK(oa_read_full(p[0], buf, sizeof buf) == 11);
	CHECK_STR(buf, "over a pipe");
	close(p[0]);
}

/* ---- the hash index ------------------------------------------------------------ */

/* Keys are numbers; entry e of the caller's array holds key keys[e]. */
static bool same_number(const void *ctx, size_t entry, const void *key)
{
	const uint64_t *keys = ctx;
	return keys[entry] == *(const uint64_t *)key;
}

static size_t find_number(const oa_hash_index *ix, const uint64_t *keys, uint64_t hash, uint64_t key)
{
	return oa_hash_index_find(ix, hash, same_number, keys, &key);
}

static void test_index_grows(void)
{
	enum { N = 10000 };
	static uint64_t keys[N];
	oa_hash_index ix = { 0 };
	CHECK(find_number(&ix, keys, 7, 7) == OA_HASH_NONE); /* empty: no table yet */
	bool all = true;
	for (size_t i = 0; i < N; i++) {
		keys[i] = i * 2654435761u + 1;
		oa_hash_index_add(&ix, keys[i] * 0x9e3779b97f4a7c15ull, i);
		all &= ix.cap >= 2 * ix.n && (ix.cap & (ix.cap - 1)) == 0;
	}
	CHECK(all); /* never more than half full, a power of two */
	CHECK(ix.n == N);
	size_t found = 0, strays = 0;
	for (size_t i = 0; i < N; i++) {
		found += find_number(&ix, keys, keys[i] * 0x9e3779b97f4a7c15ull, keys[i]) == i;
		uint64_t absent = keys[i] + 1;
		strays += find_number(&ix, keys, absent * 0x9e3779b97f4a7c15ull, absent) != OA_HASH_NONE;
	}
	CHECK(found == N);
	CHECK(strays == 0);
	oa_hash_index_free(&ix);
	CHECK(ix.cap == 0 && ix.slot == NULL);
}

/* Hashes that are all equal, or that differ and fold to the same 32 bits:
 * the keys themselves decide. */
static void test_index_collisions(void)
{
	uint64_t keys[64];
	oa_hash_index ix = { 0 };
	for (size_t i = 0; i < 32; i++) {
		keys[i] = 1000 + i;
		oa_hash_index_add(&ix, 42, i);
	}
	for (size_t i = 32; i < 64; i++) {
		keys[i] = 2000 + i;
		uint64_t x = i;
		oa_hash_index_add(&ix, 0x1234567812345678ull ^ (x << 32 | x), i); /* one folded hash */
	}
	size_t found = 0;
	for (size_t i = 0; i < 32; i++)
		found += find_number(&ix, keys, 42, keys[i]) == i;
	for (size_t i = 32; i < 64; i++) {
		uint64_t x = i;
		found += find_number(&ix, keys, 0x1234567812345678ull ^ (x << 32 | x), keys[i]) == i;
	}
	CHECK(found == 64);
	CHECK(find_number(&ix, keys, 42, 2040) == OA_HASH_NONE); /* a key of the other run */
	oa_hash_index_free(&ix);
}

/* Removal by backward shift: a run that wraps past the table's end, its
 * first member removed, then one in the middle; renumbering. */
static void test_index_remove(void)
{
	uint64_t keys[8] = { 1, 2, 3, 4, 5 };
	uint64_t hash[8] = { 15, 15, 15, 0, 14 }; /* homes in a table of 16 slots */
	oa_hash_index ix = { 0 };
	oa_hash_index_reserve(&ix, 8);
	CHECK(ix.cap == 16);
	for (size_t i = 0; i < 5; i++)
		oa_hash_index_add(&ix, hash[i], i); /* slots 15, 0, 1, 2, 14 */
	oa_hash_index_remove(&ix, hash[0], 0);
	CHECK(ix.n == 4);
	CHECK(find_number(&ix, keys, hash[0], keys[0]) == OA_HASH_NONE);
	size_t found = 0;
	for (size_t i = 1; i < 5; i++)
		found += find_number(&ix, keys, hash[i], keys[i]) == i;
	CHECK(found == 4);
	oa_hash_index_remove(&ix, hash[2], 2);
	found = 0;
	for (size_t i = 1; i < 5; i++)
		found += find_number(&ix, keys, hash[i], keys[i]) == (i == 2 ? OA_HASH_NONE : i);
	CHECK(found == 4);
	/* A run past the end whose first member goes: the members homed at 15
	 * stay where they are, also the one that wrapped to slot 0. */
	oa_hash_index_clear(&ix);
	uint64_t wrap_keys[3] = { 7, 8, 9 }, wrap_hash[3] = { 14, 15, 15 }; /* slots 14, 15, 0 */
	for (size_t i = 0; i < 3; i++)
		oa_hash_index_add(&ix, wrap_hash[i], i);
	oa_hash_index_remove(&ix, wrap_hash[0], 0);
	CHECK(find_number(&ix, wrap_keys, wrap_hash[1], wrap_keys[1]) == 1);
	CHECK(find_number(&ix, wrap_keys, wrap_hash[2], wrap_keys[2]) == 2);
	oa_hash_index_clear(&ix);
	for (size_t i = 0; i < 5; i++)
		oa_hash_index_add(&ix, hash[i], i);
	oa_hash_index_remove(&ix, hash[0], 0);
	oa_hash_index_remove(&ix, hash[2], 2);
	/* the caller moves its last entry (4) into the hole (2) */
	keys[2] = keys[4];
	oa_hash_index_renumber(&ix, hash[4], 4, 2);
	CHECK(find_number(&ix, keys, hash[4], keys[4]) == 2);
	oa_hash_index_clear(&ix);
	CHECK(ix.n == 0 && ix.cap == 16);
	CHECK(find_number(&ix, keys, hash[1], keys[1]) == OA_HASH_NONE);
	/* past the numbers a slot holds: refused, nothing changed */
	errno = 0;
	CHECK(oa_hash_index_try_add(&ix, 1, (size_t)1 << 31) == -1 && errno == ENOMEM);
	CHECK(ix.n == 0);
	CHECK(oa_hash_index_try_add(&ix, 1, 0) == 0 && ix.n == 1);
	oa_hash_index_free(&ix);
}

/* Adds and removals at random, as the verify cache and the digest set make
 * them (a removed entry's place taken by the last), against the array
 * itself, by a hash that makes long runs. */
static uint64_t weak_hash(uint64_t k)
{
	return k % 64;
}

/* Eight keys a hash, the hashes spread over the whole table (runs that
 * wrap past its end). */
static uint64_t shared_hash(uint64_t k)
{
	return (k / 8) * 0x9e3779b97f4a7c15ull;
}

static void test_index_churn(uint64_t (*hash_of)(uint64_t))
{
	enum { KEYS = 512, STEPS = 20000 };
	static uint64_t keys[KEYS];
	static bool live[KEYS]; /* live[k]: key k is in the array */
	size_t n = 0;
	memset(live, 0, sizeof live);
	oa_hash_index ix = { 0 };
	uint64_t rng = 88172645463325252ull;
	bool ok = true;
	for (int step = 0; step < STEPS && ok; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint64_t k = rng % KEYS;
		size_t at = find_number(&ix, keys, hash_of(k), k);
		ok &= (at != OA_HASH_NONE) == live[k] && (at == OA_HASH_NONE || keys[at] == k);
		if (at == OA_HASH_NONE) {
			keys[n] = k;
			oa_hash_index_add(&ix, hash_of(k), n++);
			live[k] = true;
		} else {
			oa_hash_index_remove(&ix, hash_of(k), at);
			live[k] = false;
			if (at != --n) {
				keys[at] = keys[n];
				oa_hash_index_renumber(&ix, hash_of(keys[at]), n, at);
			}
		}
		ok &= ix.n == n;
	}
	CHECK(ok);
	size_t found = 0;
	for (size_t i = 0; i < n; i++)
		found += find_number(&ix, keys, hash_of(keys[i]), keys[i]) == i;
	CHECK(found == n);
	oa_hash_index_free(&ix);
}

/* ---- the inode ledger ----------------------------------------------------------- */

static oa_inode_use use_of(dev_t dev, ino_t ino, size_t owner, uint64_t bytes)
{
	return (oa_inode_use){ .dev = dev, .ino = ino, .owner = owner, .apparent = bytes, .allocated = bytes * 2 };
}

/* Names added in any order: sorted by file then owner, each file's bytes once. */
static void test_ledger_counts_files_once(void)
{
	oa_inode_ledger l = { 0 };
	oa_inode_ledger_add(&l, use_of(2, 7, 3, 100)); /* file (2,7): three names, owners 3, 1, 1 */
	oa_inode_ledger_add(&l, use_of(1, 9, 0, 10));
	oa_inode_ledger_add(&l, use_of(2, 7, 1, 100));
	oa_inode_ledger_add(&l, use_of(1, 8, 5, 1));
	oa_inode_ledger_add(&l, use_of(2, 7, 1, 100));
	oa_inode_ledger_add(&l, use_of(1, 9, 4, 10)); /* same inode, another device than (2,9) */
	oa_inode_ledger_add(&l, use_of(2, 9, 4, 1000));
	CHECK(!l.sorted);
	CHECK(oa_inode_ledger_has(&l, 2, 9) && !oa_inode_ledger_has(&l, 3, 7)); /* unsorted: a pass */
	oa_inode_ledger_sort(&l);
	CHECK(l.sorted && l.n == 7);
	CHECK(l.v[0].dev == 1 && l.v[0].ino == 8);
	CHECK(l.v[1].ino == 9 && l.v[1].owner == 0 && l.v[2].owner == 4);
	CHECK(l.v[3].dev == 2 && l.v[3].owner == 1 && l.v[4].owner == 1 && l.v[5].owner == 3);
	CHECK(oa_inode_ledger_run(&l, 0) == 1);
	CHECK(oa_inode_ledger_run(&l, 1) == 3);
	CHECK(oa_inode_ledger_run(&l, 3) == 6);
	CHECK(oa_inode_ledger_run(&l, 6) == 7);
	uint64_t apparent, allocated;
	oa_inode_ledger_bytes(&l, &apparent, &allocated);
	CHECK(apparent == 1 + 10 + 100 + 1000);
	CHECK(allocated == 2 * apparent);
	size_t found = 0, absent = 0;
	for (size_t i = 0; i < l.n; i++)
		found += oa_inode_ledger_has(&l, l.v[i].dev, l.v[i].ino);
	absent += oa_inode_ledger_has(&l, 1, 7) + oa_inode_ledger_has(&l, 2, 8) + oa_inode_ledger_has(&l, 3, 0) +
	          oa_inode_ledger_has(&l, 0, 9);
	CHECK(found == l.n && absent == 0);
	oa_inode_ledger_add(&l, use_of(0, 1, 0, 5)); /* an add unsorts */
	CHECK(!l.sorted && oa_inode_ledger_has(&l, 0, 1));
	oa_inode_ledger_free(&l);
	CHECK(l.n == 0 && l.v == NULL);
}

/* A set of files: duplicates go, the first owner's use stays. */
static void test_ledger_unique(void)
{
	oa_inode_ledger l = { 0 };
	CHECK(!oa_inode_ledger_has(&l, 0, 0));
	oa_inode_ledger_unique(&l);
	CHECK(l.n == 0 && !oa_inode_ledger_has(&l, 0, 0));
	for (int k = 0; k < 3; k++) {
		oa_inode_ledger_add_file(&l, 5, 50);
		oa_inode_ledger_add_file(&l, 4, 60);
	}
	oa_inode_ledger_add(&l, use_of(4, 60, 9, 1));
	oa_inode_ledger_unique(&l);
	CHECK(l.n == 2 && l.sorted);
	CHECK(l.v[0].dev == 4 && l.v[0].owner == 0 && l.v[1].dev == 5);
	CHECK(oa_inode_ledger_has(&l, 4, 60) && oa_inode_ledger_has(&l, 5, 50) && !oa_inode_ledger_has(&l, 5, 60));
	oa_inode_ledger_free(&l);
}

/* ---- the bounded escaper ---------------------------------------------------------- */

/* oa_escape's rule, cut where the next escape would not fit. */
static void test_escape_into(void)
{
	char out[16];
	oa_escape_into(out, sizeof out, "a\\b\x1b\xc2\x9b\xff", 7, false);
	CHECK(strcmp(out, "a\\\\b\\x1b...") == 0); /* \u009b and "..." would not fit */
	char *all = oa_escape("a\\b\x1b\xc2\x9b\xff", 7);
	CHECK(strcmp(all, "a\\\\b\\x1b\\u009b\\xff") == 0);
	free(all);
	char big[64];
	oa_escape_into(big, sizeof big, "a\\b\x1b\xc2\x9b\xff", 7, false);
	CHECK(strcmp(big, "a\\\\b\\x1b\\u009b\\xff") == 0); /* room: the same as oa_escape */
	oa_escape_into(big, sizeof big, "abc", 3, true);
	CHECK(strcmp(big, "abc...") == 0);
	oa_escape_into(out, 7, "abc", 3, false);
	CHECK(out[0] == '\0'); /* too small for anything and "..." */
	oa_escape_into(out, 8, "\xe2\x80\xae\xe2\x80\xae", 6, false);
	CHECK(strcmp(out, "...") == 0); /* never half an escape */
}

int main(void)
{
	test_escape_into();
	test_ledger_counts_files_once();
	test_ledger_unique();
	test_index_grows();
	test_index_collisions();
	test_index_remove();
	test_index_churn(weak_hash);
	test_index_churn(shared_hash);
	oa_io_set_calls(&fake_calls);
	test_read_some();
	test_read_full();
	test_pread_full();
	test_write_all();
	oa_io_set_calls(NULL);
	test_real_pipe();
	TEST_MAIN_END();
}
