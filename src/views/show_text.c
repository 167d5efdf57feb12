/* show_text.c - `show`'s text for a person (one model in full) and its csv
 * (the layers, one row each), from the model and its json view. */
#include "views/show_text.h"
#include "views/csv.h"
#include "views/findings_text.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/manifest_list.h"
#include "ollama_audit/model.h"
#include "ollama_audit/report.h"
#include "ollama_audit/show_report.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Where show's text goes, with the strings escaped for the line being
 * printed (pr). */
typedef struct show_out {
	FILE *f;
	char *esc[4];
} show_out;

/* Strings from the store go to a terminal: escape control bytes and
 * invalid UTF-8 so a crafted file cannot drive the terminal. The result
 * lives until the next call with the same slot. */
static const char *pr(show_out *out, int slot, const char *s)
{
	free(out->esc[slot]);
	out->esc[slot] = s ? oa_escape(s, strlen(s)) : NULL;
	return out->esc[slot] ? out->esc[slot] : "";
}

static void kv(show_out *out, const char *k, const char *v)
{
	if (v && *v)
		fprintf(out->f, "  %-18s %s\n", k, pr(out, 3, v));
}

/* A header's error, warning (not its infos) on a line. */
static void diag_line(show_out *out, int severity, const char *message)
{
	if (severity > 0)
		fprintf(out->f, "      %s: %s\n", oa_severity_name((oa_severity)severity), pr(out, 0, message));
}

/* "4096 x 32000": a tensor's dimensions. */
static void shape_text(const uint64_t *dims, uint32_t n, char *shape, size_t len)
{
	*shape = '\0';
	for (uint32_t d = 0; d < n; d++) {
		size_t l = strlen(shape);
		snprintf(shape + l, len - l, "%s%llu", d ? " x " : "", (unsigned long long)dims[d]);
	}
}

static void gguf_tensors(show_out *out, const oa_gguf_info *g)
{
	for (size_t i = 0; i < g->n_tensors_kept; i++) {
		const oa_gguf_tensor *t = &g->tensors[i];
		char shape[128];
		shape_text(t->ne, t->n_dims, shape, sizeof shape);
		const char *tn = oa_ggml_type_name(t->type);
		fprintf(out->f, "        %-40s %-8s %-24s %12llu bytes at +%llu\n", pr(out, 0, t->name), tn ? tn : "?",
		        shape,
		        (unsigned long long)t->nbytes, (unsigned long long)t->offset);
	}
}

static void st_tensors(show_out *out, const oa_st_blob *st)
{
	for (size_t i = 0; i < st->n_tensors; i++) {
		const oa_st_tensor *t = &st->tensors[i];
		char shape[128];
		shape_text(t->shape, t->n_dims, shape, sizeof shape);
		fprintf(out->f, "        %-48s %-6s %-20s %s\n", pr(out, 0, t->name),
		        t->dtype ? pr(out, 1, t->dtype) : "?", shape, pr(out, 2, t->quant_type));
	}
}

