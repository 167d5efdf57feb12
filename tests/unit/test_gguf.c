/* test_gguf.c - GGUF header reader: valid files of every version and byte order, every value
 * type, derived facts, and each item of the bad-input checklist (spec §6.3, items 1-18).
 * With OA_GGUF_WRITE_CORPUS=<dir> it also writes the fuzz seed corpus there. */
#include "testutil.h"
#include "ollama_audit/gguf.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- in-memory GGUF writer ------------------------------------------------------------ */
/* gguf_writer.h - a tiny in-memory GGUF writer for tests and corpus generation.
 * Little- or big-endian, v1 (u32 lengths/counts/dims) or v2/v3 (u64). */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	uint8_t *b;
	size_t n, cap;
	bool be;
	uint32_t ver;
} gw_t;

static void gw_init(gw_t *w, uint32_t ver, bool be)
{
	memset(w, 0, sizeof *w);
	w->ver = ver;
	w->be = be;
}
static void gw_free(gw_t *w) { free(w->b); memset(w, 0, sizeof *w); }

static void gw_raw(gw_t *w, const void *p, size_t n)
{
	if (w->n + n > w->cap) {
		size_t nc = w->cap ? w->cap : 256;
		while (nc < w->n + n)
			nc *= 2;
		w->b = realloc(w->b, nc);
		if (!w->b)
			abort();
		w->cap = nc;
	}
	if (n)
		memcpy(w->b + w->n, p, n);
	w->n += n;
}
static void gw_uint(gw_t *w, uint64_t v, int bytes)
{
	uint8_t t[8];
	for (int i = 0; i < bytes; i++)
		t[w->be ? bytes - 1 - i : i] = (uint8_t)(v >> (8 * i));
	gw_raw(w, t, (size_t)bytes);
}
static void gw_u8(gw_t *w, uint64_t v) { gw_uint(w, v, 1); }
static void gw_u16(gw_t *w, uint64_t v) { gw_uint(w, v, 2); }
static void gw_u32(gw_t *w, uint64_t v) { gw_uint(w, v, 4); }
static void gw_u64(gw_t *w, uint64_t v) { gw_uint(w, v, 8); }
/* A length / count / dimension: u32 in v1, u64 after. */
static void gw_len(gw_t *w, uint64_t v) { gw_uint(w, v, w->ver == 1 ? 4 : 8); }
static void gw_strn(gw_t *w, const void *s, size_t n) { gw_len(w, n); gw_raw(w, s, n); }
static void gw_str(gw_t *w, const char *s) { gw_strn(w, s, strlen(s)); }

static void gw_header(gw_t *w, uint64_t n_tensors, uint64_t n_kv)
{
	gw_raw(w, "GGUF", 4);
	gw_u32(w, w->ver);
	gw_len(w, n_tensors);
	gw_len(w, n_kv);
}
/* key + value type; the caller writes the value. */
static void gw_key(gw_t *w, const char *key, uint32_t type) { gw_str(w, key); gw_u32(w, type); }
static void gw_kv_u32(gw_t *w, const char *k, uint32_t v) { gw_key(w, k, 4); gw_u32(w, v); }
static void gw_kv_u64(gw_t *w, const char *k, uint64_t v) { gw_key(w, k, 10); gw_u64(w, v); }
static void gw_kv_i32(gw_t *w, const char *k, int32_t v) { gw_key(w, k, 5); gw_u32(w, (uint32_t)v); }
static void gw_kv_str(gw_t *w, const char *k, const char *v) { gw_key(w, k, 8); gw_str(w, v); }
static void gw_kv_bool(gw_t *w, const char *k, uint8_t v) { gw_key(w, k, 7); gw_u8(w, v); }
static void gw_kv_f32(gw_t *w, const char *k, float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	gw_key(w, k, 6);
	gw_u32(w, x);
}
/* Array header: element type and count; the caller writes the elements. */
static void gw_kv_arr(gw_t *w, const char *k, uint32_t etype, uint64_t n)
{
	gw_key(w, k, 9);
	gw_u32(w, etype);
	gw_len(w, n);
}
static void gw_tensor(gw_t *w, const char *name, uint32_t n_dims, const uint64_t *ne,
                      uint32_t type, uint64_t offset)
{
	gw_str(w, name);
	gw_u32(w, n_dims);
	for (uint32_t i = 0; i < n_dims; i++)
		gw_len(w, ne[i]);
	gw_u32(w, type);
	gw_u64(w, offset);
}
static void gw_pad(gw_t *w, size_t align)
{
	static const uint8_t z[64];
	while (w->n % align)
		gw_raw(w, z, 1);
	(void)z;
}
static void gw_zeros(gw_t *w, size_t n)
{
	uint8_t z[256] = {0};
	while (n) {
		size_t k = n < sizeof z ? n : sizeof z;
		gw_raw(w, z, k);
		n -= k;
	}
}

/* A small but complete model: 9 KVs (arch key before general.architecture), 5 tensors of types
 * Q4_K, MXFP4, NVFP4, Q1_0 and F32, contiguous, 32-aligned, last tensor ends at EOF. */
#define GW_MODEL_PARAMS 1540u
static void gw_model(gw_t *w, uint32_t ver, bool be)
{
	gw_init(w, ver, be);
	gw_header(w, 5, 9);
	gw_kv_u32(w, "llama.context_length", 4096);
	gw_kv_str(w, "general.architecture", "llama");
	gw_kv_str(w, "general.name", "Tiny Test");
	gw_kv_u32(w, "general.file_type", 15);
	gw_kv_u32(w, "llama.embedding_length", 256);
	gw_kv_u32(w, "llama.block_count", 1);
	gw_kv_str(w, "tokenizer.ggml.model", "llama");
	gw_kv_arr(w, "tokenizer.ggml.tokens", 8, 3);
	gw_str(w, "<s>");
	gw_str(w, "a");
	gw_str(w, "\xe2\x96\x81the");
	gw_kv_arr(w, "tokenizer.ggml.scores", 6, 3);
	gw_u32(w, 0); gw_u32(w, 0); gw_u32(w, 0);
	static const uint64_t s0[2] = {256, 4}, s1[2] = {64, 2}, s2[2] = {128, 2}, s3[2] = {128, 1},
	                      s4[1] = {4};
	/* nbytes: 576, 68 (pad 96), 144 (pad 160), 18 (pad 32), 16 */
	gw_tensor(w, "token_embd.weight", 2, s0, 12, 0);
	gw_tensor(w, "blk.0.attn_q.weight", 2, s1, 39, 576);
	gw_tensor(w, "blk.0.ffn_up.weight", 2, s2, 40, 576 + 96);
	gw_tensor(w, "blk.0.ffn_down.weight", 2, s3, 41, 576 + 96 + 160);
	gw_tensor(w, "output_norm.weight", 1, s4, 0, 576 + 96 + 160 + 32);
	gw_pad(w, 32);
	gw_zeros(w, 576 + 96 + 160 + 32 + 16);
}


/* ---- helpers ------------------------------------------------------------------------------ */

static bool has_diag(const oa_gguf_info *in, oa_severity sev, const char *needle)
{
	for (size_t i = 0; i < in->n_diags; i++)
		if (in->diags[i].severity == sev && strstr(in->diags[i].message, needle))
			return true;
	return false;
}

static void dump_diags(const oa_gguf_info *in)
{
	for (size_t i = 0; i < in->n_diags; i++)
		fprintf(stderr, "    [%d] %s\n", in->diags[i].severity, in->diags[i].message);
}

/* Parse w in the given mode; expect ok/not ok and a diag of severity sev containing needle
 * (needle NULL: no check). Returns nothing; frees. */
