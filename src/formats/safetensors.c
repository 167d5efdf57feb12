/* safetensors.c - see safetensors.h and docs/safetensors-limits.md. */
#include "ollama_audit/safetensors.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#define MAX_STORED_DIAGS 1000 /* more are counted, not stored */
#define ESC_NAME 240          /* escaped names are cut to this many bytes */

/* ------------------------------------------------------------------------ */
/* Small string helpers                                                      */
/* Not base's oa_xstrdup: these return NULL, so that a hostile header that
 * exhausts memory is reported (c->oom) rather than ending the program. */

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

static char *xstrcat(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *d = malloc(na + nb + 1);
	if (d) {
		memcpy(d, a, na);
		memcpy(d + na, b, nb + 1);
	}
	return d;
}

static char *xstrlower(const char *s)
{
	char *d = xstrdup(s);
	if (d)
		for (char *p = d; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
	return d;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* A name from the file for a one-line message, cut to dsz (base's one escaper). */
static void esc(char *dst, size_t dsz, const char *s)
{
	oa_escape_into(dst, dsz, s ? s : "(null)", s ? strlen(s) : 6, false);
}

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	case JSON_NULL: return "null";
	}
	return "?";
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

static const struct { const char *name; unsigned bits; } dtype_table[] = {
	{"BOOL", 8}, {"U8", 8}, {"I8", 8}, {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F8_E8M0", 8},
	{"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16},
	{"I32", 32}, {"U32", 32}, {"F32", 32},
	{"I64", 64}, {"U64", 64}, {"F64", 64}, {"C64", 64},
	{"F4", 4}, {"F6_E2M3", 6}, {"F6_E3M2", 6},
};

unsigned oa_st_dtype_bits(const char *dtype)
{
	if (!dtype)
		return 0;
	for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
		if (strcmp(dtype, dtype_table[i].name) == 0)
			return dtype_table[i].bits;
	return 0;
}

static const struct { const char *alias, *canon; int bits; } quant_table[] = {
	{"nvfp4", "nvfp4", 4}, {"mxfp4", "mxfp4", 4}, {"int4", "int4", 4},
	{"fp4", "int4", 4},    {"q4", "int4", 4},     {"mxfp8", "mxfp8", 8},
	{"int8", "int8", 8},   {"fp8", "int8", 8},    {"q8", "int8", 8},
};

const char *oa_st_quant_canonical(const char *q)
{
	if (!q)
		return NULL;
	for (size_t i = 0; i < sizeof quant_table / sizeof quant_table[0]; i++)
		if (strcasecmp(q, quant_table[i].alias) == 0)
			return quant_table[i].canon;
	return NULL;
}

int oa_st_quant_bits(const char *q)
{
	if (!q)
		return 0;
	for (size_t i = 0; i < sizeof quant_table / sizeof quant_table[0]; i++)
		if (strcasecmp(q, quant_table[i].alias) == 0)
			return quant_table[i].bits;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Diagnostics                                                               */

struct ctx {
	oa_st_blob *b;
	const char *layer_name;
	size_t cap_diags;
	size_t suppressed;
	bool oom;
	bool syserr;
	int saved_errno;
	oa_st_tensor **by_name; /* tensors sorted by name, for lookups */
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void diag(struct ctx *c, oa_severity sev, const char *fmt, ...)
{
	oa_st_blob *b = c->b;
	if (sev == OA_SEV_ERROR)
		b->n_errors++;
	else if (sev == OA_SEV_WARNING)
		b->n_warnings++;
	if (b->n_diags >= MAX_STORED_DIAGS) {
		c->suppressed++;
		return;
	}
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (b->n_diags == c->cap_diags) {
		size_t nc = c->cap_diags ? c->cap_diags * 2 : 8;
		oa_st_diag *nd = realloc(b->diags, nc * sizeof *nd);
		if (!nd) {
			c->oom = true;
			return;
		}
		b->diags = nd;
		c->cap_diags = nc;
	}
	char *m = xstrdup(buf);
	if (!m) {
		c->oom = true;
		return;
	}
	b->diags[b->n_diags].severity = sev;
	b->diags[b->n_diags].message = m;
	b->n_diags++;
}

/* ------------------------------------------------------------------------ */
/* Tensor entries                                                            */

static bool mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
	if (a != 0 && b > UINT64_MAX / a)
		return false;
	*r = a * b;
	return true;
}

/* Describe why a JSON value is not a non-negative integer. */
static void describe_non_uint(char *dst, size_t dsz, const json_t *v)
{
	if (json_is_integer(v))
		snprintf(dst, dsz, "negative (%" JSON_INTEGER_FORMAT ")", json_integer_value(v));
	else if (json_is_real(v))
		snprintf(dst, dsz, "not an integer (%.17g)", json_real_value(v));
	else
		snprintf(dst, dsz, "%s, not an integer", json_type_name(v));
}

/* The dtype: known (its bits set) or said to be unknown. False when out of
 * memory. */
static bool tensor_dtype(struct ctx *c, oa_st_tensor *t, const char *en, json_t *v, bool *dtype_ok)
{
	char ev[ESC_NAME];
	*dtype_ok = false;
	json_t *d = json_object_get(v, "dtype");
	if (!d) {
		diag(c, OA_SEV_ERROR, "tensor '%s': missing dtype", en);
	} else if (!json_is_string(d)) {
		diag(c, OA_SEV_ERROR, "tensor '%s': dtype is %s, not a string", en, json_type_name(d));
	} else {
		t->dtype = xstrdup(json_string_value(d));
		if (!t->dtype) {
			c->oom = true;
			return false;
		}
		*dtype_ok = true;
		t->dtype_bits = oa_st_dtype_bits(t->dtype);
		if (!t->dtype_bits) {
			esc(ev, sizeof ev, t->dtype);
			diag(c, OA_SEV_WARNING, "tensor '%s': unknown dtype '%s'; byte length not checked", en, ev);
		}
	}
	return true;
}

/* The shape: at most OA_ST_MAX_DIMS non-negative integers whose product
 * fits 64 bits (t->elements). False when out of memory. */
static bool tensor_shape(struct ctx *c, oa_st_tensor *t, const char *en, json_t *v)
{
	char why[96];
	json_t *s = json_object_get(v, "shape");
	if (!s) {
		diag(c, OA_SEV_ERROR, "tensor '%s': missing shape", en);
	} else if (!json_is_array(s)) {
		diag(c, OA_SEV_ERROR, "tensor '%s': shape is %s, not an array", en, json_type_name(s));
	} else if (json_array_size(s) > OA_ST_MAX_DIMS) {
		diag(c, OA_SEV_ERROR, "tensor '%s': shape has %zu dimensions (more than %d)", en,
		     json_array_size(s), OA_ST_MAX_DIMS);
	} else {
		size_t n = json_array_size(s);
		bool ok = true;
		uint64_t prod = 1;
		if (n) {
			t->shape = calloc(n, sizeof *t->shape);
			if (!t->shape) {
				c->oom = true;
				return false;
			}
		}
		t->n_dims = (uint32_t)n;
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_array_get(s, i);
			if (!json_is_integer(e) || json_integer_value(e) < 0) {
				describe_non_uint(why, sizeof why, e);
				diag(c, OA_SEV_ERROR, "tensor '%s': shape[%zu] is %s", en, i, why);
				ok = false;
				break;
			}
			t->shape[i] = (uint64_t)json_integer_value(e);
		}
		if (ok) {
			for (size_t i = 0; i < n; i++) {
				if (!mul_u64(prod, t->shape[i], &prod)) {
					diag(c, OA_SEV_ERROR,
					     "tensor '%s': shape element count overflows 64 bits", en);
					ok = false;
					break;
				}
			}
		}
		if (ok) {
			t->elements = prod;
			t->shape_ok = true;
		}
	}
	return true;
}

/* data_offsets: two non-negative integers, begin <= end. */
static void tensor_offsets(struct ctx *c, oa_st_tensor *t, const char *en, json_t *v)
{
	char why[96];
	json_t *o = json_object_get(v, "data_offsets");
	if (!o) {
		diag(c, OA_SEV_ERROR, "tensor '%s': missing data_offsets", en);
	} else if (!json_is_array(o) || json_array_size(o) != 2) {
		if (json_is_array(o))
			diag(c, OA_SEV_ERROR, "tensor '%s': data_offsets has %zu elements, not 2", en,
			     json_array_size(o));
		else
			diag(c, OA_SEV_ERROR, "tensor '%s': data_offsets is %s, not an array", en,
			     json_type_name(o));
	} else {
		json_t *a = json_array_get(o, 0), *z = json_array_get(o, 1);
		if (!json_is_integer(a) || json_integer_value(a) < 0) {
			describe_non_uint(why, sizeof why, a);
			diag(c, OA_SEV_ERROR, "tensor '%s': data_offsets begin is %s", en, why);
		} else if (!json_is_integer(z) || json_integer_value(z) < 0) {
			describe_non_uint(why, sizeof why, z);
			diag(c, OA_SEV_ERROR, "tensor '%s': data_offsets end is %s", en, why);
		} else {
			uint64_t b = (uint64_t)json_integer_value(a), e = (uint64_t)json_integer_value(z);
			if (b > e) {
				diag(c, OA_SEV_ERROR,
				     "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] are reversed", en,
				     b, e);
			} else {
				t->begin = b;
				t->end = e;
				t->offsets_ok = true;
			}
		}
	}
}

/* The byte length the offsets give matches dtype x shape and stays inside
 * the data section. */
static bool tensor_length_ok(struct ctx *c, oa_st_tensor *t, const char *en)
{
	bool len_ok = true;
	if (t->shape_ok && t->offsets_ok && t->dtype_bits) {
		uint64_t bits;
		if (!mul_u64(t->elements, t->dtype_bits, &bits)) {
			diag(c, OA_SEV_ERROR, "tensor '%s': %" PRIu64 " elements of %s overflow 64 bits", en,
			     t->elements, t->dtype);
			len_ok = false;
		} else if (bits % 8) {
			diag(c, OA_SEV_ERROR,
			     "tensor '%s': %" PRIu64 " elements of %s are not a whole number of bytes", en,
			     t->elements, t->dtype);
			len_ok = false;
		} else if (t->end - t->begin != bits / 8) {
			diag(c, OA_SEV_ERROR,
			     "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
			     " bytes but %" PRIu64 " elements of %s need %" PRIu64,
			     en, t->begin, t->end, t->end - t->begin, t->elements, t->dtype, bits / 8);
			len_ok = false;
		}
	}
	if (t->offsets_ok && c->b->data_start && t->end > c->b->data_bytes) {
		diag(c, OA_SEV_ERROR,
		     "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
		     "] run past the end of the file (data section holds %" PRIu64 " bytes)",
		     en, t->begin, t->end, c->b->data_bytes);
		len_ok = false;
	}
	return len_ok;
}

static void parse_tensor(struct ctx *c, oa_st_tensor *t, const char *key, json_t *v)
{
	char en[ESC_NAME];
	esc(en, sizeof en, key);
	if (!json_is_object(v)) {
		diag(c, OA_SEV_ERROR, "tensor '%s': entry is %s, not an object", en, json_type_name(v));
		return;
	}
	bool dtype_ok;
	if (!tensor_dtype(c, t, en, v, &dtype_ok) || !tensor_shape(c, t, en, v))
		return;
	tensor_offsets(c, t, en, v);
	bool len_ok = tensor_length_ok(c, t, en);
	t->valid = dtype_ok && t->shape_ok && t->offsets_ok && len_ok;
}

/* ------------------------------------------------------------------------ */
/* Metadata                                                                  */

/* A metadata value as a positive integer: a decimal string (the format) or,
 * tolerated, a JSON integer. */
static bool meta_u64(json_t *v, uint64_t *out)
{
	if (json_is_integer(v)) {
		if (json_integer_value(v) <= 0)
			return false;
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (!json_is_string(v))
		return false;
	const char *s = json_string_value(v);
	if (!*s || strlen(s) > 19)
		return false;
	uint64_t r = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		r = r * 10 + (uint64_t)(*p - '0');
	}
	if (r == 0)
		return false;
	*out = r;
	return true;
}

/* Canonical name, or the value lowercased when unknown (with a warning). */
static char *meta_quant(struct ctx *c, json_t *v, const char *where)
{
	char ew[ESC_NAME], ev[ESC_NAME];
	if (!json_is_string(v))
		return NULL; /* non-string already warned about */
	const char *s = json_string_value(v);
	if (!*s)
		return NULL;
	const char *canon = oa_st_quant_canonical(s);
	char *r = canon ? xstrdup(canon) : xstrlower(s);
	if (!r) {
		c->oom = true;
		return NULL;
	}
	if (!canon) {
		esc(ew, sizeof ew, where);
		esc(ev, sizeof ev, s);
		diag(c, OA_SEV_WARNING, "__metadata__['%s'] = '%s' is not a known quant type", ew, ev);
	}
	return r;
}

static void parse_metadata(struct ctx *c, json_t *meta)
{
	oa_st_blob *b = c->b;
	char ek[ESC_NAME];
	b->has_metadata = true;
	if (json_is_null(meta)) {
		b->metadata_null = true;
		return;
	}
	if (!json_is_object(meta)) {
		diag(c, OA_SEV_ERROR, "__metadata__ is %s, expected an object or null",
		     json_type_name(meta));
		return;
	}
	b->n_metadata = json_object_size(meta);
	const char *k;
	json_t *v;
	json_object_foreach(meta, k, v) {
		if (!json_is_string(v)) {
			esc(ek, sizeof ek, k);
			diag(c, OA_SEV_WARNING,
			     "__metadata__['%s'] is %s, not a string (the HF safetensors library rejects this)",
			     ek, json_type_name(v));
		}
	}
	json_t *q = json_object_get(meta, "quant_type");
	if (q)
		b->quant_type = meta_quant(c, q, "quant_type");
	json_t *g = json_object_get(meta, "group_size");
	if (g && !meta_u64(g, &b->group_size)) {
		b->group_size = 0;
		diag(c, OA_SEV_WARNING, "__metadata__['group_size'] is not a positive integer");
	}
}

/* ------------------------------------------------------------------------ */
/* Quantization                                                              */

static int cmp_tensor_name(const void *a, const void *b)
{
	const oa_st_tensor *x = *(oa_st_tensor *const *)a, *y = *(oa_st_tensor *const *)b;
	return strcmp(x->name, y->name);
}

static int cmp_key_tensor(const void *key, const void *elem)
{
	const oa_st_tensor *y = *(oa_st_tensor *const *)elem;
	return strcmp((const char *)key, y->name);
}

static oa_st_tensor *find_tensor(struct ctx *c, const char *name)
{
	if (!c->by_name)
		return NULL;
	oa_st_tensor **p = bsearch(name, c->by_name, c->b->n_tensors, sizeof *c->by_name, cmp_key_tensor);
	return p ? *p : NULL;
}

static oa_st_tensor *find_suffixed(struct ctx *c, const char *name, const char *suffix)
{
	char *k = xstrcat(name, suffix);
	if (!k) {
		c->oom = true;
		return NULL;
	}
	oa_st_tensor *t = find_tensor(c, k);
	free(k);
	return t;
}

static json_t *meta_get_suffixed(struct ctx *c, json_t *meta, const char *name, const char *suffix)
{
	if (!json_is_object(meta))
		return NULL;
	char *k = xstrcat(name, suffix);
	if (!k) {
		c->oom = true;
		return NULL;
	}
	json_t *v = json_object_get(meta, k);
	free(k);
	return v;
}

static uint64_t last_dim(const oa_st_tensor *t)
{
	return (t && t->shape_ok && t->n_dims) ? t->shape[t->n_dims - 1] : 0;
}

/* Ollama's x/server/show.go rule: packed_cols / scale_cols, 4 int4, 16 int8. */
static const char *ratio_rule(const oa_st_tensor *t, const oa_st_tensor *scale)
{
	uint64_t p = last_dim(t), s = last_dim(scale);
	if (!scale || !s)
		return NULL;
	uint64_t r = p / s;
	return r == 4 ? "int4" : r == 16 ? "int8" : NULL;
}

/* Best guess from the geometry; see docs/safetensors-limits.md. */
static const char *guess_quant(const oa_st_tensor *t, const oa_st_tensor *scale, uint64_t group,
                               bool affine, bool global_scale)
{
	if (!t->dtype || strcmp(t->dtype, "U32") != 0 || !scale)
		return NULL;
	uint64_t p = last_dim(t), s = last_dim(scale);
	if (!p || !s)
		return NULL;
	if (group) {
		int bits = 0;
		if (p <= UINT64_MAX / 8 && (p * 8) % group == 0 && (p * 8) / group == s)
			bits = 4;
		else if (p <= UINT64_MAX / 4 && (p * 4) % group == 0 && (p * 4) / group == s)
			bits = 8;
		if (!bits)
			return NULL;
		if (affine)
			return bits == 4 ? "int4" : "int8";
		if (bits == 8)
			return group == 32 ? "mxfp8" : NULL;
		if (global_scale || group == 16)
			return "nvfp4";
		return group == 32 ? "mxfp4" : NULL;
	}
	if (p % s)
		return NULL;
	uint64_t r = p / s;
	if (affine)
		return r == 4 || r == 8 ? "int4" : r == 16 ? "int8" : NULL;
	if (global_scale)
		return r == 2 ? "nvfp4" : NULL;
	return r == 2 ? "nvfp4" : r == 4 ? "mxfp4" : r == 8 ? "mxfp8" : NULL;
}

/* Say when a tensor's quant label and its dtype or geometry disagree. */
static void quant_diags(struct ctx *c, const oa_st_tensor *t, const oa_st_tensor *scale, const char *guess,
                        const char *en)
{
	bool is_u32 = t->dtype && strcmp(t->dtype, "U32") == 0;
	char eq[ESC_NAME];
	esc(eq, sizeof eq, t->quant_type ? t->quant_type : "");
	if (t->quant_type && !is_u32 && t->dtype) {
		char ed[ESC_NAME];
		esc(ed, sizeof ed, t->dtype);
		diag(c, OA_SEV_WARNING,
		     "tensor '%s': quant_type %s but dtype %s is not U32-packed; parameters not scaled",
		     en, eq, ed);
	}
	if (t->quant_type && guess && strcmp(t->quant_type, guess) != 0) {
		if (t->quant_bits && t->quant_bits != (unsigned)oa_st_quant_bits(guess))
			diag(c, OA_SEV_WARNING,
			     "tensor '%s': quant_type %s but the geometry (packed cols %" PRIu64
			     ", scale cols %" PRIu64 ", group %" PRIu64 ") fits %s",
			     en, eq, last_dim(t), last_dim(scale), t->group_size, guess);
		else
			diag(c, OA_SEV_INFO,
			     "tensor '%s': labelled %s (%s) but the geometry suggests %s", en, eq,
			     t->quant_source == OA_ST_QSRC_RATIO ? "Ollama's ratio rule" : "metadata",
			     guess);
	} else if (!t->quant_type && guess) {
		diag(c, OA_SEV_INFO,
		     "tensor '%s': no quant metadata and Ollama's ratio rule does not match; geometry suggests %s",
		     en, guess);
	} else if (!t->quant_type && is_u32 && scale) {
		diag(c, OA_SEV_WARNING,
		     "tensor '%s': U32 tensor with a .scale companion but no recognisable quantization",
		     en);
	}
}

/* Parameters: elements, unpacked from U32 words at 4 or 8 bits. */
static void count_params(struct ctx *c, oa_st_tensor *t, const char *en)
{
	if (!t->shape_ok)
		return;
	bool is_u32 = t->dtype && strcmp(t->dtype, "U32") == 0;
	unsigned bits = t->quant_bits ? t->quant_bits : (unsigned)oa_st_quant_bits(t->quant_guess);
	uint64_t p = t->elements;
	t->params_ok = true;
	if (is_u32 && (bits == 4 || bits == 8) && t->n_dims) {
		if (!mul_u64(p, 32 / bits, &p)) {
			diag(c, OA_SEV_ERROR, "tensor '%s': unpacked parameter count overflows 64 bits", en);
			t->params_ok = false;
		}
	}
	t->params = p;
}

static void quantize_main(struct ctx *c, oa_st_tensor *t, const char *key, json_t *meta)
{
	oa_st_blob *b = c->b;
	char en[ESC_NAME];
	esc(en, sizeof en, t->name);

	oa_st_tensor *scale = find_suffixed(c, key, ".scale");
	t->has_scale = scale != NULL;
	t->has_bias = find_suffixed(c, key, ".bias") != NULL;
	t->has_global_scale = find_suffixed(c, key, ".global_scale") != NULL;

	json_t *tq = meta_get_suffixed(c, meta, key, ".quant_type");
	json_t *tg = meta_get_suffixed(c, meta, key, ".group_size");
	char *tquant = NULL;
	if (tq) {
		char where[ESC_NAME + 16];
		snprintf(where, sizeof where, "%s.quant_type", key);
		tquant = meta_quant(c, tq, where);
	}
	uint64_t g = 0;
	if (tg && !meta_u64(tg, &g)) {
		g = 0;
		diag(c, OA_SEV_WARNING, "__metadata__['%s.group_size'] is not a positive integer", en);
	}
	t->group_size = g ? g : b->group_size;

	const char *ratio = ratio_rule(t, scale);
	if (tquant) {
		t->quant_type = tquant;
		t->quant_source = OA_ST_QSRC_TENSOR_META;
	} else if (b->quant_type) {
		t->quant_type = xstrdup(b->quant_type);
		t->quant_source = OA_ST_QSRC_GLOBAL_META;
	} else if (ratio) {
		t->quant_type = xstrdup(ratio);
		t->quant_source = OA_ST_QSRC_RATIO;
	}
	if (t->quant_source != OA_ST_QSRC_NONE && !t->quant_type) {
		c->oom = true;
		return;
	}
	t->quant_bits = (unsigned)oa_st_quant_bits(t->quant_type);

	const char *oq = b->quant_type ? b->quant_type : ratio;
	if (oq && !(t->ollama_quant_type = xstrdup(oq))) {
		c->oom = true;
		return;
	}

	const char *guess = guess_quant(t, scale, t->group_size, t->has_bias, t->has_global_scale);
	if (guess && !(t->quant_guess = xstrdup(guess))) {
		c->oom = true;
		return;
	}

	quant_diags(c, t, scale, guess, en);
	count_params(c, t, en);
}

/* ------------------------------------------------------------------------ */
/* Layout: overlaps, gaps, trailing bytes                                    */

static int cmp_offsets(const void *a, const void *b)
{
	const oa_st_tensor *x = *(oa_st_tensor *const *)a, *y = *(oa_st_tensor *const *)b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void check_layout(struct ctx *c)
{
	oa_st_blob *b = c->b;
	size_t n = 0;
	oa_st_tensor **v = malloc((b->n_tensors ? b->n_tensors : 1) * sizeof *v);
	if (!v) {
		c->oom = true;
		return;
	}
	for (size_t i = 0; i < b->n_tensors; i++)
		if (b->tensors[i].offsets_ok)
			v[n++] = &b->tensors[i];
	qsort(v, n, sizeof *v, cmp_offsets);
	uint64_t cursor = 0;
	const oa_st_tensor *last = NULL;
	char e1[ESC_NAME], e2[ESC_NAME];
	for (size_t i = 0; i < n; i++) {
		const oa_st_tensor *t = v[i];
		if (t->begin < cursor) {
			esc(e1, sizeof e1, t->name);
			esc(e2, sizeof e2, last ? last->name : "?");
			if (t->begin == t->end)
				diag(c, OA_SEV_WARNING,
				     "tensor '%s': empty, placed at offset %" PRIu64 " inside tensor '%s'", e1,
				     t->begin, e2);
			else
				diag(c, OA_SEV_ERROR,
				     "tensor '%s' [%" PRIu64 ", %" PRIu64 "] overlaps tensor '%s' [%" PRIu64
				     ", %" PRIu64 "]",
				     e1, t->begin, t->end, e2, last->begin, last->end);
		} else if (t->begin > cursor) {
			esc(e1, sizeof e1, t->name);
			diag(c, OA_SEV_WARNING,
			     "gap of %" PRIu64 " unused bytes at data offsets [%" PRIu64 ", %" PRIu64
			     ") before tensor '%s' (the HF safetensors library rejects gaps)",
			     t->begin - cursor, cursor, t->begin, e1);
		}
		if (t->end > cursor) {
			cursor = t->end;
			last = t;
		} else if (!last) {
			last = t;
		}
	}
	free(v);
	b->data_end = cursor;
	if (b->data_start && cursor < b->data_bytes)
		diag(c, OA_SEV_ERROR,
		     "%" PRIu64 " trailing bytes: tensor data ends at file offset %" PRIu64
		     " but the file is %" PRIu64 " bytes (8 + header + data must equal the file size)",
		     b->data_bytes - cursor, b->data_start + cursor, b->file_size);
}

/* ------------------------------------------------------------------------ */
/* Header                                                                    */

static void check_layer_name(struct ctx *c)
{
	oa_st_blob *b = c->b;
	const char *ln = c->layer_name;
	if (!ln || !*ln || b->data_key_layout || !b->n_main)
		return;
	char el[ESC_NAME], en[ESC_NAME];
	esc(el, sizeof el, ln);
	if (b->n_main == 1) {
		for (size_t i = 0; i < b->n_tensors; i++) {
			oa_st_tensor *t = &b->tensors[i];
			if (!t->is_companion && strcmp(t->name, ln) != 0) {
				esc(en, sizeof en, t->name);
				diag(c, OA_SEV_WARNING, "layer name '%s' differs from the blob's tensor '%s'", el,
				     en);
			}
		}
		return;
	}
	size_t ll = strlen(ln), bad = 0;
	const char *first = NULL;
	for (size_t i = 0; i < b->n_tensors; i++) {
		oa_st_tensor *t = &b->tensors[i];
		if (t->is_companion)
			continue;
		if (strncmp(t->name, ln, ll) != 0 || t->name[ll] != '.') {
			if (!bad++)
				first = t->name;
		}
	}
	if (bad) {
		esc(en, sizeof en, first);
		diag(c, OA_SEV_WARNING,
		     "packed blob: %zu main tensors (e.g. '%s') do not start with the layer name '%s.'",
		     bad, en, el);
	}
}

/* The header as a JSON object (a duplicate key is an error, then read with
 * the last value winning); NULL when it is none, said or out of memory. */
static json_t *load_header_json(struct ctx *c, const char *hdr, size_t hlen)
{
	json_error_t err;
	char et[ESC_NAME];
	json_t *root = json_loadb(hdr, hlen, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
	if (!root && json_error_code(&err) == json_error_duplicate_key) {
		esc(et, sizeof et, err.text);
		diag(c, OA_SEV_ERROR, "header has a duplicate key (%s); readers disagree on which wins", et);
		root = json_loadb(hdr, hlen, JSON_DECODE_ANY, &err);
	}
	if (!root) {
		if (json_error_code(&err) == json_error_out_of_memory) {
			c->oom = true;
			return NULL;
		}
		esc(et, sizeof et, err.text);
		diag(c, OA_SEV_ERROR, "header is not valid JSON: %s (line %d, column %d, byte %d)", et,
		     err.line, err.column, err.position);
		return NULL;
	}
	if (!json_is_object(root)) {
		diag(c, OA_SEV_ERROR, "header is %s, not a JSON object", json_type_name(root));
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Every key but __metadata__ is a tensor. False when out of memory. */
static bool read_tensors(struct ctx *c, json_t *root, bool has_meta)
{
	oa_st_blob *b = c->b;
	size_t n = json_object_size(root) - (has_meta ? 1 : 0);
	if (n) {
		b->tensors = calloc(n, sizeof *b->tensors);
		if (!b->tensors) {
			c->oom = true;
			return false;
		}
	}
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		if (strcmp(key, "__metadata__") == 0)
			continue;
		oa_st_tensor *t = &b->tensors[b->n_tensors++];
		if (!(t->name = xstrdup(key))) {
			c->oom = true;
			return false;
		}
		parse_tensor(c, t, key, v);
		if (c->oom)
			return false;
	}
	return true;
}

/* Old layout: one tensor keyed `data`, named by the manifest layer; then its
 * metadata is keyed "data" (*data_key). False when out of memory. */
static bool old_data_layout(struct ctx *c, const char **data_key)
{
	oa_st_blob *b = c->b;
	*data_key = NULL;
	if (b->n_tensors != 1 || strcmp(b->tensors[0].name, "data") != 0)
		return true;
	b->data_key_layout = true;
	*data_key = "data";
	const char *ln = c->layer_name;
	if (ln && *ln) {
		char *nn = xstrdup(ln);
		if (!nn) {
			c->oom = true;
			return false;
		}
		free(b->tensors[0].name);
		b->tensors[0].name = nn;
		b->tensors[0].is_companion = ends_with(nn, "_scale") || ends_with(nn, "_qbias");
	}
	diag(c, OA_SEV_INFO, "old single-key `data` layout (Ollama v0.14-v0.15)");
	return true;
}

/* c->by_name, the tensors sorted by name for find_tensor. */
static bool index_by_name(struct ctx *c)
{
	oa_st_blob *b = c->b;
	c->by_name = malloc(b->n_tensors * sizeof *c->by_name);
	if (!c->by_name) {
		c->oom = true;
		return false;
	}
	for (size_t i = 0; i < b->n_tensors; i++)
		c->by_name[i] = &b->tensors[i];
	qsort(c->by_name, b->n_tensors, sizeof *c->by_name, cmp_tensor_name);
	return true;
}

/* X.scale, X.bias and X.global_scale are companions of X; one whose X is
 * not in this blob is an orphan. False when out of memory. */
static bool mark_companions(struct ctx *c)
{
	static const char *const suffixes[] = {".scale", ".bias", ".global_scale"};
	oa_st_blob *b = c->b;
	for (size_t i = 0; i < b->n_tensors && !b->data_key_layout; i++) {
		oa_st_tensor *t = &b->tensors[i];
		for (size_t k = 0; k < 3; k++) {
			if (!ends_with(t->name, suffixes[k]))
				continue;
			t->is_companion = true;
			size_t bl = strlen(t->name) - strlen(suffixes[k]);
			char *base = malloc(bl + 1);
			if (!base) {
				c->oom = true;
				return false;
			}
			memcpy(base, t->name, bl);
			base[bl] = '\0';
			t->companion_orphan = find_tensor(c, base) == NULL;
			free(base);
			break;
		}
	}
	return true;
}

/* Count companions (saying which ones show skips) and quantize each main
 * tensor. False when out of memory. */
static bool count_tensors(struct ctx *c, const char *data_key, json_t *meta)
{
	oa_st_blob *b = c->b;
	for (size_t i = 0; i < b->n_tensors; i++) {
		oa_st_tensor *t = &b->tensors[i];
		if (t->is_companion) {
			b->n_companions++;
			if (t->companion_orphan) {
				char en[ESC_NAME];
				esc(en, sizeof en, t->name);
				if (t->shape_ok)
					b->orphan_companion_elements += t->elements;
				diag(c, OA_SEV_INFO,
				     "tensor '%s' has no base tensor in this blob; Ollama's show skips it, so its %" PRIu64
				     " parameters are not counted",
				     en, t->shape_ok ? t->elements : 0);
			}
			continue;
		}
		b->n_main++;
		quantize_main(c, t, data_key ? data_key : t->name, meta);
		if (c->oom)
			return false;
	}
	return true;
}

static void parse_header(struct ctx *c, const char *hdr, size_t hlen)
{
	oa_st_blob *b = c->b;
	json_t *root = load_header_json(c, hdr, hlen);
	if (!root)
		return;
	b->header_ok = true;
	if (hlen && hdr[0] != '{')
		diag(c, OA_SEV_WARNING,
		     "header starts with byte 0x%02X, not '{' (the HF safetensors library rejects this)",
		     (unsigned char)hdr[0]);
	json_t *meta = json_object_get(root, "__metadata__");
	if (meta)
		parse_metadata(c, meta);
	const char *data_key;
	bool ok = read_tensors(c, root, meta != NULL); /* else out of memory (c->oom) */
	if (ok && !b->n_tensors) {
		diag(c, OA_SEV_WARNING, "header holds no tensors");
		check_layout(c);
	} else if (ok && old_data_layout(c, &data_key) && index_by_name(c) && mark_companions(c) &&
	           count_tensors(c, data_key, meta)) {
		b->packed = b->n_main > 1;
		check_layout(c);
		check_layer_name(c);
	}
	json_decref(root);
}

/* ------------------------------------------------------------------------ */
/* Readers                                                                   */

static void blob_init(oa_st_blob *b, struct ctx *c, const char *layer_name)
{
	memset(b, 0, sizeof *b);
	memset(c, 0, sizeof *c);
	c->b = b;
	c->layer_name = layer_name;
}

static int blob_finish(struct ctx *c)
{
	oa_st_blob *b = c->b;
	free(c->by_name);
	c->by_name = NULL;
	if (c->suppressed) {
		size_t keep = c->suppressed;
		/* Make room for the note by replacing the last stored message. */
		if (b->n_diags) {
			char buf[128];
			snprintf(buf, sizeof buf, "%zu more diagnostics not shown", keep + 1);
			char *m = xstrdup(buf);
			if (m) {
				free(b->diags[b->n_diags - 1].message);
				b->diags[b->n_diags - 1].message = m;
				b->diags[b->n_diags - 1].severity = OA_SEV_INFO;
			}
		}
	}
	if (c->oom) {
		b->ok = false;
		errno = ENOMEM;
		return -1;
	}
	b->ok = b->header_ok && b->n_errors == 0;
	if (c->syserr) {
		b->ok = false;
		errno = c->saved_errno;
		return -1;
	}
	return b->n_errors ? OA_ST_INVALID : OA_ST_OK;
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* Check the prefix against the file size and the cap. True if the header
 * can be read. */
static bool check_header_len(struct ctx *c)
{
	oa_st_blob *b = c->b;
	uint64_t room = b->file_size - 8;
	if (b->header_len > room) {
		diag(c, OA_SEV_ERROR,
		     "header length %" PRIu64 " runs past the end of the file (%" PRIu64
		     " bytes follow the length prefix)",
		     b->header_len, room);
		return false;
	}
	if (b->header_len > OA_ST_MAX_HEADER) {
		diag(c, OA_SEV_ERROR, "header length %" PRIu64 " exceeds the %" PRIu64 "-byte limit",
		     b->header_len, OA_ST_MAX_HEADER);
		return false;
	}
	b->data_start = 8 + b->header_len;
	b->data_bytes = b->file_size - b->data_start;
	if (b->header_len > OA_ST_LOADER_HEADER_LIMIT)
		diag(c, OA_SEV_WARNING,
		     "header is %" PRIu64 " bytes; Ollama's blob loader (imagegen/manifest) refuses headers over 1 MB",
		     b->header_len);
	return true;
}

static bool check_min_size(struct ctx *c)
{
	if (c->b->file_size < 8) {
		diag(c, OA_SEV_ERROR, "file is %" PRIu64 " bytes, shorter than the 8-byte header length",
		     c->b->file_size);
		return false;
	}
	return true;
}

int oa_st_read_mem(const void *buf, size_t len, const char *layer_name, oa_st_blob *out)
{
	struct ctx c;
	blob_init(out, &c, layer_name);
	out->file_size = len;
	if (!check_min_size(&c))
		return blob_finish(&c);
	out->header_len = le64(buf);
	if (check_header_len(&c))
		parse_header(&c, (const char *)buf + 8, (size_t)out->header_len);
	return blob_finish(&c);
}

int oa_st_read_fd(int fd, uint64_t file_size, const char *layer_name, oa_st_blob *out)
{
	struct ctx c;
	blob_init(out, &c, layer_name);
	if (file_size == OA_ST_SIZE_UNKNOWN) {
		struct stat st;
		if (fstat(fd, &st) != 0) {
			c.syserr = true;
			c.saved_errno = errno;
			diag(&c, OA_SEV_ERROR, "fstat: %s", strerror(errno));
			return blob_finish(&c);
		}
		file_size = (uint64_t)st.st_size;
	}
	out->file_size = file_size;
	if (!check_min_size(&c))
		return blob_finish(&c);
	unsigned char pre[8];
	ssize_t n = oa_pread_full(fd, pre, 8, 0);
	if (n < 0) {
		c.syserr = true;
		c.saved_errno = errno;
		diag(&c, OA_SEV_ERROR, "read: %s", strerror(errno));
		return blob_finish(&c);
	}
	if (n < 8) {
		diag(&c, OA_SEV_ERROR, "file ended after %zd bytes, before the 8-byte header length "
		     "(it shrank while being read?)", n);
		return blob_finish(&c);
	}
	out->header_len = le64(pre);
	if (!check_header_len(&c))
		return blob_finish(&c);
	size_t hl = (size_t)out->header_len;
	char *hdr = malloc(hl ? hl : 1);
	if (!hdr) {
		c.oom = true;
		return blob_finish(&c);
	}
	n = oa_pread_full(fd, hdr, hl, 8);
	if (n < 0) {
		c.syserr = true;
		c.saved_errno = errno;
		diag(&c, OA_SEV_ERROR, "read: %s", strerror(errno));
	} else if ((size_t)n < hl) {
		diag(&c, OA_SEV_ERROR, "file ended %zd bytes into the %zu-byte header "
		     "(it shrank while being read?)", n, hl);
	} else {
		parse_header(&c, hdr, hl);
	}
	free(hdr);
	return blob_finish(&c);
}

int oa_st_read_path(const char *path, const char *layer_name, oa_st_blob *out)
{
	int fd = oa_open_ro(path);
	if (fd < 0) {
		struct ctx c;
		int e = errno;
		blob_init(out, &c, layer_name);
		char ep[ESC_NAME];
		esc(ep, sizeof ep, path);
		diag(&c, OA_SEV_ERROR, "open '%s': %s", ep, strerror(e));
		c.syserr = true;
		c.saved_errno = e;
		return blob_finish(&c);
	}
	struct stat st;
	int r;
	if (fstat(fd, &st) != 0) {
		struct ctx c;
		int e = errno;
		blob_init(out, &c, layer_name);
		diag(&c, OA_SEV_ERROR, "fstat: %s", strerror(e));
		c.syserr = true;
		c.saved_errno = e;
		r = blob_finish(&c);
	} else if (!S_ISREG(st.st_mode)) {
		struct ctx c;
		blob_init(out, &c, layer_name);
		diag(&c, OA_SEV_ERROR, "not a regular file");
		r = blob_finish(&c);
	} else {
		r = oa_st_read_fd(fd, (uint64_t)st.st_size, layer_name, out);
	}
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

static void tensor_free(oa_st_tensor *t)
{
	free(t->name);
	free(t->dtype);
	free(t->shape);
	free(t->quant_type);
	free(t->ollama_quant_type);
	free(t->quant_guess);
}

void oa_st_blob_free(oa_st_blob *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_tensors; i++)
		tensor_free(&b->tensors[i]);
	free(b->tensors);
	for (size_t i = 0; i < b->n_diags; i++)
		free(b->diags[i].message);
	free(b->diags);
	free(b->quant_type);
	memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------------------ */
/* Per-model totals                                                          */

void oa_st_model_init(oa_st_model *m)
{
	memset(m, 0, sizeof *m);
	m->params_exact = true;
}

static void add_sat(uint64_t *acc, uint64_t v, bool *exact)
{
	if (*acc > UINT64_MAX - v) {
		*acc = UINT64_MAX;
		if (exact)
			*exact = false;
	} else {
		*acc += v;
	}
}

/* The per-model tables are keyed by a bounded set of names: the dtypes and
 * quant types the format defines, plus "other". Keying them by whatever a
 * file writes would make them as long as the file has tensors, and the
 * linear lookups quadratic. */
static int model_dtype_add(oa_st_model *m, const char *dtype, uint64_t bytes)
{
	const char *d = !dtype ? "?" : oa_st_dtype_bits(dtype) ? dtype : "other";
	for (size_t i = 0; i < m->n_dtypes; i++) {
		if (strcmp(m->dtypes[i].dtype, d) == 0) {
			m->dtypes[i].tensors++;
			add_sat(&m->dtypes[i].bytes, bytes, NULL);
			return 0;
		}
	}
	oa_st_dtype_total *nd = realloc(m->dtypes, (m->n_dtypes + 1) * sizeof *nd);
	if (!nd)
		return -1;
	m->dtypes = nd;
	char *s = xstrdup(d);
	if (!s)
		return -1;
	nd[m->n_dtypes].dtype = s;
	nd[m->n_dtypes].tensors = 1;
	nd[m->n_dtypes].bytes = bytes;
	m->n_dtypes++;
	return 0;
}

static int model_quant_add(oa_st_model *m, const char *quant)
{
	const char *q = oa_st_quant_canonical(quant) ? oa_st_quant_canonical(quant) : "other";
	for (size_t i = 0; i < m->n_quant_types; i++)
		if (strcmp(m->quant_types[i], q) == 0)
			return 0;
	char **nq = realloc(m->quant_types, (m->n_quant_types + 1) * sizeof *nq);
	if (!nq)
		return -1;
	m->quant_types = nq;
	if (!(nq[m->n_quant_types] = xstrdup(q)))
		return -1;
	m->n_quant_types++;
	return 0;
}

/* Keep the quant type with the fewest bits; the first seen wins a tie. */
static int model_level_add(char **level, unsigned *best, const char *q)
{
	unsigned bits = (unsigned)oa_st_quant_bits(q);
	if (!bits || (*best && bits >= *best))
		return 0;
	char *s = xstrdup(q);
	if (!s)
		return -1;
	free(*level);
	*level = s;
	*best = bits;
	return 0;
}

int oa_st_model_add(oa_st_model *m, const oa_st_blob *b)
{
	int rc = 0;
	m->n_blobs++;
	if (!b->ok)
		m->n_bad_blobs++;
	for (size_t i = 0; i < b->n_tensors; i++) {
		const oa_st_tensor *t = &b->tensors[i];
		if (t->offsets_ok) {
			add_sat(&m->data_bytes, t->end - t->begin, NULL);
			if (model_dtype_add(m, t->dtype, t->end - t->begin))
				rc = -1;
		}
		if (t->is_companion) {
			m->n_companions++;
			if (t->companion_orphan && t->shape_ok)
				add_sat(&m->uncounted_params, t->elements, NULL);
			continue;
		}
		m->n_tensors++;
		if (t->params_ok)
			add_sat(&m->params, t->params, &m->params_exact);
		else
			m->params_exact = false;
		if (t->shape_ok) {
			int ob = oa_st_quant_bits(t->ollama_quant_type);
			uint64_t p = t->elements;
			if (ob && t->n_dims && !mul_u64(p, (uint64_t)(32 / ob), &p))
				p = UINT64_MAX;
			add_sat(&m->ollama_params, p, NULL);
		}
		if (t->quant_type) {
			if (model_quant_add(m, t->quant_type) ||
			    model_level_add(&m->quant_level, &m->quant_bits, t->quant_type))
				rc = -1;
		}
		if (t->ollama_quant_type &&
		    model_level_add(&m->ollama_quant_level, &m->ollama_quant_bits, t->ollama_quant_type))
			rc = -1;
	}
	if (rc)
		m->oom = true;
	return rc;
}

int oa_st_model_finish(oa_st_model *m, const char *torch_dtype)
{
	const char *fallback = torch_dtype ? torch_dtype : "";
	int rc = 0;
	if (!m->quant_level && !(m->quant_level = xstrdup(fallback)))
		rc = -1;
	if (!m->ollama_quant_level && !(m->ollama_quant_level = xstrdup(fallback)))
		rc = -1;
	m->finished = true;
	if (rc)
		m->oom = true;
	return rc;
}

void oa_st_model_free(oa_st_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_dtypes; i++)
		free(m->dtypes[i].dtype);
	free(m->dtypes);
	for (size_t i = 0; i < m->n_quant_types; i++)
		free(m->quant_types[i]);
	free(m->quant_types);
	free(m->quant_level);
	free(m->ollama_quant_level);
	memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------ */
/* config.json                                                               */

static int cfg_str(json_t *o, const char *key, char **out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_string(v) || !*json_string_value(v))
		return 0;
	*out = xstrdup(json_string_value(v));
	return *out ? 1 : -1;
}

/* text_config.<key> first, then <key>; non-negative integers only. */
static uint64_t cfg_u64(json_t *root, json_t *tc, const char *key)
{
	json_t *src[2] = {tc, root};
	for (int i = 0; i < 2; i++) {
		json_t *v = json_object_get(src[i], key); /* NULL-safe: returns NULL */
		if (json_is_integer(v) && json_integer_value(v) >= 0)
			return (uint64_t)json_integer_value(v);
	}
	return 0;
}

static char *family_from_arch(const char *arch)
{
	char *f = xstrlower(arch);
	if (!f)
		return NULL;
	static const char *const sfx[] = {"forcausallm", "forconditionalgeneration"};
	for (int i = 0; i < 2; i++)
		if (ends_with(f, sfx[i]))
			f[strlen(f) - strlen(sfx[i])] = '\0';
	return f;
}

int oa_hf_config_parse(const void *buf, size_t len, oa_hf_config *out)
{
	memset(out, 0, sizeof *out);
	json_error_t err;
	json_t *root = json_loadb(buf, len, JSON_DECODE_ANY, &err);
	if (!root) {
		if (json_error_code(&err) == json_error_out_of_memory) {
			errno = ENOMEM;
			return -1;
		}
		char et[ESC_NAME], msg[512];
		esc(et, sizeof et, err.text);
		snprintf(msg, sizeof msg, "config.json is not valid JSON: %s (line %d, column %d)", et,
		         err.line, err.column);
		out->error = xstrdup(msg);
		if (!out->error)
			errno = ENOMEM;
		return -1;
	}
	if (!json_is_object(root)) {
		char msg[128];
		snprintf(msg, sizeof msg, "config.json is %s, not a JSON object", json_type_name(root));
		out->error = xstrdup(msg);
		json_decref(root);
		if (!out->error)
			errno = ENOMEM;
		return -1;
	}
	int rc = 0;
	json_t *tc = json_object_get(root, "text_config");
	if (!json_is_object(tc))
		tc = NULL;
	if (cfg_str(root, "model_type", &out->model_type) < 0)
		rc = -1;
	json_t *archs = json_object_get(root, "architectures");
	json_t *a0 = json_is_array(archs) ? json_array_get(archs, 0) : NULL;
	if (json_is_string(a0) && *json_string_value(a0) &&
	    !(out->architecture = xstrdup(json_string_value(a0))))
		rc = -1;
	if (out->model_type) {
		if (!(out->family = xstrdup(out->model_type)))
			rc = -1;
	} else if (out->architecture) {
		if (!(out->family = family_from_arch(out->architecture)))
			rc = -1;
		else if (!*out->family) {
			free(out->family);
			out->family = NULL;
		}
	}
	json_t *dsrc[2] = {root, tc};
	for (int i = 0; i < 2 && !out->torch_dtype && dsrc[i]; i++) {
		int r = cfg_str(dsrc[i], "torch_dtype", &out->torch_dtype);
		if (r == 0)
			r = cfg_str(dsrc[i], "dtype", &out->torch_dtype);
		if (r < 0)
			rc = -1;
	}
	out->context_length = cfg_u64(root, tc, "max_position_embeddings");
	out->embedding_length = cfg_u64(root, tc, "hidden_size");
	out->block_count = cfg_u64(root, tc, "num_hidden_layers");
	out->vocab_size = cfg_u64(root, tc, "vocab_size");
	out->head_count = cfg_u64(root, tc, "num_attention_heads");
	out->head_count_kv = cfg_u64(root, tc, "num_key_value_heads");
	out->feed_forward_length = cfg_u64(root, tc, "intermediate_size");
	json_decref(root);
	if (rc) {
		errno = ENOMEM;
		return -1;
	}
	out->ok = true;
	return 0;
}

void oa_hf_config_free(oa_hf_config *c)
{
	if (!c)
		return;
	free(c->error);
	free(c->model_type);
	free(c->architecture);
	free(c->family);
	free(c->torch_dtype);
	memset(c, 0, sizeof *c);
}
