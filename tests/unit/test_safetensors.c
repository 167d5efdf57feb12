/* test_safetensors.c - safetensors blob reader, model totals, config.json. */
#include "testutil.h"

#include "ollama_audit/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

/* ---- helpers ---- */

/* [u64 LE len][hdr padded with spaces to a multiple of pad][data_len zero bytes] */
static unsigned char *mk(const char *hdr, size_t pad, uint64_t data_len, size_t *len)
{
	size_t hl = strlen(hdr);
	size_t padded = pad > 1 ? (hl + pad - 1) / pad * pad : hl;
	*len = 8 + padded + (size_t)data_len;
	unsigned char *b = calloc(1, *len ? *len : 1);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)padded >> (8 * i));
	memcpy(b + 8, hdr, hl);
	memset(b + 8 + hl, ' ', padded - hl);
	return b;
}

static void set_prefix(unsigned char *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static bool has_diag(const oa_st_blob *b, int sev, const char *needle)
{
	for (size_t i = 0; i < b->n_diags; i++)
		if ((sev < 0 || (int)b->diags[i].severity == sev) && strstr(b->diags[i].message, needle))
			return true;
	return false;
}

static bool diags_printable(const oa_st_blob *b)
{
	for (size_t i = 0; i < b->n_diags; i++)
		for (const char *p = b->diags[i].message; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return false;
	return true;
}

static void dump(const oa_st_blob *b)
{
	for (size_t i = 0; i < b->n_diags; i++)
		fprintf(stderr, "    [%s] %s\n", oa_severity_name(b->diags[i].severity),
		        b->diags[i].message);
}

static const oa_st_tensor *tensor(const oa_st_blob *b, const char *name)
{
	for (size_t i = 0; i < b->n_tensors; i++)
		if (strcmp(b->tensors[i].name, name) == 0)
			return &b->tensors[i];
	return NULL;
}

/* Parse a header + data; returns rc. */
static int rd(oa_st_blob *b, const char *hdr, size_t pad, uint64_t data_len, const char *layer)
{
	size_t len;
	unsigned char *buf = mk(hdr, pad, data_len, &len);
	int rc = oa_st_read_mem(buf, len, layer, b);
	free(buf);
	return rc;
}

/* Expect an error blob whose diagnostics contain needle. */
#define EXPECT_ERR(hdr, pad, dlen, needle) do { \
	oa_st_blob b_; \
	int rc_ = rd(&b_, hdr, pad, dlen, NULL); \
	CHECK(rc_ == OA_ST_INVALID); \
	CHECK(!b_.ok); \
	CHECK(b_.n_errors >= 1); \
	if (!has_diag(&b_, OA_SEV_ERROR, needle)) { \
		fprintf(stderr, "%s:%d: no error containing \"%s\"\n", __FILE__, __LINE__, needle); \
		dump(&b_); \
		oa_t_fail++; \
	} else oa_t_pass++; \
	oa_st_blob_free(&b_); \
} while (0)

#define T_BF16 "{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]}"

/* ---- well-formed blobs ---- */

static void test_plain_bf16(void)
{
	oa_st_blob b;
	const char *name = "model.layers.0.self_attn.q_proj.weight";
	int rc = rd(&b, "{\"model.layers.0.self_attn.q_proj.weight\":"
	                "{\"dtype\":\"BF16\",\"shape\":[4,8],\"data_offsets\":[0,64]}}",
	            8, 64, name);
	CHECK(rc == OA_ST_OK);
	CHECK(b.ok);
	CHECK(b.header_ok);
	CHECK_U64(b.header_len % 8, 0);
	CHECK_U64(b.n_tensors, 1);
	CHECK_U64(b.n_main, 1);
	CHECK(!b.packed);
	CHECK(!b.has_metadata);
	CHECK(!b.data_key_layout);
	CHECK_U64(b.n_warnings, 0);
	CHECK_U64(b.data_end, 64);
	CHECK_U64(b.data_bytes, 64);
	const oa_st_tensor *t = tensor(&b, name);
	CHECK(t != NULL);
	if (t) {
		CHECK(t->valid);
		CHECK_STR(t->dtype, "BF16");
		CHECK_U64(t->dtype_bits, 16);
		CHECK_U64(t->n_dims, 2);
		CHECK_U64(t->shape[0], 4);
		CHECK_U64(t->shape[1], 8);
		CHECK_U64(t->elements, 32);
		CHECK_U64(t->params, 32);
		CHECK(t->params_ok);
		CHECK(t->quant_type == NULL);
		CHECK(t->quant_source == OA_ST_QSRC_NONE);
		CHECK(!t->is_companion);
	}
	oa_st_blob_free(&b);

	/* The layer name should match the single tensor key. */
	rd(&b, "{\"a\":" T_BF16 "}", 8, 8, "b");
	CHECK(b.ok);
	CHECK(has_diag(&b, OA_SEV_WARNING, "layer name 'b' differs"));
	oa_st_blob_free(&b);
}

#define MLX_INT4_TENSORS \
	"\"model.layers.0.mlp.up_proj.weight\":{\"data_offsets\":[0,2048],\"dtype\":\"U32\",\"shape\":[8,64]}," \
	"\"model.layers.0.mlp.up_proj.weight.bias\":{\"data_offsets\":[2048,2176],\"dtype\":\"BF16\",\"shape\":[8,8]}," \
	"\"model.layers.0.mlp.up_proj.weight.scale\":{\"data_offsets\":[2176,2304],\"dtype\":\"BF16\",\"shape\":[8,8]}"

static void test_mlx_int4(void)
{
	oa_st_blob b;
	const char *name = "model.layers.0.mlp.up_proj.weight";
	int rc = rd(&b, "{\"__metadata__\":{\"group_size\":\"64\",\"quant_type\":\"int4\"}," MLX_INT4_TENSORS "}",
	            1, 2304, name);
	CHECK(rc == OA_ST_OK);
	CHECK(b.ok);
	if (!b.ok || b.n_warnings)
		dump(&b);
	CHECK_U64(b.n_warnings, 0);
	CHECK(b.has_metadata);
	CHECK(!b.metadata_null);
	CHECK_U64(b.n_metadata, 2);
	CHECK_STR(b.quant_type, "int4");
	CHECK_U64(b.group_size, 64);
	CHECK_U64(b.n_tensors, 3);
	CHECK_U64(b.n_main, 1);
	CHECK_U64(b.n_companions, 2);
	CHECK(!b.packed);
	const oa_st_tensor *t = tensor(&b, name);
	CHECK(t != NULL);
	if (t) {
		CHECK_STR(t->quant_type, "int4");
		CHECK(t->quant_source == OA_ST_QSRC_GLOBAL_META);
		CHECK_U64(t->quant_bits, 4);
		CHECK_STR(t->ollama_quant_type, "int4");
		CHECK_STR(t->quant_guess, "int4");
		CHECK_U64(t->group_size, 64);
		CHECK(t->has_scale && t->has_bias && !t->has_global_scale);
		CHECK_U64(t->params, 8 * 512); /* last dim 64 x 32/4 */
	}
	const oa_st_tensor *s = tensor(&b, "model.layers.0.mlp.up_proj.weight.scale");
	CHECK(s && s->is_companion && !s->companion_orphan);
	oa_st_blob_free(&b);

	/* Without metadata: Ollama's ratio rule (64/8 = 8) finds nothing for
	 * group-64 int4; the geometry guess still says int4. */
	rc = rd(&b, "{" MLX_INT4_TENSORS "}", 1, 2304, name);
	CHECK(rc == OA_ST_OK);
	t = tensor(&b, name);
	CHECK(t != NULL);
	if (t) {
		CHECK(t->quant_type == NULL);
		CHECK(t->ollama_quant_type == NULL);
		CHECK_STR(t->quant_guess, "int4");
		CHECK_U64(t->params, 8 * 512);
	}
	CHECK(has_diag(&b, OA_SEV_INFO, "geometry suggests int4"));
	oa_st_blob_free(&b);

	/* Group-32 int4 (<= v0.17): ratio 4, Ollama's rule says int4. */
	rc = rd(&b, "{\"w\":{\"data_offsets\":[0,256],\"dtype\":\"U32\",\"shape\":[4,16]},"
	            "\"w.bias\":{\"data_offsets\":[256,288],\"dtype\":\"BF16\",\"shape\":[4,4]},"
	            "\"w.scale\":{\"data_offsets\":[288,320],\"dtype\":\"BF16\",\"shape\":[4,4]}}",
	        1, 320, "w");
	CHECK(rc == OA_ST_OK);
	t = tensor(&b, "w");
	if (t) {
		CHECK_STR(t->quant_type, "int4");
		CHECK(t->quant_source == OA_ST_QSRC_RATIO);
		CHECK_STR(t->ollama_quant_type, "int4");
		CHECK_U64(t->params, 4 * 128);
	}
	oa_st_blob_free(&b);
}

static void test_metadata_null(void)
{
	oa_st_blob b;
	int rc = rd(&b, "{\"__metadata__\":null,\"a\":" T_BF16 "}", 1, 8, "a");
	CHECK(rc == OA_ST_OK);
	CHECK(b.ok);
	CHECK(b.has_metadata);
	CHECK(b.metadata_null);
	CHECK_U64(b.n_tensors, 1);
	CHECK_U64(b.n_warnings, 0);
	oa_st_blob_free(&b);

	/* Non-string metadata values are a warning, not an error. */
	rc = rd(&b, "{\"__metadata__\":{\"format\":\"pt\",\"n\":5},\"a\":" T_BF16 "}", 1, 8, "a");
	CHECK(rc == OA_ST_OK);
	CHECK(b.ok);
	CHECK(has_diag(&b, OA_SEV_WARNING, "__metadata__['n'] is an integer, not a string"));
	oa_st_blob_free(&b);

	/* __metadata__ of another type is an error. */
	EXPECT_ERR("{\"__metadata__\":[1],\"a\":" T_BF16 "}", 1, 8, "__metadata__ is an array");
	EXPECT_ERR("{\"__metadata__\":\"x\",\"a\":" T_BF16 "}", 1, 8, "__metadata__ is a string");

	/* Unknown quant type and bad group size are warnings. */
	rc = rd(&b, "{\"__metadata__\":{\"quant_type\":\"Q3\",\"group_size\":\"sixty\"},\"a\":" T_BF16 "}",
	        1, 8, "a");
	CHECK(rc == OA_ST_OK);
	CHECK_STR(b.quant_type, "q3");
	CHECK(has_diag(&b, OA_SEV_WARNING, "not a known quant type"));
	CHECK(has_diag(&b, OA_SEV_WARNING, "group_size'] is not a positive integer"));
	oa_st_blob_free(&b);
}

#define NVFP4_TENSORS \
	"\"w\":{\"data_offsets\":[0,256],\"dtype\":\"U32\",\"shape\":[4,16]}," \
	"\"w.global_scale\":{\"data_offsets\":[256,260],\"dtype\":\"F32\",\"shape\":[]}," \
	"\"w.scale\":{\"data_offsets\":[260,292],\"dtype\":\"U8\",\"shape\":[4,8]}"

static void test_nvfp4(void)
{
	oa_st_blob b;
	int rc = rd(&b, "{\"__metadata__\":{\"group_size\":\"16\",\"quant_type\":\"NVFP4\"}," NVFP4_TENSORS "}",
	            1, 292, "w");
	CHECK(rc == OA_ST_OK);
	if (rc)
		dump(&b);
	CHECK_U64(b.n_warnings, 0);
	CHECK_STR(b.quant_type, "nvfp4");
	const oa_st_tensor *t = tensor(&b, "w");
	if (t) {
		CHECK_STR(t->quant_type, "nvfp4");
		CHECK_STR(t->quant_guess, "nvfp4");
		CHECK(t->has_global_scale && t->has_scale && !t->has_bias);
		CHECK_U64(t->params, 4 * 128);
	}
	const oa_st_tensor *g = tensor(&b, "w.global_scale");
	CHECK(g && g->is_companion && g->n_dims == 0 && g->elements == 1);
	CHECK_U64(b.n_main, 1);
	oa_st_blob_free(&b);

	/* No metadata: ratio 2 is nothing to Ollama; geometry says nvfp4. */
	rc = rd(&b, "{" NVFP4_TENSORS "}", 1, 292, "w");
	t = tensor(&b, "w");
	if (t) {
		CHECK(t->quant_type == NULL);
		CHECK(t->ollama_quant_type == NULL);
		CHECK_STR(t->quant_guess, "nvfp4");
		CHECK_U64(t->params, 4 * 128);
	}
	oa_st_blob_free(&b);

	/* mxfp4 (group 32, U8 scales, no bias) without metadata: ratio 4, which
	 * Ollama calls int4. */
	rc = rd(&b, "{\"w\":{\"data_offsets\":[0,256],\"dtype\":\"U32\",\"shape\":[4,16]},"
	            "\"w.scale\":{\"data_offsets\":[256,272],\"dtype\":\"U8\",\"shape\":[4,4]}}",
	        1, 272, "w");
	CHECK(rc == OA_ST_OK);
	t = tensor(&b, "w");
	if (t) {
		CHECK_STR(t->quant_type, "int4");
		CHECK(t->quant_source == OA_ST_QSRC_RATIO);
		CHECK_STR(t->quant_guess, "mxfp4");
	}
	CHECK(has_diag(&b, OA_SEV_INFO, "Ollama's ratio rule"));
	oa_st_blob_free(&b);
}

static void test_per_tensor_meta(void)
{
	oa_st_blob b;
	/* a: int4 group 64 (U32 [4,8] -> 64 cols, scale [4,1]);
	 * b: int8 group 64 (U32 [4,16] -> 64 cols, scale [4,1]). */
	int rc = rd(&b,
	            "{\"__metadata__\":{\"p.a.weight.group_size\":\"64\",\"p.a.weight.quant_type\":\"int4\","
	            "\"p.b.weight.group_size\":\"64\",\"p.b.weight.quant_type\":\"INT8\"},"
	            "\"p.a.weight\":{\"data_offsets\":[0,128],\"dtype\":\"U32\",\"shape\":[4,8]},"
	            "\"p.a.weight.bias\":{\"data_offsets\":[128,136],\"dtype\":\"BF16\",\"shape\":[4,1]},"
	            "\"p.a.weight.scale\":{\"data_offsets\":[136,144],\"dtype\":\"BF16\",\"shape\":[4,1]},"
	            "\"p.b.weight\":{\"data_offsets\":[144,400],\"dtype\":\"U32\",\"shape\":[4,16]},"
	            "\"p.b.weight.bias\":{\"data_offsets\":[400,408],\"dtype\":\"BF16\",\"shape\":[4,1]},"
	            "\"p.b.weight.scale\":{\"data_offsets\":[408,416],\"dtype\":\"BF16\",\"shape\":[4,1]}}",
	            1, 416, "p");
	CHECK(rc == OA_ST_OK);
	if (rc || b.n_warnings)
		dump(&b);
	CHECK_U64(b.n_warnings, 0);
	CHECK(b.quant_type == NULL);
	CHECK(b.packed);
	CHECK_U64(b.n_main, 2);
	const oa_st_tensor *a = tensor(&b, "p.a.weight"), *c = tensor(&b, "p.b.weight");
	if (a && c) {
		CHECK_STR(a->quant_type, "int4");
		CHECK(a->quant_source == OA_ST_QSRC_TENSOR_META);
		CHECK_U64(a->group_size, 64);
		CHECK_STR(a->quant_guess, "int4");
		CHECK(a->ollama_quant_type == NULL); /* ratio 8 */
		CHECK_U64(a->params, 4 * 64);
		CHECK_STR(c->quant_type, "int8");
		CHECK_STR(c->ollama_quant_type, "int8"); /* ratio 16 */
		CHECK_STR(c->quant_guess, "int8");
		CHECK_U64(c->params, 4 * 64);
	} else {
		CHECK(0);
	}
	oa_st_blob_free(&b);

	/* Metadata that contradicts the geometry: warning. */
	rc = rd(&b, "{\"__metadata__\":{\"quant_type\":\"int8\",\"group_size\":\"64\"}," MLX_INT4_TENSORS "}",
	        1, 2304, "model.layers.0.mlp.up_proj.weight");
	CHECK(rc == OA_ST_OK);
	CHECK(has_diag(&b, OA_SEV_WARNING, "quant_type int8 but the geometry"));
	oa_st_blob_free(&b);
}

#define EXPERTS "model.layers.1.mlp.experts"
static void test_packed_group(void)
{
	/* mxfp8 group 32: U32 [2,4,8] -> 32 logical cols, U8 scales [2,4,1]. */
	oa_st_blob b;
	int rc = rd(&b,
	            "{\"__metadata__\":{\"group_size\":\"32\",\"quant_type\":\"mxfp8\"},"
	            "\"" EXPERTS ".down_proj.weight\":{\"data_offsets\":[0,256],\"dtype\":\"U32\",\"shape\":[2,4,8]},"
	            "\"" EXPERTS ".down_proj.weight.scale\":{\"data_offsets\":[256,264],\"dtype\":\"U8\",\"shape\":[2,4,1]},"
	            "\"" EXPERTS ".gate_proj.weight\":{\"data_offsets\":[264,520],\"dtype\":\"U32\",\"shape\":[2,4,8]},"
	            "\"" EXPERTS ".gate_proj.weight.scale\":{\"data_offsets\":[520,528],\"dtype\":\"U8\",\"shape\":[2,4,1]},"
	            "\"" EXPERTS ".up_proj.weight\":{\"data_offsets\":[528,784],\"dtype\":\"U32\",\"shape\":[2,4,8]},"
	            "\"" EXPERTS ".up_proj.weight.scale\":{\"data_offsets\":[784,792],\"dtype\":\"U8\",\"shape\":[2,4,1]}}",
	            1, 792, EXPERTS);
	CHECK(rc == OA_ST_OK);
	if (rc || b.n_warnings)
		dump(&b);
	CHECK_U64(b.n_warnings, 0);
	CHECK(b.packed);
	CHECK_U64(b.n_main, 3);
	CHECK_U64(b.n_companions, 3);
	uint64_t sum = 0;
	for (size_t i = 0; i < b.n_tensors; i++) {
		const oa_st_tensor *t = &b.tensors[i];
		if (t->is_companion)
			continue;
		CHECK_STR(t->quant_type, "mxfp8");
		CHECK_STR(t->quant_guess, "mxfp8");
		CHECK_STR(t->ollama_quant_type, "mxfp8");
		sum += t->params;
	}
	CHECK_U64(sum, 3 * 2 * 4 * 32);
	oa_st_blob_free(&b);

	/* Main tensors outside the group prefix are flagged. */
	rc = rd(&b, "{\"x.a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]},"
	            "\"y.b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[4,8]}}",
	        1, 8, "x");
	CHECK(rc == OA_ST_OK);
	CHECK(b.packed);
	CHECK(has_diag(&b, OA_SEV_WARNING, "do not start with the layer name 'x.'"));
	oa_st_blob_free(&b);
}

static void test_data_key_layout(void)
{
	oa_st_blob b;
	int rc = rd(&b, "{\"data\":" T_BF16 "}", 8, 8, "model.norm.weight");
	CHECK(rc == OA_ST_OK);
	CHECK(b.data_key_layout);
	CHECK_U64(b.n_main, 1);
	CHECK_STR(b.tensors[0].name, "model.norm.weight");
	CHECK_U64(b.tensors[0].params, 4);
	CHECK(has_diag(&b, OA_SEV_INFO, "`data` layout"));
	oa_st_blob_free(&b);

	/* Without a layer name the tensor stays "data". */
	rc = rd(&b, "{\"data\":" T_BF16 "}", 8, 8, NULL);
	CHECK(rc == OA_ST_OK);
	CHECK_STR(b.tensors[0].name, "data");
	oa_st_blob_free(&b);

	/* Old split companion layers. */
	rc = rd(&b, "{\"data\":" T_BF16 "}", 8, 8, "model.x.weight_scale");
	CHECK(rc == OA_ST_OK);
	CHECK(b.tensors[0].is_companion);
	CHECK_U64(b.n_main, 0);
	oa_st_blob_free(&b);
}

static void test_orphan_bias_and_misc(void)
{
	oa_st_blob b;
	/* A real bias tensor: Ollama's show drops it. */
	int rc = rd(&b, "{\"model.layers.0.self_attn.q_proj.bias\":{\"dtype\":\"BF16\",\"shape\":[4],"
	                "\"data_offsets\":[0,8]}}",
	            8, 8, "model.layers.0.self_attn.q_proj.bias");
	CHECK(rc == OA_ST_OK);
	CHECK_U64(b.n_main, 0);
	CHECK(b.tensors[0].companion_orphan);
	CHECK_U64(b.orphan_companion_elements, 4);
	CHECK(has_diag(&b, OA_SEV_INFO, "no base tensor"));
	oa_st_blob_free(&b);

	/* Unknown dtype: warning, length unchecked. */
	rc = rd(&b, "{\"a\":{\"dtype\":\"Q9\",\"shape\":[3],\"data_offsets\":[0,5]}}", 1, 5, "a");
	CHECK(rc == OA_ST_OK);
	CHECK(has_diag(&b, OA_SEV_WARNING, "unknown dtype 'Q9'"));
	oa_st_blob_free(&b);

	/* F4: half a byte per element. */
	rc = rd(&b, "{\"a\":{\"dtype\":\"F4\",\"shape\":[4],\"data_offsets\":[0,2]}}", 1, 2, "a");
	CHECK(rc == OA_ST_OK);
	oa_st_blob_free(&b);
	EXPECT_ERR("{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 1, 2,
	           "not a whole number of bytes");

	/* Zero-element tensor, scalar. */
	rc = rd(&b, "{\"a\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[0,0]},"
	            "\"b\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}",
	        1, 4, NULL);
	CHECK(rc == OA_ST_OK);
	CHECK_U64(tensor(&b, "a")->elements, 0);
	CHECK_U64(tensor(&b, "b")->elements, 1);
	oa_st_blob_free(&b);

	/* Empty header object: no tensors, warning. */
	rc = rd(&b, "{}", 8, 0, NULL);
	CHECK(rc == OA_ST_OK);
	CHECK(has_diag(&b, OA_SEV_WARNING, "no tensors"));
	oa_st_blob_free(&b);

	/* Leading whitespace before '{' is accepted with a warning. */
	rc = rd(&b, "  {\"a\":" T_BF16 "}", 1, 8, "a");
	CHECK(rc == OA_ST_OK);
	CHECK(has_diag(&b, OA_SEV_WARNING, "not '{'"));
	oa_st_blob_free(&b);

	/* Control characters from the file are escaped in messages. */
	rc = rd(&b, "{\"a\\u001b[31m\\u202e\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,9]}}", 1, 9, NULL);
	CHECK(rc == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "tensor 'a\\x1b[31m\\u202e'"));
	CHECK(diags_printable(&b));
	oa_st_blob_free(&b);

	/* ... including metadata values echoed in messages. */
	rc = rd(&b, "{\"__metadata__\":{\"quant_type\":\"x\\u001b]0;\\u0007\"},\"a\":" T_BF16 "}", 1, 8, "a");
	CHECK(rc == OA_ST_OK);
	CHECK(has_diag(&b, OA_SEV_WARNING, "quant_type x\\x1b]0;\\x07 but dtype BF16"));
	CHECK(diags_printable(&b));
	oa_st_blob_free(&b);
}