#define EXPECT(w, mode, want_ok, sev, needle) expect_(__LINE__, (w), (mode), (want_ok), (sev), (needle))
static void expect_(int line, const gw_t *w, oa_gguf_mode mode, bool want_ok, int sev,
                    const char *needle)
{
	oa_gguf_info in;
	int rc = oa_gguf_read_mem(w->b, w->n, mode, &in);
	bool good = (rc == 0) == want_ok && in.ok == want_ok;
	if (needle && !has_diag(&in, sev, needle))
		good = false;
	if (good) {
		oa_t_pass++;
	} else {
		oa_t_fail++;
		fprintf(stderr, "test_gguf.c:%d: expected ok=%d and diag[%d] '%s'; got ok=%d:\n", line,
		        want_ok, sev, needle ? needle : "", in.ok);
		dump_diags(&in);
	}
	oa_gguf_info_free(&in);
}

/* Start a v3 LE file with n_kv KVs declared and general.architecture first. */
static void start(gw_t *w, uint64_t nt, uint64_t nkv)
{
	gw_init(w, 3, false);
	gw_header(w, nt, nkv);
	gw_kv_str(w, "general.architecture", "llama");
}

static void check_model_facts(const oa_gguf_info *in, uint32_t ver, bool be)
{
	CHECK(in->ok);
	CHECK_U64(in->version, ver);
	CHECK(in->big_endian == be);
	CHECK_STR(in->architecture, "llama");
	CHECK_STR(in->general_name, "Tiny Test");
	CHECK_STR(in->tokenizer_model, "llama");
	CHECK(in->general_type == NULL);
	CHECK(in->has_file_type);
	CHECK_U64(in->file_type, 15);
	CHECK(in->file_type_is_u32);
	CHECK(!in->file_type_guessed);
	CHECK_U64(in->kv_count, 9);
	CHECK_U64(in->tensor_count, 5);
	CHECK_U64(in->context_length, 4096);
	CHECK_U64(in->embedding_length, 256);
	CHECK_U64(in->block_count, 1);
	CHECK_U64(in->vocab_size, 3);
	CHECK_U64(in->alignment, 32);
	CHECK_U64(in->parameter_count, GW_MODEL_PARAMS);
	CHECK_U64(in->n_tensors_kept, 5);
	CHECK(in->kind == OA_GGUF_KIND_MODEL);
	CHECK_U64(in->n_errors, 0);
	CHECK_U64(in->n_warnings, 0);
	if (in->n_tensors_kept == 5) {
		CHECK_STR(in->tensors[0].name, "token_embd.weight");
		CHECK_U64(in->tensors[0].type, OA_GGML_TYPE_Q4_K);
		CHECK_U64(in->tensors[0].nbytes, 576);
		CHECK_U64(in->tensors[1].type, OA_GGML_TYPE_MXFP4);
		CHECK_U64(in->tensors[1].nbytes, 68);
		CHECK_U64(in->tensors[2].type, OA_GGML_TYPE_NVFP4);
		CHECK_U64(in->tensors[2].nbytes, 144);
		CHECK_U64(in->tensors[3].type, OA_GGML_TYPE_Q1_0);
		CHECK_U64(in->tensors[3].nbytes, 18);
		CHECK_U64(in->tensors[4].ne[0], 4);
		CHECK_U64(in->tensors[4].ne[1], 1);
		CHECK_U64(in->tensors[4].n_dims, 1);
		CHECK_U64(in->data_offset + 576 + 96 + 160 + 32 + 16, in->file_size);
		CHECK_U64(in->data_offset % 32, 0);
	}
}

/* ---- valid files -------------------------------------------------------------------------- */

static void test_valid_versions(void)
{
	const struct { uint32_t ver; bool be; } cases[] = {{3, false}, {2, false}, {1, false},
	                                                    {3, true}, {2, true}, {1, true}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		gw_t w;
		gw_model(&w, cases[i].ver, cases[i].be);
		oa_gguf_info in;
		int rc = oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in);
		CHECK(rc == 0);
		check_model_facts(&in, cases[i].ver, cases[i].be);
		if (in.n_errors || in.n_warnings)
			dump_diags(&in);
		if (cases[i].be)
			CHECK(has_diag(&in, OA_SEV_INFO, "big-endian"));
		oa_gguf_info_free(&in);
		gw_free(&w);
	}
}

static void test_fd_and_path(void)
{
	/* A header larger than the reader's window: 200k tokens of varied length. */
	gw_t w;
	gw_init(&w, 3, false);
	gw_header(&w, 1, 5);
	gw_kv_str(&w, "general.architecture", "gemma4");
	gw_kv_u32(&w, "gemma4.context_length", 131072);
	gw_kv_str(&w, "tokenizer.ggml.model", "gemma4");
	gw_kv_arr(&w, "tokenizer.ggml.tokens", 8, 200000);
	char tok[64];
	for (int i = 0; i < 200000; i++) {
		int n = snprintf(tok, sizeof tok, "tok%d%.*s", i, i % 37, "abcdefghijklmnopqrstuvwxyz0123456789");
		gw_strn(&w, tok, (size_t)n);
	}
	gw_kv_arr(&w, "tokenizer.ggml.scores", 6, 200000);
	gw_zeros(&w, 800000);
	static const uint64_t ne[2] = {64, 64};
	gw_tensor(&w, "token_embd.weight", 2, ne, 8, 0); /* q8_0: 2 blocks x 34 x 64 = 4352 */
	gw_pad(&w, 32);
	gw_zeros(&w, 4352);

	char path[] = "/tmp/test_gguf_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, w.b, w.n) == (ssize_t)w.n);
	oa_gguf_info a, b, q;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &a) == 0);
	CHECK(oa_gguf_read_fd(fd, w.n, OA_GGUF_FULL, &b) == 0);
	CHECK_U64(b.vocab_size, 200000);
	CHECK_U64(a.vocab_size, 200000);
	CHECK_U64(a.data_offset, b.data_offset);
	CHECK_U64(a.header_bytes_read, b.header_bytes_read);
	CHECK_U64(b.parameter_count, 4096);
	CHECK_U64(b.context_length, 131072);
	CHECK(b.file_type_guessed);
	CHECK_U64(b.guessed_file_type, 7); /* Q8_0 */
	CHECK(b.io_bytes_read < w.n + 1);
	CHECK(oa_gguf_read_path(path, OA_GGUF_QUICK, &q) == 0);
	CHECK(q.quick_stopped);
	CHECK(q.io_bytes_read <= 8192);
	CHECK(q.header_bytes_read < 200);
	CHECK_STR(q.architecture, "gemma4");
	CHECK_U64(q.context_length, 131072);
	oa_gguf_info_free(&a);
	oa_gguf_info_free(&b);
	oa_gguf_info_free(&q);
	/* The file shrinks under us: fd parse with the old size must report an I/O error. */
	CHECK(ftruncate(fd, (off_t)(w.n / 2)) == 0);
	CHECK(oa_gguf_read_fd(fd, w.n, OA_GGUF_FULL, &b) == -1);
	CHECK(has_diag(&b, OA_SEV_ERROR, "I/O error"));
	oa_gguf_info_free(&b);
	close(fd);
	unlink(path);
	CHECK(oa_gguf_read_path("/nonexistent/x.gguf", OA_GGUF_FULL, &b) == -1);
	CHECK(has_diag(&b, OA_SEV_ERROR, "cannot open"));
	oa_gguf_info_free(&b);
	gw_free(&w);
}

