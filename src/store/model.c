/* model.c - classification of one model and the details Ollama reports. */
#include "ollama_audit/model.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/manifest_list.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

const char *oa_model_parent(const oa_model *m)
{
	const char *from = "";
	for (size_t i = 0; i < m->m.n_layers; i++)
		if (m->m.layers[i].kind == OA_LAYER_MODEL)
			from = m->m.layers[i].from ? m->m.layers[i].from : "";
	return from;
}

static void add_cap(oa_model *m, const char *cap)
{
	for (size_t i = 0; i < m->n_caps; i++)
		if (strcmp(m->caps[i], cap) == 0)
			return;
	m->caps = oa_xreallocarray(m->caps, m->n_caps + 1, sizeof *m->caps);
	m->caps[m->n_caps++] = cap; /* a literal here, or a string of m->cfg: no copy */
}

static bool unknown_quant(const char *q)
{
	return !q || !*q || strcmp(q, "unknown") == 0;
}

/* details.runner as 0.40 reports it: the manifest's own "runner" (or its
 * list entry's), else one from the config (MetadataForConfig: "ggml" for a
 * GGUF model made before 0.40). A label that contradicts the config is a
 * finding: the server starts what the config says. */
static void runner_label(oa_store *s, oa_model *m)
{
	const oa_list_entry *e = m->is_list && m->child >= 0 ? &m->list->entries[m->child] : NULL;
	if (m->sibling)
		e = m->row_entry;
	const char *runner = m->m.runner && *m->m.runner ? m->m.runner : e && *e->runner ? e->runner : NULL;
	const char *format = m->m.format && *m->m.format ? m->m.format : e && *e->format ? e->format : NULL;
	bool have_cfg = m->config_state == OA_CONFIG_OK;
	if (runner)
		m->d_runner = runner;
	else if (have_cfg && !m->remote)
		m->d_runner = oa_runner_label_for_format(m->cfg.model_format);
	if (!have_cfg || m->remote)
		return;
	bool mlx = strcmp(m->cfg.model_format, "safetensors") == 0;
	const char *why = NULL;
	if (runner && mlx != (strcmp(runner, "mlx") == 0) &&
	    (strcmp(runner, "mlx") == 0 || strcmp(runner, "llamacpp") == 0 || strcmp(runner, "ggml") == 0))
		why = "runner";
	else if (format && ((strcmp(format, "safetensors") == 0 && !mlx) || (strcmp(format, "gguf") == 0 && mlx)))
		why = "format";
	if (why)
		oa_findings_add(&s->findings, OA_FINDING_CHILD_MISMATCH, m->display, NULL, m->rel_path,
		                "the manifest says %s \"%s\" but its config's model_format is \"%s\": the "
		                "server starts %s", why, strcmp(why, "runner") == 0 ? runner : format,
		                m->cfg.model_format, mlx ? "the MLX runner" : "llama.cpp");
}

/* Format from the layers; runner as the server decides it, by the config
 * alone when there is one. */
static void classify_format_runner(oa_model *m)
{
	const oa_config *cfg = &m->cfg;
	bool have_cfg = m->config_state == OA_CONFIG_OK;
	unsigned ggufs = oa_model_layer_count(m, OA_LAYER_MODEL), tensors = oa_model_layer_count(m, OA_LAYER_TENSOR);
	/* The handlers send a model to its remote only when the config names
	 * both the host and the model there; one alone is a local model. */
	m->remote = have_cfg && *cfg->remote_host && *cfg->remote_model;

	if (m->remote)
		m->format = OA_FORMAT_REMOTE;
	else if (ggufs && tensors)
		m->format = OA_FORMAT_MIXED;
	else if (ggufs)
		m->format = OA_FORMAT_GGUF;
	else if (tensors)
		m->format = OA_FORMAT_SAFETENSORS;
	else
		m->format = OA_FORMAT_UNKNOWN;

	/* The server decides by the config alone: IsMLX() is model_format ==
	 * "safetensors"; everything else goes to llama-server (spec §4.6). */
	if (m->remote)
		m->runner = OA_RUNNER_REMOTE;
	else if (have_cfg && strcmp(cfg->model_format, "safetensors") == 0)
		m->runner = OA_RUNNER_MLX;
	else if (have_cfg ? ggufs > 0 : m->format == OA_FORMAT_GGUF)
		m->runner = OA_RUNNER_LLAMACPP;
	else if (!have_cfg && m->format == OA_FORMAT_SAFETENSORS)
		m->runner = OA_RUNNER_MLX;
	else
		m->runner = OA_RUNNER_NONE;
}

/* ollama list drops a model whose config or template cannot be read: why,
 * or NULL when it lists it. */
static const char *hidden_from_list(const oa_model *m)
{
	if (m->config_state == OA_CONFIG_MISSING || m->config_state == OA_CONFIG_INVALID)
		return "its config blob is missing or unreadable";
	for (size_t i = 0; i < m->m.n_layers; i++) {
		/* The list cache turns the digests of these two kinds into
		 * blob paths, and BlobsPath refuses anything but sha256 and
		 * 64 hex digits (an empty digest passes, as the blobs dir). */
		const oa_layer *l = &m->m.layers[i];
		oa_digest_hex hex;
		bool upper;
		if ((l->kind == OA_LAYER_MODEL || l->kind == OA_LAYER_TEMPLATE) && *l->digest &&
		    !oa_digest_parse(l->digest, hex, &upper))
			return "a model or template layer digest is not sha256 and 64 hex digits";
	}
	for (size_t i = 0; i < m->m.n_layers; i++)
		if (m->m.layers[i].kind == OA_LAYER_TEMPLATE &&
		    (!m->layer_blobs[i] || m->layer_blobs[i]->dangling))
			return "its template blob is missing";
	return NULL;
}

