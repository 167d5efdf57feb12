/* test_core.c - names, manifests (ID and SIZE), configs, human formats. */
#include "ollama_audit/oom.h"
#include "testutil.h"

#include "ollama_audit/config.h"
#include "ollama_audit/digest.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/manifest.h"
#include "ollama_audit/name.h"
#include "ollama_audit/outfile.h"
#include "ollama_audit/store_core.h"
#include "formats/digest_set.h"
#include "base/platform.h"
#include "base/strset.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>

static void test_names(void)
{
	oa_name n;
	char buf[OA_NAME_DISPLAY_MAX];
	const char *why;

	CHECK(oa_name_parse("llama3.2", &n));
	CHECK_STR(n.host, "registry.ollama.ai");
	CHECK_STR(n.ns, "library");
	CHECK_STR(n.model, "llama3.2");
	CHECK_STR(n.tag, "latest");
	oa_name_display(&n, buf, sizeof buf);
	CHECK_STR(buf, "llama3.2:latest");

	CHECK(oa_name_parse("user/model:tag", &n));
	oa_name_display(&n, buf, sizeof buf);
	CHECK_STR(buf, "user/model:tag");

	CHECK(oa_name_parse("hf.co/org/repo:Q4_K_M", &n));
	CHECK_STR(n.host, "hf.co");
	oa_name_display(&n, buf, sizeof buf);
	CHECK_STR(buf, "hf.co/org/repo:Q4_K_M");

	CHECK(oa_name_parse("http://localhost:5000/ns/m:t", &n));
	CHECK_STR(n.host, "localhost:5000");
	CHECK_STR(n.tag, "t");
	CHECK(oa_name_parse("localhost:5000/ns/m", &n));
	CHECK_STR(n.host, "localhost:5000");
	CHECK_STR(n.tag, "latest");

	/* Display compares host and namespace case-insensitively. */
	CHECK(oa_name_from_parts(&n, "Registry.Ollama.AI", "Library", "Qwen3.5", "4b", NULL));
	oa_name_display(&n, buf, sizeof buf);
	CHECK_STR(buf, "Qwen3.5:4b");

	/* Validation, spec §1.2. */
	CHECK(!oa_name_from_parts(&n, "registry.ollama.ai", "library", "m", ".DS_Store", &why));
	CHECK(!oa_name_from_parts(&n, "registry.ollama.ai", "lib.rary", "m", "t", &why));
	CHECK(!oa_name_from_parts(&n, "registry.ollama.ai", "library", "Bad!Name", "t", &why));
	CHECK(!oa_name_from_parts(&n, "registry.ollama.ai", "library", "-m", "t", &why));
	CHECK(!oa_name_from_parts(&n, "registry.ollama.ai", "library", "m\xc3\xa9", "t", &why));
	CHECK(oa_name_from_parts(&n, "registry.ollama.ai", "library", "_m.x-y", "T_1.0", &why));
	/* A reason is the library's own text, not a buffer the next call
	 * overwrites: one taken before another call still says its part. */
	const char *first_why = NULL;
	CHECK(!oa_name_from_parts(&n, "registry.ollama.ai", "lib.rary", "m", "t", &first_why));
	CHECK(!oa_name_from_parts(&n, "registry.ollama.ai", "library", "m", "", &why));
	CHECK_STR(first_why, "namespace contains a character not allowed here");
	CHECK_STR(why, "tag empty");
	CHECK(!oa_name_from_parts(&n, "h", "n", "-m", "t", &why));
	CHECK_STR(why, "model must start with a letter, digit or underscore");
	CHECK(!oa_name_from_parts(&n, "h\xc3\xa9", "n", "m", "t", &why));
	CHECK_STR(why, "host contains a non-ASCII byte");
	CHECK(!oa_name_part_valid(OA_PART_TAG, "t!", 2, &why));
	CHECK_STR(why, "contains a character not allowed here");
	char long_tag[82];
	memset(long_tag, 'a', 81);
	long_tag[81] = 0;
	CHECK(!oa_name_from_parts(&n, "h", "n", "m", long_tag, &why));
	long_tag[80] = 0;
	CHECK(oa_name_from_parts(&n, "h", "n", "m", long_tag, &why));
	CHECK(!oa_name_parse("a/b/c/d", &n)); /* a host cannot hold "/" */
	CHECK(!oa_name_parse("model:", &n));
	CHECK(!oa_name_parse("/model", &n));
	CHECK(!oa_name_parse("m@sha256:abc", &n));

	oa_name a, b;
	CHECK(oa_name_parse("LLAMA3.2:Latest", &a));
	CHECK(oa_name_parse("llama3.2", &b));
	CHECK(oa_name_equal_fold(&a, &b));

	/* follows types/model/name.go: ParseNameBare + Merge: an empty host after
	 * the scheme is filled with the default host */
	CHECK(oa_name_parse("https:///namespace/model:tag", &n));
	CHECK_STR(n.host, "registry.ollama.ai");
	CHECK_STR(n.ns, "namespace");
	CHECK(!oa_name_parse("/namespace/model:tag", &n)); /* no scheme: the host is missing */
}