/* ---- bad input ---- */

static void test_bad_sizes(void)
{
	oa_st_blob b;
	unsigned char small[7] = {1, 0, 0, 0, 0, 0, 0};
	for (size_t n = 0; n <= sizeof small; n++) {
		int rc = oa_st_read_mem(small, n, NULL, &b);
		CHECK(rc == OA_ST_INVALID);
		CHECK(has_diag(&b, OA_SEV_ERROR, "shorter than the 8-byte header length"));
		oa_st_blob_free(&b);
	}

	size_t len;
	unsigned char *buf = mk("{\"a\":" T_BF16 "}", 8, 8, &len);
	set_prefix(buf, (uint64_t)len - 7);
	CHECK(oa_st_read_mem(buf, len, NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "runs past the end of the file"));
	oa_st_blob_free(&b);

	set_prefix(buf, UINT64_MAX);
	CHECK(oa_st_read_mem(buf, len, NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "header length 18446744073709551615 runs past"));
	CHECK(!b.header_ok);
	oa_st_blob_free(&b);

	/* Shorter header length: the JSON is cut. */
	set_prefix(buf, 10);
	CHECK(oa_st_read_mem(buf, len, NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "not valid JSON"));
	oa_st_blob_free(&b);
	free(buf);
}

static void test_bad_json(void)
{
	EXPECT_ERR("not json", 1, 0, "header is not valid JSON");
	EXPECT_ERR("[1,2,3]", 1, 0, "header is an array, not a JSON object");
	EXPECT_ERR("\"str\"", 1, 0, "header is a string, not a JSON object");
	EXPECT_ERR("", 1, 0, "not valid JSON");
	EXPECT_ERR("{\"a\":" T_BF16 ",\"a\":" T_BF16 "}", 1, 8, "duplicate key");
	EXPECT_ERR("{\"a\":" T_BF16 "} {}", 1, 8, "not valid JSON");

	/* NUL bytes: as padding, and inside a key. */
	oa_st_blob b;
	size_t len;
	unsigned char *buf = mk("{\"a\":" T_BF16 "}   ", 1, 8, &len);
	size_t hl = len - 8 - 8;
	buf[8 + hl - 1] = 0;
	buf[8 + hl - 2] = 0;
	CHECK(oa_st_read_mem(buf, len, NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "not valid JSON"));
	oa_st_blob_free(&b);
	free(buf);
	buf = mk("{\"aXb\":" T_BF16 "}", 1, 8, &len);
	buf[8 + 3] = 0;
	CHECK(oa_st_read_mem(buf, len, NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "not valid JSON"));
	oa_st_blob_free(&b);
	free(buf);
	EXPECT_ERR("{\"a\\u0000b\":" T_BF16 "}", 1, 8, "not valid JSON");

	/* Invalid UTF-8 in the header. */
	buf = mk("{\"aXb\":" T_BF16 "}", 1, 8, &len);
	buf[8 + 3] = 0xff;
	CHECK(oa_st_read_mem(buf, len, NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "not valid JSON"));
	oa_st_blob_free(&b);
	free(buf);

	/* Deep nesting: jansson stops at its depth limit. */
	size_t depth = 100000;
	char *deep = malloc(8 + depth * 2 + 16);
	strcpy(deep, "{\"a\":");
	size_t o = strlen(deep);
	memset(deep + o, '[', depth);
	o += depth;
	memset(deep + o, ']', depth);
	o += depth;
	strcpy(deep + o, "}");
	EXPECT_ERR(deep, 1, 0, "not valid JSON");
	free(deep);

	/* Integer too big for jansson. */
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[99999999999999999999],\"data_offsets\":[0,8]}}", 1, 8,
	           "not valid JSON");
}

