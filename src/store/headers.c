/* headers.c - read the weights' headers of a model and cross-check them with
 * its config blob (issue: "read the weights' headers"). */
#include "ollama_audit/headers.h"
#include "ollama_audit/gguf.h"
#include "ollama_audit/safetensors.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <unistd.h>
#include "base/platform.h"
#include "base/pool.h"
#include "store/headers_private.h"

#define OA_HF_CONFIG_MAX (4u << 20)

void oa_store_set_header_mode(oa_store *s, enum oa_header_mode mode)
{
	s->header_mode = (int)mode;
}

static bool is_gguf_kind(enum oa_layer_kind k)
{
	return k == OA_LAYER_MODEL || k == OA_LAYER_PROJECTOR || k == OA_LAYER_ADAPTER ||
	       k == OA_LAYER_DRAFT;
}

static size_t last_model_layer(const oa_model *m)
{
	size_t idx = SIZE_MAX;
	for (size_t i = 0; i < m->m.n_layers; i++)
		if (m->m.layers[i].kind == OA_LAYER_MODEL)
			idx = i;
	return idx;
}

static size_t first_model_layer(const oa_model *m)
{
	for (size_t i = 0; i < m->m.n_layers; i++)
		if (m->m.layers[i].kind == OA_LAYER_MODEL)
			return i;
	return SIZE_MAX;
}

/* The header that describes the model: the last model layer's (the list
 * cache reads it), or the first's when that is shard 0 of a split GGUF. */
static const oa_gguf_info *main_gguf(const oa_model_headers *h)
{
	return h->main_layer != SIZE_MAX && h->layers[h->main_layer].have_gguf ? h->layers[h->main_layer].gguf : NULL;
}

/* A blob whose size differs from the declared one already has its finding
 * (size-mismatch, empty-blob); parsing its header would only repeat it. */
static bool usable_blob(const oa_model *m, size_t i)
{
	const oa_blob *b = m->layer_blobs[i];
	return b && !b->dangling && b->stat_ok && (int64_t)b->st.size == m->m.layers[i].size;
}

static const char *digest_of(const oa_model *m, size_t i)
{
	return m->m.layers[i].digest_valid ? m->m.layers[i].digest : NULL;
}

/* A blob of the wrong size already has its finding. The server's list cache
 * still reads the key-values from the start of whatever file is there (it
 * never looks at tensor data), so a blob truncated after its header still
 * gives /api/tags its values: read it the quick way, without more findings. */
static void gguf_findings(oa_store *s, oa_model *m, size_t i);

/* A layer's GGUF parse, shared by every layer of the scan that names the
 * same blob (10,000 tags over 50 weight blobs hold 50 parses, not 10,000
 * copies): freed with the last layer, or the scan's cache, that holds it. */
typedef struct shared_gguf {
	oa_gguf_info info; /* first: a layer's gguf points here */
	size_t refs;
} shared_gguf;

static oa_gguf_info *gguf_new(void)
{
	shared_gguf *g = oa_xcalloc(1, sizeof *g);
	g->refs = 1;
	return &g->info;
}

static oa_gguf_info *gguf_hold(oa_gguf_info *info)
{
	((shared_gguf *)(void *)info)->refs++;
	return info;
}

static void gguf_release(oa_gguf_info *info)
{
	shared_gguf *g = (shared_gguf *)(void *)info;
	if (g && --g->refs == 0) {
		oa_gguf_info_free(&g->info);
		free(g);
	}
}

static void read_gguf_quietly(oa_store *s, oa_blob *b, oa_layer_header *lh)
{
	if (!b || b->dangling || !b->stat_ok || b->st.size <= 0)
		return;
	int fd = oa_store_open_blob(s, b);
	if (fd < 0)
		return;
	unsigned char magic[4] = { 0 };
	if (oa_pread_full(fd, magic, 4, 0) == 4 && oa_gguf_is_magic(magic)) {
		lh->have_gguf = true;
		lh->gguf = gguf_new();
		oa_gguf_read_fd(fd, (uint64_t)b->st.size, OA_GGUF_QUICK, lh->gguf);
	}
	close(fd);
}

/* Each blob's GGUF header as parsed by this scan, per mode: a weight blob
 * that 200 tags share is opened and parsed once, the others share that
 * parse (the findings are still each model's own). Indexed like s->blobs;
 * NULL where not parsed yet. */
struct oa_header_cache {
	oa_gguf_info **parsed[2]; /* [mode == OA_GGUF_FULL] */
};