/* follows internal/modelref/modelref.go: ParseRef and NormalizePullName, as
 * server/model_resolver.go: parseNormalizePullModelRef applies them before
 * ParseName (the DeleteHandler path). */
static void test_name_refs(void)
{
	const struct { const char *in, *want; } ok[] = {
		{ "  model:tag  ", "registry.ollama.ai/library/model:tag" },
		{ "\tmodel", "registry.ollama.ai/library/model:latest" },
		{ "model\n\xc2\xa0", "registry.ollama.ai/library/model:latest" }, /* U+00A0 */
		{ "foo:local", "registry.ollama.ai/library/foo:latest" },
		{ "model:tag:local", "registry.ollama.ai/library/model:tag" },
		{ "model:tag:LOCAL", "registry.ollama.ai/library/model:tag" },
		{ "gpt-oss:120b:cloud", "registry.ollama.ai/library/gpt-oss:120b-cloud" },
		{ "gpt-oss:120b-cloud", "registry.ollama.ai/library/gpt-oss:120b-cloud" },
		{ "gpt-oss:cloud", "registry.ollama.ai/library/gpt-oss:cloud" },
		{ "host:5000/ns/m:cloud", "host:5000/ns/m:cloud" },
		{ "https:///namespace/model:tag", "registry.ollama.ai/namespace/model:tag" },
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		oa_name n;
		char buf[OA_NAME_DISPLAY_MAX];
		const char *why = NULL;
		bool parsed = oa_name_parse_ref(ok[i].in, &n, &why);
		CHECK(parsed);
		snprintf(buf, sizeof buf, "%s/%s/%s:%s", n.host, n.ns, n.model, n.tag);
		CHECK_STR(buf, ok[i].want);
	}
	oa_name n;
	const char *why = NULL;
	CHECK(!oa_name_parse_ref("m:local:cloud", &n, &why)); /* both sources */
	CHECK(why && strstr(why, "not both"));
	CHECK(!oa_name_parse_ref("   ", &n, &why));
	CHECK(!oa_name_parse_ref("model:tag:x", &n, &why)); /* ":" is not a tag byte */
}

/* follows cmd/cmd.go: ListHandler's prefix filter, strings.HasPrefix of
 * both sides through strings.ToLower (Go's simple case mapping) */
static void test_name_prefix(void)
{
	CHECK(oa_name_has_prefix_fold("kimi:latest", "\xe2\x84\xaa")); /* U+212A KELVIN SIGN */
	CHECK(oa_name_has_prefix_fold("kimi:latest", "\xe2\x84\xaaIM"));
	CHECK(oa_name_has_prefix_fold("iris:latest", "\xc4\xb0")); /* U+0130: Go lowers it to 'i' */
	CHECK(oa_name_has_prefix_fold("Demo:1b", "dEMO"));
	CHECK(!oa_name_has_prefix_fold("kimi:latest", "\xe2\x84\xab")); /* U+212B lowers to a non-ASCII letter */
	CHECK(!oa_name_has_prefix_fold("kimi:latest", "\xe2\x84")); /* a cut sequence matches nothing */
	CHECK(!oa_name_has_prefix_fold("km", "kmx"));
	CHECK(oa_name_has_prefix_fold("anything", ""));
}

static void test_reference_manifests(void)
{
	const char *src = getenv("OA_SOURCE_DIR");
	char *path = oa_xasprintf("%s/fixtures/reference/expected.json", src ? src : ".");
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err);
	free(path);
	CHECK(root != NULL);
	if (!root)
		return;
	size_t i;
	json_t *e;
	size_t seen = 0;
	json_array_foreach(json_object_get(root, "manifests"), i, e) {
		char *file = oa_xasprintf("%s/fixtures/reference/%s", src ? src : ".",
		                          json_string_value(json_object_get(e, "file")));
		uint8_t *bytes;
		size_t len;
		CHECK(oa_read_file_at(AT_FDCWD, file, 1 << 20, &bytes, &len) == 0);
		free(file);
		oa_manifest m;
		char msg[256];
		CHECK(oa_manifest_parse(bytes, len, &m, msg, sizeof msg) == 0);
		const char *digest = json_string_value(json_object_get(e, "digest"));
		CHECK_STR(m.id, digest + 7);
		CHECK_U64(m.size, json_integer_value(json_object_get(e, "size")));
		CHECK_U64(m.id_len, len); /* registry manifests: the whole file is hashed */
		for (size_t l = 0; l < m.n_layers; l++)
			CHECK(m.layers[l].digest_valid);
		char human[32];
		oa_human_bytes(m.size, human, sizeof human);
		CHECK_STR(human, json_string_value(json_object_get(e, "size_human")));
		oa_manifest_free(&m);
		free(bytes);
		seen++;
	}
	CHECK_U64(seen, 6);
	json_decref(root);
}