static void test_bad_entries(void)
{
	EXPECT_ERR("{\"a\":5}", 1, 0, "tensor 'a': entry is an integer, not an object");
	EXPECT_ERR("{\"a\":[]}", 1, 0, "entry is an array");
	EXPECT_ERR("{\"a\":{\"shape\":[2,2],\"data_offsets\":[0,8]}}", 1, 8, "tensor 'a': missing dtype");
	EXPECT_ERR("{\"a\":{\"dtype\":7,\"shape\":[2,2],\"data_offsets\":[0,8]}}", 1, 8, "dtype is an integer");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"data_offsets\":[0,8]}}", 1, 8, "tensor 'a': missing shape");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":4,\"data_offsets\":[0,8]}}", 1, 8, "shape is an integer");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2]}}", 1, 8, "tensor 'a': missing data_offsets");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,-2],\"data_offsets\":[0,8]}}", 1, 8,
	           "shape[1] is negative (-2)");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,1.5],\"data_offsets\":[0,8]}}", 1, 8,
	           "shape[1] is not an integer");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}", 1, 8,
	           "shape[0] is a string");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}",
	           1, 8, "overflows 64 bits");
	EXPECT_ERR("{\"a\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,8]}}",
	           1, 8, "overflow 64 bits");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
	           "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"
	           "\"data_offsets\":[0,2]}}", 1, 2, "dimensions");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[8,0]}}", 1, 8,
	           "data_offsets [8, 0] are reversed");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0]}}", 1, 8,
	           "data_offsets has 1 elements");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":{}}}", 1, 8,
	           "data_offsets is an object");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[-1,8]}}", 1, 8,
	           "data_offsets begin is negative");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8.0]}}", 1, 8,
	           "data_offsets end is not an integer");
	/* Offsets past EOF. */
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]}}", 1, 4,
	           "run past the end of the file (data section holds 4 bytes)");
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[9223372036854775000,9223372036854775008]}}",
	           1, 8, "run past the end of the file");
	/* Overlap. */
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]},"
	           "\"b\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[4,12]}}",
	           1, 12, "tensor 'b' [4, 12] overlaps tensor 'a' [0, 8]");
	/* Byte length vs elements x dtype size. */
	EXPECT_ERR("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,6]}}", 1, 6,
	           "hold 6 bytes but 4 elements of BF16 need 8");
	/* Trailing bytes after the last tensor. */
	EXPECT_ERR("{\"a\":" T_BF16 "}", 1, 9, "1 trailing bytes");
	EXPECT_ERR("{}", 1, 3, "3 trailing bytes");

	/* A gap is a warning; the blob stays ok when the end matches. */
	oa_st_blob b;
	int rc = rd(&b, "{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]},"
	                "\"b\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[16,24]}}",
	            1, 24, NULL);
	CHECK(rc == OA_ST_OK);
	CHECK(b.ok);
	CHECK(has_diag(&b, OA_SEV_WARNING, "gap of 8 unused bytes at data offsets [8, 16)"));
	oa_st_blob_free(&b);
}

