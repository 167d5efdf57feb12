/* util.c - see util.h. */
#include "base/util.h"
#include "base/oom_private.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void *oa_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oa_out_of_memory(n);
	return p;
}

void *oa_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oa_out_of_memory(n * size);
	return p;
}

void *oa_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oa_out_of_memory(n);
	return p;
}

void *oa_xreallocarray(void *p, size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total))
		oa_out_of_memory(SIZE_MAX); /* the size overflowed */
	return oa_xrealloc(p, total);
}

void *oa_grow_array(void *v, size_t need, size_t *cap, size_t size)
{
	if (need <= *cap)
		return v;
	size_t n = *cap ? *cap : 16;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : n * 2;
	v = oa_xreallocarray(v, n, size);
	*cap = n;
	return v;
}

char *oa_xstrdup(const char *s)
{
	return oa_xstrndup(s, strlen(s));
}

char *oa_xstrndup(const char *s, size_t n)
{
	char *p = oa_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *oa_xvasprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		oa_out_of_memory(SIZE_MAX); /* the size overflowed */
	char *p = oa_xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *oa_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = oa_xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void oa_buf_init(oa_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void oa_buf_free(oa_buf *b)
{
	free(b->data);
	oa_buf_init(b);
}

static void buf_grow(oa_buf *b, size_t extra)
{
	size_t need;
	if (__builtin_add_overflow(b->len, extra + 1, &need))
		oa_out_of_memory(SIZE_MAX); /* the size overflowed */
	OA_ALLOC_GROW(b->data, need, b->cap);
}

void oa_buf_add(oa_buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void oa_buf_adds(oa_buf *b, const char *s)
{
	oa_buf_add(b, s, strlen(s));
}

void oa_buf_addc(oa_buf *b, char c)
{
	oa_buf_add(b, &c, 1);
}

static bool unsafe_cp(uint32_t cp);

/* The length of the printable sequence at p (n > 0 bytes left), or 0 when
 * the byte there is not one (oa_is_printable). */
static size_t printable_seq(const unsigned char *p, size_t n)
{
	size_t len = oa_utf8_seq(p, n);
	return len && !unsafe_cp(oa_utf8_cp(p, len)) ? len : 0;
}

/* Bytes a terminal must not see raw, as printf reads them back: octal
 * escapes in a command substitution, which POSIX sh (dash too, which has
 * no $'...') keeps byte for byte but for the newlines it ends with. */
static void add_printf_bytes(oa_buf *b, const unsigned char *p, size_t n)
{
	oa_buf_adds(b, "\"$(printf '");
	for (size_t i = 0; i < n; i++)
		oa_buf_printf(b, "\\%03o", p[i]);
	oa_buf_adds(b, "')\"");
}

static void add_single_quoted(oa_buf *b, const char *s, size_t n)
{
	oa_buf_addc(b, '\'');
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\'')
			oa_buf_adds(b, "'\\''");
		else
			oa_buf_addc(b, s[i]);
	oa_buf_addc(b, '\'');
}

void oa_buf_add_shell_word(oa_buf *b, const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-";
	size_t n = strlen(s);
	if (*s && strspn(s, plain) == n) {
		oa_buf_adds(b, s);
		return;
	}
	const unsigned char *p = (const unsigned char *)s;
	size_t end = n; /* trailing newlines stay raw in quotes: a substitution strips them */
	while (end > 0 && p[end - 1] == '\n')
		end--;
	if (end == 0 || oa_is_printable(s)) {
		add_single_quoted(b, s, n);
		return;
	}
	for (size_t i = 0; i < end;) {
		size_t j = i;
		if (printable_seq(p + i, end - i)) {
			for (size_t len; j < end && (len = printable_seq(p + j, end - j)) != 0;)
				j += len;
			add_single_quoted(b, s + i, j - i);
		} else {
			while (j < end && !printable_seq(p + j, end - j))
				j++;
			if (p[j - 1] == '\n') /* what follows it, so the substitution strips no newline */
				j += printable_seq(p + j, end - j);
			add_printf_bytes(b, p + i, j - i);
		}
		i = j;
	}
	if (end < n)
		add_single_quoted(b, s + end, n - end);
}

void oa_buf_printf(oa_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = oa_xvasprintf(fmt, ap);
	va_end(ap);
	oa_buf_adds(b, s);
	free(s);
}

char *oa_buf_take(oa_buf *b)
{
	if (!b->data)
		oa_buf_add(b, "", 0);
	char *d = b->data;
	oa_buf_init(b);
	return d;
}

/* The one UTF-8 check (util.h): by code point, so overlong forms (C0, C1,
 * E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and anything above
 * U+10FFFF (F4 90.., F5..FF) are all rejected. */
size_t oa_utf8_seq(const unsigned char *p, size_t n)
{
	if (n == 0)
		return 0;
	unsigned c = p[0];
	size_t len;
	unsigned min;
	if (c < 0x80)
		return 1;
	else if ((c & 0xE0) == 0xC0)
		len = 2, min = 0x80;
	else if ((c & 0xF0) == 0xE0)
		len = 3, min = 0x800;
	else if ((c & 0xF8) == 0xF0)
		len = 4, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	unsigned cp = c & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

/* A code point that must not reach a terminal as it is: C0 controls, DEL,
 * C1 controls (U+0080..U+009F: 0x9B is a CSI, 0x9D an OSC to a terminal
 * that takes 8-bit controls), the bidi marks, overrides and isolates that
 * reorder what follows them (U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069) and the line and paragraph separators (U+2028, U+2029). */
static bool unsafe_cp(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x200E || cp == 0x200F ||
	       cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

uint32_t oa_utf8_cp(const unsigned char *p, size_t len)
{
	if (len == 1)
		return p[0];
	uint32_t cp = p[0] & (0x7F >> len);
	for (size_t i = 1; i < len; i++)
		cp = (cp << 6) | (p[i] & 0x3F);
	return cp;
}

/* The one escaper of everything printed: unsafe code points become \xNN
 * (one byte) or \uNNNN, bytes that are not UTF-8 \xNN. `backslash`
 * doubles a backslash, so the escape reads back unambiguously; text that
 * may be escaped already (oa_buf_add_printable) leaves it, so escaping
 * twice changes nothing. The escape of the sequence at s (n > 0 bytes
 * left) goes to piece; returns its length, *used the bytes it stands for. */
static size_t escape_piece(const unsigned char *s, size_t n, bool backslash, char piece[12], size_t *used)
{
	size_t len = oa_utf8_seq(s, n);
	uint32_t cp = len ? oa_utf8_cp(s, len) : 0;
	*used = len ? len : 1;
	if (backslash && s[0] == '\\')
		return (size_t)snprintf(piece, 12, "\\\\");
	if (!len || (cp < 0x80 && unsafe_cp(cp)))
		return (size_t)snprintf(piece, 12, "\\x%02x", s[0]);
	if (unsafe_cp(cp))
		return (size_t)snprintf(piece, 12, "\\u%04x", (unsigned)cp);
	memcpy(piece, s, len);
	return len;
}

static void add_escaped(oa_buf *b, const unsigned char *s, size_t n, bool backslash)
{
	for (size_t i = 0, used; i < n; i += used) {
		char piece[12];
		size_t len = escape_piece(s + i, n - i, backslash, piece, &used);
		oa_buf_add(b, piece, len);
	}
}

void oa_escape_into(char *out, size_t cap, const void *p, size_t n, bool truncated)
{
	const unsigned char *s = p;
	size_t o = 0, i = 0, used;
	if (cap < 8) {
		if (cap)
			out[0] = '\0';
		return;
	}
	while (i < n) {
		char piece[12];
		size_t len = escape_piece(s + i, n - i, true, piece, &used);
		if (o + len + 4 > cap) /* room for "..." and the NUL */
			break;
		memcpy(out + o, piece, len);
		o += len;
		i += used;
	}
	if (i < n || truncated) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

void oa_buf_add_escaped(oa_buf *b, const void *p, size_t n)
{
	add_escaped(b, p, n, true);
}

void oa_buf_add_printable(oa_buf *b, const void *p, size_t n)
{
	add_escaped(b, p, n, false);
}

char *oa_printable(const char *s)
{
	oa_buf b;
	oa_buf_init(&b);
	if (s)
		add_escaped(&b, (const unsigned char *)s, strlen(s), false);
	return oa_buf_take(&b);
}

bool oa_is_printable(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		if (p[i] >= 0x20 && p[i] < 0x7F) { /* printable ASCII, the common case */
			i++;
			continue;
		}
		size_t len = oa_utf8_seq(p + i, n - i);
		if (!len || unsafe_cp(oa_utf8_cp(p + i, len)))
			return false;
		i += len;
	}
	return true;
}

char *oa_escape(const void *p, size_t n)
{
	oa_buf b;
	oa_buf_init(&b);
	oa_buf_add_escaped(&b, p, n);
	return oa_buf_take(&b);
}

char *oa_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	if (la && a[la - 1] == '/')
		return oa_xasprintf("%s%s", a, b);
	return oa_xasprintf("%s/%s", a, b);
}

/* 1 for the bytes 0-9, a-f, A-F. */
static const unsigned char hex_digit[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
};

bool oa_is_hex(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n; i++)
		if (!hex_digit[p[i]])
			return false; /* before a NUL of a shorter string is passed */
	return true;
}

bool oa_str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool oa_str_has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

bool oa_str_iprefix(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* Ollama's envconfig.Var: trim blanks, then surrounding quotes. */
char *oa_env_trim(const char *v)
{
	if (!v)
		return NULL;
	const char *b = v, *e = v + strlen(v);
	while (b < e && isspace((unsigned char)*b))
		b++;
	while (e > b && isspace((unsigned char)e[-1]))
		e--;
	while (b < e && (*b == '"' || *b == '\''))
		b++;
	while (e > b && (e[-1] == '"' || e[-1] == '\''))
		e--;
	return e > b ? oa_xstrndup(b, (size_t)(e - b)) : NULL;
}

void oa_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

bool oa_all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

bool oa_is_tag_rewrite_temp(const char *leaf)
{
	if (!oa_str_has_prefix(leaf, OA_TAG_REWRITE_TEMP))
		return false;
	const char *p = leaf + strlen(OA_TAG_REWRITE_TEMP), *dash = strchr(p, '-');
	if (!dash)
		return oa_all_digits(p);
	size_t n = (size_t)(dash - p);
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)p[i]))
			return false;
	return n > 0 && oa_all_digits(dash + 1);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **oa_list_dir(int dirfd, size_t *n, int *err)
{
	*n = 0;
	if (err)
		*err = 0;
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (err)
			*err = errno;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rewinddir(d); /* the dup shares its offset with dirfd */
	size_t cap = 16;
	char **v = oa_xcalloc(cap, sizeof *v);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		OA_ALLOC_GROW(v, *n + 1, cap);
		v[(*n)++] = oa_xstrdup(e->d_name);
	}
	closedir(d);
	qsort(v, *n, sizeof *v, cmp_name);
	return v;
}

