/* config.c - ConfigV2 parsing. */
#include "ollama_audit/config.h"
#include "base/jsonutil.h"
#include "base/pack.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fetch an optional string field; false when present with another type. */
static bool get_str(json_t *obj, const char *key, char **out)
{
	json_t *v = oa_json_get_fold(obj, key);
	*out = NULL;
	if (!v || json_is_null(v)) {
		*out = oa_xstrdup("");
		return true;
	}
	if (!json_is_string(v)) {
		*out = oa_xstrdup("");
		return false;
	}
	*out = oa_xstrndup(json_string_value(v), json_string_length(v));
	return true;
}

static bool get_int(json_t *obj, const char *key, int64_t *out)
{
	json_t *v = oa_json_get_fold(obj, key);
	*out = 0;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_integer(v))
		return false;
	*out = json_integer_value(v);
	return true;
}

static bool get_str_array(json_t *obj, const char *key, char ***out, size_t *n, bool *was_null)
{
	json_t *v = oa_json_get_fold_slice(obj, key);
	*out = NULL;
	*n = 0;
	if (was_null)
		*was_null = true;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_array(v))
		return false;
	if (was_null)
		*was_null = false;
	size_t count = json_array_size(v);
	*out = oa_xcalloc(count, sizeof **out);
	for (size_t i = 0; i < count; i++) {
		json_t *e = json_array_get(v, i);
		if (!json_is_string(e))
			return false;
		(*out)[i] = oa_xstrdup(json_string_value(e));
		*n = i + 1;
	}
	return true;
}

/* The strings a config names, in the order pack() moves them. */
static size_t config_strings(oa_config *c, char ***out)
{
	char **strs[] = { &c->model_format, &c->model_family, &c->model_type, &c->file_type,
	                  &c->renderer, &c->parser, &c->requires, &c->remote_host,
	                  &c->remote_model, &c->base_name, &c->draft_format,
	                  &c->draft_architecture, &c->architecture, &c->os };
	size_t n = sizeof strs / sizeof strs[0];
	memcpy(out, strs, sizeof strs);
	return n;
}

/* Both passes of pack() over the config's strings. */
static void pack_strings(oa_pack *p, void *rec)
{
	oa_config *c = rec;
	char **strs[16];
	size_t n = config_strings(c, strs);
	for (size_t i = 0; i < n; i++)
		oa_pack_str(p, strs[i]);
	for (size_t i = 0; i < c->n_families; i++)
		oa_pack_str(p, &c->model_families[i]);
	for (size_t i = 0; i < c->n_capabilities; i++)
		oa_pack_str(p, &c->capabilities[i]);
}

/* Every string and array of c into one block (a config is some twenty
 * small strings, most of them "": 500 bytes of malloc chunks per tag). */
static void pack(oa_config *c)
{
	const oa_pack_array arrays[] = {
		{ &c->model_families, c->n_families, sizeof *c->model_families },
		{ &c->capabilities, c->n_capabilities, sizeof *c->capabilities },
	};
	c->block = oa_pack_record(arrays, 2, pack_strings, c);
}

int oa_config_parse(const uint8_t *bytes, size_t len, oa_config *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	json_error_t jerr;
	json_t *root = oa_json_loadb_go(bytes, len, JSON_DISABLE_EOF_CHECK, &jerr);
	const char *bad = NULL;
	if (!root) {
		snprintf(err, errlen, len ? "not JSON: %s at byte %d" : "empty file", jerr.text,
		         jerr.position);
		/* leave every string allocated so callers can print fields blindly */
		root = json_object();
		bad = "";
	} else if (!json_is_object(root)) {
		snprintf(err, errlen, "top-level JSON value is not an object");
		json_decref(root);
		root = json_object();
		bad = "";
	}
	const struct { const char *key; char **dst; } strs[] = {
		{ "model_format", &c->model_format }, { "model_family", &c->model_family },
		{ "model_type", &c->model_type },     { "file_type", &c->file_type },
		{ "renderer", &c->renderer },         { "parser", &c->parser },
		{ "requires", &c->requires },         { "remote_host", &c->remote_host },
		{ "remote_model", &c->remote_model }, { "base_name", &c->base_name },
		{ "architecture", &c->architecture }, { "os", &c->os },
	};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		if (!get_str(root, strs[i].key, strs[i].dst) && !bad)
			bad = strs[i].key;
	if (!get_str_array(root, "model_families", &c->model_families, &c->n_families,
	                   &c->families_null) && !bad)
		bad = "model_families";
	if (!get_str_array(root, "capabilities", &c->capabilities, &c->n_capabilities, NULL) && !bad)
		bad = "capabilities";
	if (!get_int(root, "context_length", &c->context_length) && !bad)
		bad = "context_length";
	if (!get_int(root, "embedding_length", &c->embedding_length) && !bad)
		bad = "embedding_length";
	json_t *draft = oa_json_get_fold_struct(root, "draft");
	if (draft && json_is_object(draft)) {
		if ((!get_str(draft, "model_format", &c->draft_format) ||
		     !get_str(draft, "architecture", &c->draft_architecture)) && !bad)
			bad = "draft";
	} else if (draft && !bad) {
		bad = "draft";
	}
	json_decref(draft);
	if (!c->draft_format)
		c->draft_format = oa_xstrdup("");
	if (!c->draft_architecture)
		c->draft_architecture = oa_xstrdup("");
	c->has_rootfs = oa_json_get_fold(root, "rootfs") != NULL;
	json_decref(root);
	pack(c);
	if (bad) {
		if (*bad)
			snprintf(err, errlen, "field \"%s\" has the wrong JSON type", bad);
		return -1;
	}
	return 0;
}

void oa_config_free(oa_config *c)
{
	if (c->block) {
		free(c->block);
		memset(c, 0, sizeof *c);
		return;
	}
	char **strs[16];
	size_t n = config_strings(c, strs);
	for (size_t i = 0; i < n; i++)
		free(*strs[i]);
	for (size_t i = 0; i < c->n_families; i++)
		free(c->model_families[i]);
	free(c->model_families);
	for (size_t i = 0; i < c->n_capabilities; i++)
		free(c->capabilities[i]);
	free(c->capabilities);
	memset(c, 0, sizeof *c);
}