static void show_gguf(show_out *out, const oa_gguf_info *g, bool tensors)
{
	char human[32], ft[96] = "";
	oa_human_number(g->parameter_count, human, sizeof human);
	if (g->has_file_type) {
		const char *ln = oa_ftype_llama_name(g->file_type);
		snprintf(ft, sizeof ft, "%s (%u%s%s)", oa_gguf_file_type_name(g), g->file_type, ln ? ", " : "",
		         ln ? ln : "");
	} else if (g->file_type_guessed) {
		snprintf(ft, sizeof ft, "not set; guessed %s from the tensor types",
		         oa_ftype_list_string(g->guessed_file_type));
	} else {
		snprintf(ft, sizeof ft, "not set");
	}
	/* A header read only in part (a truncated blob is read the quick way)
	 * has no tensor count, params or data offset: say so, not "0". */
	bool partial = g->quick_stopped || g->kv_parsed < g->kv_count;
	fprintf(out->f, "      GGUF v%u, %s-endian, %s, arch %s%s%s\n", g->version, g->big_endian ? "big" : "little",
	        !g->ok ? "INVALID" : partial ? "header read in part" : "ok",
	        g->architecture ? pr(out, 0, g->architecture) : "?", g->general_name ? ", name " : "",
	        pr(out, 1, g->general_name));
	fprintf(out->f, "      file type %s; %s params; context %llu; embedding %llu; blocks %llu", ft,
	        partial ? "unknown" : human, (unsigned long long)g->context_length,
	        (unsigned long long)g->embedding_length, (unsigned long long)g->block_count);
	if (g->expert_count)
		fprintf(out->f, "; experts %llu", (unsigned long long)g->expert_count);
	if (partial)
		fprintf(out->f, "\n      %llu of %llu keys read, %llu tensors declared, not read; data offset unknown",
		        (unsigned long long)g->kv_parsed, (unsigned long long)g->kv_count,
		        (unsigned long long)g->tensor_count);
	else
		fprintf(out->f, "\n      %llu keys, %llu tensors, alignment %llu, data at %llu",
		        (unsigned long long)g->kv_count, (unsigned long long)g->tensor_count,
		        (unsigned long long)g->alignment, (unsigned long long)g->data_offset);
	if (g->tokenizer_model)
		fprintf(out->f, "; tokenizer %s, vocab %llu", pr(out, 0, g->tokenizer_model),
		        (unsigned long long)g->vocab_size);
	if (g->has_split)
		fprintf(out->f, "\n      shard %llu of %llu (split.no %llu)", (unsigned long long)g->split_no + 1,
		        (unsigned long long)g->split_count, (unsigned long long)g->split_no);
	fprintf(out->f, "\n");
	for (size_t i = 0; i < g->n_diags; i++)
		diag_line(out, g->diags[i].severity, g->diags[i].message);
	if (tensors)
		gguf_tensors(out, g);
}


static void show_st(show_out *out, const oa_st_blob *st, bool tensors)
{
	fprintf(out->f, "      safetensors, %s, %zu tensor%s (+%zu companions)%s", st->ok ? "ok" : "INVALID",
	        st->n_main, st->n_main == 1 ? "" : "s", st->n_companions, st->packed ? ", packed group" : "");
	if (st->quant_type)
		fprintf(out->f, ", %s", pr(out, 0, st->quant_type));
	if (st->group_size)
		fprintf(out->f, " group %llu", (unsigned long long)st->group_size);
	fprintf(out->f, "\n");
	for (size_t i = 0; i < st->n_diags; i++)
		diag_line(out, st->diags[i].severity, st->diags[i].message);
	if (tensors)
		st_tensors(out, st);
}


/* A tag the compatibility migration converted: the copy doubles it. */
static void show_conversion(const oa_text_style *sty, show_out *out, const oa_store *s, const oa_model *m)
{
	oa_conversion cv;
	if (!oa_model_conversion(s, m, &cv))
		return;
	char d[32], l[32], g[32], buf[256];
	oa_format_size(cv.duplicated, sty->units, d, sizeof d);
	oa_format_size(cv.drop_llamacpp, sty->units, l, sizeof l);
	oa_format_size(cv.drop_ggml, sty->units, g, sizeof g);
	snprintf(buf, sizeof buf, "the llamacpp child duplicates %s of its ggml source; dropping the llamacpp "
	         "child frees %s, the ggml child %s", d, l, g);
	kv(out, "converted", buf);
}

/* How the tag is stored (0.40: a manifests-v2 link to a manifest blob) and,
 * for a manifest list, every child and which one is in use. */
