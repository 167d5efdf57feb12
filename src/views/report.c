/* report.c - JSON views of stores, models and findings. */
#include "ollama_audit/report.h"
#include "ollama_audit/discover.h"
#include "ollama_audit/records.h"
#include "ollama_audit/manifest_list.h"
#include "ollama_audit/headers.h"
#include "base/jsonutil.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/model.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* jansson rejects invalid UTF-8; names and paths from disk may hold it. */
static json_t *jstr(const char *s)
{
	return oa_json_str(s);
}

static json_t *u64(uint64_t n)
{
	return json_integer((json_int_t)(n > INT64_MAX ? INT64_MAX : n));
}

/* Split a file's mtime into seconds and nanoseconds (floor division, so a
 * time before 1970 still has 0 <= nsec < 1e9). */
static void mtime_split(const oa_file_info *st, time_t *sec, long *nsec)
{
	int64_t ns = st->mtime_ns;
	int64_t s = ns / 1000000000, r = ns % 1000000000;
	if (r < 0)
		r += 1000000000, s--;
	*sec = (time_t)s;
	*nsec = (long)r;
}

/* A file's mtime, RFC 3339, with nanoseconds where the file system has them. */
static json_t *mtime_iso(const oa_file_info *st)
{
	char buf[64];
	time_t sec;
	long nsec;
	mtime_split(st, &sec, &nsec);
	oa_iso8601(sec, nsec, buf, sizeof buf);
	return json_string(buf);
}

static json_t *full_name(const oa_model *m)
{
	char buf[OA_NAME_DISPLAY_MAX];
	snprintf(buf, sizeof buf, "%s/%s/%s:%s", m->name.host, m->name.ns, m->name.model, m->name.tag);
	return jstr(buf);
}

static json_t *families(const oa_model *m)
{
	if (m->config_state != OA_CONFIG_OK || m->cfg.families_null)
		return json_null();
	json_t *a = json_array();
	for (size_t i = 0; i < m->cfg.n_families; i++)
		json_array_append_new(a, jstr(m->cfg.model_families[i]));
	return a;
}

static json_t *caps(const oa_model *m)
{
	json_t *a = json_array();
	for (size_t i = 0; i < m->n_caps; i++)
		json_array_append_new(a, jstr(m->caps[i]));
	return a;
}

json_t *oa_report_tags_model(const oa_model *m)
{
	json_t *o = json_object();
	char go_time[64];
	time_t sec;
	long nsec;
	mtime_split(&m->st, &sec, &nsec);
	oa_go_time(sec, nsec, go_time, sizeof go_time);
	json_object_set_new(o, "name", jstr(m->display));
	json_object_set_new(o, "model", jstr(m->display));
	if (m->config_state == OA_CONFIG_OK && *m->cfg.remote_model)
		json_object_set_new(o, "remote_model", jstr(m->cfg.remote_model));
	if (m->config_state == OA_CONFIG_OK && *m->cfg.remote_host)
		json_object_set_new(o, "remote_host", jstr(m->cfg.remote_host));
	json_object_set_new(o, "modified_at", json_string(go_time));
	json_object_set_new(o, "size", json_integer(m->m.size));
	json_object_set_new(o, "digest", json_string(m->m.id));
	json_t *d = json_object();
	json_object_set_new(d, "parent_model", jstr(m->d_parent_model));
	json_object_set_new(d, "format", jstr(m->d_format));
	json_object_set_new(d, "family", jstr(m->d_family));
	json_object_set_new(d, "families", families(m));
	json_object_set_new(d, "parameter_size", jstr(m->d_parameter_size));
	json_object_set_new(d, "quantization_level", jstr(m->d_quantization));
	if (m->d_runner)
		json_object_set_new(d, "runner", jstr(m->d_runner));
	if (m->d_context_length)
		json_object_set_new(d, "context_length", json_integer(m->d_context_length));
	if (m->d_embedding_length)
		json_object_set_new(d, "embedding_length", json_integer(m->d_embedding_length));
	json_object_set_new(o, "details", d);
	if (m->n_caps)
		json_object_set_new(o, "capabilities", caps(m));
	return o;
}

const char *oa_report_owner(const oa_store *s)
{
	return s->owner;
}

json_t *oa_report_found_by(const oa_found_by *f, size_t n)
{
	json_t *found = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(found, json_pack("{s:o,s:o,s:o}", "source", oa_json_str(f[i].source), "detail",
		                                       oa_json_str(f[i].detail), "path", oa_json_str(f[i].path)));
	return found;
}