void oa_headers_begin(oa_store *s)
{
	struct oa_header_cache *c = oa_xcalloc(1, sizeof *c);
	size_t n = s->n_blobs ? s->n_blobs : 1;
	for (int k = 0; k < 2; k++)
		c->parsed[k] = oa_xcalloc(n, sizeof *c->parsed[k]);
	s->header_cache = c;
}

void oa_headers_end(oa_store *s)
{
	struct oa_header_cache *c = s->header_cache;
	if (!c)
		return;
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < s->n_blobs; i++)
			gguf_release(c->parsed[k][i]);
		free(c->parsed[k]);
	}
	free(c);
	s->header_cache = NULL;
}

/* The GGUF headers oa_headers_apply will parse from the cache, parsed ahead:
 * each blob once, on the scan's threads, each into its own cache slot. A
 * blob that does not open or is not GGUF is left to oa_headers_apply, which
 * reports it. */
typedef struct gguf_prefetch {
	oa_store *s;
	oa_gguf_mode mode;
	size_t *blobs; /* indexes into s->blobs, each once */
} gguf_prefetch;

static void prefetch_gguf(void *ctx, size_t k)
{
	gguf_prefetch *p = ctx;
	oa_store *s = p->s;
	const oa_blob *b = &s->blobs[p->blobs[k]];
	int fd = oa_store_open_blob(s, b);
	if (fd < 0)
		return;
	unsigned char magic[4] = { 0 };
	if (oa_pread_full(fd, magic, 4, 0) == 4 && !oa_gguf_is_magic(magic)) {
		close(fd);
		return;
	}
	oa_gguf_info *g = gguf_new();
	oa_gguf_read_fd(fd, (uint64_t)b->st.size, p->mode, g);
	close(fd);
	s->header_cache->parsed[p->mode == OA_GGUF_FULL][p->blobs[k]] = g;
}

void store_headers_prefetch(oa_store *s)
{
	struct oa_header_cache *c = s->header_cache;
	/* a small store stays on one thread, whatever its weights */
	if (!c || s->header_mode == OA_HEADERS_NONE || oa_pool_threads(s->jobs) < 2 ||
	    s->n_models < OA_POOL_MIN_PARALLEL)
		return;
	bool full = s->header_mode == OA_HEADERS_FULL;
	gguf_prefetch p = { s, full ? OA_GGUF_FULL : OA_GGUF_QUICK, oa_xcalloc(s->n_blobs + 1, sizeof *p.blobs) };
	bool *seen = oa_xcalloc(s->n_blobs + 1, sizeof *seen);
	size_t n = 0;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		/* the models and layers oa_headers_apply reads through the cache */
		if (!m->manifest_ok || (m->config_state == OA_CONFIG_OK && (*m->cfg.remote_host || *m->cfg.remote_model)))
			continue;
		size_t last = last_model_layer(m);
		for (size_t l = 0; l < m->m.n_layers; l++) {
			if (!is_gguf_kind(m->m.layers[l].kind) || !(full || l == last) || !usable_blob(m, l))
				continue;
			size_t at = (size_t)(m->layer_blobs[l] - s->blobs);
			if (!c->parsed[full][at] && !seen[at]) {
				seen[at] = true;
				p.blobs[n++] = at;
			}
		}
	}
	oa_pool_run(s->jobs, n, 2, prefetch_gguf, &p);
	free(seen);
	free(p.blobs);
}

/* The cached parse of b in that mode, or NULL; `slot` is where to keep one. */
static oa_gguf_info *cached_gguf(oa_store *s, const oa_blob *b, oa_gguf_mode mode, oa_gguf_info ***slot)
{
	struct oa_header_cache *c = s->header_cache;
	*slot = NULL;
	if (!c || b < s->blobs || b >= s->blobs + s->n_blobs)
		return NULL;
	oa_gguf_info **at = &c->parsed[mode == OA_GGUF_FULL][b - s->blobs];
	if (*at)
		return *at;
	*slot = at;
	return NULL;
}