static void show_tag(const oa_text_style *sty, show_out *out, const oa_store *s, const oa_model *m)
{
	char buf[256];
	if (m->v2 || strcmp(m->tag_kind ? m->tag_kind : "file", "file") != 0) {
		snprintf(buf, sizeof buf, "%s%s%s%s", m->v2 ? "manifests-v2 " : "manifests/ ",
		         m->tag_kind ? m->tag_kind : "file", m->tag_blob ? " of blob sha256:" : "",
		         m->tag_blob ? m->tag_blob : "");
		kv(out, "tag", buf);
	}
	if (m->anchor)
		kv(out, "tag", "a legacy anchor: a manifests-v2 tag of the same name takes precedence");
	if (!m->is_list)
		return;
	fprintf(out->f, "manifest list %s (%zu children, for %s)\n", m->list->id, m->list->n_manifests,
	        s->platform ? s->platform : oa_platform_default());
	for (size_t i = 0; i < m->list->n_manifests; i++) {
		const oa_list_entry *e = &m->list->entries[i];
		const char *state = (long)i == m->child ? "in use" : m->child_present[i] ? "here, not in use"
		                                                                          : "not here";
		fprintf(out->f, "  %zu %-9s %-12s %.19s%s  %s%s\n", i, pr(out, 0, *e->runner ? e->runner : "-"),
		        pr(out, 1, *e->format ? e->format : "-"), e->inline_json ? "(inline)" : pr(out, 2, e->digest),
		        e->digest_valid ? "…" : "", state, (long)i == m->child_pull && (long)i != m->child
		        ? " (a pull here would fetch it)" : "");
	}
	show_conversion(sty, out, s, m);
}

/* Name, ID, manifest file, modification time and how the tag is stored. */
static void show_identity(const oa_text_style *sty, show_out *out, const oa_store *s, const oa_model *m)
{
	char buf[OA_NAME_DISPLAY_MAX + 64], when[64];
	fprintf(out->f, "%s\n", pr(out, 0, m->display));
	snprintf(buf, sizeof buf, "%s/%s/%s:%s", m->name.host, m->name.ns, m->name.model, m->name.tag);
	kv(out, "name", buf);
	snprintf(buf, sizeof buf, "%.12s (digest %s)", m->m.id, m->m.id);
	kv(out, "id", buf);
	char *p = oa_path_join(s->root, m->rel_path);
	kv(out, "manifest", p);
	free(p);
	oa_human_age(oa_age_ns(m->st.mtime_ns, oa_wall_now_ns()), when, sizeof when);
	oa_iso8601((time_t)(m->st.mtime_ns / 1000000000), 0, buf, sizeof buf);
	char mod[OA_NAME_DISPLAY_MAX + 160];
	snprintf(mod, sizeof mod, "%s (%s)", buf, when);
	kv(out, "modified", mod);
	show_tag(sty, out, s, m);
}

/* Sizes, format and what the config and weights say the model is. */
static void show_summary(const oa_text_style *sty, show_out *out, const oa_model *m)
{
	char buf[OA_NAME_DISPLAY_MAX + 64], size[32], disk[32];
	/* A hostile manifest can declare negative sizes; show them as such. */
	if (m->m.size < 0)
		snprintf(size, sizeof size, "%lld B", (long long)m->m.size);
	else
		oa_format_size((uint64_t)m->m.size, sty->units, size, sizeof size);
	oa_format_size(m->disk_bytes, sty->units, disk, sizeof disk);
	snprintf(buf, sizeof buf, "%s declared (%lld bytes); %s on disk", m->remote ? "-" : size,
	         (long long)m->m.size, disk);
	kv(out, "size", buf);
	snprintf(buf, sizeof buf, "%s, runner %s", oa_format_name(m->format), oa_runner_name(m->runner));
	kv(out, "format", buf);
	if (m->unservable)
		kv(out, "unservable", m->unservable);
	kv(out, "architecture", m->arch);
	kv(out, "parameters", m->params);
	kv(out, "quantization", m->quant);
	if (m->headers && m->headers->sharded) {
		oa_buf b;
		oa_buf_init(&b);
		for (size_t i = 0; i < m->m.n_layers; i++)
			if (m->m.layers[i].kind == OA_LAYER_MODEL)
				oa_buf_printf(&b, "%s%zu", b.len ? ", " : "", i);
		snprintf(buf, sizeof buf, "split GGUF, layers %s (the first holds the metadata)", b.data);
		kv(out, "shards", buf);
		oa_buf_free(&b);
	}
	if (m->d_context_length) {
		snprintf(buf, sizeof buf, "%lld", (long long)m->d_context_length);
		kv(out, "context length", buf);
	}
	if (m->n_caps) {
		oa_buf b;
		oa_buf_init(&b);
		for (size_t i = 0; i < m->n_caps; i++)
			oa_buf_printf(&b, "%s%s", i ? " " : "", m->caps[i]);
		kv(out, "capabilities", b.data);
		oa_buf_free(&b);
	}
	kv(out, "parent model", m->d_parent_model);
}