static void test_all_value_types(void)
{
	gw_t w;
	start(&w, 0, 16);
	gw_key(&w, "t.u8", 0); gw_u8(&w, 200);
	gw_key(&w, "t.i8", 1); gw_u8(&w, 0x80);
	gw_key(&w, "t.u16", 2); gw_u16(&w, 60000);
	gw_key(&w, "t.i16", 3); gw_u16(&w, 0x8000);
	gw_kv_u32(&w, "t.u32", 7);
	gw_kv_i32(&w, "t.i32", -7);
	gw_kv_f32(&w, "t.f32", 1.5f);
	gw_kv_bool(&w, "t.bool", 1);
	gw_kv_str(&w, "t.string", "hello");
	gw_kv_arr(&w, "t.array", 4, 2); gw_u32(&w, 1); gw_u32(&w, 2);
	gw_kv_u64(&w, "t.u64", 1ull << 40);
	gw_key(&w, "t.i64", 11); gw_u64(&w, (uint64_t)-5);
	gw_key(&w, "t.f64", 12); gw_u64(&w, 0x3ff0000000000000ull);
	/* Integer known keys read by value from any integer type. */
	gw_key(&w, "llama.context_length", 10); gw_u64(&w, 8192);
	gw_key(&w, "llama.block_count", 0); gw_u8(&w, 32);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK_U64(in.kv_parsed, 16);
	CHECK_U64(in.context_length, 8192);
	CHECK_U64(in.block_count, 32);
	CHECK_U64(in.n_warnings, 0);
	CHECK_U64(in.data_offset, w.n); /* 0 tensors: no padding */
	CHECK(!in.has_file_type);
	CHECK(!in.file_type_guessed);
	oa_gguf_info_free(&in);
	/* Arrays of every element type, including empty ones. */
	gw_free(&w);
	start(&w, 0, 15);
	for (uint32_t t = 0; t < 13; t++) {
		char k[32];
		snprintf(k, sizeof k, "arr.%u", t);
		if (t == 9) {
			gw_kv_arr(&w, k, 9, 0);
			continue;
		}
		gw_kv_arr(&w, k, t, 2);
		for (int e = 0; e < 2; e++) {
			if (t == 8)
				gw_str(&w, "xy");
			else
				gw_uint(&w, 1, t == 7 ? 1 : (t <= 1 ? 1 : t <= 3 ? 2 : t <= 6 ? 4 : 8));
		}
	}
	gw_kv_arr(&w, "arr.empty", 8, 0);
	EXPECT(&w, OA_GGUF_FULL, true, 0, NULL);
	gw_free(&w);
}

static void test_zero_tensors_exact_end(void)
{
	/* §6.3 item 16: 0 tensors, the file ends at the end of the KVs: valid, no padding. */
	gw_t w;
	start(&w, 0, 2);
	gw_kv_str(&w, "general.name", "abc"); /* end not aligned to 32 */
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(w.n % 32 != 0);
	CHECK_U64(in.data_offset, w.n);
	CHECK_U64(in.header_bytes_read, w.n);
	oa_gguf_info_free(&in);
	/* tensor_count > 0 and the file ends inside the padding: error. */
	gw_free(&w);
	start(&w, 1, 1);
	static const uint64_t ne0[1] = {0};
	gw_tensor(&w, "empty", 1, ne0, 0, 0);
	if (w.n % 32 == 0)
		gw_kv_str(&w, "", ""); /* unreachable in practice; keeps the end unaligned */
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "past the end of the file");
	gw_free(&w);
}

static void test_quick_mode(void)
{
	gw_t w;
	gw_model(&w, 3, false);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_QUICK, &in) == 0);
	CHECK(in.quick_stopped);
	CHECK_STR(in.architecture, "llama");
	CHECK_U64(in.context_length, 4096);
	CHECK_U64(in.embedding_length, 256);
	CHECK_U64(in.file_type, 15);
	CHECK_U64(in.kv_parsed, 6);
	CHECK(in.tokenizer_model == NULL);
	CHECK_U64(in.n_tensors_kept, 0);
	CHECK_U64(in.parameter_count, 0);
	CHECK(in.header_bytes_read < 300);
	if (in.header_bytes_read >= 300)
		fprintf(stderr, "quick header_bytes_read %" PRIu64 "\n", in.header_bytes_read);
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* tokenizer keys before the architecture do not stop it. */
	gw_init(&w, 3, false);
	gw_header(&w, 0, 3);
	gw_kv_str(&w, "tokenizer.ggml.model", "gpt2");
	gw_kv_str(&w, "general.architecture", "qwen2");
	gw_kv_str(&w, "tokenizer.ggml.pre", "qwen2");
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_QUICK, &in) == 0);
	CHECK(in.quick_stopped);
	CHECK_U64(in.kv_parsed, 2);
	CHECK_STR(in.tokenizer_model, "gpt2");
	oa_gguf_info_free(&in);
	gw_free(&w);
}

static void test_numbers_and_strings(void)
{
	char b[32];
	const struct { uint64_t n; const char *s; } hn[] = {
		{8030261248ull, "8.0B"}, {4471471360ull, "4.5B"}, {7000000000ull, "7B"},
		{136727040ull, "136.73M"}, {999, "999"}, {1000, "1K"}, {0, "0"}, {1000000, "1M"},
		{500500000, "500.50M"}, {2850000000ull, "2.9B"}, {1000000000000ull, "1000B"},
		/* Go's math.Floor rule: 1.5e12/1e9 = 1500 is whole, so "1500B" (not "1500.0B") */
		{1500000000000ull, "1500B"}, {1500100000000ull, "1500.1B"}, {1499, "1K"}, {1500, "2K"},
	};
	for (size_t i = 0; i < sizeof hn / sizeof hn[0]; i++) {
		oa_human_number(hn[i].n, b, sizeof b);
		CHECK_STR(b, hn[i].s);
	}
	CHECK_STR(oa_ftype_ollama_string(15, true), "Q4_K_M");
	CHECK_STR(oa_ftype_llama_name(15), "Q4_K - Medium");
	CHECK_STR(oa_ftype_ollama_string(41, true), "unknown");
	CHECK_STR(oa_ftype_llama_name(41), "Q2_0");
	CHECK_STR(oa_ftype_ollama_string(0, true), "unknown");
	CHECK_STR(oa_ftype_llama_name(0), "all F32");
	CHECK_STR(oa_ftype_ollama_string(15, false), "unknown");
	CHECK_STR(oa_ftype_ollama_string(38, true), "MXFP4_MOE");
	CHECK_STR(oa_ftype_ollama_string(40, true), "Q1_0");
	CHECK_STR(oa_ftype_ollama_string(4, true), "unknown");
	CHECK(oa_ftype_llama_name(4) == NULL);
	CHECK(oa_ftype_llama_name(1024) == NULL);
	CHECK_STR(oa_ggml_type_name(12), "q4_K");
	CHECK_STR(oa_ggml_type_name(39), "mxfp4");
	CHECK_STR(oa_ggml_type_name(42), "q2_0");
	CHECK(oa_ggml_type_name(4) == NULL);
	CHECK(oa_ggml_type_name(43) == NULL);
	uint32_t bl = 0, by = 0;
	CHECK(oa_ggml_type_block(40, &bl, &by) && bl == 64 && by == 36);
	CHECK(oa_ggml_type_block(41, &bl, &by) && bl == 128 && by == 18);
	CHECK(oa_ggml_type_block(9, &bl, &by) && bl == 32 && by == 36);
	CHECK(!oa_ggml_type_block(31, &bl, &by));
	CHECK(!oa_ggml_type_block(0xffffffffu, &bl, &by));
	CHECK(oa_gguf_is_magic("GGUF"));
	CHECK(oa_gguf_is_magic("algg"));
	CHECK(!oa_gguf_is_magic("FUGG"));
	CHECK_STR(oa_gguf_value_type_name(9), "array");
	CHECK_STR(oa_gguf_value_type_name(13), "?");
}