static void read_gguf_layer(oa_store *s, oa_model *m, size_t i, oa_gguf_mode mode)
{
	oa_model_headers *h = m->headers;
	oa_layer_header *lh = &h->layers[i];
	oa_blob *b = m->layer_blobs[i];
	if (!usable_blob(m, i)) {
		read_gguf_quietly(s, b, lh);
		return;
	}
	oa_gguf_info **keep;
	oa_gguf_info *seen = cached_gguf(s, b, mode, &keep);
	if (seen) {
		lh->have_gguf = true;
		lh->gguf = gguf_hold(seen);
		gguf_findings(s, m, i);
		return;
	}
	int fd = oa_store_open_blob(s, b);
	char path[96];
	snprintf(path, sizeof path, "blobs/%s", b->name);
	if (fd < 0) {
		oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, m->display, digest_of(m, i), path,
		                "cannot open %s layer: %s", oa_layer_kind_name(m->m.layers[i].kind),
		                strerror(errno));
		return;
	}
	unsigned char magic[4] = { 0 };
	ssize_t got = oa_pread_full(fd, magic, 4, 0);
	if (got == 4 && !oa_gguf_is_magic(magic)) {
		char *shown = oa_escape(magic, 4);
		oa_findings_add(&s->findings, OA_FINDING_INVALID_GGUF, m->display, digest_of(m, i), path,
		                "%s layer is not GGUF (starts with \"%s\")",
		                oa_layer_kind_name(m->m.layers[i].kind), shown);
		free(shown);
		close(fd);
		lh->not_gguf = true;
		return;
	}
	lh->have_gguf = true;
	lh->gguf = gguf_new();
	oa_gguf_read_fd(fd, (uint64_t)b->st.size, mode, lh->gguf);
	close(fd);
	if (keep)
		*keep = gguf_hold(lh->gguf);
	gguf_findings(s, m, i);
}

/* The findings a layer's GGUF header gives its model. */
static void gguf_findings(oa_store *s, oa_model *m, size_t i)
{
	const oa_gguf_info *g = m->headers->layers[i].gguf;
	char path[96];
	snprintf(path, sizeof path, "blobs/%s", m->layer_blobs[i]->name);
	for (size_t d = 0; d < g->n_diags; d++) {
		const oa_gguf_diag *dg = &g->diags[d];
		if (dg->severity == OA_SEV_ERROR) {
			oa_findings_add(&s->findings, OA_FINDING_INVALID_GGUF, m->display, digest_of(m, i), path,
			                "%s", dg->message);
			break; /* the first error says it; the rest follow from it */
		}
	}
	if (g->ok && g->n_warnings) {
		for (size_t d = 0; d < g->n_diags; d++)
			if (g->diags[d].severity == OA_SEV_WARNING)
				oa_findings_add(&s->findings, OA_FINDING_GGUF_WARNING, m->display, digest_of(m, i),
				                path, "%s", g->diags[d].message);
	}
}

static void read_tensor_layer(oa_store *s, oa_model *m, size_t i)
{
	oa_model_headers *h = m->headers;
	oa_layer_header *lh = &h->layers[i];
	oa_blob *b = m->layer_blobs[i];
	if (!usable_blob(m, i))
		return;
	char path[96];
	snprintf(path, sizeof path, "blobs/%s", b->name);
	int fd = oa_store_open_blob(s, b);
	if (fd < 0) {
		oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, m->display, digest_of(m, i), path,
		                "cannot open tensor layer: %s", strerror(errno));
		return;
	}
	lh->have_st = true;
	lh->st = oa_xcalloc(1, sizeof *lh->st);
	oa_st_read_fd(fd, (uint64_t)b->st.size, m->m.layers[i].name, lh->st);
	close(fd);
	if (!h->st_model) {
		h->st_model = oa_xmalloc(sizeof *h->st_model);
		oa_st_model_init(h->st_model);
	}
	oa_st_model_add(h->st_model, lh->st);
	h->have_st_model = true;
	const oa_st_blob *st = lh->st;
	for (size_t d = 0; d < st->n_diags; d++) {
		if (st->diags[d].severity == OA_SEV_ERROR) {
			oa_findings_add(&s->findings, OA_FINDING_INVALID_SAFETENSORS, m->display, digest_of(m, i),
			                path, "%s", st->diags[d].message);
			break;
		}
	}
	if (st->ok)
		for (size_t d = 0; d < st->n_diags; d++)
			if (st->diags[d].severity == OA_SEV_WARNING)
				oa_findings_add(&s->findings, OA_FINDING_SAFETENSORS_WARNING, m->display,
				                digest_of(m, i), path, "%s", st->diags[d].message);
}

