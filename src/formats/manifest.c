/* manifest.c - manifest parsing, Ollama's manifest ID and SIZE. */
#include "ollama_audit/manifest.h"
#include "formats/digest_set.h"
#include "base/hash_index.h"
#include "base/jsonutil.h"
#include "base/pack.h"
#include "base/util.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <xxhash.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[OA_LAYER_KIND_COUNT] = {
	[OA_LAYER_UNKNOWN] = "unknown", [OA_LAYER_MODEL] = "model",
	[OA_LAYER_ADAPTER] = "adapter", [OA_LAYER_PROJECTOR] = "projector",
	[OA_LAYER_DRAFT] = "draft",     [OA_LAYER_TENSOR] = "tensor",
	[OA_LAYER_JSON] = "json",       [OA_LAYER_TEMPLATE] = "template",
	[OA_LAYER_SYSTEM] = "system",   [OA_LAYER_PARAMS] = "params",
	[OA_LAYER_MESSAGES] = "messages", [OA_LAYER_LICENSE] = "license",
	[OA_LAYER_EMBED] = "embed",     [OA_LAYER_CONFIG] = "config",
	[OA_LAYER_MANIFEST] = "manifest",
};

const char *oa_layer_kind_name(enum oa_layer_kind kind)
{
	return kind < OA_LAYER_KIND_COUNT ? kind_names[kind] : "unknown";
}

enum oa_layer_kind oa_layer_kind_of(const char *media_type)
{
	/* Compare without ";" parameters and surrounding blanks (spec §2.1). */
	size_t n = strcspn(media_type, ";");
	while (n && (media_type[n - 1] == ' ' || media_type[n - 1] == '\t'))
		n--;
	size_t plen = strlen(OA_MEDIA_PREFIX);
	if (n == strlen(OA_MEDIA_CONFIG) && memcmp(media_type, OA_MEDIA_CONFIG, n) == 0)
		return OA_LAYER_CONFIG;
	if ((n == strlen(OA_MEDIA_MANIFEST) && memcmp(media_type, OA_MEDIA_MANIFEST, n) == 0) ||
	    (n == strlen(OA_MEDIA_MANIFEST_LIST) && memcmp(media_type, OA_MEDIA_MANIFEST_LIST, n) == 0))
		return OA_LAYER_MANIFEST; /* a downgrade anchor's link to a manifest blob */
	if (n <= plen || memcmp(media_type, OA_MEDIA_PREFIX, plen) != 0)
		return OA_LAYER_UNKNOWN;
	const char *suffix = media_type + plen;
	size_t sl = n - plen;
	static const struct { const char *s; enum oa_layer_kind k; } table[] = {
		{ "model", OA_LAYER_MODEL },       { "adapter", OA_LAYER_ADAPTER },
		{ "projector", OA_LAYER_PROJECTOR }, { "draft", OA_LAYER_DRAFT },
		{ "tensor", OA_LAYER_TENSOR },     { "json", OA_LAYER_JSON },
		{ "template", OA_LAYER_TEMPLATE }, { "prompt", OA_LAYER_TEMPLATE },
		{ "system", OA_LAYER_SYSTEM },     { "params", OA_LAYER_PARAMS },
		{ "messages", OA_LAYER_MESSAGES }, { "license", OA_LAYER_LICENSE },
		{ "embed", OA_LAYER_EMBED },
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strlen(table[i].s) == sl && memcmp(table[i].s, suffix, sl) == 0)
			return table[i].k;
	return OA_LAYER_UNKNOWN;
}

static void scan_plain(const uint8_t *p, size_t len, oa_digest_fn fn, void *ctx)
{
	/* Deliberately loose (a 65th hex digit does not disqualify a match):
	 * the callers decide what must be kept, so a false match only keeps a
	 * blob, and a missed one could lose it. */
	for (size_t i = 0; i + 7 + 64 <= len; i++) {
		if (p[i] != 's' || memcmp(p + i, "sha256", 6) != 0 || (p[i + 6] != ':' && p[i + 6] != '-'))
			continue;
		if (!oa_is_hex((const char *)p + i + 7, 64))
			continue;
		oa_digest_hex hex;
		memcpy(hex, p + i + 7, 64);
		hex[64] = '\0';
		fn(ctx, hex);
		i += 7 + 63;
	}
}

