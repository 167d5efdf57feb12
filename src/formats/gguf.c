/* gguf.c - bounded GGUF header reader. See include/ollama_audit/gguf.h and
 * docs/gguf-limits.md. Spec: shared/spec/gguf.md. */
#include "ollama_audit/gguf.h"
#include "base/hash_index.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* ------------------------------------------------------------------------------------------ */
/* Tables                                                                                      */

typedef struct { const char *name; uint16_t blck; uint16_t bytes; } type_row;

static const type_row TYPES[OA_GGML_TYPE_COUNT] = {
	[0] = {"f32", 1, 4},        [1] = {"f16", 1, 2},        [2] = {"q4_0", 32, 18},
	[3] = {"q4_1", 32, 20},     [6] = {"q5_0", 32, 22},     [7] = {"q5_1", 32, 24},
	[8] = {"q8_0", 32, 34},     [9] = {"q8_1", 32, 36},     [10] = {"q2_K", 256, 84},
	[11] = {"q3_K", 256, 110},  [12] = {"q4_K", 256, 144},  [13] = {"q5_K", 256, 176},
	[14] = {"q6_K", 256, 210},  [15] = {"q8_K", 256, 292},  [16] = {"iq2_xxs", 256, 66},
	[17] = {"iq2_xs", 256, 74}, [18] = {"iq3_xxs", 256, 98}, [19] = {"iq1_s", 256, 50},
	[20] = {"iq4_nl", 32, 18},  [21] = {"iq3_s", 256, 110}, [22] = {"iq2_s", 256, 82},
	[23] = {"iq4_xs", 256, 136}, [24] = {"i8", 1, 1},       [25] = {"i16", 1, 2},
	[26] = {"i32", 1, 4},       [27] = {"i64", 1, 8},       [28] = {"f64", 1, 8},
	[29] = {"iq1_m", 256, 56},  [30] = {"bf16", 1, 2},      [34] = {"tq1_0", 256, 54},
	[35] = {"tq2_0", 256, 66},  [39] = {"mxfp4", 32, 17},   [40] = {"nvfp4", 64, 36},
	[41] = {"q1_0", 128, 18},   [42] = {"q2_0", 64, 18},
};

static const char *const REMOVED_TYPES[OA_GGML_TYPE_COUNT] = {
	[4] = "q4_2", [5] = "q4_3", [31] = "q4_0_4_4", [32] = "q4_0_4_8", [33] = "q4_0_8_8",
	[36] = "iq4_nl_4_4", [37] = "iq4_nl_4_8", [38] = "iq4_nl_8_8",
};

const char *oa_ggml_type_name(uint32_t type)
{
	return type < OA_GGML_TYPE_COUNT ? TYPES[type].name : NULL;
}

bool oa_ggml_type_block(uint32_t type, uint32_t *blck, uint32_t *bytes)
{
	if (type >= OA_GGML_TYPE_COUNT || TYPES[type].blck == 0)
		return false;
	if (blck)
		*blck = TYPES[type].blck;
	if (bytes)
		*bytes = TYPES[type].bytes;
	return true;
}

#define N_FTYPES 42
static const char *const FTYPE_LLAMA[N_FTYPES] = {
	"all F32", "F16", "Q4_0", "Q4_1", NULL, NULL, NULL, "Q8_0", "Q5_0", "Q5_1",
	"Q2_K - Medium", "Q3_K - Small", "Q3_K - Medium", "Q3_K - Large", "Q4_K - Small",
	"Q4_K - Medium", "Q5_K - Small", "Q5_K - Medium", "Q6_K", "IQ2_XXS - 2.0625 bpw",
	"IQ2_XS - 2.3125 bpw", "Q2_K - Small", "IQ3_XS - 3.3 bpw", "IQ3_XXS - 3.0625 bpw",
	"IQ1_S - 1.5625 bpw", "IQ4_NL - 4.5 bpw", "IQ3_S - 3.4375 bpw", "IQ3_S mix - 3.66 bpw",
	"IQ2_S - 2.5 bpw", "IQ2_M - 2.7 bpw", "IQ4_XS - 4.25 bpw", "IQ1_M - 1.75 bpw", "BF16",
	NULL, NULL, NULL, "TQ1_0 - 1.69 bpw ternary", "TQ2_0 - 2.06 bpw ternary", "MXFP4 MoE",
	"NVFP4", "Q1_0", "Q2_0",
};
static const char *const FTYPE_OLLAMA[N_FTYPES] = {
	"F32", "F16", "Q4_0", "Q4_1", NULL, NULL, NULL, "Q8_0", "Q5_0", "Q5_1",
	"Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",
	"IQ2_XXS", "IQ2_XS", "Q2_K_S", "IQ3_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ3_M",
	"IQ2_S", "IQ2_M", "IQ4_XS", "IQ1_M", "BF16", NULL, NULL, NULL, "TQ1_0", "TQ2_0",
	"MXFP4_MOE", "NVFP4", "Q1_0", NULL /* Q2_0: not in Ollama yet */,
};

const char *oa_ftype_llama_name(uint32_t ftype)
{
	return ftype < N_FTYPES ? FTYPE_LLAMA[ftype] : NULL;
}

const char *oa_ftype_ollama_string(uint32_t ftype, bool present)
{
	/* Ollama's KV.FileType() returns FileTypeUnknown unless the key is a u32 > 0. */
	if (!present || ftype == 0 || ftype >= N_FTYPES || !FTYPE_OLLAMA[ftype])
		return "unknown";
	return FTYPE_OLLAMA[ftype];
}

const char *oa_ftype_list_string(uint32_t ftype)
{
	/* ggml.FileType(v).String(): no "> 0" rule, so ALL_F32 prints "F32". */
	if (ftype == 0)
		return "F32";
	return oa_ftype_ollama_string(ftype, true);
}

const char *oa_gguf_file_type_name(const oa_gguf_info *g)
{
	return g->has_file_type && g->file_type_is_u32 ? oa_ftype_list_string(g->file_type) : "unknown";
}

/* llama-model-loader's guess: dominant ggml_type -> llama_ftype; -1 when it has no mapping. */
static int guess_ftype(uint32_t t)
{
	switch (t) {
	case OA_GGML_TYPE_F32: return 0;
	case OA_GGML_TYPE_F16: return 1;
	case OA_GGML_TYPE_BF16: return 32;
	case OA_GGML_TYPE_Q4_0: return 2;
	case OA_GGML_TYPE_Q4_1: return 3;
	case OA_GGML_TYPE_Q5_0: return 8;
	case OA_GGML_TYPE_Q5_1: return 9;
	case OA_GGML_TYPE_Q8_0: return 7;
	case OA_GGML_TYPE_Q2_K: return 10;
	case OA_GGML_TYPE_Q3_K: return 12;
	case OA_GGML_TYPE_Q4_K: return 15;
	case OA_GGML_TYPE_Q5_K: return 17;
	case OA_GGML_TYPE_Q6_K: return 18;
	case OA_GGML_TYPE_TQ1_0: return 36;
	case OA_GGML_TYPE_TQ2_0: return 37;
	case OA_GGML_TYPE_IQ2_XXS: return 19;
	case OA_GGML_TYPE_IQ2_XS: return 20;
	case OA_GGML_TYPE_IQ2_S: return 28;
	case OA_GGML_TYPE_IQ3_XXS: return 23;
	case OA_GGML_TYPE_IQ1_S: return 24;
	case OA_GGML_TYPE_IQ1_M: return 31;
	case OA_GGML_TYPE_IQ4_NL: return 25;
	case OA_GGML_TYPE_IQ4_XS: return 30;
	case OA_GGML_TYPE_IQ3_S: return 26;
	case OA_GGML_TYPE_MXFP4: return 38;
	case OA_GGML_TYPE_NVFP4: return 39;
	case OA_GGML_TYPE_Q1_0: return 40;
	case OA_GGML_TYPE_Q2_0: return 41;
	default: return -1;
	}
}

void oa_human_number(uint64_t n, char *buf, size_t len)
{
	if (!buf || len == 0)
		return;
	const double B = 1e9, M = 1e6, K = 1e3;
	double d = (double)n;
	if (n >= 1000000000ull) {
		double x = d / B;
		snprintf(buf, len, x == (double)(uint64_t)x ? "%.0fB" : "%.1fB", x);
	} else if (n >= 1000000ull) {
		double x = d / M;
		snprintf(buf, len, x == (double)(uint64_t)x ? "%.0fM" : "%.2fM", x);
	} else if (n >= 1000ull) {
		snprintf(buf, len, "%.0fK", d / K);
	} else {
		snprintf(buf, len, "%" PRIu64, n);
	}
}