#define HEX_A "a9d0a3e1c2b4f5061728394a5b6c7d8e9f00112233445566778899aabbccddee"

/* A digest is stored once per store: a layer's hex is the digits inside its
 * digest; a digest written "sha256:" + lower-case hex is one string shared
 * by every manifest parsed into the store's set, and lives while one of
 * them does. Without a set, or in another store's, nothing is shared: no
 * state outlives the store. */
static void test_manifest_digest_once(void)
{
	const char *s = "{\"layers\":[{\"digest\":\"sha256:" HEX_A "\"},{\"digest\":\"sha256-" HEX_A "\"}],"
	                "\"config\":{\"digest\":\"sha256:" HEX_A "\"}}";
	oa_digest_set *set = oa_digest_set_new(), *other = oa_digest_set_new();
	oa_manifest a, b, c, d;
	char err[256];
	CHECK(oa_manifest_parse_in(set, (const uint8_t *)s, strlen(s), &a, err, sizeof err) == 0);
	CHECK(oa_manifest_parse_in(set, (const uint8_t *)s, strlen(s), &b, err, sizeof err) == 0);
	CHECK(oa_manifest_parse_in(other, (const uint8_t *)s, strlen(s), &c, err, sizeof err) == 0);
	CHECK(oa_manifest_parse((const uint8_t *)s, strlen(s), &d, err, sizeof err) == 0);
	CHECK(a.layers[0].digest == b.layers[0].digest && a.config.digest == a.layers[0].digest);
	CHECK(c.layers[0].digest != a.layers[0].digest && d.layers[0].digest != a.layers[0].digest);
	CHECK(d.config.digest != d.layers[0].digest);
	CHECK(a.layers[0].hex == a.layers[0].digest + 7);
	CHECK(a.layers[1].digest != a.layers[0].digest); /* "sha256-": as written, in the block */
	CHECK_STR(a.layers[1].digest, "sha256-" HEX_A);
	CHECK_STR(a.layers[1].hex, HEX_A);
	oa_manifest_free(&a);
	CHECK_STR(b.layers[0].digest, "sha256:" HEX_A); /* still b's after a is freed */
	CHECK_STR(b.config.hex, HEX_A);
	oa_manifest_free(&b);
	CHECK(oa_manifest_parse_in(set, (const uint8_t *)s, strlen(s), &a, err, sizeof err) == 0);
	CHECK_STR(a.layers[0].digest, "sha256:" HEX_A);
	oa_manifest_free(&a);
	CHECK_STR(c.layers[0].digest, "sha256:" HEX_A);
	CHECK_STR(d.layers[0].digest, "sha256:" HEX_A);
	oa_manifest_free(&c);
	oa_manifest_free(&d);
	oa_digest_set_free(set);
	oa_digest_set_free(other);
}