/* Capabilities in the list cache's order: what the GGUF header says
 * (vision and audio as it meets their keys, then completion or embedding),
 * the config's, the template's, a projector. */
static void add_capabilities(oa_model *m)
{
	const oa_config *cfg = &m->cfg;
	if (m->headers) {
		if (m->headers->cap_vision)
			add_cap(m, "vision");
		if (m->headers->cap_audio)
			add_cap(m, "audio");
		if (m->headers->cap_completion)
			add_cap(m, "completion");
		if (m->headers->cap_embedding)
			add_cap(m, "embedding");
	}
	if (m->config_state == OA_CONFIG_OK)
		for (size_t i = 0; i < cfg->n_capabilities; i++)
			add_cap(m, cfg->capabilities[i]);
	if (m->template_text) {
		/* The server parses the Go template for these variables; a textual
		 * search finds the same ones in practice. */
		if (strstr(m->template_text, ".Tools"))
			add_cap(m, "tools");
		if (strstr(m->template_text, ".Suffix"))
			add_cap(m, "insert");
	}
	if (oa_model_layer_count(m, OA_LAYER_PROJECTOR))
		add_cap(m, "vision");
}

static void unservable(oa_store *s, oa_model *m);

void oa_model_classify(oa_store *s, oa_model *m)
{
	const oa_config *cfg = &m->cfg;
	bool have_cfg = m->config_state == OA_CONFIG_OK;
	classify_format_runner(m);

	/* every existing blob file once: shared or hard-linked blobs are not counted twice */
	oa_model_blob_usage(m, &m->disk_bytes, &m->apparent_bytes);

	const char *why = m->manifest_ok ? hidden_from_list(m) : NULL;
	if (why) {
		m->hidden_from_list = true;
		oa_findings_add(&s->findings, OA_FINDING_HIDDEN_FROM_LIST, m->display, NULL, m->rel_path,
		                "ollama list does not show this model: %s", why);
	}

	/* /api/tags details, config first (spec §4.3). */
	m->d_format = have_cfg ? cfg->model_format : "";
	m->d_family = have_cfg ? cfg->model_family : "";
	m->d_parameter_size = have_cfg ? cfg->model_type : "";
	m->d_quantization = have_cfg ? cfg->file_type : "";
	m->d_parent_model = oa_model_parent(m);
	m->d_context_length = have_cfg ? cfg->context_length : 0;
	m->d_embedding_length = have_cfg ? cfg->embedding_length : 0;

	oa_headers_apply(s, m);
	add_capabilities(m);
	runner_label(s, m);

	m->arch = *m->d_family ? m->d_family : NULL;
	m->params = *m->d_parameter_size ? m->d_parameter_size : NULL;
	m->quant = !unknown_quant(m->d_quantization) ? m->d_quantization : NULL;
	oa_headers_fill_display(m);
	unservable(s, m);
}

/* Models on disk that the current server refuses (spec §2.5.1): mllama
 * (llama3.2-vision) is "no longer compatible"; serving image-generation
 * models (capabilities ["image"], a model_index.json layer) was removed. */
static void unservable(oa_store *s, oa_model *m)
{
	if (!m->manifest_ok || m->anchor || m->sibling)
		return;
	if (m->arch && strcmp(m->arch, "mllama") == 0)
		m->unservable = "architecture mllama (llama3.2-vision) is refused by current Ollama: \"no longer compatible\"";
	bool image = false;
	for (size_t i = 0; i < m->n_caps; i++)
		image |= strcmp(m->caps[i], "image") == 0;
	for (size_t i = 0; i < m->m.n_layers; i++)
		image |= m->m.layers[i].name && strcmp(m->m.layers[i].name, "model_index.json") == 0;
	if (image && !m->unservable)
		m->unservable = "an image-generation model: current Ollama no longer serves these (removed in 0.32.6)";
	if (m->unservable)
		oa_findings_add(&s->findings, OA_FINDING_UNSERVABLE, m->display, NULL, m->rel_path, "%s", m->unservable);
}

void oa_model_free(oa_model *m)
{
	oa_model_name_free(&m->name);
	free(m->display);
	free(m->rel_path);
	free(m->tag_blob);
	free(m->manifest_error);
	free(m->config_error);
	oa_manifest_free(&m->m);
	if (m->list)
		oa_manifest_free(m->list);
	free(m->list);
	free(m->child_present);
	free(m->child_row);
	oa_config_free(&m->cfg);
	free(m->layer_blobs);
	free(m->caps);
	oa_headers_free(m->headers);
	memset(m, 0, sizeof *m);
}

const char *oa_model_list_runner(const oa_model *m)
{
	if ((m->is_list || m->sibling) && m->d_runner && *m->d_runner)
		return m->d_runner;
	return oa_runner_name(m->runner);
}

bool oa_model_row_in_use(const oa_model *m)
{
	return m->is_list && m->list_rows > 1;
}