static void read_hf_config(oa_store *s, oa_model *m)
{
	for (size_t i = 0; i < m->m.n_layers; i++) {
		const oa_layer *l = &m->m.layers[i];
		if (l->kind != OA_LAYER_JSON || !l->name || strcmp(l->name, "config.json") != 0)
			continue;
		oa_blob *b = m->layer_blobs[i];
		uint8_t *bytes;
		size_t len;
		if (!b || b->dangling ||
		    oa_read_file_at(s->blobs_fd, b->name, OA_HF_CONFIG_MAX, &bytes, &len) < 0)
			return;
		m->headers->have_hf = true;
		oa_hf_config *hf = m->headers->hf = oa_xcalloc(1, sizeof *hf);
		if (oa_hf_config_parse(bytes, len, hf) < 0)
			oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, digest_of(m, i),
			                m->rel_path, "config.json layer is not usable: %s",
			                hf->error ? hf->error : "parse error");
		free(bytes);
		return;
	}
}

/* Parse a parameter-size string ("8.0B", "137M", "999.89M", "22K", "7") into a count. */
static bool parse_param_size(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s)
		return false;
	double mul = 1;
	switch (*end) {
	case 'T': case 't': mul = 1e12; end++; break;
	case 'B': case 'b': mul = 1e9; end++; break;
	case 'M': case 'm': mul = 1e6; end++; break;
	case 'K': case 'k': mul = 1e3; end++; break;
	default: break;
	}
	if (*end)
		return false;
	*out = v * mul;
	return true;
}

static void cross_check(oa_store *s, oa_model *m)
{
	oa_model_headers *h = m->headers;
	const oa_config *cfg = &m->cfg;
	bool have_cfg = m->config_state == OA_CONFIG_OK;
	unsigned ggufs = oa_model_layer_count(m, OA_LAYER_MODEL), tensors = oa_model_layer_count(m, OA_LAYER_TENSOR);

	if (have_cfg && !m->remote) {
		if (strcmp(cfg->model_format, "safetensors") == 0 && ggufs && !tensors)
			oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, NULL, m->rel_path,
			                "config says model_format \"safetensors\" but the weights are GGUF layers: the server would start the MLX runner on them");
		if ((strcmp(cfg->model_format, "gguf") == 0 || !*cfg->model_format) && tensors &&
		    !ggufs)
			oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, NULL, m->rel_path,
			                "config says model_format \"%s\" but the weights are safetensors tensor layers: the server would start llama-server on them",
			                cfg->model_format);
	}
	for (size_t i = 0; i < m->m.n_layers; i++) {
		const oa_layer_header *lh = &h->layers[i];
		if (!lh->have_gguf)
			continue;
		enum oa_layer_kind k = m->m.layers[i].kind;
		int gk = lh->gguf->kind;
		if (k == OA_LAYER_MODEL && gk == OA_GGUF_KIND_PROJECTOR)
			oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, digest_of(m, i),
			                m->rel_path, "layer %zu is stored as a model but its GGUF header describes a projector (mmproj)", i);
		else if (k == OA_LAYER_MODEL && gk == OA_GGUF_KIND_ADAPTER)
			oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, digest_of(m, i),
			                m->rel_path, "layer %zu is stored as a model but its GGUF header describes an adapter", i);
		else if (k == OA_LAYER_PROJECTOR && gk == OA_GGUF_KIND_MODEL)
			oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, digest_of(m, i),
			                m->rel_path, "layer %zu is stored as a projector but its GGUF header describes a model", i);
	}
	size_t last = h->main_layer;
	const oa_gguf_info *g = main_gguf(h);
	if (!have_cfg || !g)
		return;
	if (*cfg->model_family && g->architecture && strcasecmp(cfg->model_family, g->architecture) != 0)
		oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, digest_of(m, last),
		                m->rel_path, "config family \"%s\" but the GGUF architecture is \"%s\"",
		                cfg->model_family, g->architecture);
	if (*cfg->file_type && strcmp(cfg->file_type, "unknown") != 0 && g->has_file_type) {
		const char *gs = oa_ftype_ollama_string(g->file_type, g->file_type_is_u32);
		if (gs && strcmp(gs, "unknown") != 0 && strcasecmp(gs, cfg->file_type) != 0)
			oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, digest_of(m, last),
			                m->rel_path, "config quantization \"%s\" but the GGUF file_type is %s",
			                cfg->file_type, gs);
	}
	double want;
	uint64_t params = h->sharded ? h->shard_params : g->parameter_count;
	if (*cfg->model_type && params && parse_param_size(cfg->model_type, &want) && want > 0) {
		/* Older Ollama rounded differently ("137M" for 136.73M); only a real
		 * difference, more than 10%, is worth a finding. */
		double got = (double)params;
		if (fabs(got - want) / want > 0.10) {
			char human[32];
			oa_human_number(params, human, sizeof human);
			oa_findings_add(&s->findings, OA_FINDING_CONFIG_MISMATCH, m->display, digest_of(m, last),
			                m->rel_path, "config parameter size \"%s\" but the GGUF%s has %s parameters",
			                cfg->model_type, h->sharded ? " (every shard)" : "", human);
		}
	}
}