static const char *const VTYPE_NAMES[OA_GGUF_TYPE_COUNT] = {
	"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};
static const uint8_t VTYPE_SIZE[OA_GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *oa_gguf_value_type_name(uint32_t type)
{
	return type < OA_GGUF_TYPE_COUNT ? VTYPE_NAMES[type] : "?";
}

bool oa_gguf_is_magic(const void *first4bytes)
{
	const unsigned char *m = first4bytes;
	if (!m)
		return false;
	return memcmp(m, "GGUF", 4) == 0 || memcmp(m, "algg", 4) == 0 || memcmp(m, "ggla", 4) == 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Bounded buffered reader                                                                     */

typedef struct {
	const uint8_t *mem;   /* memory mode: the whole file */
	int fd;               /* fd mode */
	uint8_t *buf;
	size_t cap;
	uint64_t wstart;      /* window = file bytes [wstart, wstart + wlen) held in buf */
	size_t wlen;
	size_t chunk;         /* next read size, doubles up to OA_GGUF_MAX_WINDOW */
	uint64_t pos, size;
	bool swap;
	uint64_t io;
	int io_errno;
	bool io_failed;
} rd_t;

static inline uint64_t rd_rem(const rd_t *r) { return r->size - r->pos; }

/* Pointer to n bytes at pos; the caller has checked n <= rd_rem(). NULL only on I/O error. */
static const uint8_t *rd_fill(rd_t *r, size_t n)
{
	uint64_t wend = r->wstart + r->wlen;
	size_t keep = 0;
	if (r->wlen && r->pos >= r->wstart && r->pos < wend)
		keep = (size_t)(wend - r->pos);
	size_t want = n > r->chunk ? n : r->chunk;
	if (want > rd_rem(r))
		want = (size_t)rd_rem(r);
	if (want < keep)
		want = keep;
	if (want > r->cap) {
		size_t nc = r->cap ? r->cap : 4096;
		while (nc < want)
			nc *= 2;
		uint8_t *nb = realloc(r->buf, nc);
		if (!nb) {
			r->io_failed = true;
			r->io_errno = ENOMEM;
			return NULL;
		}
		r->buf = nb;
		r->cap = nc;
	}
	if (keep)
		memmove(r->buf, r->buf + (r->pos - r->wstart), keep);
	ssize_t got = 0;
	if (want > keep) {
		got = oa_pread_full(r->fd, r->buf + keep, want - keep, r->pos + keep);
		if (got < 0 || (size_t)got < want - keep) {
			r->io_failed = true;
			r->io_errno = got < 0 ? errno : 0;
			return NULL;
		}
		r->io += (uint64_t)got;
	}
	r->wstart = r->pos;
	r->wlen = want;
	if (r->chunk < OA_GGUF_MAX_WINDOW)
		r->chunk *= 2;
	return r->buf;
}

static inline const uint8_t *rd_need(rd_t *r, size_t n)
{
	if (r->mem)
		return r->mem + r->pos;
	if (r->pos >= r->wstart) {
		uint64_t off = r->pos - r->wstart;
		if (off <= r->wlen && n <= r->wlen - off)
			return r->buf + off;
	}
	return rd_fill(r, n);
}

static inline uint16_t ld16(const rd_t *r, const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return r->swap ? __builtin_bswap16(v) : v;
}
static inline uint32_t ld32(const rd_t *r, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return r->swap ? __builtin_bswap32(v) : v;
}
static inline uint64_t ld64(const rd_t *r, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return r->swap ? __builtin_bswap64(v) : v;
}

/* ------------------------------------------------------------------------------------------ */
/* Parser state                                                                                */

enum { SUF_CTX, SUF_EMB, SUF_BLOCKS, SUF_EXPERTS, SUF_VOCAB, SUF_POOLING, SUF_VBLOCKS,
       SUF_ABLOCKS, SUF_HEADS, SUF_HEADS_KV, SUF_FFN, SUF_N };
static const char *const SUFFIXES[SUF_N] = {
	"context_length", "embedding_length", "block_count", "expert_count", "vocab_size",
	"pooling_type", "vision.block_count", "audio.block_count", "attention.head_count",
	"attention.head_count_kv", "feed_forward_length",
};
/* Match order: longest suffixes that end like a shorter one first. */
static const int SUFFIX_ORDER[SUF_N] = { SUF_VBLOCKS, SUF_ABLOCKS, SUF_BLOCKS, SUF_CTX, SUF_EMB,
	SUF_EXPERTS, SUF_VOCAB, SUF_POOLING, SUF_HEADS, SUF_HEADS_KV, SUF_FFN };

#define MAX_CANDS 128
#define CAND_PREFIX 64
typedef struct {
	char prefix[CAND_PREFIX];
	int which;
	uint32_t vtype;       /* value type */
	bool is_int, neg;
	uint64_t u;           /* integer value, or array length */
	uint64_t kv_index, offset;
} cand_t;

#define KEY_KEEP 256

/* The XXH3 of each key (or tensor name) read: a repeated one is a duplicate. */
typedef struct {
	uint64_t *v;
	size_t n, cap;
	oa_hash_index index;  /* of v */
} hset_t;

typedef struct {
	rd_t r;
	oa_gguf_info *out;
	oa_gguf_mode mode;
	int lenw;              /* width of string lengths / array counts / dims: 4 (v1) or 8 */
	bool fatal;
	cand_t cands[MAX_CANDS];
	size_t n_cands, cands_dropped;
	hset_t keys, names;
	bool have_tokens;
	bool have_split_no, have_split_count;
	uint64_t tokens_len;
	size_t cap_tensors;
	uint64_t type_count[OA_GGML_TYPE_COUNT];
	uint64_t type_max_count;
	int type_max;
	size_t contig_warnings, overlap_warnings, align_warnings;
	bool nested_warned;
} P;

/* -------------------------------- diagnostics ------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static void diag(P *p, oa_severity sev, const char *fmt, ...)
{
	oa_gguf_info *o = p->out;
	if (sev == OA_SEV_ERROR) {
		o->n_errors++;
		o->ok = false;
	} else if (sev == OA_SEV_WARNING) {
		o->n_warnings++;
	}
	if (o->n_diags >= OA_GGUF_MAX_DIAGS) {
		return; /* summarised at the end */
	}
	if (!o->diags) {
		o->diags = calloc(OA_GGUF_MAX_DIAGS + 1, sizeof *o->diags);
		if (!o->diags)
			return;
	}
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	char *m = strdup(tmp);
	if (!m)
		return;
	o->diags[o->n_diags].severity = sev;
	o->diags[o->n_diags].message = m;
	o->n_diags++;
}

/* ---------------------------------- hash sets ------------------------------------------- */

static bool same_hash(const void *ctx, size_t entry, const void *key)
{
	const uint64_t *v = ctx;
	return v[entry] == *(const uint64_t *)key;
}

/* Add hash v (*dup: it was there); false when out of memory. */
static bool hset_add(hset_t *h, uint64_t v, bool *dup)
{
	*dup = oa_hash_index_find(&h->index, v, same_hash, h->v, &v) != OA_HASH_NONE;
	if (*dup)
		return true;
	if (h->n == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 64;
		uint64_t *nv = realloc(h->v, nc * sizeof *nv);
		if (!nv)
			return false;
		h->v = nv;
		h->cap = nc;
	}
	if (oa_hash_index_try_add(&h->index, v, h->n) < 0)
		return false;
	h->v[h->n++] = v;
	return true;
}

static void hset_free(hset_t *h)
{
	free(h->v);
	oa_hash_index_free(&h->index);
}

/* ---------------------------------- primitives ------------------------------------------ */

static void io_error(P *p, const char *what)
{
	if (p->r.io_errno == ENOMEM)
		diag(p, OA_SEV_ERROR, "out of memory while reading %s (offset %" PRIu64 ")", what,
		     p->r.pos);
	else if (p->r.io_errno)
		diag(p, OA_SEV_ERROR, "I/O error reading %s at offset %" PRIu64 ": %s", what, p->r.pos,
		     strerror(p->r.io_errno));
	else
		diag(p, OA_SEV_ERROR, "I/O error reading %s at offset %" PRIu64
		     ": file is shorter than the %" PRIu64 " bytes expected (changed while reading?)",
		     what, p->r.pos, p->r.size);
	p->fatal = true;
}

/* Read a fixed-size unsigned integer of w bytes (1,2,4,8). ctx describes it for messages. */
static bool rd_uint(P *p, int w, uint64_t *v, const char *ctx)
{
	rd_t *r = &p->r;
	if (rd_rem(r) < (uint64_t)w) {
		diag(p, OA_SEV_ERROR, "%s: file truncated at offset %" PRIu64 " (%d bytes needed, %"
		     PRIu64 " left)", ctx, r->pos, w, rd_rem(r));
		p->fatal = true;
		return false;
	}
	const uint8_t *b = rd_need(r, (size_t)w);
	if (!b) {
		io_error(p, ctx);
		return false;
	}
	switch (w) {
	case 1: *v = b[0]; break;
	case 2: *v = ld16(r, b); break;
	case 4: *v = ld32(r, b); break;
	default: *v = ld64(r, b); break;
	}
	r->pos += (uint64_t)w;
	return true;
}

/* Consume len bytes (already checked <= remaining); copy up to keepcap bytes into keep (NUL
 * terminated, kept_len set), hash all of it into *hash when hash != NULL. */
static bool rd_bytes(P *p, uint64_t len, uint8_t *keep, size_t keepcap, size_t *kept_len,
                     uint64_t *hash, const char *ctx)
{
	rd_t *r = &p->r;
	size_t k = len < keepcap ? (size_t)len : keepcap;
	if (!hash && !keep) {
		r->pos += len;
		return true;
	}
	/* Without a hash only the kept prefix is read; the rest is skipped. */
	if (r->mem || !hash || len <= OA_GGUF_MAX_WINDOW) {
		size_t need = hash ? (size_t)len : k;
		const uint8_t *b = rd_need(r, need);
		if (!b) {
			io_error(p, ctx);
			return false;
		}
		if (keep) {
			memcpy(keep, b, k);
			keep[k] = 0;
			*kept_len = k;
		}
		if (hash)
			*hash = XXH3_64bits(b, (size_t)len);
		r->pos += len;
		return true;
	}
	/* Long string (fd mode, > window) and a hash wanted: stream it. */
	XXH3_state_t *st = XXH3_createState();
	if (!st) {
		r->io_errno = ENOMEM;
		io_error(p, ctx);
		return false;
	}
	XXH3_64bits_reset(st);
	uint64_t left = len;
	bool first = true;
	while (left) {
		size_t n = left < OA_GGUF_MAX_WINDOW ? (size_t)left : OA_GGUF_MAX_WINDOW;
		const uint8_t *b = rd_need(r, n);
		if (!b) {
			XXH3_freeState(st);
			io_error(p, ctx);
			return false;
		}
		if (first && keep) {
			memcpy(keep, b, k);
			keep[k] = 0;
			*kept_len = k;
		}
		first = false;
		XXH3_64bits_update(st, b, n);
		r->pos += n;
		left -= n;
	}
	*hash = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return true;
}

/* Read a string length and check it against the remaining bytes and the global cap. */
static bool rd_strlen(P *p, uint64_t *len, const char *ctx)
{
	uint64_t at = p->r.pos;
	if (!rd_uint(p, p->lenw, len, ctx))
		return false;
	if (*len > OA_GGUF_MAX_STRING) {
		diag(p, OA_SEV_ERROR, "%s: string length %" PRIu64 " exceeds the %llu-byte limit "
		     "(offset %" PRIu64 ")", ctx, *len, OA_GGUF_MAX_STRING, at);
		p->fatal = true;
		return false;
	}
	if (*len > rd_rem(&p->r)) {
		diag(p, OA_SEV_ERROR, "%s: string length %" PRIu64 " exceeds the %" PRIu64
		     " bytes left in the file (offset %" PRIu64 ")", ctx, *len, rd_rem(&p->r), at);
		p->fatal = true;
		return false;
	}
	return true;
}

/* ---------------------------------- arrays ---------------------------------------------- */

/* Skip count elements of etype. depth = nesting depth of this array (1 = top level). */
static bool skip_array(P *p, uint32_t etype, uint64_t count, int depth, const char *kctx,
                       uint64_t at)
{
	rd_t *r = &p->r;
	if (count > OA_GGUF_MAX_ARRAY) {
		diag(p, OA_SEV_ERROR, "%s: array of %" PRIu64 " elements exceeds the %llu-element "
		     "limit (offset %" PRIu64 ")", kctx, count, OA_GGUF_MAX_ARRAY, at);
		p->fatal = true;
		return false;
	}
	if (etype >= OA_GGUF_TYPE_COUNT) {
		diag(p, OA_SEV_ERROR, "%s: invalid array element type %" PRIu32 " (offset %" PRIu64
		     ")", kctx, etype, at);
		p->fatal = true;
		return false;
	}
	if (etype == OA_GGUF_TYPE_ARRAY) {
		if (depth >= OA_GGUF_MAX_ARRAY_DEPTH) {
			diag(p, OA_SEV_ERROR, "%s: arrays nested deeper than %d levels are not supported "
			     "(offset %" PRIu64 ")", kctx, OA_GGUF_MAX_ARRAY_DEPTH, at);
			p->fatal = true;
			return false;
		}
		if (!p->nested_warned) {
			p->nested_warned = true;
			diag(p, OA_SEV_WARNING, "%s: nested array (array of arrays); llama.cpp and Ollama "
			     "refuse such files (offset %" PRIu64 ")", kctx, at);
		}
		uint64_t minsz = 4u + (uint64_t)p->lenw;
		if (count > rd_rem(r) / minsz) {
			diag(p, OA_SEV_ERROR, "%s: array of %" PRIu64 " arrays exceeds the %" PRIu64
			     " bytes left in the file (offset %" PRIu64 ")", kctx, count, rd_rem(r), at);
			p->fatal = true;
			return false;
		}
		for (uint64_t i = 0; i < count; i++) {
			uint64_t et, n, iat = r->pos;
			if (!rd_uint(p, 4, &et, kctx) || !rd_uint(p, p->lenw, &n, kctx))
				return false;
			if (!skip_array(p, (uint32_t)et, n, depth + 1, kctx, iat))
				return false;
		}
		return true;
	}
	if (etype == OA_GGUF_TYPE_STRING) {
		uint64_t lw = (uint64_t)p->lenw;
		if (count > rd_rem(r) / lw) {
			diag(p, OA_SEV_ERROR, "%s: array of %" PRIu64 " strings exceeds the %" PRIu64
			     " bytes left in the file (offset %" PRIu64 ")", kctx, count, rd_rem(r), at);
			p->fatal = true;
			return false;
		}
		for (uint64_t i = 0; i < count; i++) {
			uint64_t eat = r->pos;
			if (rd_rem(r) < lw) {
				diag(p, OA_SEV_ERROR, "%s: file truncated in string element %" PRIu64 " of %"
				     PRIu64 " (offset %" PRIu64 ")", kctx, i, count, eat);
				p->fatal = true;
				return false;
			}
			const uint8_t *b = rd_need(r, (size_t)lw);
			if (!b) {
				io_error(p, kctx);
				return false;
			}
			uint64_t len = lw == 8 ? ld64(r, b) : ld32(r, b);
			r->pos += lw;
			if (len > rd_rem(r) || len > OA_GGUF_MAX_STRING) {
				diag(p, OA_SEV_ERROR, "%s: string element %" PRIu64 " of %" PRIu64
				     " has length %" PRIu64 ", exceeding the %" PRIu64
				     " bytes left in the file (offset %" PRIu64 ")", kctx, i, count, len,
				     rd_rem(r), eat);
				p->fatal = true;
				return false;
			}
			r->pos += len;
		}
		return true;
	}
	uint64_t esz = VTYPE_SIZE[etype], total;
	if (__builtin_mul_overflow(count, esz, &total) || total > rd_rem(r)) {
		diag(p, OA_SEV_ERROR, "%s: array of %" PRIu64 " %s (%" PRIu64 " bytes each) exceeds "
		     "the %" PRIu64 " bytes left in the file (offset %" PRIu64 ")", kctx, count,
		     VTYPE_NAMES[etype], esz, rd_rem(r), at);
		p->fatal = true;
		return false;
	}
	r->pos += total;
	return true;
}

/* ---------------------------------- key/values ------------------------------------------ */

typedef struct {
	uint32_t type;
	bool is_int, neg, is_bool, bval;
	uint64_t u;          /* integer value (two's complement for negatives) */
	uint32_t atype;      /* array element type */
	uint64_t acount;     /* array length */
	char s[OA_GGUF_KEEP_STRING + 1];
	size_t slen;
	bool strunc;
} val_t;

static bool key_is(const char *k, size_t klen, const char *lit)
{
	size_t l = strlen(lit);
	return klen == l && memcmp(k, lit, l) == 0;
}

static void add_candidate(P *p, const char *key, size_t klen, const val_t *v, uint64_t kvi,
                          uint64_t at)
{
	for (int oi = 0; oi < SUF_N; oi++) {
		int w = SUFFIX_ORDER[oi];
		size_t sl = strlen(SUFFIXES[w]);
		if (klen < sl + 2 || key[klen - sl - 1] != '.' || memcmp(key + klen - sl, SUFFIXES[w], sl))
			continue;
		size_t pl = klen - sl - 1;
		if (pl >= CAND_PREFIX)
			return;
		if (p->n_cands >= MAX_CANDS) {
			p->cands_dropped++;
			return;
		}
		cand_t *c = &p->cands[p->n_cands++];
		memcpy(c->prefix, key, pl);
		c->prefix[pl] = 0;
		c->which = w;
		c->vtype = v->type;
		c->is_int = v->is_int;
		c->neg = v->neg;
		c->u = v->type == OA_GGUF_TYPE_ARRAY ? v->acount : v->u;
		c->kv_index = kvi;
		c->offset = at;
		return;
	}
}

static void set_str(P *p, char **dst, const val_t *v, const char *key, uint64_t kvi, uint64_t at)
{
	if (v->type != OA_GGUF_TYPE_STRING) {
		diag(p, OA_SEV_WARNING, "kv #%" PRIu64 " '%s': expected a string, got %s; ignored "
		     "(offset %" PRIu64 ")", kvi, key, oa_gguf_value_type_name(v->type), at);
		return;
	}
	if (v->strunc)
		diag(p, OA_SEV_INFO, "kv #%" PRIu64 " '%s': value longer than %d bytes, kept "
		     "truncated (offset %" PRIu64 ")", kvi, key, OA_GGUF_KEEP_STRING, at);
	free(*dst);
	*dst = strndup(v->s, v->slen);
}

/* A key as read: its first KEY_KEEP bytes, and how diagnostics name it. */
typedef struct kv_key {
	uint8_t buf[KEY_KEEP + 1];
	const char *key;  /* buf */
	size_t keylen;    /* bytes kept */
	bool has_nul;
	uint64_t at;      /* file offset of the key */
	char ek[160];     /* escaped, for messages */
	char kctx[220];   /* "kv #N 'key'" */
} kv_key;

/* Read the key of kv #kvi and say what is wrong with it. */
static bool read_key(P *p, uint64_t kvi, kv_key *k)
{
	rd_t *r = &p->r;
	char ctx[64];
	snprintf(ctx, sizeof ctx, "kv #%" PRIu64 " key", kvi);
	uint64_t klen, khash = 0;
	k->at = r->pos;
	if (!rd_strlen(p, &klen, ctx))
		return false;
	k->keylen = 0;
	if (!rd_bytes(p, klen, k->buf, KEY_KEEP, &k->keylen, &khash, ctx))
		return false;
	k->key = (const char *)k->buf;
	k->has_nul = memchr(k->buf, 0, k->keylen) != NULL;
	oa_escape_into(k->ek, sizeof k->ek, k->buf, k->keylen, klen > KEY_KEEP);
	snprintf(k->kctx, sizeof k->kctx, "kv #%" PRIu64 " '%s'", kvi, k->ek);

	if (klen == 0)
		diag(p, OA_SEV_WARNING, "kv #%" PRIu64 ": empty key; llama.cpp refuses this file "
		     "(offset %" PRIu64 ")", kvi, k->at);
	else if (klen > 65535)
		diag(p, OA_SEV_WARNING, "%s: key is %" PRIu64 " bytes, above the spec's 65535 "
		     "(offset %" PRIu64 ")", k->kctx, klen, k->at);
	if (k->has_nul)
		diag(p, OA_SEV_WARNING, "%s: key contains a NUL byte (offset %" PRIu64 ")", k->kctx,
		     k->at);
	bool dup = false;
	if (!hset_add(&p->keys, khash, &dup)) {
		r->io_errno = ENOMEM;
		io_error(p, "key table");
		return false;
	}
	if (dup)
		diag(p, OA_SEV_WARNING, "%s: duplicate key; llama.cpp refuses this file, Ollama keeps "
		     "the last value, so do we (offset %" PRIu64 ")", k->kctx, k->at);
	return true;
}

/* A scalar of type t read as the bits x: its sign and kind. */
static void scalar_value(P *p, val_t *v, uint64_t x, const char *kctx, uint64_t vat)
{
	v->u = x;
	switch (v->type) {
	case OA_GGUF_TYPE_UINT8: case OA_GGUF_TYPE_UINT16: case OA_GGUF_TYPE_UINT32:
	case OA_GGUF_TYPE_UINT64:
		v->is_int = true;
		break;
	case OA_GGUF_TYPE_INT8:
		v->is_int = true; v->neg = (x & 0x80u) != 0;
		break;
	case OA_GGUF_TYPE_INT16:
		v->is_int = true; v->neg = (x & 0x8000u) != 0;
		break;
	case OA_GGUF_TYPE_INT32:
		v->is_int = true; v->neg = (x & 0x80000000u) != 0;
		break;
	case OA_GGUF_TYPE_INT64:
		v->is_int = true; v->neg = (x >> 63) != 0;
		break;
	case OA_GGUF_TYPE_BOOL:
		v->is_bool = true;
		v->bval = x != 0;
		if (x > 1)
			diag(p, OA_SEV_WARNING, "%s: bool byte 0x%02" PRIx64 " is neither 0 nor 1, "
			     "read as true like ggml and Ollama (offset %" PRIu64 ")", kctx, x, vat);
		break;
	default:
		break;
	}
}

/* Read the type and value of a kv; strings are kept only when want_str,
 * arrays are skipped (their element type and count kept). */
static bool read_value(P *p, const char *kctx, bool want_str, val_t *v)
{
	rd_t *r = &p->r;
	uint64_t tat = r->pos, t;
	if (!rd_uint(p, 4, &t, kctx))
		return false;
	v->type = (uint32_t)t;
	v->is_int = v->neg = v->is_bool = v->bval = v->strunc = false;
	v->u = 0; v->atype = 0; v->acount = 0; v->slen = 0; v->s[0] = 0;
	if (t >= OA_GGUF_TYPE_COUNT) {
		diag(p, OA_SEV_ERROR, "%s: invalid value type %" PRIu64 " (offset %" PRIu64 ")", kctx,
		     t, tat);
		p->fatal = true;
		return false;
	}
	if (p->lenw == 4 && t >= OA_GGUF_TYPE_UINT64)
		diag(p, OA_SEV_WARNING, "%s: value type %s does not exist in GGUF v1 (offset %" PRIu64
		     ")", kctx, VTYPE_NAMES[t], tat);
	uint64_t vat = r->pos;
	if (t == OA_GGUF_TYPE_STRING) {
		uint64_t len;
		if (!rd_strlen(p, &len, kctx))
			return false;
		if (!rd_bytes(p, len, want_str ? (uint8_t *)v->s : NULL, OA_GGUF_KEEP_STRING, &v->slen,
		              NULL, kctx))
			return false;
		if (want_str) {
			v->strunc = len > OA_GGUF_KEEP_STRING;
			v->slen = strnlen(v->s, v->slen);
		}
	} else if (t == OA_GGUF_TYPE_ARRAY) {
		uint64_t et, n;
		if (!rd_uint(p, 4, &et, kctx) || !rd_uint(p, p->lenw, &n, kctx))
			return false;
		v->atype = (uint32_t)et;
		v->acount = n;
		if (!skip_array(p, (uint32_t)et, n, 1, kctx, vat))
			return false;
	} else {
		uint64_t x;
		if (!rd_uint(p, VTYPE_SIZE[t], &x, kctx))
			return false;
		scalar_value(p, v, x, kctx, vat);
	}
	return true;
}

static void apply_file_type(P *p, const kv_key *k, const val_t *v)
{
	oa_gguf_info *o = p->out;
	if (!v->is_int || v->neg || v->u > UINT32_MAX) {
		diag(p, OA_SEV_WARNING, "%s: expected a non-negative 32-bit integer, got %s%s; "
		     "ignored (offset %" PRIu64 ")", k->kctx, oa_gguf_value_type_name(v->type),
		     v->neg ? " (negative)" : "", k->at);
		return;
	}
	o->has_file_type = true;
	o->file_type = (uint32_t)v->u;
	o->file_type_is_u32 = v->type == OA_GGUF_TYPE_UINT32;
	if (!o->file_type_is_u32)
		diag(p, OA_SEV_INFO, "%s: stored as %s, not u32: Ollama shows its file type "
		     "as unknown (offset %" PRIu64 ")", k->kctx, oa_gguf_value_type_name(v->type),
		     k->at);
	if (!oa_ftype_llama_name(o->file_type))
		diag(p, OA_SEV_WARNING, "%s: unknown or removed file type %" PRIu64
		     " (offset %" PRIu64 ")", k->kctx, v->u, k->at);
}

static void apply_alignment(P *p, const kv_key *k, const val_t *v)
{
	oa_gguf_info *o = p->out;
	const char *kctx = k->kctx;
	uint64_t kat = k->at;
	if (!v->is_int) {
		diag(p, OA_SEV_WARNING, "%s: alignment of type %s, not an integer: llama.cpp "
		     "refuses this file, Ollama and we use 32 (offset %" PRIu64 ")", kctx,
		     oa_gguf_value_type_name(v->type), kat);
		o->alignment = 32;
	} else if (v->neg || v->u == 0 || (v->u & (v->u - 1)) != 0) {
		diag(p, OA_SEV_ERROR, "%s: alignment %s%" PRIu64 " is not a nonzero power of two "
		     "(offset %" PRIu64 ")", kctx, v->neg ? "(negative) " : "", v->u, kat);
		o->alignment = 32;
	} else if (v->u > OA_GGUF_MAX_ALIGNMENT) {
		diag(p, OA_SEV_ERROR, "%s: alignment %" PRIu64 " is above our %u-byte limit "
		     "(ggml aborts on such values) (offset %" PRIu64 ")", kctx, v->u,
		     OA_GGUF_MAX_ALIGNMENT, kat);
		o->alignment = 32;
	} else {
		if (v->type != OA_GGUF_TYPE_UINT32)
			diag(p, OA_SEV_WARNING, "%s: alignment stored as %s, not u32: llama.cpp "
			     "refuses this file and Ollama uses 32; we use %" PRIu64 " (offset %"
			     PRIu64 ")", kctx, oa_gguf_value_type_name(v->type), v->u, kat);
		else if (v->u % 8)
			diag(p, OA_SEV_INFO, "%s: alignment %" PRIu64 " is not a multiple of 8 as "
			     "the spec asks (ggml accepts it) (offset %" PRIu64 ")", kctx, v->u, kat);
		o->alignment = v->u;
	}
}

/* split.no, split.count, split.tensors.count: integers (u16, u16, i32 as
 * gguf-split writes them; any integer type is taken). */
static void apply_split_key(P *p, const kv_key *k, const val_t *v)
{
	oa_gguf_info *o = p->out;
	if (!v->is_int || v->neg) {
		diag(p, OA_SEV_WARNING, "%s: expected a non-negative integer, got %s (offset %" PRIu64 ")", k->kctx,
		     oa_gguf_value_type_name(v->type), k->at);
		return;
	}
	if (k->keylen == strlen("split.no"))
		o->split_no = v->u, p->have_split_no = true;
	else if (k->keylen == strlen("split.count"))
		o->split_count = v->u, p->have_split_count = true;
	else
		o->split_tensors = v->u > INT64_MAX ? INT64_MAX : (int64_t)v->u;
	o->has_split = p->have_split_no && p->have_split_count;
}

/* Keep what the keys this reader knows say; offer the rest as candidates. */
static void apply_known_key(P *p, const kv_key *k, const val_t *v, uint64_t kvi)
{
	oa_gguf_info *o = p->out;
	const char *key = k->key;
	size_t keylen = k->keylen;
	if (key_is(key, keylen, "general.architecture")) {
		set_str(p, &o->architecture, v, k->ek, kvi, k->at);
	} else if (key_is(key, keylen, "general.type")) {
		set_str(p, &o->general_type, v, k->ek, kvi, k->at);
	} else if (key_is(key, keylen, "general.name")) {
		set_str(p, &o->general_name, v, k->ek, kvi, k->at);
	} else if (key_is(key, keylen, "tokenizer.ggml.model")) {
		set_str(p, &o->tokenizer_model, v, k->ek, kvi, k->at);
	} else if (key_is(key, keylen, "general.file_type")) {
		apply_file_type(p, k, v);
	} else if (key_is(key, keylen, "general.alignment")) {
		apply_alignment(p, k, v);
	} else if (key_is(key, keylen, "tokenizer.ggml.tokens")) {
		if (v->type != OA_GGUF_TYPE_ARRAY || v->atype != OA_GGUF_TYPE_STRING)
			diag(p, OA_SEV_WARNING, "%s: expected an array of strings, got %s%s%s; not used "
			     "for the vocabulary size (offset %" PRIu64 ")", k->kctx,
			     oa_gguf_value_type_name(v->type), v->type == OA_GGUF_TYPE_ARRAY ? " of " : "",
			     v->type == OA_GGUF_TYPE_ARRAY ? oa_gguf_value_type_name(v->atype) : "", k->at);
		else {
			p->have_tokens = true;
			p->tokens_len = v->acount;
		}
	} else if (key_is(key, keylen, "split.no") || key_is(key, keylen, "split.count") ||
	           key_is(key, keylen, "split.tensors.count")) {
		apply_split_key(p, k, v);
	} else if (key_is(key, keylen, "clip.has_vision_encoder") ||
	           key_is(key, keylen, "clip.has_audio_encoder")) {
		bool val = v->is_bool ? v->bval : (v->is_int && v->u != 0);
		if (!v->is_bool)
			diag(p, OA_SEV_WARNING, "%s: expected a bool, got %s (offset %" PRIu64 ")", k->kctx,
			     oa_gguf_value_type_name(v->type), k->at);
		if (keylen == strlen("clip.has_vision_encoder") && key[9] == 'v')
			o->has_vision_encoder = val;
		else
			o->has_audio_encoder = val;
	} else {
		add_candidate(p, key, keylen, v, kvi, k->at);
	}
}

/* One key-value pair: read the key, read the value, apply a known key. */
static bool parse_kv(P *p, uint64_t kvi)
{
	oa_gguf_info *o = p->out;
	kv_key k;
	if (!read_key(p, kvi, &k))
		return false;
	/* QUICK mode: stop at the first tokenizer.* key once the architecture is known. */
	if (p->mode == OA_GGUF_QUICK && o->architecture && k.keylen >= 10 &&
	    memcmp(k.key, "tokenizer.", 10) == 0) {
		o->quick_stopped = true;
		return false;
	}
	bool want_str = key_is(k.key, k.keylen, "general.architecture") ||
	                key_is(k.key, k.keylen, "general.type") ||
	                key_is(k.key, k.keylen, "general.name") ||
	                key_is(k.key, k.keylen, "tokenizer.ggml.model");
	val_t v;
	if (!read_value(p, k.kctx, want_str, &v))
		return false;
	if (!k.has_nul) /* never match known keys on a key with a NUL in it */
		apply_known_key(p, &k, &v, kvi);
	return true;
}

/* ---------------------------------- tensor infos ---------------------------------------- */

/* A tensor name as read: its first OA_GGUF_KEEP_NAME bytes, and how
 * diagnostics name the tensor. */
typedef struct tensor_name {
	uint8_t buf[OA_GGUF_KEEP_NAME + 1];
	size_t kept;
	uint64_t at;      /* file offset of the tensor info */
	char tctx[220];   /* "tensor #N 'name'" */
} tensor_name;

/* Read tensor #ti's name and say what is wrong with it. */
static bool read_tensor_name(P *p, uint64_t ti, tensor_name *n)
{
	rd_t *r = &p->r;
	char ctx[64];
	snprintf(ctx, sizeof ctx, "tensor #%" PRIu64 " name", ti);
	uint64_t nlen, nhash = 0;
	n->at = r->pos;
	if (!rd_strlen(p, &nlen, ctx))
		return false;
	n->kept = 0;
	if (!rd_bytes(p, nlen, n->buf, OA_GGUF_KEEP_NAME, &n->kept, &nhash, ctx))
		return false;
	char en[160];
	oa_escape_into(en, sizeof en, n->buf, n->kept, nlen > OA_GGUF_KEEP_NAME);
	snprintf(n->tctx, sizeof n->tctx, "tensor #%" PRIu64 " '%s'", ti, en);
	if (nlen == 0)
		diag(p, OA_SEV_WARNING, "tensor #%" PRIu64 ": empty name (offset %" PRIu64 ")", ti, n->at);
	if (nlen > OA_GGUF_MAX_NAME)
		diag(p, OA_SEV_WARNING, "%s: name is %" PRIu64 " bytes; llama.cpp refuses names "
		     "longer than %d bytes (offset %" PRIu64 ")", n->tctx, nlen, OA_GGUF_MAX_NAME, n->at);
	if (memchr(n->buf, 0, n->kept))
		diag(p, OA_SEV_WARNING, "%s: name contains a NUL byte (offset %" PRIu64 ")", n->tctx, n->at);
	bool dup = false;
	if (!hset_add(&p->names, nhash, &dup)) {
		r->io_errno = ENOMEM;
		io_error(p, "tensor name table");
		return false;
	}
	if (dup)
		diag(p, OA_SEV_WARNING, "%s: duplicate tensor name; llama.cpp refuses this file "
		     "(offset %" PRIu64 ")", n->tctx, n->at);
	return true;
}

/* Read n_dims and the dimensions into t; *shape_ok false when one is
 * negative as int64. False (p->fatal when n_dims is impossible) to stop. */
static bool read_tensor_shape(P *p, const char *tctx, oa_gguf_tensor *t, bool *shape_ok)
{
	rd_t *r = &p->r;
	uint64_t nd, dat = r->pos;
	if (!rd_uint(p, 4, &nd, tctx))
		return false;
	if (nd > 4) {
		diag(p, OA_SEV_ERROR, "%s: n_dims %" PRIu64 " is above the maximum of 4 (offset %"
		     PRIu64 ")", tctx, nd, dat);
		p->fatal = true;
		return false;
	}
	t->n_dims = (uint32_t)nd;
	*shape_ok = true;
	for (int d = 0; d < 4; d++)
		t->ne[d] = 1;
	for (uint64_t d = 0; d < nd; d++) {
		uint64_t x, xat = r->pos;
		if (!rd_uint(p, p->lenw, &x, tctx))
			return false;
		t->ne[d] = x;
		if (x >= (1ull << 63)) {
			diag(p, OA_SEV_ERROR, "%s: dimension %" PRIu64 " is %" PRIu64 " (negative as "
			     "int64, ggml refuses it) (offset %" PRIu64 ")", tctx, d, x, xat);
			*shape_ok = false;
		}
	}
	return true;
}

/* Add the tensor's elements to the parameter count; false when its
 * element count overflows int64 (then nothing is added). */
static bool count_parameters(P *p, const oa_gguf_tensor *t, const char *tctx, uint64_t at, uint64_t dat)
{
	oa_gguf_info *o = p->out;
	uint64_t nel = 1;
	for (int d = 0; d < 4; d++) {
		if (__builtin_mul_overflow(nel, t->ne[d], &nel) || nel >= (1ull << 63)) {
			diag(p, OA_SEV_ERROR, "%s: element count %" PRIu64 "x%" PRIu64 "x%" PRIu64
			     "x%" PRIu64 " overflows int64 (offset %" PRIu64 ")", tctx, t->ne[0],
			     t->ne[1], t->ne[2], t->ne[3], dat);
			return false;
		}
	}
	if (__builtin_add_overflow(o->parameter_count, nel, &o->parameter_count)) {
		diag(p, OA_SEV_ERROR, "%s: parameter count overflows u64 (offset %" PRIu64 ")",
		     tctx, at);
		o->parameter_count = UINT64_MAX;
	}
	return true;
}

/* The tensor's type is known, its rows fill whole blocks and its byte size
 * fits: set t->nbytes and say true. */
static bool tensor_bytes(P *p, oa_gguf_tensor *t, bool shape_ok, const char *tctx, uint64_t tyat,
                         uint64_t dat)
{
	uint64_t ty = t->type;
	uint32_t blck = 0, tsz = 0;
	bool type_ok = oa_ggml_type_block(t->type, &blck, &tsz);
	if (!type_ok) {
		if (ty < OA_GGML_TYPE_COUNT && REMOVED_TYPES[ty])
			diag(p, OA_SEV_ERROR, "%s: tensor type %" PRIu64 " (%s) was removed from ggml; "
			     "current llama.cpp cannot load it (offset %" PRIu64 ")", tctx, ty,
			     REMOVED_TYPES[ty], tyat);
		else
			diag(p, OA_SEV_ERROR, "%s: unknown tensor type %" PRIu64 " (offset %" PRIu64 ")",
			     tctx, ty, tyat);
	}
	if (!shape_ok || !type_ok)
		return false;
	if (t->ne[0] % blck != 0) {
		diag(p, OA_SEV_ERROR, "%s: row length %" PRIu64 " is not a multiple of the %s block "
		     "size %" PRIu32 " (offset %" PRIu64 ")", tctx, t->ne[0], TYPES[t->type].name, blck,
		     dat);
		return false;
	}
	uint64_t nb = t->ne[0] / blck, tmp;
	if (__builtin_mul_overflow(nb, (uint64_t)tsz, &nb) ||
	    __builtin_mul_overflow(nb, t->ne[1], &nb) || __builtin_mul_overflow(nb, t->ne[2], &nb) ||
	    __builtin_mul_overflow(nb, t->ne[3], &nb) ||
	    __builtin_add_overflow(nb, p->out->alignment - 1, &tmp) || nb > (uint64_t)SIZE_MAX ||
	    nb >= (1ull << 63)) {
		diag(p, OA_SEV_ERROR, "%s: byte size of %s %" PRIu64 "x%" PRIu64 "x%" PRIu64
		     "x%" PRIu64 " overflows (offset %" PRIu64 ")", tctx, TYPES[t->type].name,
		     t->ne[0], t->ne[1], t->ne[2], t->ne[3], dat);
		return false;
	}
	t->nbytes = nb;
	return true;
}

/* FULL mode keeps every tensor info, with its name. */
static bool keep_tensor(P *p, oa_gguf_tensor *t, const tensor_name *n)
{
	rd_t *r = &p->r;
	oa_gguf_info *o = p->out;
	if (o->n_tensors_kept == p->cap_tensors) {
		size_t nc = p->cap_tensors ? p->cap_tensors * 2 : 16;
		oa_gguf_tensor *nt = realloc(o->tensors, nc * sizeof *nt);
		if (!nt) {
			r->io_errno = ENOMEM;
			io_error(p, "tensor table");
			return false;
		}
		o->tensors = nt;
		p->cap_tensors = nc;
	}
	t->name = strndup((const char *)n->buf, n->kept);
	if (!t->name) {
		r->io_errno = ENOMEM;
		io_error(p, "tensor name");
		return false;
	}
	o->tensors[o->n_tensors_kept++] = *t;
	return true;
}

/* One tensor info: name, shape, type and offset; then its size and counts. */
static bool parse_tensor(P *p, uint64_t ti)
{
	rd_t *r = &p->r;
	tensor_name n;
	if (!read_tensor_name(p, ti, &n))
		return false;
	oa_gguf_tensor t;
	memset(&t, 0, sizeof t);
	bool shape_ok;
	uint64_t dat = r->pos;
	if (!read_tensor_shape(p, n.tctx, &t, &shape_ok))
		return false;
	uint64_t ty, off, tyat = r->pos;
	if (!rd_uint(p, 4, &ty, n.tctx) || !rd_uint(p, 8, &off, n.tctx))
		return false;
	t.type = (uint32_t)ty;
	t.offset = off;
	if (shape_ok)
		shape_ok = count_parameters(p, &t, n.tctx, n.at, dat);
	t.valid = tensor_bytes(p, &t, shape_ok, n.tctx, tyat, dat);
	if (t.valid) {
		uint64_t c = ++p->type_count[t.type];
		if (c > p->type_max_count) {
			p->type_max_count = c;
			p->type_max = (int)t.type;
		}
	}
	return p->mode != OA_GGUF_FULL || keep_tensor(p, &t, &n);
}

static int cmp_by_offset(const void *a, const void *b)
{
	const oa_gguf_tensor *x = *(oa_gguf_tensor *const *)a, *y = *(oa_gguf_tensor *const *)b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x < y ? -1 : (x > y);
}

static void check_tensor_layout(P *p)
{
	oa_gguf_info *o = p->out;
	uint64_t align = o->alignment, expected = 0;
	bool contig_known = true;
	for (size_t i = 0; i < o->n_tensors_kept; i++) {
		oa_gguf_tensor *t = &o->tensors[i];
		char en[160];
		oa_escape_into(en, sizeof en, (const uint8_t *)t->name, strlen(t->name), false);
		if (!t->valid) {
			contig_known = false;
			continue;
		}
		if (t->offset % align && p->align_warnings++ < 10)
			diag(p, OA_SEV_WARNING, "tensor #%zu '%s': offset %" PRIu64 " is not a multiple of "
			     "the alignment %" PRIu64, i, en, t->offset, align);
		uint64_t a, e;
		if (__builtin_add_overflow(o->data_offset, t->offset, &a) ||
		    __builtin_add_overflow(a, t->nbytes, &e) || e > o->file_size) {
			diag(p, OA_SEV_ERROR, "tensor #%zu '%s': data [%" PRIu64 " + %" PRIu64 ", %"
			     PRIu64 " bytes) lies past the end of the file (%" PRIu64 " bytes)", i, en,
			     o->data_offset, t->offset, t->nbytes, o->file_size);
		}
		if (contig_known) {
			if (t->offset != expected && p->contig_warnings++ < 10)
				diag(p, OA_SEV_WARNING, "tensor #%zu '%s': offset %" PRIu64 ", expected %"
				     PRIu64 " (%s); llama.cpp would refuse this file", i, en, t->offset,
				     expected, t->offset < expected ? "out of order or overlapping" :
				     "gap before it");
			uint64_t pad = (t->nbytes + align - 1) / align * align; /* checked in parse */
			if (__builtin_add_overflow(expected, pad, &expected))
				contig_known = false;
		}
	}
	/* Overlaps, whatever the order. */
	size_t nv = 0;
	oa_gguf_tensor **v = malloc((o->n_tensors_kept ? o->n_tensors_kept : 1) * sizeof *v);
	if (!v)
		return;
	for (size_t i = 0; i < o->n_tensors_kept; i++)
		if (o->tensors[i].valid && o->tensors[i].nbytes)
			v[nv++] = &o->tensors[i];
	qsort(v, nv, sizeof *v, cmp_by_offset);
	uint64_t maxend = 0;
	oa_gguf_tensor *maxt = NULL;
	for (size_t i = 0; i < nv; i++) {
		if (maxt && v[i]->offset < maxend && p->overlap_warnings++ < 10) {
			char a[160], b[160];
			oa_escape_into(a, sizeof a, (const uint8_t *)v[i]->name, strlen(v[i]->name), false);
			oa_escape_into(b, sizeof b, (const uint8_t *)maxt->name, strlen(maxt->name), false);
			diag(p, OA_SEV_WARNING, "tensor '%s' (offset %" PRIu64 ") overlaps tensor '%s' "
			     "(offset %" PRIu64 ", %" PRIu64 " bytes); llama.cpp would refuse this file",
			     a, v[i]->offset, b, maxt->offset, maxt->nbytes);
		}
		uint64_t end = v[i]->offset + v[i]->nbytes; /* may wrap only if out of file: flagged */
		if (end < v[i]->offset)
			end = UINT64_MAX;
		if (end > maxend) {
			maxend = end;
			maxt = v[i];
		}
	}
	free(v);
	size_t extra = (p->contig_warnings > 10 ? p->contig_warnings - 10 : 0) +
	               (p->overlap_warnings > 10 ? p->overlap_warnings - 10 : 0) +
	               (p->align_warnings > 10 ? p->align_warnings - 10 : 0);
	if (extra)
		diag(p, OA_SEV_INFO, "%zu further tensor layout warnings not shown", extra);
}

/* ---------------------------------- driver ---------------------------------------------- */

static void resolve(P *p)
{
	oa_gguf_info *o = p->out;
	const char *arch = o->architecture;
	bool have[SUF_N] = {0};
	uint64_t vals[SUF_N] = {0};
	const cand_t *cv[SUF_N] = {0};
	for (size_t i = 0; arch && i < p->n_cands; i++) {
		const cand_t *c = &p->cands[i];
		if (strcmp(c->prefix, arch) != 0)
			continue;
		int w = c->which;
		if (w == SUF_POOLING) {
			have[w] = true;
			continue;
		}
		if (w == SUF_HEADS || w == SUF_HEADS_KV || w == SUF_FFN) {
			cv[w] = c;
			have[w] = true;
			continue;
		}
		if (!c->is_int || c->neg) {
			diag(p, OA_SEV_WARNING, "kv #%" PRIu64 " '%s.%s': expected a non-negative integer, "
			     "got %s%s; ignored (offset %" PRIu64 ")", c->kv_index, c->prefix, SUFFIXES[w],
			     oa_gguf_value_type_name(c->vtype), c->neg ? " (negative)" : "", c->offset);
			continue;
		}
		have[w] = true;
		vals[w] = c->u; /* last one wins */
	}
	o->context_length = vals[SUF_CTX];
	o->embedding_length = vals[SUF_EMB];
	o->block_count = vals[SUF_BLOCKS];
	o->expert_count = vals[SUF_EXPERTS];
	o->has_pooling_type = have[SUF_POOLING];
	o->has_vision_block_count = have[SUF_VBLOCKS];
	o->vision_block_count = vals[SUF_VBLOCKS];
	o->has_audio_block_count = have[SUF_ABLOCKS];
	o->audio_block_count = vals[SUF_ABLOCKS];
	if (p->have_tokens)
		o->vocab_size = p->tokens_len;
	else if (have[SUF_VOCAB])
		o->vocab_size = vals[SUF_VOCAB];
	if (o->block_count > 512)
		diag(p, OA_SEV_WARNING, "%s.block_count %" PRIu64 " is above llama.cpp's "
		     "LLAMA_MAX_LAYERS (512)", arch, o->block_count);
	for (int w = SUF_HEADS; w <= SUF_FFN; w++) {
		const cand_t *c = cv[w];
		if (!c)
			continue;
		if (c->vtype == OA_GGUF_TYPE_ARRAY) {
			if (have[SUF_BLOCKS] && c->u != o->block_count)
				diag(p, OA_SEV_WARNING, "kv #%" PRIu64 " '%s.%s': per-layer array of %" PRIu64
				     " entries but block_count is %" PRIu64 " (offset %" PRIu64 ")",
				     c->kv_index, c->prefix, SUFFIXES[w], c->u, o->block_count, c->offset);
		} else if (!c->is_int) {
			diag(p, OA_SEV_WARNING, "kv #%" PRIu64 " '%s.%s': expected an integer or an array, "
			     "got %s (offset %" PRIu64 ")", c->kv_index, c->prefix, SUFFIXES[w],
			     oa_gguf_value_type_name(c->vtype), c->offset);
		}
	}
	if (p->cands_dropped)
		diag(p, OA_SEV_INFO, "%zu per-architecture keys beyond the first %d were not "
		     "considered", p->cands_dropped, MAX_CANDS);

	const char *gt = o->general_type;
	if (gt && (strcmp(gt, "projector") == 0 || strcmp(gt, "mmproj") == 0))
		o->kind = OA_GGUF_KIND_PROJECTOR;
	else if (o->block_count == 0 && o->vision_block_count > 0)
		o->kind = OA_GGUF_KIND_PROJECTOR;
	else if (arch && strcmp(arch, "clip") == 0 && o->block_count == 0 &&
	         (o->has_vision_encoder || o->has_audio_encoder))
		o->kind = OA_GGUF_KIND_PROJECTOR;
	else if (gt && strcmp(gt, "adapter") == 0)
		o->kind = OA_GGUF_KIND_ADAPTER;
	else if (gt && strcmp(gt, "imatrix") == 0)
		o->kind = OA_GGUF_KIND_IMATRIX;
	else
		o->kind = OA_GGUF_KIND_MODEL;

	if (p->mode == OA_GGUF_FULL && !o->has_file_type && p->type_max_count > 0) {
		int g = guess_ftype((uint32_t)p->type_max);
		if (g >= 0) {
			o->file_type_guessed = true;
			o->guessed_file_type = (uint32_t)g;
		}
	}
}

/* The magic: true for GGUF; a legacy GGLA adapter, a pre-GGUF ggml file or
 * anything else is said and ends the parse. */
static bool read_magic(P *p)
{
	rd_t *r = &p->r;
	oa_gguf_info *o = p->out;
	if (r->size < 4) {
		diag(p, OA_SEV_ERROR, "file is %" PRIu64 " bytes, too short for a GGUF magic "
		     "(offset 0)", r->size);
		return false;
	}
	const uint8_t *m = rd_need(r, 4);
	if (!m) {
		io_error(p, "magic");
		return false;
	}
	uint8_t magic[4];
	memcpy(magic, m, 4);
	if (memcmp(magic, "algg", 4) == 0 || memcmp(magic, "ggla", 4) == 0) {
		o->is_ggla = true;
		o->kind = OA_GGUF_KIND_ADAPTER;
		r->pos = 4;
		uint64_t ver;
		r->swap = magic[0] == 'g';
		if (rd_rem(r) >= 4 && rd_uint(p, 4, &ver, "GGLA version"))
			o->version = (uint32_t)ver;
		diag(p, OA_SEV_INFO, "legacy GGLA LoRA adapter (pre-GGUF format): header not parsed "
		     "further (offset 0)");
		return false;
	}
	if (memcmp(magic, "GGUF", 4) != 0) {
		char e[40];
		oa_escape_into(e, sizeof e, magic, 4, false);
		if (memcmp(magic, "FUGG", 4) == 0)
			diag(p, OA_SEV_ERROR, "magic 'FUGG' (byte-swapped GGUF) is non-standard: "
			     "standard big-endian files still start with 'GGUF' (offset 0)");
		else if (!memcmp(magic, "lmgg", 4) || !memcmp(magic, "tjgg", 4) ||
		         !memcmp(magic, "fmgg", 4))
			diag(p, OA_SEV_ERROR, "legacy pre-GGUF ggml file (magic '%s'), not GGUF "
			     "(offset 0)", e);
		else
			diag(p, OA_SEV_ERROR, "not a GGUF file: magic '%s' (offset 0)", e);
		return false;
	}
	return true;
}

/* Version, byte order and the two counts, checked against our limits and
 * against what is left of the file. False ends the parse. */
static bool read_header(P *p, uint64_t *nt_out, uint64_t *nkv_out)
{
	rd_t *r = &p->r;
	oa_gguf_info *o = p->out;
	r->pos = 4;
	o->kind = OA_GGUF_KIND_UNKNOWN;
	uint64_t ver;
	if (!rd_uint(p, 4, &ver, "header version"))
		return false;
	if ((ver & 0xffffu) == 0) {
		r->swap = true;
		o->big_endian = true;
		ver = __builtin_bswap32((uint32_t)ver);
	}
	o->version = (uint32_t)ver;
	if (ver < 1 || ver > 3) {
		diag(p, OA_SEV_ERROR, "unsupported GGUF version %" PRIu64 " (0x%08" PRIx64 ")%s "
		     "(offset 4)", ver, ver, o->big_endian ? " read as big-endian" : "");
		return false;
	}
	if (o->big_endian)
		diag(p, OA_SEV_INFO, "big-endian GGUF v%" PRIu64 ": parsed byte-swapped; llama.cpp "
		     "refuses big-endian files on little-endian hosts", ver);
	if (ver == 1)
		diag(p, OA_SEV_INFO, "GGUF v1 (32-bit counts and lengths): llama.cpp no longer loads "
		     "it");
	p->lenw = ver == 1 ? 4 : 8;
	uint64_t nt, nkv;
	if (!rd_uint(p, p->lenw, &nt, "header tensor_count") ||
	    !rd_uint(p, p->lenw, &nkv, "header kv_count"))
		return false;
	o->tensor_count = nt;
	o->kv_count = nkv;
	uint64_t min_kv = (uint64_t)p->lenw + 4 + 1, min_ti = (uint64_t)p->lenw + 4 + 4 + 8;
	uint64_t need_kv, need_ti, need;
	if (nkv > OA_GGUF_MAX_KV) {
		diag(p, OA_SEV_ERROR, "kv_count %" PRIu64 " is above our limit of %llu (offset %d)",
		     nkv, OA_GGUF_MAX_KV, 8 + p->lenw);
		return false;
	}
	if (nt > OA_GGUF_MAX_TENSORS) {
		diag(p, OA_SEV_ERROR, "tensor_count %" PRIu64 " is above our limit of %llu "
		     "(offset 8)", nt, OA_GGUF_MAX_TENSORS);
		return false;
	}
	if (__builtin_mul_overflow(nkv, min_kv, &need_kv) ||
	    __builtin_mul_overflow(nt, min_ti, &need_ti) ||
	    __builtin_add_overflow(need_kv, need_ti, &need) || need > rd_rem(r)) {
		diag(p, OA_SEV_ERROR, "%" PRIu64 " key/values and %" PRIu64 " tensor infos need at "
		     "least %" PRIu64 "+%" PRIu64 " bytes, but only %" PRIu64 " are left in the file "
		     "(offset %" PRIu64 ")", nkv, nt, min_kv, min_ti, rd_rem(r), r->pos);
		return false;
	}
	*nt_out = nt;
	*nkv_out = nkv;
	return true;
}

/* FULL mode: every tensor info, then where the data section starts and
 * whether the tensors fit in it. */
static void parse_tensor_infos(P *p, uint64_t nt)
{
	rd_t *r = &p->r;
	oa_gguf_info *o = p->out;
	for (uint64_t i = 0; i < nt && !p->fatal; i++)
		if (!parse_tensor(p, i))
			break;
	if (!p->fatal) {
		uint64_t end = r->pos, data = end;
		if (nt > 0) {
			uint64_t a = o->alignment;
			if (__builtin_add_overflow(end, a - 1, &data)) {
				diag(p, OA_SEV_ERROR, "data section offset overflows");
				data = UINT64_MAX;
			} else {
				data = data / a * a;
			}
		}
		o->data_offset = data;
		if (nt > 0 && data > r->size)
			diag(p, OA_SEV_ERROR, "the data section would start at offset %" PRIu64
			     " (end of tensor infos %" PRIu64 " padded to %" PRIu64 "), past the end "
			     "of the file (%" PRIu64 " bytes)", data, end, o->alignment, r->size);
		else if (nt > 0)
			check_tensor_layout(p);
	}
}

static void parse(P *p)
{
	rd_t *r = &p->r;
	oa_gguf_info *o = p->out;
	o->file_size = r->size;
	o->alignment = 32;
	o->ok = true;
	o->split_tensors = -1;
	uint64_t nt, nkv;
	if (!read_magic(p) || !read_header(p, &nt, &nkv))
		return;
	o->kind = OA_GGUF_KIND_MODEL;

	for (uint64_t i = 0; i < nkv && !p->fatal; i++) {
		if (!parse_kv(p, i))
			break;
		o->kv_parsed++;
	}
	bool kv_done = !p->fatal && !o->quick_stopped;
	/* a shard after the first has only the split keys: llama.cpp reads the
	 * model's metadata from the first */
	if (kv_done && !o->architecture && !(o->has_split && o->split_no > 0))
		diag(p, OA_SEV_WARNING, "no general.architecture string: llama.cpp cannot load this as "
		     "a model");
	if (kv_done && p->mode == OA_GGUF_FULL)
		parse_tensor_infos(p, nt);
	o->header_bytes_read = r->pos;
	resolve(p);
}

static void finish(P *p)
{
	oa_gguf_info *o = p->out;
	if (o->header_bytes_read < p->r.pos)
		o->header_bytes_read = p->r.pos;
	o->io_bytes_read = p->r.mem ? o->header_bytes_read : p->r.io;
	if (o->n_diags >= OA_GGUF_MAX_DIAGS && o->diags) {
		char tmp[160];
		snprintf(tmp, sizeof tmp, "further diagnostics not shown (%zu errors and %zu warnings "
		         "in total)", o->n_errors, o->n_warnings);
		char *m = strdup(tmp);
		if (m) {
			o->diags[o->n_diags].severity = OA_SEV_INFO;
			o->diags[o->n_diags].message = m;
			o->n_diags++;
		}
	}
	if (o->n_errors)
		o->ok = false;
	hset_free(&p->keys);
	hset_free(&p->names);
	free(p->r.buf);
}

static int run(P *p, oa_gguf_mode mode)
{
	p->mode = mode == OA_GGUF_FULL ? OA_GGUF_FULL : OA_GGUF_QUICK;
	p->lenw = 8;
	p->type_max = -1;
	parse(p);
	finish(p);
	return p->out->ok ? 0 : -1;
}

int oa_gguf_read_mem(const void *buf, size_t len, oa_gguf_mode mode, oa_gguf_info *out)
{
	if (!out)
		return -1;
	memset(out, 0, sizeof *out);
	P *p = calloc(1, sizeof *p);
	if (!p)
		return -1;
	p->out = out;
	p->r.mem = buf ? buf : (const uint8_t *)"";
	p->r.size = buf ? len : 0;
	p->r.fd = -1;
	int rc = run(p, mode);
	free(p);
	return rc;
}

int oa_gguf_read_fd(int fd, uint64_t file_size, oa_gguf_mode mode, oa_gguf_info *out)
{
	if (!out)
		return -1;
	memset(out, 0, sizeof *out);
	P *p = calloc(1, sizeof *p);
	if (!p)
		return -1;
	p->out = out;
	p->r.fd = fd;
	p->r.size = file_size;
	p->r.chunk = mode == OA_GGUF_FULL ? (64u << 10) : (8u << 10);
	int rc = run(p, mode);
	free(p);
	return rc;
}

int oa_gguf_read_path(const char *path, oa_gguf_mode mode, oa_gguf_info *out)
{
	if (!out)
		return -1;
	int fd = oa_open_ro(path);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		memset(out, 0, sizeof *out);
		P *p = calloc(1, sizeof *p);
		if (!p)
			return -1;
		p->out = out;
		diag(p, OA_SEV_ERROR, "cannot open: %s", strerror(e));
		out->ok = false;
		free(p);
		return -1;
	}
	int rc = oa_gguf_read_fd(fd, (uint64_t)st.st_size, mode, out);
	close(fd);
	return rc;
}