static void test_manifest_parse(void)
{
	oa_manifest m;
	char err[256];
	/* Unknown fields ignored, ";" parameters split off, case-insensitive keys. */
	const char *s = "{\"SchemaVersion\":2,\"extra\":[1,2],\"config\":{\"digest\":\"\",\"size\":0},"
	                "\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.tensor; name=x\","
	                "\"digest\":\"sha256:" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF"
	                "\",\"size\":7,\"name\":\"w\",\"dtype\":\"BF16\"}]}garbage";
	CHECK(oa_manifest_parse((const uint8_t *)s, strlen(s), &m, err, sizeof err) == 0);
	CHECK_U64(m.schema_version, 2);
	CHECK_U64(m.n_layers, 1);
	CHECK(m.layers[0].kind == OA_LAYER_TENSOR);
	CHECK(m.layers[0].digest_valid);
	CHECK(m.layers[0].hex_uppercase);
	CHECK_STR(m.layers[0].name, "w");
	CHECK_STR(m.layers[0].media_type, "application/vnd.ollama.image.tensor; name=x");
	CHECK_STR(m.layers[0].digest, "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF");
	CHECK(m.layers[0].from == NULL);
	CHECK_STR(m.config.digest, "");
	CHECK_STR(m.runner, "");
	CHECK_U64(m.size, 7);
	CHECK(m.block != NULL); /* everything in one allocation: what oa_manifest_free frees */
	CHECK_STR(m.layers[0].hex, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	CHECK_STR(m.config.hex, "");
	oa_manifest_free(&m);
	test_manifest_digest_once();
	/* A list: its entries and their strings in the block too. */
	const char *list = "{\"mediaType\":\"" OA_MEDIA_MANIFEST_LIST "\",\"manifests\":[{\"digest\":\"d\","
	                   "\"runner\":\"mlx\",\"layers\":[]},{\"format\":\"gguf\"}]}";
	CHECK(oa_manifest_parse((const uint8_t *)list, strlen(list), &m, err, sizeof err) == 0);
	CHECK(m.is_list && m.block != NULL);
	CHECK_U64(m.n_manifests, 2);
	CHECK_STR(m.entries[0].digest, "d");
	CHECK_STR(m.entries[0].runner, "mlx");
	CHECK(m.entries[0].inline_json != NULL);
	CHECK_STR(m.entries[1].format, "gguf");
	CHECK(m.entries[1].inline_json == NULL);
	oa_manifest_free(&m);

	/* Go: every case variant of a field name is assigned in order; last wins. */
	const char *twice = "{\"Layers\":[],\"layers\":[{\"size\":5}]}";
	CHECK(oa_manifest_parse((const uint8_t *)twice, strlen(twice), &m, err, sizeof err) == 0);
	CHECK_U64(m.n_layers, 1);
	oa_manifest_free(&m);
	const char *twice2 = "{\"layers\":[{\"size\":5}],\"LAYERS\":[]}";
	CHECK(oa_manifest_parse((const uint8_t *)twice2, strlen(twice2), &m, err, sizeof err) == 0);
	CHECK_U64(m.n_layers, 0);
	oa_manifest_free(&m);

	/* A struct field: null does nothing, objects merge (Go fills the fields
	 * each one names). */
	const char *cfgnull = "{\"config\":{\"digest\":\"sha256:"
	                      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	                      "\",\"size\":3},\"Config\":null}";
	CHECK(oa_manifest_parse((const uint8_t *)cfgnull, strlen(cfgnull), &m, err, sizeof err) == 0);
	CHECK(m.config.digest_valid);
	CHECK_U64(m.config.size, 3);
	oa_manifest_free(&m);
	const char *cfgmerge = "{\"config\":{\"digest\":\"sha256:"
	                       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	                       "\",\"size\":3},\"Config\":{\"size\":7}}";
	CHECK(oa_manifest_parse((const uint8_t *)cfgmerge, strlen(cfgmerge), &m, err, sizeof err) == 0);
	CHECK(m.config.digest_valid);
	CHECK_U64(m.config.size, 7);
	CHECK_U64(m.size, 7);
	oa_manifest_free(&m);
	/* A slice field: null sets it to nil. */
	const char *layersnull = "{\"layers\":[{\"size\":5}],\"Layers\":null}";
	CHECK(oa_manifest_parse((const uint8_t *)layersnull, strlen(layersnull), &m, err, sizeof err) == 0);
	CHECK_U64(m.n_layers, 0);
	oa_manifest_free(&m);

	const char *bad[] = {
		"", "not json", "[1,2]", "{\"layers\":{}}", "{\"layers\":[{\"size\":\"7\"}]}",
		"{\"layers\":[{\"size\":1.5}]}", "{\"config\":[]}", "{\"layers\":[",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(oa_manifest_parse((const uint8_t *)bad[i], strlen(bad[i]), &m, err, sizeof err) < 0);
		CHECK(strlen(err) > 0);
		oa_manifest_free(&m);
	}
	/* Digests that must never become paths. */
	char hex[65];
	CHECK(!oa_digest_parse("sha256:../../etc/passwd", hex, NULL));
	CHECK(!oa_digest_parse("sha512:0123", hex, NULL));
	CHECK(!oa_digest_parse("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", hex, NULL));
	CHECK(oa_digest_parse("sha256-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", hex, NULL));
}

static void test_decoder_boundary(void)
{
	/* A locally written manifest ending "}\n" of 513 bytes: Go's decoder
	 * reads 512 bytes first, sees the closing brace, and never hashes the
	 * newline (spec §4.1). At 514 bytes the brace is at 513 and the next read
	 * (to 1536) pulls the newline in. */
	for (size_t total = 500; total < 1600; total++) {
		uint8_t *buf = oa_xmalloc(total);
		memset(buf, ' ', total);
		buf[0] = '{';
		buf[total - 2] = '}';
		buf[total - 1] = '\n';
		size_t h = oa_manifest_hashed_length(buf, total);
		size_t want = total == 513 ? 512 : total == 1537 ? 1536 : total;
		if (h != want)
			fprintf(stderr, "total %zu: hashed %zu, want %zu\n", total, h, want);
		CHECK_U64(h, want);
		free(buf);
	}
	const char *nested = "{\"a\":\"}\\\"}\",\"b\":[{}]}  ";
	CHECK_U64(oa_json_value_end((const uint8_t *)nested, strlen(nested)), strlen(nested) - 2);
}

static void test_config(void)
{
	oa_config c;
	char err[256];
	const char *s = "{\"model_format\":\"gguf\",\"model_family\":\"llama\",\"model_families\":[\"llama\"],"
	                "\"model_type\":\"8.0B\",\"file_type\":\"Q4_0\",\"architecture\":\"amd64\",\"os\":\"linux\","
	                "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]},\"capabilities\":[\"completion\"],"
	                "\"remote_host\":\"https://ollama.com:443\",\"context_length\":8192,\"future\":{}}\n";
	CHECK(oa_config_parse((const uint8_t *)s, strlen(s), &c, err, sizeof err) == 0);
	CHECK_STR(c.model_family, "llama");
	CHECK_U64(c.n_families, 1);
	CHECK(!c.families_null);
	CHECK_STR(c.remote_host, "https://ollama.com:443");
	CHECK_U64(c.context_length, 8192);
	CHECK(c.has_rootfs);
	CHECK_STR(c.model_families[0], "llama");
	CHECK_U64(c.n_capabilities, 1);
	CHECK_STR(c.capabilities[0], "completion");
	CHECK_STR(c.os, "linux");
	CHECK_STR(c.renderer, "");
	CHECK(c.block != NULL); /* strings and arrays in one allocation */
	oa_config_free(&c);
	const char *mlx = "{\"model_format\":\"safetensors\",\"model_family\":\"\",\"model_families\":null}";
	CHECK(oa_config_parse((const uint8_t *)mlx, strlen(mlx), &c, err, sizeof err) == 0);
	CHECK(c.families_null);
	CHECK_STR(c.file_type, "");
	oa_config_free(&c);
	const char *bad[] = { "", "{", "[]", "{\"model_format\":1}", "{\"capabilities\":[1]}",
	                      "{\"context_length\":\"8k\"}" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(oa_config_parse((const uint8_t *)bad[i], strlen(bad[i]), &c, err, sizeof err) < 0);
		CHECK(c.model_format != NULL); /* still safe to print */
		oa_config_free(&c);
	}
}

static void test_human(void)
{
	char b[64];
	const struct { int64_t n; const char *s; } bytes[] = {
		{ 2019393189, "2.0 GB" }, { 23808463794LL, "23 GB" }, { 274302450, "274 MB" },
		{ 270898672, "270 MB" }, { 999, "999 B" }, { 1000, "1 KB" }, { 1500, "1.5 KB" },
		{ 4683087332LL, "4.7 GB" }, { 7901829417LL, "7.9 GB" }, { 1000000000000LL, "1 TB" },
		{ 0, "0 B" },
		/* follows format/bytes.go: HumanBytes, whose unit switch no negative
		 * size reaches, so it prints the plain integer */
		{ -1, "-1 B" }, { -1000, "-1000 B" }, { -5000000000LL, "-5000000000 B" },
	};
	for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
		oa_human_bytes(bytes[i].n, b, sizeof b);
		CHECK_STR(b, bytes[i].s);
	}
	oa_format_size(1536, OA_UNITS_IEC, b, sizeof b);
	CHECK_STR(b, "1.5 KiB");
	oa_format_size(1536, OA_UNITS_BYTES, b, sizeof b);
	CHECK_STR(b, "1536");
	/* follows format/time.go: HumanTime and humanDuration, fed the age in
	 * nanoseconds (the server subtracts full-precision times). */
	const int64_t S = 1000000000, H = 3600 * S;
	const struct { int64_t d; const char *s; } times[] = {
		{ 0, "Less than a second ago" }, { S, "1 second ago" }, { 59 * S, "59 seconds ago" },
		{ 60 * S, "About a minute ago" }, { 3599 * S, "59 minutes ago" }, { H, "About an hour ago" },
		{ 47 * H, "47 hours ago" }, { 48 * H, "2 days ago" }, { 14 * 24 * H, "2 weeks ago" },
		{ 60 * 24 * H, "2 months ago" }, { 800 * 24 * H, "2 years ago" },
		{ -120 * S, "2 minutes from now" },
		/* A whole-second subtraction slips one step at each boundary: 59.4 s
		 * old with a .9 mtime fraction is 60 whole seconds apart. */
		{ 59 * S + 400000000, "59 seconds ago" }, { 59 * S + 999999999, "59 seconds ago" },
		{ S - 1, "Less than a second ago" }, { 2 * S - 1, "1 second ago" },
		{ 120 * S - 1, "About a minute ago" }, { 3600 * S - 1, "59 minutes ago" },
		/* hours round half away from zero: 1.5 h is 2 hours, just under is 1 */
		{ H + H / 2 - 1, "About an hour ago" }, { H + H / 2, "2 hours ago" },
		{ -(20 * 365 * 24 + 8759) * H, "20 years from now" },
		{ -(21 * 365 * 24) * H, "Forever" }, { INT64_MIN, "Forever" },
		{ INT64_MAX, "292 years ago" },
	};
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
		oa_human_age(times[i].d, b, sizeof b);
		CHECK_STR(b, times[i].s);
	}
	CHECK(oa_age_ns(40 * S + 900000000, 100 * S + 300000000) == 59 * S + 400000000);
	CHECK(oa_age_ns(INT64_MIN, 1) == INT64_MAX);
	CHECK(oa_age_ns(INT64_MAX, -1) == INT64_MIN);
	oa_iso8601(0, 0, b, sizeof b);
	CHECK_STR(b, "1970-01-01T00:00:00Z");
}