json_t *oa_store_record(const char *type, const char *schema, const char *host, const oa_store *s,
                        json_t *fields)
{
	json_t *rec = oa_record(type, schema, host, s->root, NULL);
	json_object_set_new(rec, "user", oa_json_str(oa_report_owner(s)));
	if (fields)
		json_object_update(rec, fields);
	return rec;
}

json_t *oa_report_store(const oa_store *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "path", jstr(s->input));
	json_object_set_new(o, "root", jstr(s->root));
	json_object_set_new(o, "user", oa_json_str(oa_report_owner(s)));
	/* One shape everywhere, the one `stores` gives: a store opened by
	 * --store or the default was reached one way, its path as given. */
	oa_found_by one = { (char *)s->how, NULL, s->input };
	json_object_set_new(o, "found_by", s->n_found ? oa_report_found_by(s->found, s->n_found)
	                                              : oa_report_found_by(&one, 1));
	json_object_set_new(o, "has_manifests", json_boolean(s->has_manifests));
	json_object_set_new(o, "has_blobs", json_boolean(s->has_blobs));
	return o;
}

/* Where the tag lives and, for a manifest list, its children (spec §2.5). */
static void tag_json(const oa_store *s, const oa_model *m, json_t *o)
{
	json_object_set_new(o, "tree", json_string(m->v2 ? "manifests-v2" : "manifests"));
	json_object_set_new(o, "tag_kind", json_string(m->tag_kind ? m->tag_kind : "file"));
	if (m->tag_blob) {
		char *d = oa_xasprintf("sha256:%s", m->tag_blob);
		json_object_set_new(o, "tag_blob", json_string(d));
		free(d);
	}
	json_object_set_new(o, "legacy_anchor", json_boolean(m->anchor));
	if (m->shadow) /* compatmigrate's llamacpp:<hex> legacy tag; null: its model is gone */
		json_object_set_new(o, "shadow_of", m->shadow_of ? json_string(m->shadow_of) : json_null());
	if (m->sibling || m->is_list) /* one row per child here (0.40) */
		json_object_set_new(o, "list_child", json_pack("{s:s, s:b}", "runner", oa_model_list_runner(m),
		                                               "in_use", !m->sibling && m->child >= 0));
	if (!m->is_list)
		return;
	json_t *l = json_object();
	char *d = oa_xasprintf("sha256:%s", m->list->id);
	json_object_set_new(l, "digest", json_string(d));
	free(d);
	json_object_set_new(l, "platform", json_string(s->platform ? s->platform : oa_platform_default()));
	json_t *kids = json_array();
	for (size_t i = 0; i < m->list->n_manifests; i++) {
		const oa_list_entry *e = &m->list->entries[i];
		json_t *k = json_object();
		json_object_set_new(k, "digest", jstr(e->digest));
		json_object_set_new(k, "runner", jstr(e->runner));
		json_object_set_new(k, "format", jstr(e->format));
		json_object_set_new(k, "inline", json_boolean(e->inline_json != NULL));
		json_object_set_new(k, "present", json_boolean(m->child_present[i]));
		json_object_set_new(k, "in_use", json_boolean((long)i == m->child));
		json_object_set_new(k, "pulled_here", json_boolean((long)i == m->child_pull));
		json_array_append_new(kids, k);
	}
	json_object_set_new(l, "children", kids);
	oa_conversion cv;
	if (oa_model_conversion(s, m, &cv)) /* compatmigrate's converted copy */
		json_object_set_new(l, "conversion", json_pack("{s:I,s:I,s:I}", "duplicated_bytes",
		                                               (json_int_t)cv.duplicated, "drop_llamacpp_frees_bytes",
		                                               (json_int_t)cv.drop_llamacpp, "drop_ggml_frees_bytes",
		                                               (json_int_t)cv.drop_ggml));
	json_object_set_new(o, "manifest_list", l);
}