static void test_kinds(void)
{
	gw_t w;
	oa_gguf_info in;
	/* general.type mmproj */
	gw_init(&w, 3, false);
	gw_header(&w, 0, 2);
	gw_kv_str(&w, "general.architecture", "clip");
	gw_kv_str(&w, "general.type", "mmproj");
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.kind == OA_GGUF_KIND_PROJECTOR);
	CHECK_STR(in.general_type, "mmproj");
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* clip, no block_count, has a vision encoder */
	gw_init(&w, 3, false);
	gw_header(&w, 0, 2);
	gw_kv_bool(&w, "clip.has_vision_encoder", 1);
	gw_kv_str(&w, "general.architecture", "clip");
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.kind == OA_GGUF_KIND_PROJECTOR);
	CHECK(in.has_vision_encoder);
	CHECK(!in.has_audio_encoder);
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* block_count 0 and vision.block_count > 0, arch key first */
	gw_init(&w, 3, false);
	gw_header(&w, 0, 2);
	gw_kv_u32(&w, "mllama.vision.block_count", 32);
	gw_kv_str(&w, "general.architecture", "mllama");
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.kind == OA_GGUF_KIND_PROJECTOR);
	CHECK(in.has_vision_block_count);
	CHECK_U64(in.vision_block_count, 32);
	CHECK_U64(in.block_count, 0);
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* a model with vision tensors inside: block_count > 0 stays a model */
	gw_init(&w, 3, false);
	gw_header(&w, 0, 4);
	gw_kv_str(&w, "general.architecture", "gemma3");
	gw_kv_u32(&w, "gemma3.block_count", 26);
	gw_kv_u32(&w, "gemma3.vision.block_count", 27);
	gw_kv_u32(&w, "gemma3.pooling_type", 1);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.kind == OA_GGUF_KIND_MODEL);
	CHECK(in.has_pooling_type);
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* adapter */
	gw_init(&w, 3, false);
	gw_header(&w, 0, 3);
	gw_kv_str(&w, "general.architecture", "llama");
	gw_kv_str(&w, "general.type", "adapter");
	gw_kv_str(&w, "adapter.type", "lora");
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.kind == OA_GGUF_KIND_ADAPTER);
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* GGLA: u32 0x67676C61 little-endian, version 1 */
	gw_init(&w, 3, false);
	gw_u32(&w, 0x67676C61u);
	gw_u32(&w, 1);
	gw_u32(&w, 8);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.is_ggla);
	CHECK(in.kind == OA_GGUF_KIND_ADAPTER);
	CHECK_U64(in.version, 1);
	CHECK(has_diag(&in, OA_SEV_INFO, "GGLA"));
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* llama.cpp's gguf-split keys: u16 split.no and split.count, i32
 * split.tensors.count; a shard after the first has no architecture by
 * design, and that is no warning (the first shard's still is). */
static void test_split_keys(void)
{
	gw_t w;
	oa_gguf_info in;
	for (int no = 0; no < 2; no++) {
		gw_init(&w, 3, false);
		gw_header(&w, 0, 3);
		gw_key(&w, "split.no", 2);
		gw_u16(&w, (uint64_t)no);
		gw_key(&w, "split.count", 2);
		gw_u16(&w, 3);
		gw_kv_i32(&w, "split.tensors.count", 27);
		CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
		CHECK(in.has_split);
		CHECK_U64(in.split_no, (uint64_t)no);
		CHECK_U64(in.split_count, 3);
		CHECK(in.split_tensors == 27);
		CHECK(has_diag(&in, OA_SEV_WARNING, "general.architecture") == (no == 0));
		oa_gguf_info_free(&in);
		gw_free(&w);
	}
	/* split.count alone is no shard; a negative split.no is refused with a warning */
	gw_init(&w, 3, false);
	gw_header(&w, 0, 3);
	gw_kv_str(&w, "general.architecture", "llama");
	gw_kv_i32(&w, "split.no", -1);
	gw_kv_u32(&w, "split.count", 2);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(!in.has_split);
	CHECK(in.split_tensors == -1);
	CHECK(has_diag(&in, OA_SEV_WARNING, "split.no"));
	oa_gguf_info_free(&in);
	gw_free(&w);
}

static void test_guess(void)
{
	/* No general.file_type: the dominant tensor type gives a marked guess (Q4_K -> 15). */
	gw_t w;
	start(&w, 3, 1);
	static const uint64_t ne[1] = {256};
	gw_tensor(&w, "a", 1, ne, 12, 0);
	gw_tensor(&w, "b", 1, ne, 0, 160);
	gw_tensor(&w, "c", 1, ne, 12, 160 + 1024);
	gw_pad(&w, 32);
	gw_zeros(&w, 160 + 1024 + 144);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(!in.has_file_type);
	CHECK(in.file_type_guessed);
	CHECK_U64(in.guessed_file_type, 15);
	CHECK_U64(in.parameter_count, 768);
	if (in.n_warnings)
		dump_diags(&in);
	CHECK_U64(in.n_warnings, 0);
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* ---- §6.3 checklist ----------------------------------------------------------------------- */

/* 1. Short files, wrong magic, FUGG. */
static void test_c01_magic(void)
{
	gw_t m;
	gw_model(&m, 3, false);
	const size_t lens[] = {0, 3, 4, 7, 8, 23};
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		gw_t w = {.b = m.b, .n = lens[i]};
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, lens[i] < 4 ? "too short" : "truncated");
	}
	gw_free(&m);
	gw_t w;
	gw_init(&w, 3, false);
	gw_raw(&w, "GGML\x03\0\0\0", 8);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "not a GGUF file: magic 'GGML'");
	gw_free(&w);
	gw_init(&w, 3, false);
	gw_raw(&w, "\x01\x02\xff\x7f", 4);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "magic '\\x01\\x02\\xff\\x7f'");
	gw_free(&w);
	gw_init(&w, 3, false);
	gw_raw(&w, "FUGG", 4);
	gw_u32(&w, 3); gw_u64(&w, 0); gw_u64(&w, 0);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "'FUGG'");
	gw_free(&w);
	gw_init(&w, 3, false);
	gw_raw(&w, "lmgg", 4);
	EXPECT(&w, OA_GGUF_QUICK, false, OA_SEV_ERROR, "legacy pre-GGUF");
	gw_free(&w);
}

/* 2. Versions. */
static void test_c02_versions(void)
{
	const uint32_t bad[] = {0, 4, 0xFFFFFFFFu, 0x00040000u, 0x00010000u * 7};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		gw_t w;
		gw_init(&w, 3, false);
		gw_raw(&w, "GGUF", 4);
		gw_u32(&w, bad[i]);
		gw_u64(&w, 0);
		gw_u64(&w, 0);
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "unsupported GGUF version");
		gw_free(&w);
	}
	/* 0x03000000 read little-endian = big-endian v3, but the counts here are LE: the swapped
	 * counts are huge, so it fails cleanly on the counts. */
	gw_t w;
	gw_init(&w, 3, false);
	gw_raw(&w, "GGUF", 4);
	gw_u32(&w, 0x03000000u);
	gw_u64(&w, 1);
	gw_u64(&w, 1);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "above our limit");
	gw_free(&w);
	/* v1 is accepted (info diag). */
	gw_model(&w, 1, false);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_INFO, "GGUF v1");
	gw_free(&w);
}

