/* cmd_show.c - `ollama-audit show MODEL`: one model in full. */
#include "cmd_show.h"
#include "cli_machine.h"
#include "cli_runhere.h"
#include "findings.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "views/csv.h"
#include "suggest.h"
#include "views/table.h"
#include "usage.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/manifest_list.h"
#include "ollama_audit/model.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "ollama_audit/show_report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Strings from the store go to a terminal: escape control bytes and
 * invalid UTF-8 so a crafted file cannot drive the terminal. The result
 * lives until the next call with the same slot. */
static const char *pr(int slot, const char *s)
{
	static char *buf[4];
	free(buf[slot]);
	buf[slot] = s ? oa_escape(s, strlen(s)) : NULL;
	return buf[slot] ? buf[slot] : "";
}

static void kv(const char *k, const char *v)
{
	if (v && *v)
		printf("  %-18s %s\n", k, pr(3, v));
}

static void show_gguf(const oa_gguf_info *g, bool tensors)
{
	char human[32], ft[96] = "";
	oa_human_number(g->parameter_count, human, sizeof human);
	if (g->has_file_type) {
		const char *ln = oa_ftype_llama_name(g->file_type);
		/* 0 (all F32) prints F32, as ggml.FileType's String does */
		snprintf(ft, sizeof ft, "%s (%u%s%s)",
		         g->file_type_is_u32 ? oa_ftype_list_string(g->file_type) : "unknown",
		         g->file_type, ln ? ", " : "", ln ? ln : "");
	} else if (g->file_type_guessed) {
		snprintf(ft, sizeof ft, "not set; guessed %s from the tensor types",
		         oa_ftype_list_string(g->guessed_file_type));
	} else {
		snprintf(ft, sizeof ft, "not set");
	}
	/* A header read only in part (a truncated blob is read the quick way)
	 * has no tensor count, params or data offset: say so, not "0". */
	bool partial = g->quick_stopped || g->kv_parsed < g->kv_count;
	printf("      GGUF v%u, %s-endian, %s, arch %s%s%s\n", g->version, g->big_endian ? "big" : "little",
	       !g->ok ? "INVALID" : partial ? "header read in part" : "ok",
	       g->architecture ? pr(0, g->architecture) : "?", g->general_name ? ", name " : "",
	       pr(1, g->general_name));
	printf("      file type %s; %s params; context %llu; embedding %llu; blocks %llu", ft,
	       partial ? "unknown" : human, (unsigned long long)g->context_length,
	       (unsigned long long)g->embedding_length, (unsigned long long)g->block_count);
	if (g->expert_count)
		printf("; experts %llu", (unsigned long long)g->expert_count);
	if (partial)
		printf("\n      %llu of %llu keys read, %llu tensors declared, not read; data offset unknown",
		       (unsigned long long)g->kv_parsed, (unsigned long long)g->kv_count,
		       (unsigned long long)g->tensor_count);
	else
		printf("\n      %llu keys, %llu tensors, alignment %llu, data at %llu",
		       (unsigned long long)g->kv_count, (unsigned long long)g->tensor_count,
		       (unsigned long long)g->alignment, (unsigned long long)g->data_offset);
	if (g->tokenizer_model)
		printf("; tokenizer %s, vocab %llu", pr(0, g->tokenizer_model), (unsigned long long)g->vocab_size);
	printf("\n");
	for (size_t i = 0; i < g->n_diags; i++)
		if (g->diags[i].severity > 0)
			printf("      %s: %s\n", oa_severity_name(g->diags[i].severity), pr(0, g->diags[i].message));
	if (tensors)
		for (size_t i = 0; i < g->n_tensors_kept; i++) {
			const oa_gguf_tensor *t = &g->tensors[i];
			char shape[128] = "";
			for (uint32_t d = 0; d < t->n_dims; d++) {
				size_t l = strlen(shape);
				snprintf(shape + l, sizeof shape - l, "%s%llu", d ? " x " : "", (unsigned long long)t->ne[d]);
			}
			const char *tn = oa_ggml_type_name(t->type);
			printf("        %-40s %-8s %-24s %12llu bytes at +%llu\n", pr(0, t->name), tn ? tn : "?", shape,
			       (unsigned long long)t->nbytes, (unsigned long long)t->offset);
		}
}