const char *oa_report_schema(const char *command)
{
	static const struct { const char *command, *schema; } schemas[] = {
		{ "list", OA_SCHEMA_LIST },       { "show", OA_SCHEMA_SHOW },     { "check", OA_SCHEMA_CHECK },
		{ "verify", OA_SCHEMA_VERIFY },   { "du", OA_SCHEMA_DU },         { "prune", OA_SCHEMA_PRUNE },
		{ "rm", OA_SCHEMA_RM },           { "stores", OA_SCHEMA_STORES }, { "dedupe", OA_SCHEMA_DEDUPE },
		{ "history", OA_SCHEMA_HISTORY }, { "export", OA_SCHEMA_EXPORT }, { "import", OA_SCHEMA_IMPORT },
		{ "repair", OA_SCHEMA_REPAIR },
	};
	for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
		if (strcmp(schemas[i].command, command) == 0)
			return schemas[i].schema;
	return NULL;
}

json_t *oa_report_model(const oa_store *s, const oa_model *m)
{
	json_t *o = json_object();
	char short_id[13];
	snprintf(short_id, sizeof short_id, "%.12s", m->m.id);
	json_object_set_new(o, "name", jstr(m->display));
	json_object_set_new(o, "full_name", full_name(m));
	json_object_set_new(o, "id", json_string(short_id));
	json_object_set_new(o, "digest", json_string(m->m.id));
	json_object_set_new(o, "size", json_integer(m->m.size));
	json_object_set_new(o, "modified_at", mtime_iso(&m->st));
	json_object_set_new(o, "manifest_path", jstr(m->rel_path));
	json_object_set_new(o, "manifest_ok", json_boolean(m->manifest_ok));
	if (m->manifest_error)
		json_object_set_new(o, "manifest_error", jstr(m->manifest_error));
	static const char *const cfg_states[] = { "none", "ok", "missing", "invalid", "invalid-digest" };
	json_object_set_new(o, "config", json_string(cfg_states[m->config_state]));
	json_object_set_new(o, "format", json_string(oa_format_name(m->format)));
	json_object_set_new(o, "runner", json_string(oa_model_list_runner(m)));
	json_object_set_new(o, "arch", str_or_null(m->arch));
	json_object_set_new(o, "parameter_size", str_or_null(m->params));
	json_object_set_new(o, "quantization_level", str_or_null(m->quant));
	if (m->headers && m->headers->have_st_model && m->headers->st_model->params)
		json_object_set_new(o, "parameter_count", u64(m->headers->st_model->params));
	json_t *counts = json_object();
	for (int k = 0; k < OA_LAYER_KIND_COUNT; k++) {
		unsigned n = oa_model_layer_count(m, (enum oa_layer_kind)k);
		if (n)
			json_object_set_new(counts, oa_layer_kind_name(k), json_integer(n));
	}
	json_object_set_new(o, "layers", json_integer((json_int_t)m->m.n_layers));
	json_object_set_new(o, "layers_by_kind", counts);
	json_object_set_new(o, "missing_blobs", json_integer(m->missing_blobs));
	json_object_set_new(o, "disk_bytes", u64(m->disk_bytes));
	json_object_set_new(o, "apparent_bytes", u64(m->apparent_bytes));
	json_object_set_new(o, "hidden_from_list", json_boolean(m->hidden_from_list));
	json_object_set_new(o, "remote", json_boolean(m->remote));
	json_t *tags = oa_report_tags_model(m);
	json_object_set(o, "details", json_object_get(tags, "details"));
	json_decref(tags);
	json_object_set_new(o, "capabilities", caps(m));
	if (m->unservable)
		json_object_set_new(o, "unservable", json_string(m->unservable));
	tag_json(s, m, o);
	return o;
}

json_t *oa_report_finding(const oa_finding *f)
{
	json_t *o = json_object();
	json_object_set_new(o, "code", json_string(f->code));
	json_object_set_new(o, "severity", json_string(oa_severity_name(f->severity)));
	json_object_set_new(o, "model", jstr(f->model));
	json_object_set_new(o, "digest", jstr(f->digest));
	json_object_set_new(o, "path", jstr(f->path));
	json_object_set_new(o, "message", jstr(f->message));
	json_object_set_new(o, "fix", jstr(f->fix));
	return o;
}

static json_t *diag_json(oa_severity severity, const char *message)
{
	json_t *d = json_object();
	json_object_set_new(d, "severity", json_string(oa_severity_name(severity)));
	json_object_set_new(d, "message", jstr(message));
	return d;
}