void oa_free_names(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

size_t oa_edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	/* three rows of the optimal-string-alignment table */
	size_t *row = oa_xcalloc(3 * (m + 1), sizeof *row);
	size_t *prev2 = row, *prev = row + m + 1, *cur = row + 2 * (m + 1);
	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t best = prev[j - 1] + (ca != cb);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	size_t d = prev[m];
	free(row);
	return d;
}

bool oa_edit_close(size_t d, size_t typed_len)
{
	/* one edit in a short word, up to three in a long name */
	size_t limit = 1 + typed_len / 6;
	if (limit > 3)
		limit = 3;
	return d <= limit && d < typed_len;
}

/* Whether a "manifests" key appears (Go matches keys case-insensitively, and
 * the bytes may be escaped: a false yes only reads a blob more). */
bool oa_mentions_manifests_key(const uint8_t *p, size_t n)
{
	static const char key[] = "manifests\"";
	for (size_t i = 0; i < n; i++) {
		if ((p[i] | 0x20) != 'm')
			continue; /* only 'm' and 'M' lower to the key's first letter */
		size_t at = i;
		const char *k = key;
		for (; *k && at < n; k++) {
			if (tolower(p[at]) == *k)
				at++;
			else if (*k == 's' && at + 1 < n && p[at] == 0xc5 && p[at + 1] == 0xbf)
				at += 2; /* U+017F, the long s, which Go folds to 's' */
			else
				break;
		}
		if (!*k)
			return true;
	}
	/* \u escapes could spell the key: cannot tell cheaply, say yes (a
	 * child that is not a manifest is only peeked at, see refs.c). */
	for (const uint8_t *q = p; n > 1 && (q = memchr(q, '\\', n - 1 - (size_t)(q - p))); q++)
		if (q[1] == 'u')
			return true;
	return false;
}