static void show_st(const oa_st_blob *st, bool tensors)
{
	printf("      safetensors, %s, %zu tensor%s (+%zu companions)%s", st->ok ? "ok" : "INVALID",
	       st->n_main, st->n_main == 1 ? "" : "s", st->n_companions, st->packed ? ", packed group" : "");
	if (st->quant_type)
		printf(", %s", pr(0, st->quant_type));
	if (st->group_size)
		printf(" group %llu", (unsigned long long)st->group_size);
	printf("\n");
	for (size_t i = 0; i < st->n_diags; i++)
		if (st->diags[i].severity > 0)
			printf("      %s: %s\n", oa_severity_name(st->diags[i].severity), pr(0, st->diags[i].message));
	if (tensors)
		for (size_t i = 0; i < st->n_tensors; i++) {
			const oa_st_tensor *t = &st->tensors[i];
			char shape[128] = "";
			for (uint32_t d = 0; d < t->n_dims; d++) {
				size_t l = strlen(shape);
				snprintf(shape + l, sizeof shape - l, "%s%llu", d ? " x " : "", (unsigned long long)t->shape[d]);
			}
			printf("        %-48s %-6s %-20s %s\n", pr(0, t->name), t->dtype ? pr(1, t->dtype) : "?", shape,
			       pr(2, t->quant_type));
		}
}

/* A tag the compatibility migration converted: the copy doubles it. */
static void show_conversion(cli *c, const oa_store *s, const oa_model *m)
{
	oa_conversion cv;
	if (!oa_model_conversion(s, m, &cv))
		return;
	char d[32], l[32], g[32], buf[256];
	oa_format_size(cv.duplicated, c->units, d, sizeof d);
	oa_format_size(cv.drop_llamacpp, c->units, l, sizeof l);
	oa_format_size(cv.drop_ggml, c->units, g, sizeof g);
	snprintf(buf, sizeof buf, "the llamacpp child duplicates %s of its ggml source; dropping the llamacpp "
	         "child frees %s, the ggml child %s", d, l, g);
	kv("converted", buf);
}

/* How the tag is stored (0.40: a manifests-v2 link to a manifest blob) and,
 * for a manifest list, every child and which one is in use. */
static void show_tag(cli *c, const oa_store *s, const oa_model *m)
{
	char buf[256];
	if (m->v2 || strcmp(m->tag_kind ? m->tag_kind : "file", "file") != 0) {
		snprintf(buf, sizeof buf, "%s%s%s%s", m->v2 ? "manifests-v2 " : "manifests/ ",
		         m->tag_kind ? m->tag_kind : "file", m->tag_blob[0] ? " of blob sha256:" : "",
		         m->tag_blob);
		kv("tag", buf);
	}
	if (m->anchor)
		kv("tag", "a legacy anchor: a manifests-v2 tag of the same name takes precedence");
	if (!m->is_list)
		return;
	printf("manifest list %s (%zu children, for %s)\n", m->list->id, m->list->n_manifests,
	       s->platform ? s->platform : oa_platform_default());
	for (size_t i = 0; i < m->list->n_manifests; i++) {
		const oa_list_entry *e = &m->list->entries[i];
		const char *state = (long)i == m->child ? "in use" : m->child_present[i] ? "here, not in use"
		                                                                          : "not here";
		printf("  %zu %-9s %-12s %.19s%s  %s%s\n", i, pr(0, *e->runner ? e->runner : "-"),
		       pr(1, *e->format ? e->format : "-"), e->inline_json ? "(inline)" : pr(2, e->digest),
		       e->digest_valid ? "…" : "", state, (long)i == m->child_pull && (long)i != m->child
		       ? " (a pull here would fetch it)" : "");
	}
	show_conversion(c, s, m);
}

/* Name, ID, manifest file, modification time and how the tag is stored. */
static void show_identity(cli *c, const oa_store *s, const oa_model *m)
{
	char buf[OA_NAME_DISPLAY_MAX + 64], when[64];
	printf("%s\n", pr(0, m->display));
	snprintf(buf, sizeof buf, "%s/%s/%s:%s", m->name.host, m->name.ns, m->name.model, m->name.tag);
	kv("name", buf);
	snprintf(buf, sizeof buf, "%.12s (digest %s)", m->m.id, m->m.id);
	kv("id", buf);
	char *p = oa_path_join(s->root, m->rel_path);
	kv("manifest", p);
	free(p);
	oa_human_age(oa_age_ns(m->st.mtime_ns, oa_wall_now_ns()), when, sizeof when);
	oa_iso8601((time_t)(m->st.mtime_ns / 1000000000), 0, buf, sizeof buf);
	char mod[OA_NAME_DISPLAY_MAX + 160];
	snprintf(mod, sizeof mod, "%s (%s)", buf, when);
	kv("modified", mod);
	show_tag(c, s, m);
}