static void test_truncation(void)
{
	size_t len;
	unsigned char *buf = mk("{\"__metadata__\":{\"group_size\":\"64\",\"quant_type\":\"int4\"}," MLX_INT4_TENSORS "}",
	                        1, 2304, &len);
	oa_st_blob b;
	CHECK(oa_st_read_mem(buf, len, NULL, &b) == OA_ST_OK);
	oa_st_blob_free(&b);
	int bad = 0;
	for (size_t n = 0; n < len; n++) {
		/* A fresh allocation of exactly n bytes so ASan sees any over-read. */
		unsigned char *cut = malloc(n ? n : 1);
		memcpy(cut, buf, n);
		int rc = oa_st_read_mem(cut, n, NULL, &b);
		if (rc != OA_ST_INVALID || b.ok || !b.n_errors)
			bad++;
		oa_st_blob_free(&b);
		free(cut);
	}
	CHECK_U64(bad, 0);
	free(buf);
}

static void test_huge_header(void)
{
	/* A valid 2+ MiB header (many tensors): accepted, warned about Ollama's
	 * 1 MB loader limit. */
	size_t n = 40000, cap = n * 80 + 16, o = 0;
	char *h = malloc(cap);
	h[o++] = '{';
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(h + o, cap - o, "%s\"t.%06zu.weight\":{\"dtype\":\"F32\",\"shape\":[1],"
		                      "\"data_offsets\":[%zu,%zu]}", i ? "," : "", i, i * 4, i * 4 + 4);
	h[o++] = '}';
	h[o] = 0;
	oa_st_blob b;
	int rc = rd(&b, h, 8, n * 4, "t");
	CHECK(rc == OA_ST_OK);
	CHECK_U64(b.n_tensors, n);
	CHECK_U64(b.n_main, n);
	CHECK(b.packed);
	CHECK(has_diag(&b, OA_SEV_WARNING, "refuses headers over 1 MB"));
	oa_st_blob_free(&b);

	/* Many bad tensors: diagnostics are capped, counts are not. */
	o = 0;
	h[o++] = '{';
	for (size_t i = 0; i < 3000; i++)
		o += (size_t)snprintf(h + o, cap - o, "%s\"t%zu\":1", i ? "," : "", i);
	h[o++] = '}';
	h[o] = 0;
	rc = rd(&b, h, 1, 0, NULL);
	CHECK(rc == OA_ST_INVALID);
	CHECK_U64(b.n_errors, 3000);
	CHECK(b.n_diags <= 1000);
	CHECK(has_diag(&b, OA_SEV_INFO, "more diagnostics not shown"));
	oa_st_blob_free(&b);
	free(h);
}