static int hex_value(uint8_t c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	     : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The bytes with JSON's escapes of ASCII characters decoded (\u0073,
 * \/), everything else as it is: Go's decoder reads "sha256\u003a..." as a
 * digest, so the scan must too. Returns the new length (<= len). */
static size_t unescape_ascii(const uint8_t *p, size_t len, uint8_t *out)
{
	size_t w = 0;
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '\\' || i + 1 == len) {
			out[w++] = p[i];
			continue;
		}
		if (p[i + 1] == 'u' && i + 5 < len) {
			int v = 0;
			for (size_t k = 2; k < 6 && v >= 0; k++) {
				int h = hex_value(p[i + k]);
				v = h < 0 ? -1 : v * 16 + h;
			}
			if (v > 0 && v < 0x80) {
				out[w++] = (uint8_t)v;
				i += 5;
				continue;
			}
		}
		if (p[i + 1] == '/') {
			out[w++] = '/';
			i++;
			continue;
		}
		out[w++] = p[i];
		out[w++] = p[++i]; /* any other escape stays whole: "\\u0073" is no 's' */
	}
	return w;
}

void oa_digest_scan(const uint8_t *p, size_t len, oa_digest_fn fn, void *ctx)
{
	scan_plain(p, len, fn, ctx);
	if (len == 0 || !memchr(p, '\\', len))
		return;
	uint8_t *u = oa_xmalloc(len);
	size_t n = unescape_ascii(p, len, u);
	scan_plain(u, n, fn, ctx);
	free(u);
}

size_t oa_json_value_end(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	if (i == n)
		return 0;
	if (p[i] != '{' && p[i] != '[') {
		/* A scalar: Go's decoder needs the next byte to know it ended; we only
		 * care about objects, so treat the rest of the file as read. */
		return n;
	}
	size_t depth = 0;
	bool in_string = false;
	for (; i < n; i++) {
		uint8_t c = p[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']') {
			if (--depth == 0)
				return i + 1;
		}
	}
	return 0;
}

size_t oa_manifest_hashed_length(const uint8_t *bytes, size_t len)
{
	/* Go's Decoder.refill grows its buffer so reads end at 512, 1536, 3584,
	 * ... (each 2*prev+512); bytes after the value are hashed only when the
	 * read that completed the value pulled them in. */
	size_t end = oa_json_value_end(bytes, len);
	if (end == 0)
		return len;
	size_t boundary = 512;
	while (boundary < end) {
		if (boundary > (SIZE_MAX - 512) / 2)
			return len;
		boundary = 2 * boundary + 512;
	}
	return boundary < len ? boundary : len;
}

/* Manifest.Size() adds int64s and Go's integers wrap; do the same without
 * undefined behaviour (a hostile manifest can declare INT64_MAX twice). */
static int64_t add_size(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static char *dup_string_field(json_t *obj, const char *key, bool *type_error)
{
	json_t *v = oa_json_get_fold(obj, key);
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v)) {
		*type_error = true;
		return NULL;
	}
	return oa_xstrndup(json_string_value(v), json_string_length(v));
}

/* The media types every store repeats, held once: a layer's media_type
 * that spells one of them points here (never freed) instead of a copy. */
static const char *const common_media[] = {
	"", OA_MEDIA_CONFIG, OA_MEDIA_MANIFEST, OA_MEDIA_MANIFEST_LIST, OA_MEDIA_PREFIX "model", OA_MEDIA_PREFIX "template",
	OA_MEDIA_PREFIX "params", OA_MEDIA_PREFIX "system", OA_MEDIA_PREFIX "license",
	OA_MEDIA_PREFIX "projector", OA_MEDIA_PREFIX "adapter", OA_MEDIA_PREFIX "messages",
	OA_MEDIA_PREFIX "tensor", OA_MEDIA_PREFIX "json",
};
#define N_COMMON_MEDIA (sizeof common_media / sizeof common_media[0])