/* 3. Counts. */
static void test_c03_counts(void)
{
	const uint64_t big[] = {1ull << 63, UINT64_MAX, 1ull << 20};
	for (size_t i = 0; i < 3; i++) {
		for (int which = 0; which < 2; which++) {
			gw_t w;
			gw_init(&w, 3, false);
			gw_header(&w, which ? big[i] : 0, which ? 0 : big[i]);
			gw_zeros(&w, 64);
			EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR,
			       big[i] == (1ull << 20) ? "only 64 are left" : "above our limit");
			gw_free(&w);
		}
	}
	/* Exactly at the minimum record size: 2 KVs need 26 bytes, give 25. */
	gw_t w;
	gw_init(&w, 3, false);
	gw_header(&w, 1, 2);
	gw_zeros(&w, 26 + 23);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "tensor infos need at least 13+24 bytes");
	gw_free(&w);
	/* v1: 32-bit counts, min record 9 + 20 bytes. */
	gw_init(&w, 1, false);
	gw_header(&w, 0, 0xFFFFFFFFu);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "above our limit");
	gw_free(&w);
}

/* 4. String lengths. */
static void test_c04_strings(void)
{
	const uint64_t lens[] = {UINT64_MAX, 1ull << 63, 0 /* remaining+1 */};
	for (size_t i = 0; i < 3; i++) {
		gw_t w;
		gw_init(&w, 3, false);
		gw_header(&w, 0, 1);
		gw_u64(&w, lens[i] ? lens[i] : 14);
		gw_zeros(&w, 13);
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, lens[i] ? "exceeds the 1073741824-byte "
		       "limit" : "string length 14 exceeds the 13 bytes left in the file (offset 24)");
		gw_free(&w);
	}
	/* Exactly the remaining bytes: the key fits, then the value type is missing. */
	gw_t w;
	gw_init(&w, 3, false);
	gw_header(&w, 0, 1);
	gw_u64(&w, 13);
	gw_raw(&w, "general.namex", 13);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "file truncated at offset 45");
	gw_free(&w);
	/* A string value of remaining+1. */
	start(&w, 0, 2);
	gw_key(&w, "general.name", 8);
	gw_u64(&w, 4);
	gw_raw(&w, "abc", 3);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "'general.name': string length 4 exceeds the 3");
	gw_free(&w);
	/* Empty key: warning. */
	start(&w, 0, 2);
	gw_kv_u32(&w, "", 1);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "kv #1: empty key");
	gw_free(&w);
	/* An over-long kept string is truncated. */
	start(&w, 0, 2);
	char longname[3000];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	gw_kv_str(&w, "general.name", longname);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.general_name && strlen(in.general_name) == OA_GGUF_KEEP_STRING);
	CHECK(has_diag(&in, OA_SEV_INFO, "kept truncated"));
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* 5. Value types. */
static void test_c05_types(void)
{
	const uint32_t bad[] = {13, 0xFFFFFFFFu};
	for (int i = 0; i < 2; i++) {
		gw_t w;
		start(&w, 0, 2);
		gw_key(&w, "x.y", bad[i]);
		gw_u32(&w, 0);
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "'x.y': invalid value type");
		gw_free(&w);
		start(&w, 0, 2);
		gw_kv_arr(&w, "x.arr", bad[i], 1);
		gw_u32(&w, 0);
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "invalid array element type");
		gw_free(&w);
	}
	/* Array used where a scalar is expected. */
	gw_t w;
	start(&w, 0, 2);
	gw_kv_arr(&w, "llama.context_length", 4, 1);
	gw_u32(&w, 4096);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "'llama.context_length': expected a "
	       "non-negative integer, got array");
	gw_free(&w);
	/* Nested array, one level: allowed with a warning. */
	start(&w, 0, 2);
	gw_kv_arr(&w, "x.nested", 9, 2);
	gw_u32(&w, 4); gw_u64(&w, 2); gw_u32(&w, 1); gw_u32(&w, 2);
	gw_u32(&w, 8); gw_u64(&w, 1); gw_str(&w, "s");
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "nested array");
	gw_free(&w);
	/* Nested 100 deep: error, no recursion past the limit. */
	start(&w, 0, 2);
	gw_kv_arr(&w, "x.deep", 9, 1);
	for (int d = 0; d < 99; d++) {
		gw_u32(&w, 9);
		gw_u64(&w, 1);
	}
	gw_u32(&w, 4); gw_u64(&w, 0);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "nested deeper than 2 levels");
	gw_free(&w);
	/* Nested array of an invalid inner type. */
	start(&w, 0, 2);
	gw_kv_arr(&w, "x.n13", 9, 1);
	gw_u32(&w, 13); gw_u64(&w, 1);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "invalid array element type 13");
	gw_free(&w);
}

/* 6. Array counts. */
static void test_c06_arrays(void)
{
	gw_t w;
	start(&w, 0, 2);
	gw_kv_arr(&w, "x.u64", 10, 1ull << 62);
	gw_zeros(&w, 64);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "exceeds the 1073741824-element limit");
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_arr(&w, "x.u64", 10, 1000);
	gw_zeros(&w, 64);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "array of 1000 u64 (8 bytes each) exceeds the 64");
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_arr(&w, "tokenizer.ggml.tokens", 8, 1ull << 61);
	gw_zeros(&w, 64);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "tokenizer.ggml.tokens");
	gw_free(&w);
	/* exactly remaining/elem + 1 */
	start(&w, 0, 2);
	gw_kv_arr(&w, "x.u32", 4, 17);
	gw_zeros(&w, 64);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "array of 17 u32 (4 bytes each) exceeds the 64");
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_arr(&w, "x.u32", 4, 16);
	gw_zeros(&w, 64);
	EXPECT(&w, OA_GGUF_FULL, true, 0, NULL);
	gw_free(&w);
	/* count 0 */
	start(&w, 0, 2);
	gw_kv_arr(&w, "tokenizer.ggml.tokens", 8, 0);
	EXPECT(&w, OA_GGUF_FULL, true, 0, NULL);
	gw_free(&w);
	/* a string element longer than what is left */
	start(&w, 0, 2);
	gw_kv_arr(&w, "tokenizer.ggml.tokens", 8, 2);
	gw_str(&w, "a");
	gw_u64(&w, 100);
	gw_raw(&w, "bc", 2);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "string element 1 of 2 has length 100");
	gw_free(&w);
}