static void test_fd_path(void)
{
	char path[] = "/tmp/oa-st-test-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	size_t len;
	unsigned char *buf = mk("{\"a\":" T_BF16 "}", 8, 8, &len);
	CHECK(write(fd, buf, len) == (ssize_t)len);
	oa_st_blob b;
	CHECK(oa_st_read_path(path, "a", &b) == OA_ST_OK);
	CHECK(b.ok);
	CHECK_U64(b.file_size, len);
	oa_st_blob_free(&b);
	CHECK(oa_st_read_fd(fd, OA_ST_SIZE_UNKNOWN, "a", &b) == OA_ST_OK);
	oa_st_blob_free(&b);
	/* The caller's size disagrees with the file (file shrank). */
	CHECK(oa_st_read_fd(fd, len + 100, "a", &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "trailing bytes"));
	oa_st_blob_free(&b);

	/* A 200 MiB header length in a sparse 200 MiB file: refused by the cap,
	 * before any allocation. */
	uint64_t big = (uint64_t)200 * 1024 * 1024;
	set_prefix(buf, big);
	CHECK(pwrite(fd, buf, 8, 0) == 8);
	CHECK(ftruncate(fd, (off_t)(big + 8)) == 0);
	CHECK(oa_st_read_path(path, NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "exceeds the 16777216-byte limit"));
	oa_st_blob_free(&b);
	/* Header length beyond the file: refused by the size check. */
	CHECK(ftruncate(fd, 100) == 0);
	CHECK(oa_st_read_path(path, NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "runs past the end of the file (92 bytes follow"));
	oa_st_blob_free(&b);
	close(fd);
	unlink(path);
	free(buf);

	errno = 0;
	CHECK(oa_st_read_path("/nonexistent/oa-st", NULL, &b) == -1);
	CHECK(errno == ENOENT);
	CHECK(!b.ok);
	CHECK(has_diag(&b, OA_SEV_ERROR, "No such file"));
	oa_st_blob_free(&b);
	CHECK(oa_st_read_path("/tmp", NULL, &b) == OA_ST_INVALID);
	CHECK(has_diag(&b, OA_SEV_ERROR, "not a regular file"));
	oa_st_blob_free(&b);
}

