/* verify_cache.c - see verify_cache.h. */
#include "ollama_audit/verify_cache.h"
#include "ollama_audit/digest.h"
#include "ollama_audit/outfile.h"
#include "base/hash_index.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif

/* In memory: an array of fixed-size slots, one a digest, in no order,
 * indexed by digest (base/hash_index.h); a slot holds the entries of the
 * files claiming that digest, one per file identity (dev, ino), so the
 * copies of a blob in several stores do not overwrite each other. jansson is
 * used only to parse the file; saving prints the JSON directly. */
/* An entry as the table holds it: the fingerprint in binary and the
 * failure as one of the known codes, 72 bytes where an
 * oa_verify_cache_entry is 112 (issue 21: a 22,000-entry cache is ~1 MB
 * smaller). The API's entries are made from it on the way out. */
struct rec {
	oa_file_stamp st;
	double verified_at;
	unsigned char xxh[16];
	unsigned char failed;      /* index into failed_codes */
};

/* The finding codes a failed entry may carry ("" = verified good). */
static const char *const failed_codes[] = { "", "digest-mismatch", "fingerprint-mismatch" };

struct slot {
	unsigned char key[32];     /* the digest, binary: 48-byte slots, not 88 */
	unsigned n;                /* entries in v, at most OA_VERIFY_CACHE_MAX_COPIES */
	struct rec *v;
};

/* A cache file someone else could have written is not read: a forged
 * "verified good" entry would pass a corrupt blob. */
enum distrust {
	TRUSTED,
	NOT_OURS,  /* owned by another user */
	WRITABLE,  /* writable by group or others */
	SYMLINK,   /* a symlink: what it leads to, anyone who can change it decides */
};

struct oa_verify_cache {
	pthread_mutex_t mu;
	char *path;
	struct slot *tab;
	size_t count, cap; /* slots in tab, and room */
	oa_hash_index index; /* of tab, by digest */
	size_t entries;    /* entries over all slots */
	uint64_t seed;     /* hash seed: file names are not trusted to be random */
	unsigned long gen, saved_gen; /* dirty = gen != saved_gen */
	bool failed_only;  /* oa_verify_cache_open_failed: failures alone, read-only */
	enum distrust distrust; /* why the file was not read, when someone else could have written it */
};

static int nibble(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* The key of a digest of 64 lowercase hex digits; false for anything else
 * (no entry is ever stored under another spelling). */
static bool key_of(const char *hex, unsigned char key[32])
{
	if (!hex)
		return false;
	for (size_t i = 0; i < 32; i++) {
		int hi = nibble(hex[2 * i]), lo = hi < 0 ? -1 : nibble(hex[2 * i + 1]);
		if (lo < 0)
			return false;
		key[i] = (unsigned char)(hi << 4 | lo);
	}
	return hex[64] == '\0';
}

/* n bytes as 2n lowercase hex digits and a NUL. */
static void hex_of_bytes(const unsigned char *b, size_t n, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = digits[b[i] >> 4];
		hex[2 * i + 1] = digits[b[i] & 15];
	}
	hex[2 * n] = '\0';
}

static void hex_of(const unsigned char key[32], oa_digest_hex hex)
{
	hex_of_bytes(key, 32, hex);
}

/* The code's index in failed_codes, or -1 for any other string. */
static int failed_index(const char *s)
{
	for (size_t i = 0; i < sizeof failed_codes / sizeof *failed_codes; i++)
		if (strcmp(s, failed_codes[i]) == 0)
			return (int)i;
	return -1;
}

/* e (validated: xxh128 is 32 lowercase hex, failed a known code) as stored. */
static void rec_of(const oa_verify_cache_entry *e, struct rec *r)
{
	r->st = e->st;
	r->verified_at = e->verified_at;
	for (size_t i = 0; i < 16; i++)
		r->xxh[i] = (unsigned char)(nibble(e->xxh128[2 * i]) << 4 | nibble(e->xxh128[2 * i + 1]));
	r->failed = (unsigned char)failed_index(e->failed);
}

static void entry_of(const struct rec *r, oa_verify_cache_entry *e)
{
	memset(e, 0, sizeof *e);
	e->st = r->st;
	e->verified_at = r->verified_at;
	hex_of_bytes(r->xxh, 16, e->xxh128);
	strcpy(e->failed, failed_codes[r->failed]);
}

/* A digest's hash, seeded: file names are not trusted to be random. */
static uint64_t key_hash(const oa_verify_cache *c, const unsigned char key[32])
{
	return XXH3_64bits_withSeed(key, 32, c->seed);
}

static bool same_key(const void *ctx, size_t entry, const void *key)
{
	const struct slot *tab = ctx;
	return memcmp(tab[entry].key, key, 32) == 0;
}