static void test_escape(void)
{
	char *e = oa_escape("a\nb\\c\xff\xc3\xa9", 8);
	CHECK_STR(e, "a\\x0ab\\\\c\\xff\xc3\xa9");
	free(e);
	/* C1 controls (CSI U+009B), bidi overrides/isolates and the paragraph
	 * separator (a line break to a page or a terminal) become \uNNNN */
	e = oa_escape("\xc2\x9b" "2J\xe2\x80\xae" "x\xe2\x81\xa6" "\xe2\x80\xa9", 14);
	CHECK_STR(e, "\\u009b2J\\u202ex\\u2066\\u2029");
	free(e);
	/* printable: the same escapes, a backslash kept: twice is once */
	char *p = oa_printable("a\\x1b\x1b[\xc2\x9d");
	CHECK_STR(p, "a\\x1b\\x1b[\\u009d");
	char *q = oa_printable(p);
	CHECK_STR(q, p);
	CHECK(oa_is_printable(p) && !oa_is_printable("\x1b"));
	free(p);
	free(q);
}

/* One strict grammar for every duration option (issue 11, defect 10). */
static void test_duration(void)
{
	static const struct { const char *s; double secs; } good[] = {
		{ "0", 0 }, { "5", 5 }, { "30s", 30 }, { "90m", 5400 }, { "1h", 3600 }, { "2d", 172800 },
		{ "0.5s", 0.5 }, { "1.5h", 5400 }, { "0.000001", 0.000001 }, { "007", 7 },
		{ "1000000000000", 1e12 },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		double d = -1;
		CHECK(oa_parse_duration(good[i].s, &d) == 0);
		CHECK(d == good[i].secs);
	}
	static const char *bad[] = {
		"", "0x10", "1e3", "0x1p4", " 5", "5 ", "+5", "-5", "-0", "5.", ".5", "1.h", "nan", "inf",
		"5ms", "5S", "5H", "h", "1h30m", "5sm", "5\n", "1000000000001", "11575000000d",
		"99999999999999999999999999", "18446744073709551617s",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		double d = 42;
		int rc = oa_parse_duration(bad[i], &d);
		if (rc == 0)
			fprintf(stderr, "duration '%s' accepted\n", bad[i]);
		CHECK(rc < 0);
		CHECK(d == 42);
	}
}