static bool is_common_media(const char *p)
{
	for (size_t i = 0; i < N_COMMON_MEDIA; i++)
		if (p == common_media[i])
			return true;
	return false;
}

/* Takes s: the shared copy when it is a common media type, else s. */
static char *intern_media(char *s)
{
	for (size_t i = 0; i < N_COMMON_MEDIA; i++)
		if (strcmp(s, common_media[i]) == 0) {
			free(s);
			return (char *)common_media[i]; /* read-only: no caller writes a media type */
		}
	return s;
}

/* A layer digest written as "sha256:" + 64 lower-case hex is held once per
 * store (digest_set.h), counted by the manifests that name it, not once per
 * manifest: 10,000 tags sharing a template and a few weights hold each of
 * those strings once. A set indexed by the digits, freed when its last
 * string is. */
typedef struct digest_node {
	size_t refs;
	size_t at;            /* its number in the set's node */
	char text[7 + OA_DIGEST_HEX_LEN + 1];
} digest_node;

struct oa_digest_set {
	pthread_mutex_t lock; /* the scan parses tags on several threads */
	digest_node **node;   /* the live ones, in no order */
	size_t n, cap;
	oa_hash_index index;  /* of node, by the digits */
};

oa_digest_set *oa_digest_set_new(void)
{
	oa_digest_set *d = oa_xcalloc(1, sizeof *d);
	pthread_mutex_init(&d->lock, NULL);
	return d;
}

void oa_digest_set_free(oa_digest_set *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->node[i]); /* a manifest still holding it would be a caller's bug */
	free(d->node);
	oa_hash_index_free(&d->index);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* Over every digit: a manifest's digests are whatever its bytes say, and
 * a hostile store naming thousands that share their first digits must not
 * make the set quadratic. */
static uint64_t digest_hash(const char *text)
{
	return XXH3_64bits(text + 7, OA_DIGEST_HEX_LEN);
}

static bool same_digest(const void *ctx, size_t entry, const void *key)
{
	digest_node *const *node = ctx;
	return memcmp(node[entry]->text, key, sizeof node[entry]->text) == 0;
}

/* The shared copy of a canonical digest, counted. */
static char *digest_intern(oa_digest_set *d, const char *text)
{
	pthread_mutex_lock(&d->lock);
	uint64_t h = digest_hash(text);
	size_t i = oa_hash_index_find(&d->index, h, same_digest, d->node, text);
	if (i == OA_HASH_NONE) {
		OA_ALLOC_GROW(d->node, d->n + 1, d->cap);
		digest_node *nd = oa_xcalloc(1, sizeof *nd);
		memcpy(nd->text, text, sizeof nd->text);
		nd->at = i = d->n++;
		d->node[i] = nd;
		oa_hash_index_add(&d->index, h, i);
	}
	d->node[i]->refs++;
	char *out = d->node[i]->text;
	pthread_mutex_unlock(&d->lock);
	return out;
}

static void digest_release(oa_digest_set *d, char *text)
{
	digest_node *node = (digest_node *)(void *)(text - offsetof(digest_node, text));
	pthread_mutex_lock(&d->lock);
	if (--node->refs == 0) {
		size_t at = node->at, last = --d->n;
		oa_hash_index_remove(&d->index, digest_hash(text), at);
		if (at != last) { /* the last node takes its place */
			d->node[at] = d->node[last];
			d->node[at]->at = at;
			oa_hash_index_renumber(&d->index, digest_hash(d->node[at]->text), last, at);
		}
		free(node);
		if (d->n == 0) { /* the last: nothing of the set is left */
			free(d->node);
			d->node = NULL;
			d->cap = 0;
			oa_hash_index_free(&d->index);
		}
	}
	pthread_mutex_unlock(&d->lock);
}