static void show_config(show_out *out, const oa_model *m)
{
	char buf[OA_NAME_DISPLAY_MAX + 64];
	if (m->config_state == OA_CONFIG_OK) {
		const oa_config *cf = &m->cfg;
		fprintf(out->f, "config %s (%lld bytes)\n", m->m.config.digest, (long long)m->m.config.size);
		kv(out, "model_format", cf->model_format);
		kv(out, "model_family", cf->model_family);
		kv(out, "model_type", cf->model_type);
		kv(out, "file_type", cf->file_type);
		kv(out, "renderer", cf->renderer);
		kv(out, "parser", cf->parser);
		kv(out, "requires", cf->requires);
		kv(out, "remote_host", cf->remote_host);
		kv(out, "remote_model", cf->remote_model);
		kv(out, "os/architecture", *cf->os || *cf->architecture ? (snprintf(buf, sizeof buf, "%s/%s", cf->os, cf->architecture), buf) : NULL);
	} else if (m->config_state != OA_CONFIG_NONE) {
		fprintf(out->f, "config %s: %s\n", pr(out, 0, m->m.config.digest),
		        m->config_error ? pr(out, 1, m->config_error) : "missing");
	}
}

/* Each layer, with what its weights header says under it. */
static void show_layers(const oa_text_style *sty, show_out *out, const oa_model *m, bool tensors)
{
	fprintf(out->f, "layers (%zu)\n", m->m.n_layers);
	for (size_t i = 0; i < m->m.n_layers; i++) {
		const oa_layer *l = &m->m.layers[i];
		const oa_blob *b = m->layer_blobs[i];
		char dsize[32], ondisk[96];
		oa_format_size((uint64_t)(l->size < 0 ? 0 : l->size), sty->units, dsize, sizeof dsize);
		if (b && b->stat_ok && !b->dangling) {
			/* one unit for both figures; the file's own size only when it is
			 * not the declared one (a truncated or grown blob) */
			char alloc[32], file[32];
			oa_format_size((uint64_t)b->st.blocks * 512, sty->units, alloc, sizeof alloc);
			oa_format_size((uint64_t)b->st.size, sty->units, file, sizeof file);
			if (b->st.size != l->size)
				snprintf(ondisk, sizeof ondisk, "%s on disk (file %s)", alloc, file);
			else
				snprintf(ondisk, sizeof ondisk, "%s on disk", alloc);
		} else
			snprintf(ondisk, sizeof ondisk, "MISSING");
		fprintf(out->f, "  %3zu %-9s %.19s%s %9s  %s", i, oa_layer_kind_name(l->kind),
		        l->digest_valid ? l->digest : pr(out, 2, l->digest), l->digest_valid ? "…" : "", dsize, ondisk);
		if (l->name)
			fprintf(out->f, "  name=%s", pr(out, 0, l->name));
		if (l->from)
			fprintf(out->f, "  from=%s", pr(out, 1, l->from));
		fprintf(out->f, "\n");
		if (m->headers && i < m->headers->n_layers) {
			const oa_layer_header *lh = &m->headers->layers[i];
			if (lh->have_gguf)
				show_gguf(out, lh->gguf, tensors);
			else if (lh->have_st)
				show_st(out, lh->st, tensors);
		}
	}
	if (m->headers && m->headers->have_st_model) {
		const oa_st_model *sm = m->headers->st_model;
		char human[32];
		oa_human_number(sm->params, human, sizeof human);
		fprintf(out->f, "safetensors totals: %llu tensors, %s parameters (%llu), quantization %s\n",
		        (unsigned long long)sm->n_tensors, human, (unsigned long long)sm->params,
		        sm->quant_level && *sm->quant_level ? pr(out, 0, sm->quant_level) : "none");
	}
}