/* A split GGUF's shards, one per model layer in order: each must say
 * split.no = its place and the same split.count as there are shards, as
 * llama.cpp checks when it loads them (spec §2.5.2). shard_params adds up
 * every shard's tensors. */
static void check_shards(oa_store *s, oa_model *m)
{
	oa_model_headers *h = m->headers;
	uint64_t count = h->layers[h->main_layer].gguf->split_count, k = 0;
	uint64_t *seen = oa_xcalloc(m->m.n_layers + 1, sizeof *seen); /* the split.no of each shard read */
	int64_t tensors = 0;
	bool all_read = true;
	oa_buf why;
	oa_buf_init(&why);
	for (size_t i = 0; i < m->m.n_layers; i++) {
		if (m->m.layers[i].kind != OA_LAYER_MODEL)
			continue;
		const oa_gguf_info *g = h->layers[i].have_gguf && h->layers[i].gguf->ok ? h->layers[i].gguf : NULL;
		all_read &= g != NULL;
		bool dup = false;
		for (uint64_t j = 0; g && j < k; j++)
			dup |= seen[j] == g->split_no;
		seen[k] = g && g->has_split ? g->split_no : UINT64_MAX;
		if (g && !g->has_split)
			oa_buf_printf(&why, "; layer %zu (shard %llu) has no split.no/split.count", i, (unsigned long long)k + 1);
		else if (g && g->split_no != k)
			oa_buf_printf(&why, "; layer %zu is shard %llu but says split.no %llu%s", i, (unsigned long long)k + 1,
			              (unsigned long long)g->split_no, g->split_no >= count ? " (out of range)"
			              : dup ? " (a duplicate)" : " (out of order)");
		else if (g && g->split_count != count)
			oa_buf_printf(&why, "; layer %zu says split.count %llu, the first shard %llu", i,
			              (unsigned long long)g->split_count, (unsigned long long)count);
		if (g) {
			h->shard_params += g->parameter_count;
			tensors += (int64_t)g->tensor_count;
		}
		k++;
	}
	if (k != count)
		oa_buf_printf(&why, "; split.count is %llu but the manifest has %llu shards (%s)", (unsigned long long)count,
		              (unsigned long long)k, k < count ? "one is missing" : "one too many");
	const oa_gguf_info *g0 = main_gguf(h);
	if (all_read && s->header_mode == OA_HEADERS_FULL && g0->split_tensors >= 0 && g0->split_tensors != tensors)
		oa_buf_printf(&why, "; the shards hold %lld tensors, split.tensors.count says %lld", (long long)tensors,
		              (long long)g0->split_tensors);
	free(seen);
	if (why.len)
		oa_findings_add(&s->findings, OA_FINDING_SPLIT_MISMATCH, m->display, NULL, m->rel_path,
		                "the %llu shards of this split GGUF do not make one model, llama.cpp cannot load it: %s",
		                (unsigned long long)k, why.data + 2);
	oa_buf_free(&why);
}