/* Index of key's slot in tab, or OA_HASH_NONE. */
static size_t find(const oa_verify_cache *c, const unsigned char key[32])
{
	return oa_hash_index_find(&c->index, key_hash(c, key), same_key, c->tab, key);
}

/* A new empty slot for key, last in tab; -1 on OOM. */
static long new_slot(oa_verify_cache *c, const unsigned char key[32])
{
	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct slot *t = realloc(c->tab, cap * sizeof *t);
		if (!t)
			return -1;
		c->tab = t;
		c->cap = cap;
	}
	if (oa_hash_index_try_add(&c->index, key_hash(c, key), c->count) < 0)
		return -1;
	struct slot *sl = &c->tab[c->count];
	memcpy(sl->key, key, 32);
	sl->n = 0;
	sl->v = NULL;
	return (long)c->count++;
}

/* The entry of file (dev, ino) in slot sl, or -1. */
static long copy_of(const struct slot *sl, uint64_t dev, uint64_t ino)
{
	for (size_t k = 0; k < sl->n; k++)
		if (sl->v[k].st.dev == dev && sl->v[k].st.ino == ino)
			return (long)k;
	return -1;
}

/* Where e goes in sl: its file's own entry, else a new one; when the slot
 * is full, the entry verified longest ago (a copy long gone, most likely)
 * makes room. -1 on OOM. */
static long place_in(oa_verify_cache *c, struct slot *sl, const oa_verify_cache_entry *e)
{
	long k = copy_of(sl, e->st.dev, e->st.ino);
	if (k >= 0)
		return k;
	if (sl->n == OA_VERIFY_CACHE_MAX_COPIES) {
		size_t old = 0;
		for (size_t j = 1; j < sl->n; j++)
			if (sl->v[j].verified_at < sl->v[old].verified_at)
				old = j;
		return (long)old;
	}
	struct rec *nv = realloc(sl->v, (sl->n + 1) * sizeof *nv);
	if (!nv)
		return -1;
	sl->v = nv;
	c->entries++;
	return (long)sl->n++;
}

/* Free slot i and its entries; the last slot takes its place. */
static void del_slot(oa_verify_cache *c, size_t i)
{
	c->entries -= c->tab[i].n;
	free(c->tab[i].v);
	oa_hash_index_remove(&c->index, key_hash(c, c->tab[i].key), i);
	size_t last = --c->count;
	if (i != last) {
		c->tab[i] = c->tab[last];
		oa_hash_index_renumber(&c->index, key_hash(c, c->tab[i].key), last, i);
	}
}

static int put(oa_verify_cache *c, const char *hex, const oa_verify_cache_entry *e)
{
	unsigned char key[32];
	if (!key_of(hex, key))
		return -1;
	size_t found = find(c, key);
	long i = found != OA_HASH_NONE ? (long)found : new_slot(c, key);
	if (i < 0)
		return -1;
	struct slot *sl = &c->tab[i];
	long k = place_in(c, sl, e);
	if (k < 0) {
		if (sl->n == 0) /* the slot just made stays unused */
			del_slot(c, (size_t)i);
		return -1;
	}
	rec_of(e, &sl->v[k]);
	return 0;
}

/* The slot of hex, or NULL. */
static struct slot *slot_get(const oa_verify_cache *c, const char *hex)
{
	unsigned char key[32];
	if (!key_of(hex, key))
		return NULL;
	size_t i = find(c, key);
	return i == OA_HASH_NONE ? NULL : &c->tab[i];
}

static bool is_lower_hex(const char *s, size_t n)
{
	if (!s)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
	}
	return s[n] == '\0';
}

int oa_verify_cache_default_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	int n;
	/* The XDG spec: a relative XDG_CACHE_HOME is invalid and must be ignored. */
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/ollama-audit/verify-cache.json", xdg);
	else {
		const char *home = getenv("HOME");
		if (!home || !home[0])
			return -1;
		n = snprintf(buf, len, "%s/.cache/ollama-audit/verify-cache.json", home);
	}
	return n > 0 && (size_t)n < len ? 0 : -1;
}

static bool get_int(json_t *o, const char *key, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		return false;
	*out = (int64_t)json_integer_value(v);
	return true;
}

/* The finding codes a failed entry may carry. */
static bool failed_code_ok(const char *s)
{
	return failed_index(s) >= 0;
}