/* Sizes, format and what the config and weights say the model is. */
static void show_summary(cli *c, const oa_model *m)
{
	char buf[OA_NAME_DISPLAY_MAX + 64], size[32], disk[32];
	/* A hostile manifest can declare negative sizes; show them as such. */
	if (m->m.size < 0)
		snprintf(size, sizeof size, "%lld B", (long long)m->m.size);
	else
		oa_format_size((uint64_t)m->m.size, c->units, size, sizeof size);
	oa_format_size(m->disk_bytes, c->units, disk, sizeof disk);
	snprintf(buf, sizeof buf, "%s declared (%lld bytes); %s on disk", m->remote ? "-" : size,
	         (long long)m->m.size, disk);
	kv("size", buf);
	snprintf(buf, sizeof buf, "%s, runner %s", oa_format_name(m->format), oa_runner_name(m->runner));
	kv("format", buf);
	if (m->unservable)
		kv("unservable", m->unservable);
	kv("architecture", m->arch);
	kv("parameters", m->params);
	kv("quantization", m->quant);
	if (m->d_context_length) {
		snprintf(buf, sizeof buf, "%lld", (long long)m->d_context_length);
		kv("context length", buf);
	}
	if (m->n_caps) {
		oa_buf b;
		oa_buf_init(&b);
		for (size_t i = 0; i < m->n_caps; i++)
			oa_buf_printf(&b, "%s%s", i ? " " : "", m->caps[i]);
		kv("capabilities", b.data);
		oa_buf_free(&b);
	}
	kv("parent model", m->d_parent_model);
}

static void show_config(const oa_model *m)
{
	char buf[OA_NAME_DISPLAY_MAX + 64];
	if (m->config_state == OA_CONFIG_OK) {
		const oa_config *cf = &m->cfg;
		printf("config %s (%lld bytes)\n", m->m.config.digest, (long long)m->m.config.size);
		kv("model_format", cf->model_format);
		kv("model_family", cf->model_family);
		kv("model_type", cf->model_type);
		kv("file_type", cf->file_type);
		kv("renderer", cf->renderer);
		kv("parser", cf->parser);
		kv("requires", cf->requires);
		kv("remote_host", cf->remote_host);
		kv("remote_model", cf->remote_model);
		kv("os/architecture", *cf->os || *cf->architecture ? (snprintf(buf, sizeof buf, "%s/%s", cf->os, cf->architecture), buf) : NULL);
	} else if (m->config_state != OA_CONFIG_NONE) {
		printf("config %s: %s\n", pr(0, m->m.config.digest),
		       m->config_error ? pr(1, m->config_error) : "missing");
	}
}

/* Each layer, with what its weights header says under it. */
static void show_layers(cli *c, const oa_model *m)
{
	printf("layers (%zu)\n", m->m.n_layers);
	for (size_t i = 0; i < m->m.n_layers; i++) {
		const oa_layer *l = &m->m.layers[i];
		const oa_blob *b = m->layer_blobs[i];
		char dsize[32], ondisk[96];
		oa_format_size((uint64_t)(l->size < 0 ? 0 : l->size), c->units, dsize, sizeof dsize);
		if (b && b->stat_ok && !b->dangling) {
			/* one unit for both figures; the file's own size only when it is
			 * not the declared one (a truncated or grown blob) */
			char alloc[32], file[32];
			oa_format_size((uint64_t)b->st.blocks * 512, c->units, alloc, sizeof alloc);
			oa_format_size((uint64_t)b->st.size, c->units, file, sizeof file);
			if (b->st.size != l->size)
				snprintf(ondisk, sizeof ondisk, "%s on disk (file %s)", alloc, file);
			else
				snprintf(ondisk, sizeof ondisk, "%s on disk", alloc);
		} else
			snprintf(ondisk, sizeof ondisk, "MISSING");
		printf("  %3zu %-9s %.19s%s %9s  %s", i, oa_layer_kind_name(l->kind),
		       l->digest_valid ? l->digest : pr(2, l->digest), l->digest_valid ? "…" : "", dsize, ondisk);
		if (l->name)
			printf("  name=%s", pr(0, l->name));
		if (l->from)
			printf("  from=%s", pr(1, l->from));
		printf("\n");
		if (m->headers && i < m->headers->n_layers) {
			const oa_layer_header *lh = &m->headers->layers[i];
			if (lh->have_gguf)
				show_gguf(lh->gguf, c->tensors);
			else if (lh->have_st)
				show_st(lh->st, c->tensors);
		}
	}
	if (m->headers && m->headers->have_st_model) {
		const oa_st_model *sm = m->headers->st_model;
		char human[32];
		oa_human_number(sm->params, human, sizeof human);
		printf("safetensors totals: %llu tensors, %s parameters (%llu), quantization %s\n",
		       (unsigned long long)sm->n_tensors, human, (unsigned long long)sm->params,
		       sm->quant_level && *sm->quant_level ? pr(0, sm->quant_level) : "none");
	}
}

static void show_findings(cli *c, const oa_store *s, const oa_model *m)
{
	bool any = false;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!f->model || strcmp(f->model, m->display) != 0)
			continue;
		if (!any)
			printf("findings\n");
		any = true;
		printf("  ");
		cli_print_finding(c, stdout, f);
	}
}