void oa_headers_apply(oa_store *s, oa_model *m)
{
	/* The list cache reads no weight header once either remote field is
	 * set, even when the model is not remote (both are needed for that). */
	bool remote_field = m->config_state == OA_CONFIG_OK &&
	                    (*m->cfg.remote_host || *m->cfg.remote_model);
	if (s->header_mode == OA_HEADERS_NONE || !m->manifest_ok || remote_field)
		return;
	/* The layers in the same allocation, after the struct (one malloc
	 * chunk a tag, not two). */
	oa_model_headers *h = oa_xcalloc(1, sizeof *h + m->m.n_layers * sizeof *h->layers);
	m->headers = h;
	h->n_layers = m->m.n_layers;
	h->layers = (oa_layer_header *)(h + 1);

	bool full = s->header_mode == OA_HEADERS_FULL;
	oa_gguf_mode mode = full ? OA_GGUF_FULL : OA_GGUF_QUICK;
	size_t first = first_model_layer(m);
	h->main_layer = last_model_layer(m);
	bool first_read = first != h->main_layer; /* several model layers: shards of a split GGUF? */
	if (first_read) {
		read_gguf_layer(s, m, first, mode);
		const oa_gguf_info *g = h->layers[first].gguf;
		h->sharded = g && g->has_split && g->split_no == 0 && g->split_count > 1;
		if (h->sharded)
			h->main_layer = first;
	}
	for (size_t i = 0; i < m->m.n_layers; i++) {
		enum oa_layer_kind k = m->m.layers[i].kind;
		if (i == first && first_read)
			continue;
		if (is_gguf_kind(k) && (full || i == h->main_layer || (h->sharded && k == OA_LAYER_MODEL)))
			read_gguf_layer(s, m, i, mode);
		else if (k == OA_LAYER_TENSOR)
			read_tensor_layer(s, m, i);
	}
	if (h->sharded)
		check_shards(s, m);
	read_hf_config(s, m);
	if (h->have_st_model)
		oa_st_model_finish(h->st_model, h->have_hf ? h->hf->torch_dtype : NULL);

	/* What Ollama's list cache takes from the model layer's GGUF (§4.3,
	 * server/model_list_cache.go readModelListGGUF): the last, or a split
	 * GGUF's first. Any read error there discards all of it, so a broken
	 * header contributes nothing here. */
	if (main_gguf(h) && main_gguf(h)->ok) {
		const oa_gguf_info *g = main_gguf(h);
		if (!m->d_context_length)
			m->d_context_length = (int64_t)g->context_length;
		if (!m->d_embedding_length)
			m->d_embedding_length = (int64_t)g->embedding_length;
		const char *q = m->d_quantization;
		if ((!q || !*q || strcmp(q, "unknown") == 0) && g->has_file_type) {
			/* The list cache reads general.file_type of any integer type and
			 * prints ggml.FileType(v).String(), so 0 is "F32" there. */
			const char *gs = oa_ftype_list_string(g->file_type);
			if (strcmp(gs, "unknown") != 0)
				m->d_quantization = gs;
		}
		h->cap_completion = !g->has_pooling_type;
		h->cap_embedding = g->has_pooling_type;
		h->cap_vision = g->has_vision_block_count;
		h->cap_audio = g->has_audio_block_count;
	}
	if (full)
		cross_check(s, m);
}

/* *slot, now a copy of text (what it held before is freed). */
static const char *header_text(char **slot, const char *text)
{
	free(*slot);
	*slot = oa_xstrdup(text);
	return *slot;
}

void oa_headers_fill_display(oa_model *m)
{
	oa_model_headers *h = m->headers;
	if (!h)
		return;
	const oa_gguf_info *g = main_gguf(h);
	if (!m->arch) {
		if (g && g->architecture)
			m->arch = g->architecture;
		else if (h->have_hf && h->hf->family)
			m->arch = h->hf->family;
	}
	/* For safetensors models `ollama show` reports the exact count (§4.4). */
	char buf[32];
	if (h->have_st_model && h->st_model->params) {
		oa_human_number(h->st_model->params, buf, sizeof buf);
		m->params = header_text(&h->params_text, buf);
	} else if (!m->params && g && (h->sharded ? h->shard_params : g->parameter_count)) {
		oa_human_number(h->sharded ? h->shard_params : g->parameter_count, buf, sizeof buf);
		m->params = header_text(&h->params_text, buf);
	}
	if (!m->quant) {
		if (g && g->has_file_type) {
			const char *gs = oa_ftype_list_string(g->file_type); /* 0: F32 */
			if (gs && strcmp(gs, "unknown") != 0)
				m->quant = gs;
		} else if (g && g->file_type_guessed) {
			const char *gs = oa_ftype_list_string(g->guessed_file_type);
			if (gs && strcmp(gs, "unknown") != 0) {
				snprintf(buf, sizeof buf, "%s?", gs);
				m->quant = header_text(&h->quant_text, buf);
			}
		} else if (h->have_st_model && h->st_model->quant_level && *h->st_model->quant_level) {
			m->quant = h->st_model->quant_level;
		}
	}
}

void oa_headers_free(struct oa_model_headers *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_layers; i++) {
		gguf_release(h->layers[i].gguf);
		if (h->layers[i].have_st) {
			oa_st_blob_free(h->layers[i].st);
			free(h->layers[i].st);
		}
	}
	oa_st_model_free(h->st_model); /* h->layers goes with h */
	free(h->st_model);
	if (h->hf)
		oa_hf_config_free(h->hf);
	free(h->hf);
	free(h->params_text);
	free(h->quant_text);
	free(h);
}