/* ---- quant tables ---- */

static void test_quant_tables(void)
{
	CHECK_U64(oa_st_quant_bits("nvfp4"), 4);
	CHECK_U64(oa_st_quant_bits("MXFP4"), 4);
	CHECK_U64(oa_st_quant_bits("Int4"), 4);
	CHECK_U64(oa_st_quant_bits("FP4"), 4);
	CHECK_U64(oa_st_quant_bits("q4"), 4);
	CHECK_U64(oa_st_quant_bits("MXFP8"), 8);
	CHECK_U64(oa_st_quant_bits("int8"), 8);
	CHECK_U64(oa_st_quant_bits("FP8"), 8);
	CHECK_U64(oa_st_quant_bits("Q8"), 8);
	CHECK_U64(oa_st_quant_bits("affine4"), 0);
	CHECK_U64(oa_st_quant_bits(NULL), 0);
	CHECK_STR(oa_st_quant_canonical("FP4"), "int4");
	CHECK_STR(oa_st_quant_canonical("Q8"), "int8");
	CHECK_STR(oa_st_quant_canonical("NVFP4"), "nvfp4");
	CHECK(oa_st_quant_canonical("bf16") == NULL);
	CHECK_U64(oa_st_dtype_bits("BF16"), 16);
	CHECK_U64(oa_st_dtype_bits("F8_E4M3"), 8);
	CHECK_U64(oa_st_dtype_bits("F4"), 4);
	CHECK_U64(oa_st_dtype_bits("bf16"), 0);
}