/* Whether l's digest is the shared copy of set (digest_intern). */
static bool digest_shared(const oa_digest_set *set, const oa_layer *l)
{
	return set && l->digest_valid && !l->hex_uppercase && l->digest[6] == ':';
}

/* A copy of hex when the digest does not hold it as written (upper-case
 * hex), else NULL: pack() points hex into the digest (point_hex). */
static char *own_hex(const char *digest, bool valid, const oa_digest_hex hex)
{
	return valid && memcmp(digest + 7, hex, OA_DIGEST_HEX_LEN) != 0 ? oa_xstrdup(hex) : NULL;
}

/* Once packed: hex is its own copy (moved into the block), the digits
 * inside the digest, or "" for an invalid digest (with room for a digest,
 * so that a copy of oa_digest_hex's size stays inside it). */
static void point_hex(const char **hex, const char *digest, bool valid)
{
	static const oa_digest_hex no_hex;
	if (!valid)
		*hex = no_hex;
	else if (!*hex)
		*hex = digest + 7;
}

static int parse_layer(json_t *obj, oa_layer *l, oa_digest_set *set, const char *what, char *err, size_t errlen)
{
	bool bad = false;
	memset(l, 0, sizeof *l);
	if (json_is_null(obj)) {
		l->media_type = oa_xstrdup("");
		l->digest = oa_xstrdup("");
		return 0;
	}
	if (!json_is_object(obj)) {
		snprintf(err, errlen, "%s is not a JSON object", what);
		l->media_type = oa_xstrdup("");
		l->digest = oa_xstrdup("");
		return -1;
	}
	l->media_type = dup_string_field(obj, "mediaType", &bad);
	l->digest = dup_string_field(obj, "digest", &bad);
	l->from = dup_string_field(obj, "from", &bad);
	l->name = dup_string_field(obj, "name", &bad);
	if (!l->media_type)
		l->media_type = oa_xstrdup("");
	if (!l->digest)
		l->digest = oa_xstrdup("");
	json_t *size = oa_json_get_fold(obj, "size");
	if (size && !json_is_null(size)) {
		if (json_is_integer(size))
			l->size = json_integer_value(size);
		else
			bad = true;
	}
	if (bad) {
		snprintf(err, errlen, "%s has a field of the wrong JSON type", what);
		return -1;
	}
	l->kind = oa_layer_kind_of(l->media_type);
	l->media_type = intern_media(l->media_type);
	oa_digest_hex hex;
	l->digest_valid = oa_digest_parse(l->digest, hex, &l->hex_uppercase);
	l->hex = own_hex(l->digest, l->digest_valid, hex);
	if (digest_shared(set, l)) {
		char *shared = digest_intern(set, l->digest);
		free(l->digest);
		l->digest = shared;
	}
	return 0;
}

static void free_layer(oa_digest_set *set, oa_layer *l)
{
	if (!is_common_media(l->media_type))
		free(l->media_type);
	if (digest_shared(set, l))
		digest_release(set, l->digest);
	else
		free(l->digest);
	free(l->from);
	free(l->name);
}

static void free_entry(oa_list_entry *e)
{
	free(e->media_type);
	free(e->digest);
	free(e->runner);
	free(e->format);
	free(e->inline_json);
}

static int parse_entry(json_t *obj, oa_list_entry *e, size_t i, char *err, size_t errlen)
{
	bool bad = false;
	if (json_is_object(obj)) {
		e->media_type = dup_string_field(obj, "mediaType", &bad);
		e->digest = dup_string_field(obj, "digest", &bad);
		e->runner = dup_string_field(obj, "runner", &bad);
		e->format = dup_string_field(obj, "format", &bad);
		json_t *size = oa_json_get_fold(obj, "size");
		if (size && !json_is_null(size)) {
			if (json_is_integer(size))
				e->size = json_integer_value(size);
			else
				bad = true;
		}
		if (oa_json_get_fold(obj, "layers") || oa_json_get_fold(obj, "config"))
			e->inline_json = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	} else if (!json_is_null(obj)) {
		bad = true;
	}
	char **fields[] = { &e->media_type, &e->digest, &e->runner, &e->format };
	for (size_t k = 0; k < 4; k++)
		if (!*fields[k])
			*fields[k] = oa_xstrdup("");
	if (bad) {
		snprintf(err, errlen, "manifests[%zu] is not an object of the list entry fields", i);
		return -1;
	}
	oa_digest_hex hex;
	e->digest_valid = oa_digest_parse(e->digest, hex, NULL);
	e->hex = own_hex(e->digest, e->digest_valid, hex);
	return 0;
}