static char *dup_or_null(const char *s)
{
	return s ? oa_xstrdup(s) : NULL;
}

void oa_gguf_info_copy(oa_gguf_info *dst, const oa_gguf_info *src)
{
	*dst = *src;
	dst->architecture = dup_or_null(src->architecture);
	dst->general_type = dup_or_null(src->general_type);
	dst->general_name = dup_or_null(src->general_name);
	dst->tokenizer_model = dup_or_null(src->tokenizer_model);
	dst->tensors = src->n_tensors_kept ? oa_xcalloc(src->n_tensors_kept, sizeof *dst->tensors) : NULL;
	for (size_t i = 0; i < src->n_tensors_kept; i++) {
		dst->tensors[i] = src->tensors[i];
		dst->tensors[i].name = dup_or_null(src->tensors[i].name);
	}
	dst->diags = src->n_diags ? oa_xcalloc(src->n_diags, sizeof *dst->diags) : NULL;
	for (size_t i = 0; i < src->n_diags; i++) {
		dst->diags[i] = src->diags[i];
		dst->diags[i].message = dup_or_null(src->diags[i].message);
	}
}

void oa_gguf_info_free(oa_gguf_info *info)
{
	if (!info)
		return;
	free(info->architecture);
	free(info->general_type);
	free(info->general_name);
	free(info->tokenizer_model);
	for (size_t i = 0; i < info->n_tensors_kept; i++)
		free(info->tensors[i].name);
	free(info->tensors);
	for (size_t i = 0; i < info->n_diags; i++)
		free(info->diags[i].message);
	free(info->diags);
	memset(info, 0, sizeof *info);
}