/* ---- model totals ---- */

static void test_model(void)
{
	oa_st_blob b1, b2, b3;
	CHECK(rd(&b1, "{\"__metadata__\":{\"group_size\":\"16\",\"quant_type\":\"nvfp4\"}," NVFP4_TENSORS "}",
	         1, 292, "w") == OA_ST_OK);
	CHECK(rd(&b2,
	         "{\"__metadata__\":{\"group_size\":\"32\",\"quant_type\":\"mxfp8\"},"
	         "\"lm_head.weight\":{\"data_offsets\":[0,128],\"dtype\":\"U32\",\"shape\":[4,8]},"
	         "\"lm_head.weight.scale\":{\"data_offsets\":[128,132],\"dtype\":\"U8\",\"shape\":[4,1]}}",
	         1, 132, "lm_head.weight") == OA_ST_OK);
	CHECK(rd(&b3, "{\"model.norm.weight\":{\"dtype\":\"BF16\",\"shape\":[16],\"data_offsets\":[0,32]}}",
	         8, 32, "model.norm.weight") == OA_ST_OK);

	oa_st_model m;
	oa_st_model_init(&m);
	/* mxfp8 first, so the 4-bit type must win on bits, not order. */
	CHECK(oa_st_model_add(&m, &b2) == 0);
	CHECK(oa_st_model_add(&m, &b1) == 0);
	CHECK(oa_st_model_add(&m, &b3) == 0);
	CHECK(oa_st_model_finish(&m, "bfloat16") == 0);
	CHECK_U64(m.n_blobs, 3);
	CHECK_U64(m.n_bad_blobs, 0);
	CHECK_U64(m.n_tensors, 3);
	CHECK_U64(m.n_companions, 3);
	CHECK_U64(m.params, 4 * 32 + 4 * 128 + 16);
	CHECK_U64(m.ollama_params, 4 * 32 + 4 * 128 + 16);
	CHECK(m.params_exact);
	CHECK_STR(m.quant_level, "nvfp4");
	CHECK_U64(m.quant_bits, 4);
	CHECK_STR(m.ollama_quant_level, "nvfp4");
	CHECK_U64(m.n_quant_types, 2);
	if (m.n_quant_types == 2) {
		CHECK_STR(m.quant_types[0], "mxfp8");
		CHECK_STR(m.quant_types[1], "nvfp4");
	}
	CHECK_U64(m.data_bytes, 132 + 292 + 32);
	bool seen_u32 = false, seen_bf16 = false;
	for (size_t i = 0; i < m.n_dtypes; i++) {
		if (strcmp(m.dtypes[i].dtype, "U32") == 0) {
			seen_u32 = true;
			CHECK_U64(m.dtypes[i].bytes, 128 + 256);
			CHECK_U64(m.dtypes[i].tensors, 2);
		}
		if (strcmp(m.dtypes[i].dtype, "BF16") == 0) {
			seen_bf16 = true;
			CHECK_U64(m.dtypes[i].bytes, 32);
		}
	}
	CHECK(seen_u32 && seen_bf16);
	oa_st_model_free(&m);

	/* Unquantized model: torch_dtype, or "" without one. */
	oa_st_model_init(&m);
	oa_st_model_add(&m, &b3);
	oa_st_model_finish(&m, "bfloat16");
	CHECK_STR(m.quant_level, "bfloat16");
	CHECK_STR(m.ollama_quant_level, "bfloat16");
	CHECK_U64(m.quant_bits, 0);
	CHECK_U64(m.params, 16);
	oa_st_model_free(&m);
	oa_st_model_init(&m);
	oa_st_model_add(&m, &b3);
	oa_st_model_finish(&m, NULL);
	CHECK_STR(m.quant_level, "");
	oa_st_model_free(&m);

	/* Group-64 int4 without metadata: ours counts the logical size, Ollama's
	 * show counts the packed size. */
	oa_st_blob b4;
	rd(&b4, "{" MLX_INT4_TENSORS "}", 1, 2304, "model.layers.0.mlp.up_proj.weight");
	oa_st_model_init(&m);
	oa_st_model_add(&m, &b4);
	oa_st_model_finish(&m, "bfloat16");
	CHECK_U64(m.params, 8 * 512);
	CHECK_U64(m.ollama_params, 8 * 64);
	CHECK_STR(m.ollama_quant_level, "bfloat16");
	oa_st_model_free(&m);
	oa_st_blob_free(&b4);

	/* Bad blobs are counted. */
	oa_st_blob bad;
	rd(&bad, "{\"a\":5}", 1, 0, NULL);
	oa_st_model_init(&m);
	oa_st_model_add(&m, &bad);
	oa_st_model_finish(&m, NULL);
	CHECK_U64(m.n_bad_blobs, 1);
	CHECK_U64(m.params, 0);
	CHECK(!m.params_exact);
	oa_st_model_free(&m);
	oa_st_blob_free(&bad);

	oa_st_blob_free(&b1);
	oa_st_blob_free(&b2);
	oa_st_blob_free(&b3);
}

