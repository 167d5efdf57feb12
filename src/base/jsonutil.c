/* jsonutil.c - see jsonutil.h. */
#include "base/jsonutil.h"
#include "base/util.h"
#include "ollama_audit/outfile.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strings.h>

/*
 * Go's decoder walks an object's keys in document order and assigns every
 * key that equals a field name ignoring ASCII case, so several spellings of
 * one field ("layers", "Layers") each take effect in turn. What "take
 * effect" means depends on the field's Go type:
 *   - string, number, bool: the value replaces; null does nothing;
 *   - slice: the value replaces; null sets it to nil;
 *   - struct: an object fills the fields it names, keeping the others;
 *     null does nothing.
 * jansson iterates in insertion order; a key repeated with the same spelling
 * keeps its first position and its last value, which is the one Go would
 * end with for that spelling.
 */
/* Whether a JSON key names the (ASCII) field `name` as Go's decoder sees it:
 * bytes.EqualFold, so besides ASCII case the Kelvin sign (U+212A) is a 'k'
 * and the long s (U+017F) an 's', the only non-ASCII letters that fold to
 * ASCII ones. */
static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

bool oa_json_key_is(const char *k, const char *name)
{
	for (; *name; name++) {
		int c = ascii_lower((unsigned char)*name);
		if (*k && ascii_lower((unsigned char)*k) == c) {
			k++;
		} else if (c == 'k' && strncmp(k, "\xe2\x84\xaa", 3) == 0) {
			k += 3;
		} else if (c == 's' && strncmp(k, "\xc5\xbf", 2) == 0) {
			k += 2;
		} else {
			return false;
		}
	}
	return *k == '\0';
}

/* The last key matching `key`; a null counts only when skip_null is false or
 * nothing else matched. */
static json_t *last_match(json_t *obj, const char *key, bool skip_null)
{
	if (!json_is_object(obj))
		return NULL;
	json_t *found = NULL;
	const char *k;
	json_t *val;
	json_object_foreach(obj, k, val) {
		if (oa_json_key_is(k, key) && (!found || !skip_null || !json_is_null(val)))
			found = val;
	}
	return found;
}

json_t *oa_json_get_fold(json_t *obj, const char *key)
{
	return last_match(obj, key, true);
}

json_t *oa_json_get_fold_slice(json_t *obj, const char *key)
{
	return last_match(obj, key, false);
}

json_t *oa_json_get_fold_struct(json_t *obj, const char *key)
{
	if (!json_is_object(obj))
		return NULL;
	json_t *merged = NULL;
	const char *k;
	json_t *val;
	json_object_foreach(obj, k, val) {
		if (!oa_json_key_is(k, key) || json_is_null(val))
			continue;
		if (!json_is_object(val)) {
			/* a type error in Go; hand the offending value to the caller */
			json_decref(merged);
			return json_incref(val);
		}
		if (!merged)
			merged = json_object();
		json_object_update(merged, val);
	}
	return merged;
}

/* The number token at p (a maximal run of number characters). */
static size_t number_len(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n && p[i] && (strchr("+-.eE", p[i]) || (p[i] >= '0' && p[i] <= '9')))
		i++;
	return i;
}

static bool jansson_overflows(const uint8_t *p, size_t n)
{
	json_error_t e;
	json_t *v = json_loadb((const char *)p, n, JSON_DECODE_ANY, &e);
	json_decref(v);
	return !v && json_error_code(&e) == json_error_numeric_overflow;
}

json_t *oa_json_loadb_go(const uint8_t *bytes, size_t len, size_t flags, json_error_t *err)
{
	json_t *root = json_loadb((const char *)bytes, len, flags, err);
	if (root || json_error_code(err) != json_error_numeric_overflow)
		return root;
	/* Quote every number jansson refuses; strings are copied untouched. */
	oa_buf b;
	oa_buf_init(&b);
	bool in_string = false;
	for (size_t i = 0; i < len;) {
		uint8_t c = bytes[i];
		if (in_string || (c != '-' && (c < '0' || c > '9'))) {
			if (in_string && c == '\\' && i + 1 < len) {
				oa_buf_add(&b, bytes + i, 2);
				i += 2;
				continue;
			}
			if (c == '"')
				in_string = !in_string;
			oa_buf_addc(&b, (char)c);
			i++;
			continue;
		}
		size_t n = number_len(bytes + i, len - i);
		bool quote = jansson_overflows(bytes + i, n);
		if (quote)
			oa_buf_addc(&b, '"');
		oa_buf_add(&b, bytes + i, n);
		if (quote)
			oa_buf_addc(&b, '"');
		i += n;
	}
	root = json_loadb(b.data, b.len, flags, err);
	oa_buf_free(&b);
	return root;
}

json_t *oa_json_str(const char *s)
{
	if (!s)
		return json_null();
	json_t *v = json_string(s);
	if (v)
		return v;
	/* Not UTF-8 (names and paths on disk need not be): escape the bytes. */
	char *e = oa_escape(s, strlen(s));
	v = json_string(e);
	free(e);
	return v ? v : json_null();
}

bool oa_json_get_u64(json_t *o, const char *k, uint64_t *out)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

bool oa_json_get_i64(json_t *o, const char *k, int64_t *out)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_integer(v))
		return false;
	*out = json_integer_value(v);
	return true;
}

int oa_json_write_at(int dirfd, const char *name, json_t *v, char *err, size_t errlen)
{
	char *s = json_dumps(v, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	if (!s) {
		snprintf(err, errlen, "cannot serialise JSON");
		return -1;
	}
	size_t len = strlen(s);
	char *d = oa_xmalloc(len + 2);
	memcpy(d, s, len);
	d[len] = '\n';
	free(s);
	int rc = oa_outfile_write_at(dirfd, name, d, len + 1, 0644, err, errlen);
	free(d);
	return rc;
}