static json_t *gguf_tensors_json(const oa_gguf_info *g)
{
	json_t *tv = json_array();
	for (size_t i = 0; i < g->n_tensors_kept; i++) {
		const oa_gguf_tensor *t = &g->tensors[i];
		json_t *to = json_object();
		json_object_set_new(to, "name", jstr(t->name));
		json_object_set_new(to, "type", jstr(oa_ggml_type_name(t->type)));
		json_t *shape = json_array();
		for (uint32_t d = 0; d < t->n_dims; d++)
			json_array_append_new(shape, u64(t->ne[d]));
		json_object_set_new(to, "shape", shape);
		json_object_set_new(to, "offset", u64(t->offset));
		json_object_set_new(to, "bytes", u64(t->nbytes));
		json_array_append_new(tv, to);
	}
	return tv;
}

/* What a GGUF header says (show --format json). */
static json_t *gguf_header_json(const oa_gguf_info *g, bool tensors)
{
	json_t *h = json_object();
	char human[32];
	json_object_set_new(h, "type", json_string("gguf"));
	json_object_set_new(h, "ok", json_boolean(g->ok));
	json_object_set_new(h, "version", json_integer(g->version));
	json_object_set_new(h, "endianness", json_string(g->big_endian ? "big" : "little"));
	json_object_set_new(h, "architecture", jstr(g->architecture));
	json_object_set_new(h, "general_type", jstr(g->general_type));
	json_object_set_new(h, "general_name", jstr(g->general_name));
	static const char *const kinds[] = { "unknown", "model", "projector", "adapter", "imatrix", "draft" };
	json_object_set_new(h, "kind", json_string(g->kind >= 0 && g->kind <= 5 ? kinds[g->kind] : "unknown"));
	if (g->has_file_type) {
		json_object_set_new(h, "file_type", json_integer(g->file_type));
		json_object_set_new(h, "file_type_ollama", jstr(oa_gguf_file_type_name(g)));
		json_object_set_new(h, "file_type_llama", jstr(oa_ftype_llama_name(g->file_type)));
	} else {
		json_object_set_new(h, "file_type", json_null());
	}
	if (g->file_type_guessed)
		json_object_set_new(h, "file_type_guess", jstr(oa_ftype_list_string(g->guessed_file_type)));
	json_object_set_new(h, "parameter_count", u64(g->parameter_count));
	oa_human_number(g->parameter_count, human, sizeof human);
	json_object_set_new(h, "parameter_size", json_string(human));
	json_object_set_new(h, "context_length", u64(g->context_length));
	json_object_set_new(h, "embedding_length", u64(g->embedding_length));
	json_object_set_new(h, "block_count", u64(g->block_count));
	json_object_set_new(h, "expert_count", u64(g->expert_count));
	json_object_set_new(h, "tokenizer_model", jstr(g->tokenizer_model));
	json_object_set_new(h, "vocab_size", u64(g->vocab_size));
	json_object_set_new(h, "kv_count", u64(g->kv_count));
	json_object_set_new(h, "tensor_count", u64(g->tensor_count));
	if (g->has_split) /* a shard of a llama.cpp gguf-split model */
		json_object_set_new(h, "split", json_pack("{s:I,s:I,s:o}", "no", (json_int_t)g->split_no, "count",
		                                          (json_int_t)g->split_count, "tensors_count",
		                                          g->split_tensors >= 0 ? json_integer(g->split_tensors)
		                                                                : json_null()));
	json_object_set_new(h, "alignment", u64(g->alignment));
	json_object_set_new(h, "data_offset", u64(g->data_offset));
	json_object_set_new(h, "header_bytes_read", u64(g->io_bytes_read));
	json_t *diags = json_array();
	for (size_t i = 0; i < g->n_diags; i++)
		json_array_append_new(diags, diag_json(g->diags[i].severity, g->diags[i].message));
	json_object_set_new(h, "diagnostics", diags);
	if (tensors)
		json_object_set_new(h, "tensors", gguf_tensors_json(g));
	return h;
}

static json_t *st_tensors_json(const oa_st_blob *st)
{
	json_t *tv = json_array();
	for (size_t i = 0; i < st->n_tensors; i++) {
		const oa_st_tensor *t = &st->tensors[i];
		json_t *to = json_object();
		json_object_set_new(to, "name", jstr(t->name));
		json_object_set_new(to, "dtype", jstr(t->dtype));
		json_t *shape = json_array();
		for (uint32_t d = 0; d < t->n_dims; d++)
			json_array_append_new(shape, u64(t->shape[d]));
		json_object_set_new(to, "shape", shape);
		json_object_set_new(to, "data_offsets", json_pack("[II]", (json_int_t)t->begin, (json_int_t)t->end));
		if (t->quant_type)
			json_object_set_new(to, "quant_type", jstr(t->quant_type));
		json_object_set_new(to, "companion", json_boolean(t->is_companion));
		json_array_append_new(tv, to);
	}
	return tv;
}