/* Parse a stored entry; false when any field is missing or malformed. */
static bool entry_from_json(json_t *o, oa_verify_cache_entry *e)
{
	int64_t dev, ino, size;
	if (!json_is_object(o))
		return false;
	if (!get_int(o, "dev", &dev) || !get_int(o, "ino", &ino) || !get_int(o, "size", &size) ||
	    !get_int(o, "mtime_ns", &e->st.mtime_ns) || !get_int(o, "ctime_ns", &e->st.ctime_ns))
		return false;
	if (size < 0)
		return false;
	e->st.dev = (uint64_t)dev;
	e->st.ino = (uint64_t)ino;
	e->st.size = (uint64_t)size;
	const char *x = json_string_value(json_object_get(o, "xxh128"));
	if (!x || strlen(x) != 32 || !is_lower_hex(x, 32))
		return false;
	memcpy(e->xxh128, x, 33);
	json_t *va = json_object_get(o, "verified_at");
	if (!json_is_number(va))
		return false;
	e->verified_at = json_number_value(va);
	e->failed[0] = '\0';
	json_t *fv = json_object_get(o, "failed");
	if (fv) {
		const char *f = json_string_value(fv);
		if (!f || !*f || strlen(f) >= sizeof e->failed || !failed_code_ok(f))
			return false;
		strcpy(e->failed, f);
	}
	return e->verified_at >= 0 && e->verified_at < 1e15; /* also rejects NaN */
}

/* A cache of a million entries is ~150 MB of JSON; anything larger is not ours. */
#define OA_VERIFY_CACHE_MAX_FILE ((size_t)512 << 20)

/* One stored entry of hex into the table; -1 when it is malformed. */
static int load_entry(oa_verify_cache *c, const char *hex, json_t *val)
{
	oa_verify_cache_entry e;
	if (!entry_from_json(val, &e))
		return -1;
	return c->failed_only && !e.failed[0] ? 0 : put(c, hex, &e);
}

/* Load the cache bytes into the table as one JSON tree: the general parse,
 * for files the streaming one does not take (see stream_load). */
static void tree_load(oa_verify_cache *c, const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_loadb((const char *)bytes, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		oa_seterr(err, errlen, "verify cache %s is corrupt (line %d: %s); starting with an empty cache",
		       c->path, jerr.line, jerr.text);
		return;
	}
	const char *schema = json_string_value(json_object_get(root, "schema"));
	json_t *entries = json_object_get(root, "entries");
	/* /1 had no "failed"; its entries read as good ones. /1 and /2 hold
	 * one entry a digest, /3 a list of them (one a file). */
	bool lists = schema && strcmp(schema, OA_VERIFY_CACHE_SCHEMA) == 0;
	if (!json_is_object(root) || !schema ||
	    (!lists && strcmp(schema, OA_VERIFY_CACHE_SCHEMA_V2) != 0 &&
	     strcmp(schema, OA_VERIFY_CACHE_SCHEMA_V1) != 0) ||
	    !json_is_object(entries)) {
		oa_seterr(err, errlen, "verify cache %s: unknown schema or layout; starting with an empty cache",
		       c->path);
		json_decref(root);
		return;
	}
	size_t bad = 0;
	const char *key;
	json_t *val;
	json_object_foreach(entries, key, val) {
		bool key_ok = strlen(key) == 64 && is_lower_hex(key, 64);
		if (!lists) {
			bad += !key_ok || load_entry(c, key, val) != 0;
			continue;
		}
		if (!key_ok || !json_is_array(val)) {
			bad++;
			continue;
		}
		size_t k;
		json_t *one;
		json_array_foreach(val, k, one)
			bad += load_entry(c, key, one) != 0;
	}
	if (bad) {
		oa_seterr(err, errlen, "verify cache %s: dropped %zu invalid entr%s", c->path, bad,
		       bad == 1 ? "y" : "ies");
		c->gen++;
	}
	json_decref(root);
}

/* The streaming parse: the file as this program writes it, one entry's
 * value parsed at a time, so loading costs the table and not a JSON tree of
 * the whole file (~6x its size: 35 MB for a 10,000-model store's cache).
 * It takes {"schema": S, "entries": {HEX: [...] or {...}, ...}} with schema
 * first and keys without escapes; anything else (and any duplicate digest)
 * returns false with the table untouched or to be reset, for tree_load. */
struct cursor {
	const char *p, *end;
	/* Reading the file a window at a time (fd >= 0): the bytes not yet
	 * parsed, at least half a window of them until the end of the file, so
	 * the file's bytes never sit beside the whole table. */
	int fd;
	char *buf;
	size_t cap, total, max;
	bool eof, failed;   /* failed: a read error, or more than max bytes */
};

/* 256 KiB: the window is live beside the whole table at check's and
 * verify's peak (the scan's store is there too), and one digest's value
 * is at most 16 entries of ~250 bytes, far below half of it. */
#define STREAM_WINDOW ((size_t)1 << 18)