/* 7. Duplicate keys. */
static void test_c07_duplicates(void)
{
	gw_t w;
	start(&w, 0, 3);
	gw_kv_u32(&w, "llama.block_count", 1);
	gw_kv_u32(&w, "llama.block_count", 2);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "'llama.block_count': duplicate key; "
	       "llama.cpp refuses");
	gw_free(&w);
	start(&w, 0, 3);
	gw_kv_u32(&w, "general.alignment", 32);
	gw_kv_u32(&w, "general.alignment", 64);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(has_diag(&in, OA_SEV_WARNING, "'general.alignment': duplicate key"));
	CHECK_U64(in.alignment, 64);
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* 8. Types of known keys. */
static void test_c08_known_key_types(void)
{
	gw_t w;
	oa_gguf_info in;
	start(&w, 0, 2);
	gw_kv_i32(&w, "general.alignment", 64);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(has_diag(&in, OA_SEV_WARNING, "alignment stored as i32, not u32"));
	CHECK_U64(in.alignment, 64);
	oa_gguf_info_free(&in);
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_u64(&w, "general.alignment", 16);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "alignment stored as u64");
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_str(&w, "general.alignment", "32");
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "alignment of type string");
	gw_free(&w);
	const uint32_t bad_al[] = {0, 3, 1u << 31, 48};
	for (int i = 0; i < 4; i++) {
		start(&w, 0, 2);
		gw_kv_u32(&w, "general.alignment", bad_al[i]);
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, bad_al[i] == (1u << 31) ?
		       "above our 1048576-byte limit" : "is not a nonzero power of two");
		gw_free(&w);
	}
	start(&w, 0, 2);
	gw_kv_i32(&w, "general.alignment", -8);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "(negative)");
	gw_free(&w);
	/* alignment 1 and 2: valid for ggml, info only; the tensor layout follows it. */
	for (uint32_t al = 1; al <= 2; al++) {
		start(&w, 1, 2);
		gw_kv_u32(&w, "general.alignment", al);
		static const uint64_t ne[1] = {3};
		gw_tensor(&w, "t", 1, ne, 24, 0); /* i8: 3 bytes */
		gw_pad(&w, al);
		gw_zeros(&w, 3);
		CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
		CHECK_U64(in.alignment, al);
		CHECK(has_diag(&in, OA_SEV_INFO, "not a multiple of 8"));
		CHECK_U64(in.n_warnings, 0);
		oa_gguf_info_free(&in);
		gw_free(&w);
	}
	/* general.file_type as u64, i32, string */
	start(&w, 0, 2);
	gw_kv_u64(&w, "general.file_type", 7);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.has_file_type && in.file_type == 7 && !in.file_type_is_u32);
	CHECK(has_diag(&in, OA_SEV_INFO, "Ollama shows its file type as unknown"));
	CHECK_STR(oa_ftype_ollama_string(in.file_type, in.has_file_type && in.file_type_is_u32),
	          "unknown");
	oa_gguf_info_free(&in);
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_i32(&w, "general.file_type", 2);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.has_file_type && in.file_type == 2);
	oa_gguf_info_free(&in);
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_str(&w, "general.file_type", "Q4_K_M");
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "'general.file_type': expected a "
	       "non-negative 32-bit integer, got string");
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_i32(&w, "general.file_type", -1);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "(negative)");
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_u32(&w, "general.file_type", 99);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "unknown or removed file type 99");
	gw_free(&w);
	/* context_length as f32 and as string */
	start(&w, 0, 2);
	gw_kv_f32(&w, "llama.context_length", 4096.0f);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "'llama.context_length': expected a "
	       "non-negative integer, got f32");
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_str(&w, "llama.context_length", "4096");
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "got string");
	gw_free(&w);
	/* tokens as a u8 array */
	start(&w, 0, 2);
	gw_kv_arr(&w, "tokenizer.ggml.tokens", 0, 3);
	gw_raw(&w, "abc", 3);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(has_diag(&in, OA_SEV_WARNING, "expected an array of strings, got array of u8"));
	CHECK_U64(in.vocab_size, 0);
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* head_count as an array longer than block_count */
	start(&w, 0, 3);
	gw_kv_u32(&w, "llama.block_count", 2);
	gw_kv_arr(&w, "llama.attention.head_count", 4, 5);
	for (int i = 0; i < 5; i++)
		gw_u32(&w, 8);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "per-layer array of 5 entries but "
	       "block_count is 2");
	gw_free(&w);
	/* <arch>.vocab_size used when there is no tokens array; block_count > 512 */
	start(&w, 0, 3);
	gw_kv_u32(&w, "llama.vocab_size", 32000);
	gw_kv_u32(&w, "llama.block_count", 4096);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK_U64(in.vocab_size, 32000);
	CHECK(has_diag(&in, OA_SEV_WARNING, "LLAMA_MAX_LAYERS"));
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* 9. Bool bytes other than 0/1: read as true, with a warning. */
static void test_c09_bool(void)
{
	const uint8_t bytes[] = {2, 0xFF};
	for (int i = 0; i < 2; i++) {
		gw_t w;
		gw_init(&w, 3, false);
		gw_header(&w, 0, 2);
		gw_kv_str(&w, "general.architecture", "clip");
		gw_kv_bool(&w, "clip.has_audio_encoder", bytes[i]);
		oa_gguf_info in;
		CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
		CHECK(has_diag(&in, OA_SEV_WARNING, "is neither 0 nor 1, read as true"));
		CHECK(in.has_audio_encoder);
		CHECK(in.kind == OA_GGUF_KIND_PROJECTOR);
		oa_gguf_info_free(&in);
		gw_free(&w);
	}
}

/* 10b. A C1 control (U+009B, a CSI to some terminals) and a bidi override
 * (U+202E) in a key are well-formed UTF-8, escaped all the same, as
 * everywhere else (\uNNNN). */