/* ---- config.json ---- */

static int cfg(oa_hf_config *c, const char *json)
{
	return oa_hf_config_parse(json, strlen(json), c);
}

static void test_config(void)
{
	oa_hf_config c;
	CHECK(cfg(&c, "{\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":\"qwen3\","
	              "\"torch_dtype\":\"bfloat16\",\"max_position_embeddings\":40960,"
	              "\"hidden_size\":2560,\"num_hidden_layers\":36,\"vocab_size\":151936,"
	              "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"intermediate_size\":9728}") == 0);
	CHECK(c.ok);
	CHECK_STR(c.family, "qwen3");
	CHECK_STR(c.model_type, "qwen3");
	CHECK_STR(c.architecture, "Qwen3ForCausalLM");
	CHECK_STR(c.torch_dtype, "bfloat16");
	CHECK_U64(c.context_length, 40960);
	CHECK_U64(c.embedding_length, 2560);
	CHECK_U64(c.block_count, 36);
	CHECK_U64(c.vocab_size, 151936);
	CHECK_U64(c.head_count, 32);
	CHECK_U64(c.head_count_kv, 8);
	CHECK_U64(c.feed_forward_length, 9728);
	oa_hf_config_free(&c);

	/* model_type wins over architectures. */
	CHECK(cfg(&c, "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"mistral\"}") == 0);
	CHECK_STR(c.family, "mistral");
	oa_hf_config_free(&c);

	CHECK(cfg(&c, "{\"architectures\":[\"Qwen3ForCausalLM\"]}") == 0);
	CHECK_STR(c.family, "qwen3");
	CHECK(c.torch_dtype == NULL);
	CHECK_U64(c.context_length, 0);
	oa_hf_config_free(&c);

	/* Empty model_type falls back to the architecture; text_config wins. */
	CHECK(cfg(&c, "{\"architectures\":[\"Gemma3ForConditionalGeneration\",\"X\"],\"model_type\":\"\","
	              "\"max_position_embeddings\":8192,\"dtype\":\"float16\","
	              "\"text_config\":{\"max_position_embeddings\":131072,\"hidden_size\":2560,"
	              "\"torch_dtype\":\"bfloat16\"}}") == 0);
	CHECK_STR(c.family, "gemma3");
	CHECK_U64(c.context_length, 131072);
	CHECK_U64(c.embedding_length, 2560);
	CHECK_STR(c.torch_dtype, "float16"); /* top level first */
	oa_hf_config_free(&c);

	CHECK(cfg(&c, "{\"text_config\":{\"dtype\":\"bfloat16\"},\"architectures\":[]}") == 0);
	CHECK_STR(c.torch_dtype, "bfloat16");
	CHECK(c.family == NULL);
	oa_hf_config_free(&c);

	/* Wrong types are ignored. */
	CHECK(cfg(&c, "{\"model_type\":5,\"architectures\":\"LlamaForCausalLM\",\"hidden_size\":-1,"
	              "\"vocab_size\":1.5,\"num_hidden_layers\":\"32\",\"text_config\":[1]}") == 0);
	CHECK(c.ok);
	CHECK(c.family == NULL);
	CHECK_U64(c.embedding_length, 0);
	CHECK_U64(c.vocab_size, 0);
	CHECK_U64(c.block_count, 0);
	oa_hf_config_free(&c);

	CHECK(cfg(&c, "{\"architectures\":[\"ForCausalLM\"]}") == 0);
	CHECK(c.family == NULL);
	oa_hf_config_free(&c);

	/* Broken input. */
	CHECK(cfg(&c, "{\"model_type\":") == -1);
	CHECK(!c.ok);
	CHECK(c.error && strstr(c.error, "not valid JSON"));
	oa_hf_config_free(&c);
	CHECK(cfg(&c, "[1]") == -1);
	CHECK(c.error && strstr(c.error, "not a JSON object"));
	oa_hf_config_free(&c);
	CHECK(oa_hf_config_parse("", 0, &c) == -1);
	CHECK(c.error != NULL);
	oa_hf_config_free(&c);
	CHECK(oa_hf_config_parse("{\"a\":1}\0", 8, &c) == -1);
	oa_hf_config_free(&c);
	size_t depth = 50000;
	char *deep = malloc(depth + 1);
	memset(deep, '[', depth);
	deep[depth] = 0;
	CHECK(cfg(&c, deep) == -1);
	CHECK(c.error != NULL);
	oa_hf_config_free(&c);
	free(deep);
}

int main(void)
{
	test_plain_bf16();
	test_mlx_int4();
	test_metadata_null();
	test_nvfp4();
	test_per_tensor_meta();
	test_packed_group();
	test_data_key_layout();
	test_orphan_bias_and_misc();
	test_bad_sizes();
	test_bad_json();
	test_bad_entries();
	test_truncation();
	test_huge_header();
	test_fd_path();
	test_quant_tables();
	test_model();
	test_config();
	TEST_MAIN_END();
}