/* The "manifests" of a manifest list (spec §2.5). */
static int parse_entries(json_t *root, oa_manifest *m, char *err, size_t errlen)
{
	json_t *v = oa_json_get_fold_slice(root, "manifests");
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v)) {
		snprintf(err, errlen, "manifests is not an array");
		return -1;
	}
	size_t n = json_array_size(v);
	m->entries = oa_xcalloc(n ? n : 1, sizeof *m->entries);
	for (size_t i = 0; i < n; i++) {
		m->n_manifests = i + 1;
		if (parse_entry(json_array_get(v, i), &m->entries[i], i, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* A layer's strings, one pass of pack(): a common media type stays the
 * shared copy. */
static void pack_layer(oa_pack *p, const oa_digest_set *set, oa_layer *l)
{
	if (!is_common_media(l->media_type))
		oa_pack_str(p, &l->media_type);
	if (!digest_shared(set, l))
		oa_pack_str(p, &l->digest);
	oa_pack_str(p, (char **)&l->hex);
	oa_pack_str(p, &l->from);
	oa_pack_str(p, &l->name);
}

/* Every string of m, one pass of pack(). */
static void pack_strings(oa_pack *p, void *rec)
{
	oa_manifest *m = rec;
	oa_pack_str(p, &m->runner);
	oa_pack_str(p, &m->format);
	if (!is_common_media(m->media_type))
		oa_pack_str(p, &m->media_type);
	pack_layer(p, m->digests, &m->config);
	for (size_t i = 0; i < m->n_layers; i++)
		pack_layer(p, m->digests, &m->layers[i]);
	for (size_t i = 0; i < m->n_manifests && m->entries; i++) {
		oa_list_entry *e = &m->entries[i];
		oa_pack_str(p, &e->media_type);
		oa_pack_str(p, &e->digest);
		oa_pack_str(p, (char **)&e->hex);
		oa_pack_str(p, &e->runner);
		oa_pack_str(p, &e->format);
		oa_pack_str(p, &e->inline_json);
	}
}

/* Everything the parse allocated into one block (a tag's manifest was a
 * dozen malloc chunks: 10,000 tags held 120,000 of them). The layers and
 * entries arrays come first, then the strings. */
static void pack(oa_manifest *m)
{
	const oa_pack_array arrays[] = { { &m->layers, m->n_layers, sizeof *m->layers },
	                                 { &m->entries, m->n_manifests, sizeof *m->entries } };
	m->block = oa_pack_record(arrays, 2, pack_strings, m);
	point_hex(&m->config.hex, m->config.digest, m->config.digest_valid);
	for (size_t i = 0; i < m->n_layers; i++)
		point_hex(&m->layers[i].hex, m->layers[i].digest, m->layers[i].digest_valid);
	for (size_t i = 0; i < m->n_manifests && m->entries; i++)
		point_hex(&m->entries[i].hex, m->entries[i].digest, m->entries[i].digest_valid);
}

int oa_manifest_parse(const uint8_t *bytes, size_t len, oa_manifest *m, char *err, size_t errlen)
{
	return oa_manifest_parse_in(NULL, bytes, len, m, err, errlen);
}

int oa_manifest_parse_in(oa_digest_set *set, const uint8_t *bytes, size_t len, oa_manifest *m, char *err,
                         size_t errlen)
{
	memset(m, 0, sizeof *m);
	m->digests = set;
	m->runner = oa_xstrdup("");
	m->format = oa_xstrdup("");
	m->media_type = oa_xstrdup("");
	m->config.media_type = oa_xstrdup("");
	m->config.digest = oa_xstrdup("");
	m->id_len = oa_manifest_hashed_length(bytes, len);
	oa_sha256_hex(bytes, m->id_len, m->id);

	json_error_t jerr;
	json_t *root = oa_json_loadb_go(bytes, len, JSON_DISABLE_EOF_CHECK, &jerr);
	if (!root) {
		if (len == 0)
			snprintf(err, errlen, "empty file");
		else
			snprintf(err, errlen, "not JSON: %s at byte %d", jerr.text, jerr.position);
		pack(m);
		return -1;
	}
	int rc = -1;
	if (!json_is_object(root)) {
		snprintf(err, errlen, "top-level JSON value is not an object");
		goto out;
	}
	json_t *v = oa_json_get_fold(root, "schemaVersion");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v)) {
			snprintf(err, errlen, "schemaVersion is not an integer");
			goto out;
		}
		m->schema_version = json_integer_value(v);
	}
	v = oa_json_get_fold(root, "mediaType");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v)) {
			snprintf(err, errlen, "mediaType is not a string");
			goto out;
		}
		free(m->media_type);
		m->media_type = intern_media(oa_xstrdup(json_string_value(v)));
	}
	m->is_list = oa_str_has_prefix(m->media_type, OA_MEDIA_MANIFEST_LIST);
	bool bad = false;
	char *runner = dup_string_field(root, "runner", &bad);
	char *format = dup_string_field(root, "format", &bad);
	if (runner) {
		free(m->runner);
		m->runner = runner;
	}
	if (format) {
		free(m->format);
		m->format = format;
	}
	if (bad) {
		snprintf(err, errlen, "runner or format is not a string");
		goto out;
	}
	if (parse_entries(root, m, err, errlen) < 0)
		goto out;

	v = oa_json_get_fold_struct(root, "config");
	if (v) {
		if (!is_common_media(m->config.media_type))
			free(m->config.media_type);
		free(m->config.digest);
		int prc = parse_layer(v, &m->config, set, "config", err, errlen);
		json_decref(v);
		if (prc < 0)
			goto out;
		m->size = add_size(m->size, m->config.size);
	}
	v = oa_json_get_fold_slice(root, "layers");
	if (v && !json_is_null(v)) {
		if (!json_is_array(v)) {
			snprintf(err, errlen, "layers is not an array");
			goto out;
		}
		size_t n = json_array_size(v);
		m->layers = oa_xcalloc(n, sizeof *m->layers);
		for (size_t i = 0; i < n; i++) {
			char what[32];
			snprintf(what, sizeof what, "layers[%zu]", i);
			m->n_layers = i + 1;
			if (parse_layer(json_array_get(v, i), &m->layers[i], set, what, err, errlen) < 0)
				goto out;
			m->size = add_size(m->size, m->layers[i].size);
		}
	}
	rc = 0;
out:
	json_decref(root);
	pack(m);
	return rc;
}

void oa_manifest_free(oa_manifest *m)
{
	for (size_t i = 0; i <= m->n_layers && m->block; i++) {
		oa_layer *l = i < m->n_layers ? &m->layers[i] : &m->config;
		if (digest_shared(m->digests, l))
			digest_release(m->digests, l->digest);
	}
	if (m->block) {
		free(m->block);
		memset(m, 0, sizeof *m);
		return;
	}
	for (size_t i = 0; i < m->n_manifests && m->entries; i++)
		free_entry(&m->entries[i]);
	free(m->entries);
	free(m->runner);
	free(m->format);
	if (!is_common_media(m->media_type))
		free(m->media_type);
	free_layer(m->digests, &m->config);
	for (size_t i = 0; i < m->n_layers; i++)
		free_layer(m->digests, &m->layers[i]);
	free(m->layers);
	memset(m, 0, sizeof *m);
}