/* What took the name between open and commit is never renamed over. */
static void test_outfile_recheck(void)
{
	char dir[] = "/tmp/oa-outfile-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[64], err[256];
	snprintf(path, sizeof path, "%s/out", dir);
	oa_outfile o;
	CHECK(oa_outfile_open(&o, path, 0644, 0, err, sizeof err) == 0);
	CHECK(write(o.fd, "x\n", 2) == 2);
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(oa_outfile_commit(&o, err, sizeof err) < 0);
	struct stat st;
	CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(strstr(err, "not replaced") != NULL);
	/* the output is kept in the temporary file, which the user is told about */
	char tmp[96];
	snprintf(tmp, sizeof tmp, "%s/.out.%ld.tmp", dir, (long)getpid());
	CHECK(unlink(tmp) == 0);
	CHECK(unlink(path) == 0);
	CHECK(rmdir(dir) == 0);
}

/* oa_renameat_noreplace moves a file, a symlink (as itself) and a
 * directory, and never replaces what is at the new name: EEXIST, both left
 * as they were. */
static void test_rename_noreplace(void)
{
	char dir[] = "/tmp/oa-noreplace-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	int fd = openat(dfd, "a", O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, "a", 1) == 1);
	close(fd);
	CHECK(oa_renameat_noreplace(dfd, "a", dfd, "b") == 0);
	struct stat st;
	CHECK(fstatat(dfd, "a", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
	CHECK(symlinkat("b", dfd, "link") == 0);
	CHECK(oa_renameat_noreplace(dfd, "link", dfd, "b") < 0 && errno == EEXIST);
	CHECK(fstatat(dfd, "link", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode));
	CHECK(fstatat(dfd, "b", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_size == 1);
	CHECK(oa_renameat_noreplace(dfd, "link", dfd, "link2") == 0);
	CHECK(fstatat(dfd, "link2", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode));
	CHECK(mkdirat(dfd, "d", 0700) == 0 && mkdirat(dfd, "e", 0700) == 0);
	CHECK(oa_renameat_noreplace(dfd, "d", dfd, "e") < 0 && errno == EEXIST);
	CHECK(oa_renameat_noreplace(dfd, "d", dfd, "f") == 0);
	CHECK(fstatat(dfd, "f", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode));
	unlinkat(dfd, "b", 0);
	unlinkat(dfd, "link2", 0);
	unlinkat(dfd, "e", AT_REMOVEDIR);
	unlinkat(dfd, "f", AT_REMOVEDIR);
	close(dfd);
	CHECK(rmdir(dir) == 0);
}

/* OA_ALLOC_GROW keeps what is there, grows geometrically and dies cleanly
 * (exit 8, "out of memory") rather than wrapping when the size overflows. */
/* An OOM handler: exit 8 when told the size overflowed, 9 otherwise. */
static void exit_with_size_check(size_t bytes)
{
	_exit(bytes == SIZE_MAX ? 8 : 9);
}

static void test_alloc_grow(void)
{
	size_t *v = NULL, n = 0, cap = 0, reallocs = 0;
	for (size_t i = 0; i < 1000; i++) {
		size_t before = cap;
		OA_ALLOC_GROW(v, n + 1, cap);
		reallocs += cap != before;
		v[n++] = i;
	}
	CHECK(cap >= 1000);
	CHECK(reallocs <= 8);
	size_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	CHECK_U64(sum, 999 * 1000 / 2);
	size_t had = cap;
	OA_ALLOC_GROW(v, 3, cap);
	CHECK_U64(cap, had);
	/* Running out: the program's handler decides (the CLI's exits 8); with
	 * none, or when it returns, the library aborts: it never exits for its
	 * caller. */
	for (int with_handler = 0; with_handler <= 1; with_handler++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			close(2);
			if (with_handler)
				oa_set_oom_handler(exit_with_size_check);
			OA_ALLOC_GROW(v, SIZE_MAX / 4, cap); /* * sizeof(size_t) overflows */
			_exit(0);
		}
		int st = 0;
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
		if (with_handler)
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 8);
		else
			CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	}
	free(v);
}

static void test_strset(void)
{
	oa_strset set = { 0 };
	CHECK(!oa_strset_has(&set, "a")); /* empty: no table yet */
	char keys[500][40];
	for (int i = 0; i < 500; i++) {
		snprintf(keys[i], sizeof keys[i], "manifests/m%d/latest", i);
		CHECK(oa_strset_add(&set, keys[i]));
	}
	CHECK_U64(set.n, 500);
	char probe[40];
	for (int i = 0; i < 500; i++) {
		snprintf(probe, sizeof probe, "manifests/m%d/latest", i); /* equal, not the same pointer */
		CHECK(oa_strset_has(&set, probe));
		CHECK(!oa_strset_add(&set, probe));
	}
	CHECK(!oa_strset_has(&set, "manifests/m500/latest"));
	CHECK(!oa_strset_has(&set, "manifests/m1/lates"));
	CHECK_U64(set.n, 500);
	oa_strset_free(&set);
	CHECK(!oa_strset_has(&set, keys[0]));
}

/* oa_model_name_is compares in place: exact, folded, and an unset name. */
static void test_model_name_is(void)
{
	oa_name n, other;
	CHECK(oa_name_parse_ref("Library/Tiny:Latest", &n, NULL));
	oa_model_name mn = { 0 };
	oa_name empty;
	memset(&empty, 0, sizeof empty);
	CHECK(oa_model_name_is(&mn, &empty, false)); /* unset reads as four empty parts */
	CHECK(!oa_model_name_is(&mn, &n, true));
	oa_model_name_set(&mn, &n);
	CHECK(oa_model_name_is(&mn, &n, false));
	CHECK(oa_name_parse_ref("library/tiny:latest", &other, NULL));
	CHECK(!oa_model_name_is(&mn, &other, false));
	CHECK(oa_model_name_is(&mn, &other, true));
	CHECK(oa_name_parse_ref("library/tiny:late", &other, NULL));
	CHECK(!oa_model_name_is(&mn, &other, true));
	CHECK(!oa_model_name_is(&mn, &empty, true));
	oa_model_name_free(&mn);
}

/* The scan's small helpers (issue 21 rewrote them for speed): hex by
 * table, the manifests-key probe, sha256 in hex, a directory listing. */
static void test_scan_helpers(void)
{
	CHECK(oa_is_hex("09afAF", 6));
	CHECK(!oa_is_hex("09ag", 4));
	CHECK(!oa_is_hex("0a\0ff", 5)); /* stops at the NUL */
	CHECK(oa_is_hex("", 0));
	static const char *const yes[] = { "{\"manifests\":[]}", "{\"MANIFESTS\":1}", "{\"manife\305\277ts\":1}",
	                                   "{\"x\":\"\\u006d\"}", "xx\\u" };
	static const char *const no[] = { "", "m", "{\"manifest\":1}", "{\"layers\":[]}", "ends in \\", "\\x" };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		CHECK(oa_mentions_manifests_key((const uint8_t *)yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		CHECK(!oa_mentions_manifests_key((const uint8_t *)no[i], strlen(no[i])));
	oa_digest_hex hex;
	oa_sha256_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	char dir[] = "/tmp/oa-unit-dir-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	static const char *const names[] = { "b", "a", ".hidden", "c-dir" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *p = oa_path_join(dir, names[i]);
		if (i == 3)
			CHECK(mkdir(p, 0700) == 0);
		else
			close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
		free(p);
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	oa_dir_list l;
	CHECK(oa_dir_read(fd, &l) == 0);
	CHECK_U64(l.n, 4);
	if (l.n == 4) {
		CHECK_STR(l.v[0].name, ".hidden");
		CHECK_STR(l.v[1].name, "a");
		CHECK_STR(l.v[3].name, "c-dir");
		CHECK(l.v[3].type == OA_DT_DIR || l.v[3].type == OA_DT_UNKNOWN);
		CHECK(l.v[1].type == OA_DT_REG || l.v[1].type == OA_DT_UNKNOWN);
	}
	struct stat st;
	CHECK(fstatat(fd, "a", &st, 0) == 0); /* the fd is still usable */
	oa_dir_list_free(&l);
	close(fd);
	CHECK(oa_dir_read(-1, &l) == EBADF && l.n == 0);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *p = oa_path_join(dir, names[i]);
		remove(p);
		free(p);
	}
	rmdir(dir);
}

static int by_key(const void *a, const void *b, const void *keys)
{
	const int *k = keys;
	return k[*(const size_t *)a] - k[*(const size_t *)b];
}

/* oa_sort: the comparison gets its context, and equal keys keep their
 * order, whatever the C library's qsort would do. */
static void test_sort(void)
{
	const int keys[] = { 3, 1, 2, 1, 3, 0, 2, 1 };
	size_t order[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	oa_sort(order, 8, sizeof *order, by_key, keys);
	const size_t want[] = { 5, 1, 3, 7, 2, 6, 0, 4 };
	for (size_t i = 0; i < 8; i++)
		CHECK(order[i] == want[i]);
	oa_sort(order, 0, sizeof *order, by_key, keys); /* nothing to sort: nothing touched */
	CHECK(order[0] == 5);
	unsigned long long a = oa_run_sequence(), b = oa_run_sequence();
	CHECK(a >= 1 && b == a + 1);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	test_names();
	test_name_refs();
	test_name_prefix();
	test_reference_manifests();
	test_manifest_parse();
	test_decoder_boundary();
	test_config();
	test_human();
	test_escape();
	test_duration();
	test_outfile_recheck();
	test_rename_noreplace();
	test_alloc_grow();
	test_strset();
	test_model_name_is();
	test_scan_helpers();
	test_sort();
	TEST_MAIN_END();
}