static void test_c10_escaping_unicode_controls(void)
{
	gw_t w;
	start(&w, 1, 3);
	gw_strn(&w, "c1\xc2\x9b\xe2\x80\xaekey", 10);
	gw_u32(&w, 4); gw_u32(&w, 1);
	gw_strn(&w, "c1\xc2\x9b\xe2\x80\xaekey", 10);
	gw_u32(&w, 4); gw_u32(&w, 1);
	static const uint64_t ne[1] = {4};
	gw_strn(&w, "t", 1);
	gw_u32(&w, 1); gw_len(&w, ne[0]); gw_u32(&w, 0); gw_u64(&w, 0);
	gw_pad(&w, 32);
	gw_zeros(&w, 16);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(has_diag(&in, OA_SEV_WARNING, "'c1\\u009b\\u202ekey': duplicate key"));
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* 10. Invalid UTF-8, NUL and control characters: escaped in messages. */
static void test_c10_escaping(void)
{
	gw_t w;
	start(&w, 1, 3);
	gw_strn(&w, "bad\x01\xff\xc3\xa9key", 10);
	gw_u32(&w, 4); gw_u32(&w, 1);
	gw_strn(&w, "bad\x01\xff\xc3\xa9key", 10); /* duplicate: makes a message with the key */
	gw_u32(&w, 4); gw_u32(&w, 1);
	static const uint64_t ne[1] = {4};
	gw_strn(&w, "nm\0\n\x1b", 5);
	gw_u32(&w, 1); gw_len(&w, ne[0]); gw_u32(&w, 0); gw_u64(&w, 0);
	gw_pad(&w, 32);
	gw_zeros(&w, 16);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(has_diag(&in, OA_SEV_WARNING, "'bad\\x01\\xff\xc3\xa9key': duplicate key"));
	CHECK(has_diag(&in, OA_SEV_WARNING, "'nm\\x00\\x0a\\x1b': name contains a NUL byte"));
	for (size_t i = 0; i < in.n_diags; i++)
		for (const char *c = in.diags[i].message; *c; c++)
			CHECK((unsigned char)*c >= 0x20);
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* A key with NUL in it never matches a known key. */
	start(&w, 0, 2);
	gw_strn(&w, "general.name\0x", 14);
	gw_u32(&w, 8); gw_str(&w, "evil");
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.general_name == NULL);
	CHECK(has_diag(&in, OA_SEV_WARNING, "key contains a NUL byte"));
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* Invalid UTF-8 in a kept string value: kept raw (the caller escapes on output). */
	start(&w, 0, 2);
	gw_kv_str(&w, "general.name", "x\xfe\x01y");
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK_STR(in.general_name, "x\xfe\x01y");
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* Build a one-tensor file; data bytes appended = nbytes_data. */
static void one_tensor(gw_t *w, const char *name, uint32_t nd, const uint64_t *ne, uint32_t type,
                       uint64_t off, size_t data)
{
	start(w, 1, 1);
	gw_tensor(w, name, nd, ne, type, off);
	gw_pad(w, 32);
	gw_zeros(w, data);
}

/* 11. Tensor names. */
static void test_c11_names(void)
{
	static const uint64_t ne[1] = {4};
	char name[80];
	for (int len = 63; len <= 65; len++) {
		memset(name, 'a', (size_t)len);
		name[len] = 0;
		gw_t w;
		one_tensor(&w, name, 1, ne, 0, 0, 16);
		if (len == 63)
			EXPECT(&w, OA_GGUF_FULL, true, 0, NULL);
		else
			EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "llama.cpp refuses names longer "
			       "than 63 bytes");
		gw_free(&w);
	}
	gw_t w;
	start(&w, 2, 1);
	gw_tensor(&w, "same", 1, ne, 0, 0);
	gw_tensor(&w, "same", 1, ne, 0, 32);
	gw_pad(&w, 32);
	gw_zeros(&w, 48);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "'same': duplicate tensor name");
	gw_free(&w);
	one_tensor(&w, "", 1, ne, 0, 0, 16);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "tensor #0: empty name");
	gw_free(&w);
	/* A very long name: memory capped at OA_GGUF_KEEP_NAME. */
	char big[5000];
	memset(big, 'z', sizeof big - 1);
	big[sizeof big - 1] = 0;
	one_tensor(&w, big, 1, ne, 0, 0, 16);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.n_tensors_kept == 1 && strlen(in.tensors[0].name) == OA_GGUF_KEEP_NAME);
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* 12. n_dims and dimensions. */
static void test_c12_dims(void)
{
	gw_t w;
	oa_gguf_info in;
	/* n_dims 0: a scalar (1 element, Ollama counts 1). */
	one_tensor(&w, "scalar", 0, NULL, 0, 0, 4);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK_U64(in.parameter_count, 1);
	CHECK(in.n_tensors_kept == 1 && in.tensors[0].nbytes == 4);
	oa_gguf_info_free(&in);
	gw_free(&w);
	static const uint64_t ne4[4] = {2, 3, 4, 5};
	one_tensor(&w, "four", 4, ne4, 0, 0, 480);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK_U64(in.parameter_count, 120);
	oa_gguf_info_free(&in);
	gw_free(&w);
	static const uint64_t ne5[5] = {1, 1, 1, 1, 1};
	one_tensor(&w, "five", 5, ne5, 0, 0, 4);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "'five': n_dims 5 is above the maximum of 4");
	gw_free(&w);
	start(&w, 1, 1);
	gw_str(&w, "huge");
	gw_u32(&w, 0xFFFFFFFFu);
	gw_zeros(&w, 64);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "n_dims 4294967295");
	gw_free(&w);
	static const uint64_t ne0[2] = {4, 0};
	one_tensor(&w, "zero", 2, ne0, 0, 0, 0);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(in.n_tensors_kept == 1 && in.tensors[0].nbytes == 0 && in.tensors[0].valid);
	oa_gguf_info_free(&in);
	gw_free(&w);
	const uint64_t bigd[] = {1ull << 63, UINT64_MAX};
	for (int i = 0; i < 2; i++) {
		uint64_t ne[2] = {4, bigd[i]};
		one_tensor(&w, "neg", 2, ne, 0, 0, 16);
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "negative as int64");
		gw_free(&w);
	}
	static const uint64_t ovf[3] = {1ull << 32, 1ull << 20, 1ull << 12};
	one_tensor(&w, "ovf", 3, ovf, 0, 0, 16);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "overflows int64");
	gw_free(&w);
	static const uint64_t ovf2[4] = {1ull << 16, 1ull << 16, 1ull << 16, 1ull << 16};
	one_tensor(&w, "ovf2", 4, ovf2, 0, 0, 16);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "overflows int64");
	gw_free(&w);
	static const uint64_t odd[1] = {100};
	one_tensor(&w, "odd", 1, odd, 12, 0, 144);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "row length 100 is not a multiple of the q4_K "
	       "block size 256");
	gw_free(&w);
}

/* 13. Tensor types. */
static void test_c13_types(void)
{
	const uint32_t removed[] = {4, 5, 31, 32, 33, 36, 37, 38};
	static const uint64_t ne[1] = {32};
	for (size_t i = 0; i < 8; i++) {
		gw_t w;
		one_tensor(&w, "r", 1, ne, removed[i], 0, 18);
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "was removed from ggml");
		gw_free(&w);
	}
	const uint32_t unknown[] = {43, 0x7FFFFFFFu, 0xFFFFFFFFu};
	for (size_t i = 0; i < 3; i++) {
		gw_t w;
		one_tensor(&w, "u", 1, ne, unknown[i], 0, 18);
		EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "unknown tensor type");
		gw_free(&w);
	}
	/* Parsing goes on after an invalid type: the next tensor is still read. */
	gw_t w;
	start(&w, 2, 1);
	gw_tensor(&w, "bad", 1, ne, 4, 0);
	gw_tensor(&w, "good", 1, ne, 0, 32);
	gw_pad(&w, 32);
	gw_zeros(&w, 160);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == -1);
	CHECK_U64(in.n_tensors_kept, 2);
	CHECK(in.n_tensors_kept == 2 && in.tensors[1].valid && !in.tensors[0].valid);
	CHECK_U64(in.parameter_count, 64);
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* 14. Byte sizes near the limits. */
static void test_c14_sizes(void)
{
	gw_t w;
	static const uint64_t f64[1] = {1ull << 61}; /* 2^61 x 8 bytes = 2^64 */
	one_tensor(&w, "wrap", 1, f64, 28, 0, 0);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "byte size of f64");
	gw_free(&w);
	static const uint64_t f32[1] = {(1ull << 61) - 1}; /* just under 2^63 bytes */
	one_tensor(&w, "nearmax", 1, f32, 0, 0, 0);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "past the end of the file");
	gw_free(&w);
	/* q8_0: 8.93e18 elements (< 2^63) but 9.49e18 bytes (>= 2^63) */
	static const uint64_t q[2] = {1ull << 40, (1ull << 23) - (1ull << 16)};
	one_tensor(&w, "qwrap", 2, q, 8, 0, 0);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "byte size of q8_0");
	gw_free(&w);
}

/* 15. Offsets. */
static void test_c15_offsets(void)
{
	static const uint64_t ne[1] = {8}; /* f32: 32 bytes */
	gw_t w;
	one_tensor(&w, "mis", 1, ne, 0, 4, 64);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "offset 4 is not a multiple of the "
	       "alignment 32");
	gw_free(&w);
	one_tensor(&w, "past", 1, ne, 0, 0, 31);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "lies past the end of the file");
	gw_free(&w);
	one_tensor(&w, "wrap", 1, ne, 0, UINT64_MAX - 15, 32);
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "lies past the end of the file");
	gw_free(&w);
	/* overlap */
	start(&w, 2, 1);
	static const uint64_t big[1] = {16}; /* 64 bytes */
	gw_tensor(&w, "a", 1, big, 0, 0);
	gw_tensor(&w, "b", 1, ne, 0, 32);
	gw_pad(&w, 32);
	gw_zeros(&w, 96);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(has_diag(&in, OA_SEV_WARNING, "tensor 'b' (offset 32) overlaps tensor 'a'"));
	CHECK(has_diag(&in, OA_SEV_WARNING, "offset 32, expected 64 (out of order or overlapping)"));
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* out of order, no overlap */
	start(&w, 2, 1);
	gw_tensor(&w, "a", 1, ne, 0, 32);
	gw_tensor(&w, "b", 1, ne, 0, 0);
	gw_pad(&w, 32);
	gw_zeros(&w, 64);
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK(has_diag(&in, OA_SEV_WARNING, "'a': offset 32, expected 0 (gap before it); llama.cpp "
	               "would refuse this file"));
	CHECK(!has_diag(&in, OA_SEV_WARNING, "overlaps"));
	oa_gguf_info_free(&in);
	gw_free(&w);
	/* gap */
	start(&w, 2, 1);
	gw_tensor(&w, "a", 1, ne, 0, 0);
	gw_tensor(&w, "b", 1, ne, 0, 64);
	gw_pad(&w, 32);
	gw_zeros(&w, 96);
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "'b': offset 64, expected 32 (gap before it)");
	gw_free(&w);
	/* last tensor ends exactly at EOF without its padding: valid */
	static const uint64_t ne3[1] = {3}; /* 12 bytes */
	start(&w, 2, 1);
	gw_tensor(&w, "a", 1, ne3, 0, 0);
	gw_tensor(&w, "b", 1, ne3, 0, 32);
	gw_pad(&w, 32);
	gw_zeros(&w, 44);
	EXPECT(&w, OA_GGUF_FULL, true, 0, NULL);
	oa_gguf_info in2;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in2) == 0 && in2.n_warnings == 0);
	oa_gguf_info_free(&in2);
	gw_free(&w);
}