unsigned long long oa_run_sequence(void)
{
	static atomic_ullong last;
	return atomic_fetch_add(&last, 1) + 1;
}

const char *oa_printable_scratch(const char *s)
{
	/* Per thread, so two threads never free each other's text; a thread
	 * that ends leaves its last eight behind, as a static ring would. */
	static _Thread_local char *ring[8];
	static _Thread_local size_t next;
	size_t k = next++ % (sizeof ring / sizeof ring[0]);
	free(ring[k]);
	ring[k] = oa_printable(s);
	return ring[k];
}

static locale_t user_ctype;
static pthread_once_t user_ctype_once = PTHREAD_ONCE_INIT;

static void make_user_ctype(void)
{
	user_ctype = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
}

locale_t oa_user_ctype(void)
{
	pthread_once(&user_ctype_once, make_user_ctype);
	return user_ctype;
}

/* Merge the sorted runs a[0..mid) and a[mid..n) through tmp. */
static void merge(char *a, size_t mid, size_t n, size_t size, char *tmp,
                  int (*cmp)(const void *, const void *, const void *), const void *ctx)
{
	size_t i = 0, j = mid, k = 0;
	while (i < mid && j < n) {
		/* <= 0 takes the left one first: that keeps the sort stable */
		const char *take = cmp(a + i * size, a + j * size, ctx) <= 0 ? a + i++ * size : a + j++ * size;
		memcpy(tmp + k++ * size, take, size);
	}
	memcpy(tmp + k * size, a + i * size, (mid - i) * size);
	k += mid - i;
	memcpy(a, tmp, k * size); /* what is left of the right run is in place */
}

static void merge_sort(char *a, size_t n, size_t size, char *tmp,
                       int (*cmp)(const void *, const void *, const void *), const void *ctx)
{
	if (n < 2)
		return;
	size_t mid = n / 2;
	merge_sort(a, mid, size, tmp, cmp, ctx);
	merge_sort(a + mid * size, n - mid, size, tmp, cmp, ctx);
	merge(a, mid, n, size, tmp, cmp, ctx);
}

void oa_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, const void *), const void *ctx)
{
	if (n < 2)
		return;
	char *tmp = oa_xreallocarray(NULL, n, size);
	merge_sort(base, n, size, tmp, cmp, ctx);
	free(tmp);
}