static void show_model(const oa_text_style *sty, show_out *out, const oa_store *s, const oa_model *m,
                       bool tensors, const char *runhere)
{
	show_identity(sty, out, s, m);
	if (!m->manifest_ok) {
		kv(out, "manifest error", m->manifest_error);
		return;
	}
	show_summary(sty, out, m);
	show_config(out, m);
	show_layers(sty, out, m, tensors);
	if (runhere) {
		fprintf(out->f, "what can run here\n");
		oa_print_wrapped(sty, out->f, "  ", runhere);
	}
	oa_findings_group(sty, out->f, s, NULL, m->display, "findings\n", "  ");
}

void oa_show_text(const oa_text_style *sty, FILE *f, const oa_store *s, const oa_model *m, bool tensors,
                  const char *runhere)
{
	show_out out = { .f = f };
	show_model(sty, &out, s, m, tensors, runhere);
	for (size_t i = 0; i < sizeof out.esc / sizeof out.esc[0]; i++)
		free(out.esc[i]);
}

static void csv_layer(FILE *out, const oa_store *s, const oa_model *m, json_t *l)
{
	char size[32] = "", apparent_bytes[32] = "", disk_bytes[32] = "";
	const char *keys[] = { "size", "apparent_bytes", "disk_bytes" };
	char *bufs[] = { size, apparent_bytes, disk_bytes };
	for (size_t k = 0; k < 3; k++) {
		json_t *v = json_object_get(l, keys[k]);
		if (json_is_integer(v))
			snprintf(bufs[k], 32, "%lld", (long long)json_integer_value(v));
	}
	oa_csv_field(out, s->root, false);
	oa_csv_field(out, m->display, false);
	oa_csv_field(out, json_string_value(json_object_get(l, "kind")), false);
	oa_csv_field(out, json_string_value(json_object_get(l, "media_type")), false);
	oa_csv_field(out, json_string_value(json_object_get(l, "digest")), false);
	oa_csv_field(out, size, false);
	oa_csv_field(out, json_string_value(json_object_get(l, "from")), false);
	oa_csv_field(out, json_is_true(json_object_get(l, "exists")) ? "true" : "false", false);
	oa_csv_field(out, apparent_bytes, false);
	oa_csv_field(out, disk_bytes, false);
	oa_csv_field(out, oa_report_owner(s), true);
}

/* csv: the layers, one row each, config first. */
void oa_show_csv(FILE *out, const oa_store *s, const oa_model *m, json_t *o, bool header)
{
	if (header)
		fprintf(out, "store,model,kind,media_type,digest,size,from,exists,apparent_bytes,disk_bytes,user\n");
	json_t *cfg = json_object_get(o, "config_layer");
	if (cfg)
		csv_layer(out, s, m, cfg);
	json_t *layers = json_object_get(o, "layer_list");
	for (size_t i = 0; i < json_array_size(layers); i++)
		csv_layer(out, s, m, json_array_get(layers, i));
}

void oa_show_ambiguous(FILE *f, const oa_store *s, const char *query)
{
	show_out out = { .f = f };
	if (strncmp(query, "sha256:", 7) == 0 || strncmp(query, "sha256-", 7) == 0)
		query += 7;
	for (size_t j = 0; j < s->n_models; j++)
		if (strncasecmp(s->models[j].m.id, query, strlen(query)) == 0)
			fprintf(f, "  %.12s  %s\n", s->models[j].m.id, pr(&out, 0, s->models[j].display));
	free(out.esc[0]);
}

void oa_show_ndjson(FILE *out, const oa_store *s, json_t *doc, const char *host)
{
	json_t *recs = oa_show_view_records(s, doc, host);
	oa_json_dump_lines(recs, out);
	json_decref(recs);
}