/* What a safetensors header says (show --format json). */
static json_t *st_header_json(const oa_st_blob *st, bool tensors)
{
	json_t *h = json_object();
	json_object_set_new(h, "type", json_string("safetensors"));
	json_object_set_new(h, "ok", json_boolean(st->ok));
	json_object_set_new(h, "header_length", u64(st->header_len));
	json_object_set_new(h, "tensor_count", json_integer((json_int_t)st->n_main));
	json_object_set_new(h, "companion_count", json_integer((json_int_t)st->n_companions));
	json_object_set_new(h, "packed", json_boolean(st->packed));
	json_object_set_new(h, "quant_type", jstr(st->quant_type));
	if (st->group_size)
		json_object_set_new(h, "group_size", u64(st->group_size));
	json_t *diags = json_array();
	for (size_t i = 0; i < st->n_diags; i++)
		json_array_append_new(diags, diag_json(st->diags[i].severity, st->diags[i].message));
	json_object_set_new(h, "diagnostics", diags);
	if (tensors)
		json_object_set_new(h, "tensors", st_tensors_json(st));
	return h;
}

static json_t *layer_json(const oa_store *s, const oa_model *m, const oa_layer *l,
                          const oa_blob *b, const oa_layer_header *lh, bool tensors)
{
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string(oa_layer_kind_name(l->kind)));
	json_object_set_new(o, "media_type", jstr(l->media_type));
	json_object_set_new(o, "digest", jstr(l->digest));
	json_object_set_new(o, "size", json_integer(l->size));
	if (l->name)
		json_object_set_new(o, "name", jstr(l->name));
	if (l->from)
		json_object_set_new(o, "from", jstr(l->from));
	json_object_set_new(o, "exists", json_boolean(b && !b->dangling && b->stat_ok));
	if (b && b->stat_ok) {
		char *p = oa_xasprintf("%s/blobs/%s", s->root, b->name);
		json_object_set_new(o, "path", jstr(p));
		free(p);
		json_object_set_new(o, "apparent_bytes", json_integer((json_int_t)b->st.size));
		json_object_set_new(o, "disk_bytes", json_integer((json_int_t)b->st.blocks * 512));
		if (b->is_symlink)
			json_object_set_new(o, "symlink_target", jstr(b->link_target));
	}
	if (lh && lh->have_gguf)
		json_object_set_new(o, "header", gguf_header_json(lh->gguf, tensors));
	else if (lh && lh->have_st)
		json_object_set_new(o, "header", st_header_json(lh->st, tensors));
	(void)m;
	return o;
}