/* Keep at least half a window ahead of the cursor (a value larger than
 * that fails the streaming parse, and the whole file is read instead). */
static void refill(struct cursor *k)
{
	if (k->fd < 0 || k->eof)
		return;
	size_t n = (size_t)(k->end - k->p);
	if (n >= k->cap / 2)
		return;
	memmove(k->buf, k->p, n);
	while (n < k->cap) {
		ssize_t r = oa_read_some(k->fd, k->buf + n, k->cap - n);
		if (r <= 0) {
			k->eof = true;
			k->failed |= r < 0;
			break;
		}
		n += (size_t)r;
		k->total += (size_t)r;
	}
	k->failed |= k->total > k->max;
	k->p = k->buf;
	k->end = k->buf + n;
}

static void skip_ws(struct cursor *k)
{
	while (k->p < k->end && (*k->p == ' ' || *k->p == '\n' || *k->p == '\r' || *k->p == '\t'))
		k->p++;
}

static bool take(struct cursor *k, char ch)
{
	skip_ws(k);
	if (k->p >= k->end || *k->p != ch)
		return false;
	k->p++;
	return true;
}

/* A string without escapes: its bytes in [*s, *s + *n). */
static bool plain_string(struct cursor *k, const char **s, size_t *n)
{
	if (!take(k, '"'))
		return false;
	const char *q = k->p;
	while (q < k->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
		q++;
	if (q >= k->end || *q != '"')
		return false;
	*s = k->p;
	*n = (size_t)(q - k->p);
	k->p = q + 1;
	return true;
}

/* The array or object at the cursor, parsed alone; NULL when it is not one. */
static json_t *one_value(struct cursor *k)
{
	skip_ws(k);
	if (k->p >= k->end || (*k->p != '[' && *k->p != '{'))
		return NULL;
	json_error_t jerr;
	json_t *v = json_loadb(k->p, (size_t)(k->end - k->p), JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK,
	                       &jerr);
	if (v)
		k->p += jerr.position;
	return v;
}

static bool str_is(const char *s, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(s, want, n) == 0;
}

/* The entries of one digest: a list (/3) or one entry (/1, /2). */
static size_t stream_digest(oa_verify_cache *c, const char *hex, bool lists, json_t *val)
{
	if (!lists)
		return load_entry(c, hex, val) != 0;
	if (!json_is_array(val))
		return 1;
	size_t k, bad = 0;
	json_t *one;
	json_array_foreach(val, k, one)
		bad += load_entry(c, hex, one) != 0;
	return bad;
}

static bool stream_entries(oa_verify_cache *c, struct cursor *k, bool lists, size_t *bad)
{
	char prev[65] = "";
	if (!take(k, '{'))
		return false;
	if (take(k, '}'))
		return true;
	do {
		const char *key;
		size_t n;
		refill(k);
		if (!plain_string(k, &key, &n) || !take(k, ':'))
			return false;
		char hex[65] = "";
		if (n == 64) {
			memcpy(hex, key, 64);
			hex[64] = '\0';
		}
		bool key_ok = is_lower_hex(hex, 64);
		if (key_ok && slot_get(c, hex)) /* a duplicate key: tree_load says the file is corrupt */
			return false;
		/* The table of failures alone cannot see a duplicate: it takes the
		 * keys in the ascending order this program writes them (then none
		 * repeats), and leaves any other order to tree_load. */
		if (c->failed_only && key_ok) {
			if (strcmp(prev, hex) >= 0)
				return false;
			memcpy(prev, hex, sizeof prev);
		}
		json_t *val = one_value(k);
		if (!val)
			return false;
		*bad += key_ok ? stream_digest(c, hex, lists, val) : 1;
		json_decref(val);
	} while (take(k, ','));
	return take(k, '}');
}

static bool stream_parse(oa_verify_cache *c, struct cursor *kp, char *err, size_t errlen)
{
	struct cursor k = *kp;
	const char *key, *schema;
	size_t n, sn, bad = 0;
	if (!take(&k, '{') || !plain_string(&k, &key, &n) || !str_is(key, n, "schema") || !take(&k, ':') ||
	    !plain_string(&k, &schema, &sn) || !take(&k, ','))
		return false;
	bool lists = str_is(schema, sn, OA_VERIFY_CACHE_SCHEMA);
	if (!lists && !str_is(schema, sn, OA_VERIFY_CACHE_SCHEMA_V2) && !str_is(schema, sn, OA_VERIFY_CACHE_SCHEMA_V1))
		return false;
	if (!plain_string(&k, &key, &n) || !str_is(key, n, "entries") || !take(&k, ':') ||
	    !stream_entries(c, &k, lists, &bad))
		return false;
	refill(&k);
	if (!take(&k, '}'))
		return false;
	skip_ws(&k);
	*kp = k;
	if (k.p != k.end || (k.fd >= 0 && (!k.eof || k.failed)))
		return false;
	if (bad) {
		oa_seterr(err, errlen, "verify cache %s: dropped %zu invalid entr%s", c->path, bad,
		          bad == 1 ? "y" : "ies");
		c->gen++;
	}
	return true;
}

static bool stream_load(oa_verify_cache *c, const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
	struct cursor k = { .p = (const char *)bytes, .end = (const char *)bytes + len, .fd = -1 };
	return stream_parse(c, &k, err, errlen);
}

/* The streaming parse read from fd (a regular file of at most
 * OA_VERIFY_CACHE_MAX_FILE bytes) a window at a time. false when it cannot
 * be read or does not parse so: load() then reads it whole and says why. */
static bool stream_file(oa_verify_cache *c, int fd, char *err, size_t errlen)
{
	struct cursor k = { .fd = fd, .buf = oa_xmalloc(STREAM_WINDOW), .cap = STREAM_WINDOW,
	                    .max = OA_VERIFY_CACHE_MAX_FILE };
	k.p = k.end = k.buf;
	refill(&k);
	bool ok = !k.failed && stream_parse(c, &k, err, errlen);
	free(k.buf);
	return ok;
}

/* Empty the table (after a streaming parse that gave up half-way). */
static void clear(oa_verify_cache *c)
{
	for (size_t i = 0; i < c->count; i++)
		free(c->tab[i].v);
	c->count = 0;
	c->entries = 0;
	oa_hash_index_clear(&c->index);
}

/* Whether the cache file (st: fstat of the open file) may be believed:
 * ours, and writable by no one else. Sets c->distrust and, when not, says
 * so in err. */
static bool trusted(oa_verify_cache *c, const struct stat *st, char *err, size_t errlen)
{
	if (st->st_uid != geteuid()) {
		c->distrust = NOT_OURS;
		oa_seterr(err, errlen, "verify cache %s is owned by uid %lu, not by you (uid %lu): its entries are "
		          "ignored", c->path, (unsigned long)st->st_uid, (unsigned long)geteuid());
	} else if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		c->distrust = WRITABLE;
		oa_seterr(err, errlen, "verify cache %s is writable by %s (mode %04o): its entries are ignored",
		          c->path, st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
	}
	return c->distrust == TRUSTED;
}

/* The cache file, opened without following a symlink (O_NOFOLLOW; a FIFO
 * is not waited on: O_NONBLOCK) and judged on that very open file: no
 * name is looked at twice. -1 when there is nothing to read (err says why
 * when that is worth a word). */
static int open_trusted(oa_verify_cache *c, char *err, size_t errlen)
{
	struct stat st, ls;
	int fd = oa_openat_ro(AT_FDCWD, c->path, O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;
		if ((e == ELOOP || e == EMLINK) && lstat(c->path, &ls) == 0 && S_ISLNK(ls.st_mode)) {
			c->distrust = SYMLINK;
			oa_seterr(err, errlen, "verify cache %s is a symlink: its entries are ignored", c->path);
		} else if (e != ENOENT && e != ENOTDIR) {
			oa_seterr(err, errlen, "verify cache %s: %s; starting with an empty cache", c->path, strerror(e));
		}
		return -1;
	}
	const char *bad = fstat(fd, &st) < 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file"
	                  : (uint64_t)st.st_size > OA_VERIFY_CACHE_MAX_FILE ? strerror(EFBIG) : NULL;
	if (bad)
		oa_seterr(err, errlen, "verify cache %s: %s; starting with an empty cache", c->path, bad);
	if (bad || !trusted(c, &st, err, errlen)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Load c->path into the table; problems are warnings in err, never failures. */
static void load(oa_verify_cache *c, char *err, size_t errlen)
{
	int fd = open_trusted(c, err, errlen);
	if (fd < 0)
		return;
	unsigned long gen = c->gen;
	if (stream_file(c, fd, err, errlen)) {
		close(fd);
		return;
	}
	clear(c);
	c->gen = gen;
	oa_seterr(err, errlen, "%s", "");
	uint8_t *bytes;
	size_t len;
	if (oa_read_fd_whole(fd, OA_VERIFY_CACHE_MAX_FILE, &bytes, &len) < 0) {
		oa_seterr(err, errlen, "verify cache %s: %s; starting with an empty cache", c->path, strerror(errno));
		close(fd);
		return;
	}
	close(fd);
	if (!stream_load(c, bytes, len, err, errlen)) {
		clear(c);
		c->gen = gen;
		oa_seterr(err, errlen, "%s", "");
		tree_load(c, bytes, len, err, errlen);
	}
	free(bytes);
}

static oa_verify_cache *open_cache(const char *path, bool failed_only, char *err, size_t errlen)
{
	char def[4096];
	oa_seterr(err, errlen, "%s", "");
	if (!path) {
		if (oa_verify_cache_default_path(def, sizeof def) != 0) {
			oa_seterr(err, errlen, "no verify cache path: neither XDG_CACHE_HOME nor HOME is set");
			return NULL;
		}
		path = def;
	}
	if (!path[0]) {
		oa_seterr(err, errlen, "empty verify cache path");
		return NULL;
	}
	oa_verify_cache *c = calloc(1, sizeof *c);
	if (!c || !(c->path = strdup(path))) {
		free(c);
		oa_seterr(err, errlen, "out of memory");
		return NULL;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->seed = XXH3_64bits_withSeed(&c, sizeof c, (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32));
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c->path);
		free(c);
		oa_seterr(err, errlen, "pthread_mutex_init failed");
		return NULL;
	}
	c->failed_only = failed_only;
	load(c, err, errlen);
	return c;
}

oa_verify_cache *oa_verify_cache_open(const char *path, char *err, size_t errlen)
{
	return open_cache(path, false, err, errlen);
}

oa_verify_cache *oa_verify_cache_open_failed(const char *path, char *err, size_t errlen)
{
	return open_cache(path, true, err, errlen);
}

const char *oa_verify_cache_path(const oa_verify_cache *c)
{
	return c->path;
}

/* The entry lookup gives of a slot: the newest good one, else the newest. */
static const struct rec *best_of(const struct slot *sl)
{
	const struct rec *best = NULL;
	for (size_t k = 0; k < sl->n; k++) {
		const struct rec *e = &sl->v[k];
		if (!best || (!e->failed && best->failed) ||
		    (!e->failed == !best->failed && e->verified_at > best->verified_at))
			best = e;
	}
	return best;
}

bool oa_verify_cache_lookup(oa_verify_cache *c, const char *hex, oa_verify_cache_entry *out)
{
	if (!c || !hex || strlen(hex) != 64)
		return false;
	pthread_mutex_lock(&c->mu);
	const struct slot *sl = slot_get(c, hex);
	const struct rec *e = sl ? best_of(sl) : NULL;
	if (e)
		entry_of(e, out);
	pthread_mutex_unlock(&c->mu);
	return e != NULL;
}

bool oa_verify_cache_lookup_file(oa_verify_cache *c, const char *hex, uint64_t dev, uint64_t ino,
                                 oa_verify_cache_entry *out)
{
	if (!c || !hex || strlen(hex) != 64)
		return false;
	pthread_mutex_lock(&c->mu);
	const struct slot *sl = slot_get(c, hex);
	long k = sl ? copy_of(sl, dev, ino) : -1;
	if (k >= 0)
		entry_of(&sl->v[k], out);
	pthread_mutex_unlock(&c->mu);
	return k >= 0;
}

int oa_verify_cache_update(oa_verify_cache *c, const char *hex, const oa_verify_cache_entry *e)
{
	if (!c || c->failed_only || !hex || strlen(hex) != 64 || !is_lower_hex(hex, 64) ||
	    strnlen(e->xxh128, sizeof e->xxh128) != 32 || !is_lower_hex(e->xxh128, 32) ||
	    !(e->verified_at >= 0 && e->verified_at < 1e15) ||
	    strnlen(e->failed, sizeof e->failed) >= sizeof e->failed || !failed_code_ok(e->failed))
		return -1;
	pthread_mutex_lock(&c->mu);
	int rc = put(c, hex, e);
	if (rc == 0)
		c->gen++;
	pthread_mutex_unlock(&c->mu);
	return rc;
}

void oa_verify_cache_remove(oa_verify_cache *c, const char *hex)
{
	if (!c || !hex || strlen(hex) != 64)
		return;
	pthread_mutex_lock(&c->mu);
	struct slot *sl = slot_get(c, hex);
	if (sl) {
		del_slot(c, (size_t)(sl - c->tab));
		c->gen++;
	}
	pthread_mutex_unlock(&c->mu);
}

void oa_verify_cache_remove_file(oa_verify_cache *c, const char *hex, uint64_t dev, uint64_t ino)
{
	if (!c || !hex || strlen(hex) != 64)
		return;
	pthread_mutex_lock(&c->mu);
	struct slot *sl = slot_get(c, hex);
	long k = sl ? copy_of(sl, dev, ino) : -1;
	if (k >= 0) {
		sl->v[k] = sl->v[--sl->n];
		c->entries--;
		if (!sl->n)
			del_slot(c, (size_t)(sl - c->tab));
		c->gen++;
	}
	pthread_mutex_unlock(&c->mu);
}

size_t oa_verify_cache_count(oa_verify_cache *c)
{
	pthread_mutex_lock(&c->mu);
	size_t n = c->entries;
	pthread_mutex_unlock(&c->mu);
	return n;
}

bool oa_verify_cache_dirty(oa_verify_cache *c)
{
	pthread_mutex_lock(&c->mu);
	bool d = c->gen != c->saved_gen;
	pthread_mutex_unlock(&c->mu);
	return d;
}

const char *oa_verify_state_name(enum oa_verify_state s)
{
	return s == OA_VSTATE_VERIFIED ? "verified" : s == OA_VSTATE_FAILED ? "failed" : "unverified";
}

bool oa_file_stamp_equal(const oa_file_stamp *a, const oa_file_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

int oa_file_stamp_of(const char *path, oa_file_stamp *out)
{
	struct stat st;
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	out->dev = (uint64_t)st.st_dev;
	out->ino = (uint64_t)st.st_ino;
	out->size = (uint64_t)st.st_size;
	out->mtime_ns = oa_stat_mtime_ns(&st);
	out->ctime_ns = oa_stat_ctime_ns(&st);
	return 0;
}

enum oa_verify_state oa_verify_cache_judge(oa_verify_cache *c, const char *hex, const oa_file_stamp *now,
                                           oa_verify_cache_entry *e)
{
	oa_verify_cache_entry tmp;
	if (!e)
		e = &tmp;
	/* An entry about another copy, or this file before it changed, says
	 * nothing about what is there now. */
	if (!c || !oa_verify_cache_lookup_file(c, hex, now->dev, now->ino, e) || !oa_file_stamp_equal(&e->st, now))
		return OA_VSTATE_UNVERIFIED;
	return e->failed[0] ? OA_VSTATE_FAILED : OA_VSTATE_VERIFIED;
}

/* mkdir -p with mode 0700 for the directories we create. */
static int mkdir_p(const char *dir)
{
	char tmp[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof tmp)
		return errno = ENAMETOOLONG, -1;
	memcpy(tmp, dir, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
		return -1;
	struct stat st;
	if (stat(tmp, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return errno = ENOTDIR, -1;
	return 0;
}

static int cmp_slot(const void *a, const void *b)
{
	/* binary order is the lowercase hex's order */
	return memcmp((*(struct slot *const *)a)->key, (*(struct slot *const *)b)->key, 32);
}

/* A slot's entries in file order (dev, ino): the file is stable and diffable. */
static int cmp_file(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->st.dev != y->st.dev)
		return x->st.dev < y->st.dev ? -1 : 1;
	return x->st.ino < y->st.ino ? -1 : x->st.ino > y->st.ino;
}

static void write_entry(FILE *f, const struct rec *r, bool first)
{
	oa_verify_cache_entry ent, *e = &ent;
	entry_of(r, e);
	fprintf(f,
	        "%s{\"dev\":%lld,\"ino\":%lld,\"size\":%lld,\"mtime_ns\":%lld,"
	        "\"ctime_ns\":%lld,\"xxh128\":\"%s\",\"verified_at\":%.17g",
	        first ? "" : ",", (long long)(int64_t)e->st.dev, (long long)(int64_t)e->st.ino,
	        (long long)(int64_t)e->st.size, (long long)e->st.mtime_ns, (long long)e->st.ctime_ns, e->xxh128,
	        e->verified_at);
	/* failed holds one of two known codes: nothing to escape. */
	fprintf(f, e->failed[0] ? ",\"failed\":\"%s\"}" : "%s}", e->failed);
}

/* The whole file, by hand: keys and xxh128 are validated hex, numbers are
 * integers and a finite double, so nothing needs escaping. Caller holds mu. */
static int write_json(oa_verify_cache *c, int fd)
{
	struct slot **v = malloc((c->count ? c->count : 1) * sizeof *v);
	if (!v)
		return errno = ENOMEM, -1;
	size_t n = 0;
	for (size_t i = 0; i < c->count; i++)
		v[n++] = &c->tab[i];
	qsort(v, n, sizeof *v, cmp_slot);
	int fd2 = dup(fd);
	FILE *f = fd2 >= 0 ? fdopen(fd2, "w") : NULL;
	if (!f) {
		if (fd2 >= 0)
			close(fd2);
		free(v);
		return -1;
	}
	fprintf(f, "{\"schema\":\"%s\",\"entries\":{", OA_VERIFY_CACHE_SCHEMA);
	for (size_t i = 0; i < n; i++) {
		qsort(v[i]->v, v[i]->n, sizeof *v[i]->v, cmp_file);
		oa_digest_hex hex;
		hex_of(v[i]->key, hex);
		fprintf(f, "%s\n\"%s\":[", i ? "," : "", hex);
		for (size_t k = 0; k < v[i]->n; k++)
			write_entry(f, &v[i]->v[k], k == 0);
		fputc(']', f);
	}
	fputs("}}\n", f);
	free(v);
	int rc = ferror(f) ? -1 : 0;
	int e = errno;
	if (fclose(f) != 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	errno = e;
	return rc;
}

/* The directory of path into dir (len bytes): "." for a bare name. */
static int dir_of(const char *path, char *dir, size_t len)
{
	size_t plen = strlen(path);
	if (plen >= len)
		return -1;
	memcpy(dir, path, plen + 1);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	return 0;
}

/* Why the directory open at dfd is no place for a fresh cache in place of
 * a file someone else wrote (they could do it again): owned by another
 * user than this one or root, or writable by group or others; NULL when
 * it is fit. */
static const char *unfit_dir(int dfd, char *why, size_t len)
{
	struct stat st;
	if (fstat(dfd, &st) < 0)
		snprintf(why, len, "%s", strerror(errno));
	else if (st.st_uid != geteuid() && st.st_uid != 0)
		snprintf(why, len, "owned by uid %lu", (unsigned long)st.st_uid);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, len, "writable by %s", st.st_mode & S_IWOTH ? "others" : "its group");
	else
		return NULL;
	return why;
}

/* Serialise the table into o and put it in place. */
static int write_out(oa_verify_cache *c, oa_outfile *o, char *err, size_t errlen)
{
	char why[512];
	/* Serialise under the lock (workers may still be updating entries),
	 * sorted by digest so the file is stable and diffable. */
	pthread_mutex_lock(&c->mu);
	int rc = write_json(c, o->fd);
	unsigned long gen = c->gen;
	pthread_mutex_unlock(&c->mu);
	if (rc != 0) {
		oa_seterr(err, errlen, "cannot write %s: %s", c->path, strerror(errno));
		oa_outfile_abort(o);
		return -1;
	}
	if (oa_outfile_commit(o, why, sizeof why) < 0) {
		oa_seterr(err, errlen, "cannot write %s: %s", c->path, why);
		return -1;
	}
	pthread_mutex_lock(&c->mu);
	c->saved_gen = gen;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

int oa_verify_cache_save(oa_verify_cache *c, char *err, size_t errlen)
{
	char dir[4096], why[512];
	oa_seterr(err, errlen, "%s", "");
	if (c->failed_only) { /* never a partial table over the file */
		oa_seterr(err, errlen, "verify cache %s was opened read-only (failures alone)", c->path);
		return -1;
	}
	const char *slash = strrchr(c->path, '/'), *name = slash ? slash + 1 : c->path;
	if (dir_of(c->path, dir, sizeof dir) != 0 || !*name) {
		oa_seterr(err, errlen, "verify cache %s: %s", c->path, *name ? "path too long" : "names a directory");
		return -1;
	}
	bool made = mkdir_p(dir) == 0;
	int dfd = made ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd < 0) {
		oa_seterr(err, errlen, "cannot %s %s: %s", made ? "open" : "create", dir, strerror(errno));
		return -1;
	}
	/* The file that was not believed is never written again as it is (its
	 * owner and mode kept): a fresh one replaces it, where only we can. */
	bool fresh = c->distrust == NOT_OURS || c->distrust == WRITABLE;
	oa_outfile o;
	int rc = -1;
	if (fresh && unfit_dir(dfd, why, sizeof why))
		oa_seterr(err, errlen, "verify cache %s not saved: the file there was ignored and its directory %s "
		          "is %s (remove the file, or name another --cache)", c->path, dir, why);
	/* outfile.h: a temporary file and a rename over a regular file only;
	 * a FIFO or device is written through, other things are refused. */
	else if (oa_outfile_openat(&o, dfd, name, 0600, OA_OUT_NOWAIT | (fresh ? OA_OUT_FRESH : 0), why,
	                           sizeof why) < 0)
		oa_seterr(err, errlen, "cannot write %s: %s", c->path, why);
	else
		rc = write_out(c, &o, err, errlen);
	close(dfd);
	if (rc == 0 && fresh) {
		c->distrust = TRUSTED;
		oa_seterr(err, errlen, "verify cache %s written afresh (yours, mode 0600) in place of the file "
		          "ignored", c->path);
	}
	return rc;
}

void oa_verify_cache_close(oa_verify_cache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	for (size_t i = 0; i < c->count; i++)
		free(c->tab[i].v);
	free(c->tab);
	oa_hash_index_free(&c->index);
	free(c->path);
	free(c);
}