/* 17. Every prefix of a valid file: never a crash; every strict prefix is invalid in FULL mode,
 * and QUICK mode is fine once the early keys are in. Both byte orders and v1. */
static void test_c17_truncation_sweep(void)
{
	const struct { uint32_t ver; bool be; } cases[] = {{3, false}, {3, true}, {1, false}};
	for (size_t c = 0; c < 3; c++) {
		gw_t w;
		gw_model(&w, cases[c].ver, cases[c].be);
		size_t bad_full = 0, errors_ok = 0;
		for (size_t n = 0; n < w.n; n++) {
			uint8_t *copy = malloc(n ? n : 1); /* exact-size heap copy: ASan sees overreads */
			memcpy(copy, w.b, n);
			oa_gguf_info in;
			int rc = oa_gguf_read_mem(copy, n, OA_GGUF_FULL, &in);
			if (rc == 0)
				bad_full++;
			else if (in.n_errors > 0 && in.n_diags > 0)
				errors_ok++;
			oa_gguf_info_free(&in);
			rc = oa_gguf_read_mem(copy, n, OA_GGUF_QUICK, &in);
			oa_gguf_info_free(&in);
			free(copy);
		}
		CHECK_U64(bad_full, 0);
		CHECK_U64(errors_ok, w.n);
		oa_gguf_info in;
		CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
		oa_gguf_info_free(&in);
		gw_free(&w);
	}
}

/* 18. A huge tokens array that is truncated; architecture missing or not a string. */
static void test_c18_header_limits(void)
{
	gw_t w;
	start(&w, 0, 2);
	gw_kv_arr(&w, "tokenizer.ggml.tokens", 8, 400000000ull); /* ~4 GB of tokens declared */
	for (int i = 0; i < 1000; i++)
		gw_str(&w, "tok");
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "array of 400000000 strings exceeds the");
	gw_free(&w);
	start(&w, 0, 2);
	gw_kv_arr(&w, "tokenizer.ggml.tokens", 8, 1300); /* plausible count, cut short */
	for (int i = 0; i < 1000; i++)
		gw_str(&w, "tok");
	EXPECT(&w, OA_GGUF_FULL, false, OA_SEV_ERROR, "file truncated in string element");
	gw_free(&w);
	gw_init(&w, 3, false);
	gw_header(&w, 0, 1);
	gw_kv_str(&w, "general.name", "x");
	EXPECT(&w, OA_GGUF_FULL, true, OA_SEV_WARNING, "no general.architecture");
	gw_free(&w);
	gw_init(&w, 3, false);
	gw_header(&w, 0, 1);
	gw_kv_u32(&w, "general.architecture", 7);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_QUICK, &in) == 0);
	CHECK(has_diag(&in, OA_SEV_WARNING, "'general.architecture': expected a string, got u32"));
	CHECK(has_diag(&in, OA_SEV_WARNING, "no general.architecture"));
	CHECK(in.architecture == NULL);
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* Many diagnostics: stored ones are capped, totals still counted. */
static void test_diag_cap(void)
{
	gw_t w;
	start(&w, 0, 1001);
	for (int i = 0; i < 1000; i++)
		gw_kv_u32(&w, "dup.key", 1);
	oa_gguf_info in;
	CHECK(oa_gguf_read_mem(w.b, w.n, OA_GGUF_FULL, &in) == 0);
	CHECK_U64(in.n_warnings, 999);
	CHECK_U64(in.n_diags, OA_GGUF_MAX_DIAGS + 1);
	CHECK(has_diag(&in, OA_SEV_INFO, "further diagnostics not shown"));
	oa_gguf_info_free(&in);
	gw_free(&w);
}

/* ---- seed corpus for fuzz_gguf --------------------------------------------------------- */

static void put(const char *dir, const char *name, const gw_t *w)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f)
		return;
	fwrite(w->b, 1, w->n, f);
	fclose(f);
}

static void write_corpus(const char *dir)
{
	gw_t w;
	gw_model(&w, 3, false); put(dir, "model_v3_le.gguf", &w); gw_free(&w);
	gw_model(&w, 3, true); put(dir, "model_v3_be.gguf", &w); gw_free(&w);
	gw_model(&w, 2, false); put(dir, "model_v2.gguf", &w); gw_free(&w);
	gw_model(&w, 1, false); put(dir, "model_v1.gguf", &w); gw_free(&w);
	start(&w, 0, 3);
	gw_kv_arr(&w, "x.nested", 9, 1);
	gw_u32(&w, 8); gw_u64(&w, 1); gw_str(&w, "s");
	gw_kv_u32(&w, "general.alignment", 64);
	put(dir, "nested_align.gguf", &w); gw_free(&w);
	gw_init(&w, 3, false);
	gw_header(&w, 0, 3);
	gw_kv_bool(&w, "clip.has_vision_encoder", 1);
	gw_kv_str(&w, "general.architecture", "clip");
	gw_kv_str(&w, "general.type", "mmproj");
	put(dir, "projector.gguf", &w); gw_free(&w);
	static const uint64_t ne[1] = {8};
	start(&w, 2, 1);
	gw_tensor(&w, "a", 1, ne, 0, 32);
	gw_tensor(&w, "a", 1, ne, 4, 0);
	gw_pad(&w, 32);
	gw_zeros(&w, 64);
	put(dir, "bad_tensors.gguf", &w); gw_free(&w);
	gw_init(&w, 3, false);
	gw_u32(&w, 0x67676C61u); gw_u32(&w, 1);
	put(dir, "ggla.bin", &w); gw_free(&w);
}

int main(void)
{
	const char *corpus = getenv("OA_GGUF_WRITE_CORPUS");
	if (corpus) {
		write_corpus(corpus);
		return 0;
	}
	test_valid_versions();
	test_fd_and_path();
	test_all_value_types();
	test_zero_tensors_exact_end();
	test_quick_mode();
	test_numbers_and_strings();
	test_kinds();
	test_split_keys();
	test_guess();
	test_c01_magic();
	test_c02_versions();
	test_c03_counts();
	test_c04_strings();
	test_c05_types();
	test_c06_arrays();
	test_c07_duplicates();
	test_c08_known_key_types();
	test_c09_bool();
	test_c10_escaping();
	test_c10_escaping_unicode_controls();
	test_c11_names();
	test_c12_dims();
	test_c13_types();
	test_c14_sizes();
	test_c15_offsets();
	/* item 16 is test_zero_tensors_exact_end */
	test_c17_truncation_sweep();
	test_c18_header_limits();
	test_diag_cap();
	TEST_MAIN_END();
}