json_t *oa_report_model_detail(const oa_store *s, const oa_model *m, bool tensors)
{
	json_t *o = oa_report_model(s, m);
	char *p = oa_path_join(s->root, m->rel_path);
	json_object_set_new(o, "manifest_file", jstr(p));
	free(p);
	json_object_set_new(o, "manifest_bytes", json_integer((json_int_t)m->manifest_bytes));
	json_object_set_new(o, "schema_version", json_integer(m->m.schema_version));
	json_object_set_new(o, "media_type", jstr(m->m.media_type));
	if (m->manifest_ok && *m->m.config.digest)
		json_object_set_new(o, "config_layer",
		                    layer_json(s, m, &m->m.config, m->config_blob, NULL, false));
	if (m->config_state == OA_CONFIG_OK) {
		const oa_config *c = &m->cfg;
		json_t *cf = json_object();
		json_object_set_new(cf, "model_format", jstr(c->model_format));
		json_object_set_new(cf, "model_family", jstr(c->model_family));
		json_object_set_new(cf, "model_families", families(m));
		json_object_set_new(cf, "model_type", jstr(c->model_type));
		json_object_set_new(cf, "file_type", jstr(c->file_type));
		const struct { const char *k, *v; } opt[] = {
			{ "renderer", c->renderer }, { "parser", c->parser }, { "requires", c->requires },
			{ "remote_host", c->remote_host }, { "remote_model", c->remote_model },
			{ "base_name", c->base_name }, { "architecture", c->architecture }, { "os", c->os },
		};
		for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
			if (opt[i].v && *opt[i].v)
				json_object_set_new(cf, opt[i].k, jstr(opt[i].v));
		json_t *cv = json_array();
		for (size_t i = 0; i < c->n_capabilities; i++)
			json_array_append_new(cv, jstr(c->capabilities[i]));
		json_object_set_new(cf, "capabilities", cv);
		if (c->context_length)
			json_object_set_new(cf, "context_length", json_integer(c->context_length));
		if (c->embedding_length)
			json_object_set_new(cf, "embedding_length", json_integer(c->embedding_length));
		if (*c->draft_format)
			json_object_set_new(cf, "draft", json_pack("{s:s,s:s}", "model_format", c->draft_format,
			                                           "architecture", c->draft_architecture));
		json_object_set_new(cf, "has_rootfs", json_boolean(c->has_rootfs));
		json_object_set_new(o, "config_fields", cf);
	} else if (m->config_error) {
		json_object_set_new(o, "config_error", jstr(m->config_error));
	}
	json_t *layers = json_array();
	for (size_t i = 0; i < m->m.n_layers; i++) {
		const oa_layer_header *lh = m->headers && i < m->headers->n_layers ? &m->headers->layers[i] : NULL;
		json_array_append_new(layers, layer_json(s, m, &m->m.layers[i],
		                                          m->layer_blobs ? m->layer_blobs[i] : NULL, lh, tensors));
	}
	json_object_set_new(o, "layer_list", layers);
	if (m->headers && m->headers->sharded) { /* a split GGUF: each model layer a shard */
		json_t *sh = json_array();
		for (size_t i = 0; i < m->m.n_layers; i++)
			if (m->m.layers[i].kind == OA_LAYER_MODEL)
				json_array_append_new(sh, jstr(m->m.layers[i].digest));
		json_object_set_new(o, "shards", sh);
	}
	if (m->headers && m->headers->have_st_model) {
		const oa_st_model *sm = m->headers->st_model;
		json_t *t = json_object();
		json_object_set_new(t, "tensor_count", u64(sm->n_tensors));
		json_object_set_new(t, "parameter_count", u64(sm->params));
		json_object_set_new(t, "quantization_level", jstr(sm->quant_level));
		json_t *q = json_array();
		for (size_t i = 0; i < sm->n_quant_types; i++)
			json_array_append_new(q, jstr(sm->quant_types[i]));
		json_object_set_new(t, "quant_types", q);
		json_t *dt = json_object();
		for (size_t i = 0; i < sm->n_dtypes; i++)
			json_object_set_new(dt, sm->dtypes[i].dtype, u64(sm->dtypes[i].bytes));
		json_object_set_new(t, "dtype_bytes", dt);
		json_object_set_new(o, "safetensors", t);
	}
	json_t *fv = json_array();
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (f->model && strcmp(f->model, m->display) == 0)
			json_array_append_new(fv, oa_report_finding(f));
	}
	json_object_set_new(o, "findings", fv);
	return o;
}

void oa_json_dump_go(json_t *v, FILE *out)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!s)
		return;
	for (const char *p = s; *p; p++) {
		switch (*p) {
		case '<': fputs("\\u003c", out); break;
		case '>': fputs("\\u003e", out); break;
		case '&': fputs("\\u0026", out); break;
		default:
			if ((unsigned char)p[0] == 0xE2 && (unsigned char)p[1] == 0x80 &&
			    ((unsigned char)p[2] == 0xA8 || (unsigned char)p[2] == 0xA9)) {
				fprintf(out, "\\u202%c", p[2] == (char)0xA8 ? '8' : '9');
				p += 2;
			} else {
				fputc(*p, out);
			}
		}
	}
	free(s);
}

void oa_json_dump_line(json_t *v, FILE *out)
{
	json_dumpf(v, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', out);
}

bool oa_json_dump_members(json_t *obj, FILE *out)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t len = text ? strlen(text) : 0;
	bool any = len > 2; /* "{}" */
	if (any)
		fwrite(text + 1, 1, len - 2, out);
	free(text);
	return any;
}

void oa_json_dump_lines(json_t *records, FILE *out)
{
	for (size_t i = 0; i < json_array_size(records); i++)
		oa_json_dump_line(json_array_get(records, i), out);
}