static void show_table(cli *c, const oa_store *s, const oa_model *m)
{
	show_identity(c, s, m);
	if (!m->manifest_ok) {
		kv("manifest error", m->manifest_error);
		return;
	}
	show_summary(c, m);
	show_config(m);
	show_layers(c, m);
	char *here = cli_runhere_text(c, s, m);
	if (here) {
		printf("what can run here\n");
		cli_print_wrapped(c, stdout, "  ", here);
	}
	free(here);
	show_findings(c, s, m);
}

static void csv_layer(const oa_store *s, const oa_model *m, json_t *l)
{
	FILE *out = cli_text_out();
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
	oa_csv_field(out, disk_bytes, true);
}

/* csv: the layers, one row each, config first. */
static void show_csv(const oa_store *s, const oa_model *m, json_t *o, bool header)
{
	FILE *out = cli_text_out();
	if (header)
		fprintf(out, "store,model,kind,media_type,digest,size,from,exists,apparent_bytes,disk_bytes\n");
	json_t *cfg = json_object_get(o, "config_layer");
	if (cfg)
		csv_layer(s, m, cfg);
	json_t *layers = json_object_get(o, "layer_list");
	for (size_t i = 0; i < json_array_size(layers); i++)
		csv_layer(s, m, json_array_get(layers, i));
}

/* What every format of `show` renders, once per store that has the model
 * (the slots in commands.c); first: the csv header goes before it. */
typedef struct show_view {
	const oa_store *s;
	const oa_model *m;
	bool first;
} show_view;

static json_t *show_json(cli *c, const show_view *v)
{
	return oa_show_view(v->s, v->m, c->tensors, cli_runhere_machine(c), cli_runhere_cache(c));
}

void show_render_table(cli *c, const void *view)
{
	const show_view *v = view;
	show_table(c, v->s, v->m);
}

void show_render_json(cli *c, const void *view)
{
	cli_emit_document(c, show_json(c, view));
}

void show_render_ndjson(cli *c, const void *view)
{
	const show_view *v = view;
	json_t *o = show_json(c, v);
	json_t *recs = oa_show_view_records(v->s, o, cli_host());
	oa_json_dump_lines(recs, stdout);
	json_decref(recs);
	json_decref(o);
}

void show_render_csv(cli *c, const void *view)
{
	const show_view *v = view;
	json_t *o = show_json(c, v);
	show_csv(v->s, v->m, o, v->first);
	json_decref(o);
}

int cmd_show(cli *c)
{
	if (c->n_args != 1) {
		cli_err("show takes exactly one MODEL");
		return OA_EXIT_USAGE;
	}
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_FULL);
	bool found = false;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		const oa_store *s = &st[i].s;
		long idx = cli_resolve_model(c, s, c->args[0]);
		if (idx == OA_RESOLVE_AMBIGUOUS_ID) {
			cli_err("%s: ID prefix '%s' matches more than one model; name one:", s->root, c->args[0]);
			const char *q = c->args[0];
			if (strncmp(q, "sha256:", 7) == 0 || strncmp(q, "sha256-", 7) == 0)
				q += 7;
			for (size_t j = 0; j < s->n_models; j++)
				if (strncasecmp(s->models[j].m.id, q, strlen(q)) == 0)
					fprintf(stderr, "  %.12s  %s\n", s->models[j].m.id, pr(0, s->models[j].display));
			c->exit_code |= OA_EXIT_USAGE;
			continue;
		}
		if (idx < 0)
			continue;
		const oa_model *m = &s->models[idx];
		cli_render(c, &(show_view){ .s = s, .m = m, .first = !found });
		found = true;
		for (size_t j = 0; j < s->findings.n; j++) {
			const oa_finding *f = &s->findings.v[j];
			if (f->model && strcmp(f->model, m->display) == 0 && (int)f->severity >= c->fail_on)
				c->exit_code |= f->severity == OA_SEV_ERROR ? OA_EXIT_ERRORS : OA_EXIT_WARNINGS;
		}
	}
	if (!found && !(c->exit_code & (OA_EXIT_OPERATIONAL | OA_EXIT_USAGE))) {
		const char *near = NULL;
		for (size_t i = 0; i < n && !near; i++)
			if (st[i].ok)
				near = cli_suggest_model(&st[i].s, c->args[0]);
		if (near)
			cli_fail(c, "model-not-found", NULL, "model '%s' not found; did you mean %s?", c->args[0], near);
		else
			cli_fail(c, "model-not-found", NULL, "model '%s' not found", c->args[0]);
		c->exit_code |= OA_EXIT_USAGE;
	}
	cli_close_stores(st, n);
	return c->exit_code;
}
