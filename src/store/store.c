/* store.c - read a store: list blobs/, walk its tags, then check what they
 * reference (configs, layers, templates), the files of blobs/, the 0.40
 * migration's shadows and downgrade loss, and metadata/. */
#include "ollama_audit/store.h"
#include "ollama_audit/humanize.h"
#include "store/blobs_private.h"
#include "store/reach_private.h"
#include "store/resolve_private.h"
#include "store/walk.h"
#include "base/platform.h"
#include "base/pool.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OA_CONFIG_MAX (16u << 20)
#define OA_TEMPLATE_MAX (1u << 20)

/* How findings name reference l of m: "config", or "layer 2 (model)". */
static const char *ref_what(const oa_model *m, const oa_layer *l, char *buf, size_t len)
{
	if (l == &m->m.config)
		return "config";
	snprintf(buf, len, "layer %zu (%s)", (size_t)(l - m->m.layers), oa_layer_kind_name(l->kind));
	return buf;
}

/* l: m's config or one of its layers. */
static void check_reference(oa_store *s, oa_model *m, const oa_layer *l, oa_blob **out)
{
	*out = NULL;
	oa_blob *b = l->digest_valid ? oa_store_find_blob(s, l) : NULL;
	if (b && b->cls == OA_BLOB_VALID && !b->dangling && !l->hex_uppercase &&
	    (!b->stat_ok || (int64_t)b->st.size == l->size)) {
		b->refs++;
		*out = b;
		return; /* nothing to report: no words to build */
	}
	char what_buf[64];
	const char *what = ref_what(m, l, what_buf, sizeof what_buf);
	if (!l->digest_valid) {
		char *d = oa_escape(l->digest, strlen(l->digest));
		oa_findings_add(&s->findings, OA_FINDING_INVALID_DIGEST, m->display, NULL, m->rel_path,
		                "%s digest \"%s\" is not sha256: followed by 64 hex digits", what, d);
		free(d);
		return;
	}
	char digest[72];
	snprintf(digest, sizeof digest, "sha256:%s", l->hex);
	char path[80];
	snprintf(path, sizeof path, "blobs/sha256-%s", l->digest + 7);
	if (l->hex_uppercase)
		oa_findings_add(&s->findings, OA_FINDING_INVALID_DIGEST, m->display, digest, m->rel_path,
		                "%s digest has upper-case hex: the server's prune compares exact strings and deletes its blob",
		                what);
	if (!b || b->cls != OA_BLOB_VALID || (b->dangling)) {
		if (b && b->dangling) {
			b->refs++;
			*out = b;
		}
		m->missing_blobs++;
		if (l == &m->m.config)
			return; /* read_config reports it once, as missing-config */
		oa_findings_add(&s->findings, OA_FINDING_MISSING_BLOB, m->display, digest, path,
		                "%s blob is missing%s", what,
		                b && b->dangling ? " (a dangling symlink)" :
		                b && b->cls == OA_BLOB_DIR ? " (a directory has its name)" : "");
		return;
	}
	b->refs++;
	*out = b;
	if (!b->stat_ok)
		return;
	if ((int64_t)b->st.size != l->size) {
		if (b->st.size == 0)
			oa_findings_add(&s->findings, OA_FINDING_EMPTY_BLOB, m->display, digest, path,
			                "%s blob is empty; the manifest declares %lld bytes", what,
			                (long long)l->size);
		else {
			char have[32], want[32];
			oa_format_size((uint64_t)b->st.size, OA_UNITS_SI, have, sizeof have);
			oa_format_size((uint64_t)(l->size < 0 ? 0 : l->size), OA_UNITS_SI, want, sizeof want);
			oa_findings_add(&s->findings, OA_FINDING_SIZE_MISMATCH, m->display, digest, path,
			                "%s blob has %s (%lld bytes) on disk; the manifest declares %s (%lld)", what,
			                have, (long long)b->st.size, want, (long long)l->size);
		}
	}
}

/* A config blob read and parsed (into m->cfg): what read_config reports. */
typedef struct config_read {
	bool done;
	int rc, err;         /* store_read_blob's result and errno */
	int parsed;          /* oa_config_parse's result */
	char *perr;          /* its reason when it failed (owned), else NULL: a 256-byte array
	                      * per model was 2.5 MB on a store of 10,000 tags (issue 21) */
} config_read;

typedef struct config_prefetch {
	oa_store *s;
	config_read *v;      /* per model */
} config_prefetch;

static void load_config(const oa_store *s, oa_model *m, const oa_blob *b, config_read *r)
{
	uint8_t *bytes;
	size_t len;
	r->done = true;
	r->rc = store_read_blob(s, b, OA_CONFIG_MAX, &bytes, &len);
	if (r->rc < 0) {
		r->err = errno;
		return;
	}
	char perr[256];
	r->parsed = oa_config_parse(bytes, len, &m->cfg, perr, sizeof perr);
	if (r->parsed < 0)
		r->perr = oa_xstrdup(perr);
	free(bytes);
}

/* r: the blob as prefetch_config read it, or NULL to read it now. */
static void read_config(oa_store *s, oa_model *m, config_read *r)
{
	const oa_layer *c = &m->m.config;
	if (!*c->digest) {
		m->config_state = OA_CONFIG_NONE;
		return;
	}
	check_reference(s, m, c, &m->config_blob);
	if (!c->digest_valid) {
		m->config_state = OA_CONFIG_BAD_DIGEST;
		return;
	}
	/* Config findings name the blob file, like every other blob finding. */
	char path[80];
	snprintf(path, sizeof path, "blobs/sha256-%s", c->digest + 7);
	if (!m->config_blob || m->config_blob->dangling || m->config_blob->cls != OA_BLOB_VALID) {
		oa_blob *b = m->config_blob;
		m->config_state = OA_CONFIG_MISSING;
		oa_findings_add(&s->findings, OA_FINDING_MISSING_CONFIG, m->display, c->digest, path,
		                "config blob is missing%s",
		                b && b->dangling ? " (a dangling symlink)" :
		                b && b->cls == OA_BLOB_DIR ? " (a directory has its name)" : "");
		return;
	}
	config_read own = { false, 0, 0, 0, NULL };
	if (!r || !r->done) {
		load_config(s, m, m->config_blob, &own);
		r = &own;
	}
	if (r->rc < 0) {
		m->config_state = OA_CONFIG_INVALID;
		int e = r->err;
		bool bad_file = e == EINVAL || e == EFBIG;
		m->config_error = oa_xasprintf("cannot read config blob: %s",
		                               e == EINVAL ? "not a regular file" :
		                               e == EFBIG ? "larger than 16 MiB" : strerror(e));
		oa_findings_add(&s->findings, bad_file ? OA_FINDING_INVALID_CONFIG : OA_FINDING_UNREADABLE, m->display,
		                c->digest, path, "%s", m->config_error);
		return;
	}
	if (r->parsed < 0) {
		m->config_state = OA_CONFIG_INVALID;
		m->config_error = oa_escape(r->perr, strlen(r->perr));
		free(r->perr);
		r->perr = NULL;
		oa_findings_add(&s->findings, OA_FINDING_INVALID_CONFIG, m->display, c->digest, path,
		                "config blob is %s", m->config_error);
	} else {
		m->config_state = OA_CONFIG_OK;
	}
}

/* The config blob a model's resolve_model reads, read and parsed ahead on
 * the scan's threads: it touches the model's cfg alone. */
static void prefetch_config(void *ctx, size_t i)
{
	config_prefetch *p = ctx;
	oa_model *m = &p->s->models[i];
	const oa_layer *c = &m->m.config;
	if (!m->manifest_ok || !*c->digest || !c->digest_valid)
		return;
	/* the blob read_config reads: check_reference's, when complete and present */
	oa_blob *b = oa_store_find_blob(p->s, c);
	if (b && b->cls == OA_BLOB_VALID && !b->dangling)
		load_config(p->s, m, b, &p->v[i]);
}

/* The text layers the server reads whenever it loads the model (GetModel:
 * system, params, messages, license; the template is read above), which
 * nothing else here reads: one it cannot open fails every load. Asked of
 * the file itself (no symlink: never followed out of the store), for the
 * user running the audit, as the weights' header read is. */
static void check_text_readable(oa_store *s, oa_model *m, const oa_layer *l, const oa_blob *b)
{
	if (!b || b->dangling || b->is_symlink || !b->stat_ok)
		return;
	if (l->kind != OA_LAYER_SYSTEM && l->kind != OA_LAYER_PARAMS && l->kind != OA_LAYER_MESSAGES &&
	    l->kind != OA_LAYER_LICENSE)
		return;
	if (faccessat(s->blobs_fd, b->name, R_OK, AT_EACCESS) == 0 || errno != EACCES)
		return;
	char *bp = oa_xasprintf("blobs/%s", b->name);
	oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, m->display, l->digest, bp,
	                "cannot read the %s blob: %s (the server reads it at every load)",
	                oa_layer_kind_name(l->kind), strerror(EACCES));
	free(bp);
}

static void resolve_model(oa_store *s, oa_model *m, config_read *r)
{
	store_ref_manifest_blobs(s, m);
	if (!m->manifest_ok)
		return;
	read_config(s, m, r);
	m->layer_blobs = oa_xcalloc(m->m.n_layers, sizeof *m->layer_blobs);
	for (size_t i = 0; i < m->m.n_layers; i++) {
		const oa_layer *l = &m->m.layers[i];
		if (l->kind == OA_LAYER_UNKNOWN) {
			char *mt = oa_escape(l->media_type, strlen(l->media_type));
			oa_findings_add(&s->findings, OA_FINDING_UNKNOWN_MEDIA_TYPE, m->display,
			                l->digest_valid ? l->digest : NULL, m->rel_path,
			                "layer %zu has media type \"%s\", which Ollama does not use", i, mt);
			free(mt);
		}
		check_reference(s, m, l, &m->layer_blobs[i]);
		check_text_readable(s, m, l, m->layer_blobs[i]);
		if (l->kind == OA_LAYER_TEMPLATE && m->layer_blobs[i] && !m->layer_blobs[i]->dangling &&
		    !m->template_text) {
			uint8_t *t;
			size_t tlen, at = (size_t)(m->layer_blobs[i] - s->blobs);
			if (!s->blob_text)
				s->blob_text = oa_xcalloc(s->n_blobs, sizeof *s->blob_text);
			/* every tag of a family names the same template: read it once */
			if (s->blob_text[at])
				m->template_text = s->blob_text[at];
			else if (store_read_blob(s, m->layer_blobs[i], OA_TEMPLATE_MAX, &t, &tlen) == 0)
				m->template_text = s->blob_text[at] = (char *)t;
			else if (errno != EFBIG) {
				/* The server cannot read it either: ollama list drops the model. */
				int e = errno;
				char *bp = oa_xasprintf("blobs/%s", m->layer_blobs[i]->name);
				oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, m->display, l->digest, bp,
				                "cannot read the template blob: %s", strerror(e));
				free(bp);
			}
		}
	}
}

/* The unreferenced blobs whose content check_blob_files looks at (is it a
 * manifest?), read ahead on the scan's threads: each touches its blob. */
typedef struct manifest_look {
	oa_store *s;
	oa_blob **v;
} manifest_look;

static void look_at_blob(void *ctx, size_t i)
{
	manifest_look *l = ctx;
	oa_blob_looks_like_manifest(l->s, l->v[i]);
}

static void look_ahead(oa_store *s)
{
	manifest_look l = { s, NULL };
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < s->n_blobs; i++) {
		oa_blob *b = &s->blobs[i];
		if (b->cls == OA_BLOB_VALID && b->refs == 0 && !b->weak_refs && !b->dangling) {
			OA_ALLOC_GROW(l.v, n + 1, cap);
			l.v[n++] = b;
		}
	}
	oa_pool_run(s->jobs, n, OA_POOL_MIN_PARALLEL, look_at_blob, &l);
	free(l.v);
}

/* The model a split directory was made for: its name carries the first 12
 * hex of that manifest's digest (the row's ID). NULL when none is here. */
static const oa_model *split_dir_model(const oa_store *s, const char *name)
{
	const char *h = name + strlen(OA_SPLIT_DIR_PREFIX);
	if (strlen(h) < 13 || !oa_is_hex(h, 12) || h[12] != '-')
		return NULL;
	for (size_t i = 0; i < s->n_models; i++)
		if (s->models[i].manifest_ok && !s->models[i].anchor && strncmp(s->models[i].m.id, h, 12) == 0)
			return &s->models[i];
	return NULL;
}

static void report_split_dir(oa_store *s, const oa_blob *b, const char *path)
{
	const oa_model *m = split_dir_model(s, b->name);
	oa_findings_add(&s->findings, OA_FINDING_SPLIT_DIR, NULL, NULL, path,
	                "hard links to the shards of %s, made by a load of that split GGUF: in use while it is loaded; "
	                "prune removes it once older than 1 h", m ? m->display : "a model not here");
}

/* The first file that blocks the server's prune, or NULL. */
static const char *first_blocker(const oa_store *s)
{
	for (size_t i = 0; s->prune_blocked && i < s->findings.n; i++)
		if (s->findings.v[i].id == OA_FINDING_PRUNE_BLOCKER && s->findings.v[i].path)
			return s->findings.v[i].path;
	return NULL;
}

/* An unreferenced blob: a manifest no tag reaches is junk too where tags
 * reach manifest blobs (manifests-v2/: what `ollama rm` or a list rewrite
 * leaves); elsewhere its own, more cautious, finding. */
static void report_unreferenced(oa_store *s, oa_blob *b, const char *dg, const char *path)
{
	bool manifest = oa_blob_looks_like_manifest(s, b);
	if (manifest && !s->has_manifests_v2) {
		oa_findings_add(&s->findings, OA_FINDING_MANIFEST_BLOB, NULL, dg, path,
		                "unreferenced, but its content is a manifest (newer Ollama keeps these; older ones prune them)");
		return;
	}
	char size[32];
	oa_format_size((uint64_t)b->st.size, OA_UNITS_SI, size, sizeof size);
	const char *blocker = first_blocker(s);
	char *why = blocker ? oa_xasprintf("; the server's prune is blocked (by %s), so it stays", blocker) : NULL;
	oa_findings_add(&s->findings, OA_FINDING_ORPHAN_BLOB, NULL, dg, path, "no manifest references this blob (%s)%s%s",
	                size, manifest ? ": a manifest no tag reaches" : "", why ? why : "");
	free(why);
}

static void check_blob_files(oa_store *s)
{
	look_ahead(s);
	for (size_t i = 0; i < s->n_blobs; i++) {
		oa_blob *b = &s->blobs[i];
		/* the common case, a referenced blob that is a plain file: nothing to say */
		if (!b->is_symlink && b->stat_ok && b->cls == OA_BLOB_VALID && (b->refs || b->dangling))
			continue;
		char *path = oa_xasprintf("blobs/%s", b->name);
		char digest[72];
		snprintf(digest, sizeof digest, "sha256:%s", b->hex);
		const char *dg = b->hex[0] ? digest : NULL;
		if (b->is_symlink) {
			const char *t = b->link_target ? b->link_target : "?";
			if (b->dangling)
				oa_findings_add(&s->findings, OA_FINDING_SYMLINKED_BLOB, NULL, dg, path,
				                "dangling symlink to %s", t);
			else
				oa_findings_add_sev(&s->findings, OA_FINDING_SYMLINKED_BLOB,
				                    b->link_outside ? OA_SEV_WARNING : OA_SEV_INFO, NULL, dg,
				                    path, "symlink to %s (%s the store)", t,
				                    b->link_outside ? "outside" : "inside");
		} else if (!b->stat_ok) {
			oa_findings_add(&s->findings, OA_FINDING_UNREADABLE, NULL, dg, path, "cannot stat: %s",
			                strerror(b->stat_errno));
		}
		switch (b->cls) {
		case OA_BLOB_VALID:
			if (b->refs == 0 && b->weak_refs && !b->dangling) {
				oa_findings_add(&s->findings, OA_FINDING_UNPARSED_REFERENCE, NULL, dg, path,
				                "named only by a manifest the server cannot read; kept, it may still be needed");
			} else if (b->refs == 0 && !b->dangling) {
				report_unreferenced(s, b, dg, path);
			}
			break;
		case OA_BLOB_LEGACY: {
			/* the server's start renames it, ':' to '-' (the hex as it is
			 * written, any case), over a blob of the new name */
			char *want = oa_xasprintf("sha256-%s", b->name + 7);
			oa_blob key = { .name = want };
			bool taken = bsearch(&key, s->blobs, s->n_blobs, sizeof *s->blobs, store_cmp_blob_name) != NULL;
			oa_findings_add(&s->findings, OA_FINDING_LEGACY_BLOB_NAME, NULL, dg, path,
			                "old blob name with ':'; the server renames it to %s at start%s", want,
			                taken ? ", over the file of that name that is there (this one replaces it)" : "");
			free(want);
			break;
		}
		case OA_BLOB_PARTIAL: {
			char alloc[32], size[32];
			oa_format_size((uint64_t)b->st.blocks * 512, OA_UNITS_SI, alloc, sizeof alloc);
			oa_format_size((uint64_t)b->st.size, OA_UNITS_SI, size, sizeof size);
			oa_findings_add(&s->findings, OA_FINDING_PARTIAL_DOWNLOAD, NULL, dg, path,
			                "interrupted download: %s allocated for a %s file", alloc, size);
			break;
		}
		case OA_BLOB_PARTIAL_PART:
			break; /* reported with its -partial file, or below when alone */
		case OA_BLOB_TMP:
		case OA_BLOB_CREATE_TEMP:
		case OA_BLOB_QUANT_TEMP:
		case OA_BLOB_TEMP_DIR:
			oa_findings_add(&s->findings, OA_FINDING_TEMP_FILE, NULL, dg, path, "%s left behind",
			                oa_blob_class_name(b->cls));
			break;
		case OA_BLOB_SPLIT_DIR:
			report_split_dir(s, b, path);
			break;
		case OA_BLOB_DIR:
		case OA_BLOB_FOREIGN:
			oa_findings_add(&s->findings, OA_FINDING_FOREIGN_FILE, NULL, NULL, path,
			                "%s that Ollama does not write in blobs/",
			                b->cls == OA_BLOB_DIR ? "a directory" : "a file");
			break;
		default:
			break;
		}
		if (b->cls == OA_BLOB_PARTIAL_PART) {
			/* Part files without their -partial data file. */
			char want[7 + 64 + 9];
			snprintf(want, sizeof want, "sha256-%s-partial", b->hex);
			oa_blob key = { .name = want };
			if (!bsearch(&key, s->blobs, s->n_blobs, sizeof *s->blobs, store_cmp_blob_name))
				oa_findings_add(&s->findings, OA_FINDING_PARTIAL_DOWNLOAD, NULL, dg, path,
				                "download part state without its -partial data file");
		}
		free(path);
	}
}

static int cmp_model_mtime(const void *a, const void *b)
{
	const oa_model *x = a, *y = b;
	/* Newest first by Unix seconds; ties keep walk (name) order, a list's
	 * rows in list order after the child in use. */
	if (x->st.mtime_ns / 1000000000 != y->st.mtime_ns / 1000000000)
		return x->st.mtime_ns / 1000000000 > y->st.mtime_ns / 1000000000 ? -1 : 1;
	int c = strcmp(x->rel_path, y->rel_path);
	if (c || x->sibling != y->sibling)
		return c ? c : x->sibling ? 1 : -1;
	return x->row_entry < y->row_entry ? -1 : x->row_entry > y->row_entry;
}

/* The rows that carry a list's child (a list tag's, a sibling's), sorted
 * by child digest, then model order: built the first time a shadow needs
 * one, so that finding each shadow's row is a search, not a pass. */
typedef struct row_index {
	const oa_model *const *v;
	size_t n;
	bool built;
} row_index;

static int cmp_row(const void *a, const void *b)
{
	const oa_model *x = *(const oa_model *const *)a, *y = *(const oa_model *const *)b;
	int c = strcmp(x->m.id, y->m.id);
	return c ? c : x < y ? -1 : x > y;
}

/* The first row (in model order) of a list tag whose child digest is hex, or NULL. */
static const oa_model *list_row_of(const oa_store *s, row_index *ix, const char *hex)
{
	if (!ix->built) {
		const oa_model **v = oa_xcalloc(s->n_models + 1, sizeof *v);
		size_t n = 0;
		for (size_t i = 0; i < s->n_models; i++) {
			const oa_model *r = &s->models[i];
			if ((r->is_list || r->sibling) && r->manifest_ok)
				v[n++] = r;
		}
		if (n)
			qsort(v, n, sizeof *v, cmp_row);
		ix->v = v;
		ix->n = n;
		ix->built = true;
	}
	size_t lo = 0, hi = ix->n; /* the first whose id is not below hex */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ix->v[mid]->m.id, hex) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && strcmp(ix->v[lo]->m.id, hex) == 0 ? ix->v[lo] : NULL;
}

/* Compatibility shadows (compatmigrate: writeConvertedLegacyShadow): a
 * legacy tag registry.ollama.ai/library/llamacpp:<hex> holding the
 * converted child whose digest is <hex>, so that an older server keeps its
 * blobs. Its ID (the sha256 of its bytes) is that hex. */
static void mark_shadows(oa_store *s)
{
	row_index ix = { NULL, 0, false };
	for (size_t i = 0; i < s->n_models; i++) {
		oa_model *m = &s->models[i];
		if (m->v2 || !m->manifest_ok || strcmp(m->name.host, "registry.ollama.ai") != 0 ||
		    strcmp(m->name.ns, "library") != 0 || strcmp(m->name.model, "llamacpp") != 0 ||
		    strcmp(m->name.tag, m->m.id) != 0)
			continue;
		m->shadow = true;
		const oa_model *of = list_row_of(s, &ix, m->m.id);
		if (of) {
			m->shadow_of = of->display;
			oa_findings_add(&s->findings, OA_FINDING_COMPAT_SHADOW, m->display, NULL, m->rel_path,
			                "the compatibility shadow of %s's converted (llamacpp) child, kept for an Ollama "
			                "before manifest lists", of->display);
			continue;
		}
		char h[32];
		oa_human_bytes(store_bytes_only_in(s, m), h, sizeof h);
		oa_findings_add(&s->findings, OA_FINDING_ORPHANED_SHADOW, m->display, NULL, m->rel_path,
		                "a compatibility shadow whose model is gone (no tag's list names this child): "
		                "it alone holds %s; `rm` it to free them", h);
	}
	free((void *)ix.v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every digest a legacy tag names (its config's, its layers'), sorted. */
typedef struct legacy_set {
	const char **v;
	size_t n;
} legacy_set;

static legacy_set legacy_digests(const oa_store *s)
{
	legacy_set d = { NULL, 0 };
	size_t cap = 0;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *l = &s->models[i];
		if (l->v2 || !l->manifest_ok)
			continue;
		for (size_t k = 0; k <= l->m.n_layers; k++) {
			OA_ALLOC_GROW(d.v, d.n + 1, cap);
			d.v[d.n++] = k == 0 ? l->m.config.digest : l->m.layers[k - 1].digest;
		}
	}
	if (d.n)
		qsort(d.v, d.n, sizeof *d.v, cmp_str);
	return d;
}

static bool legacy_names(const legacy_set *d, const char *digest)
{
	return d->n && bsearch(&digest, d->v, d->n, sizeof *d->v, cmp_str);
}

/* An Ollama from before manifest lists reads manifests/ only: its start-up
 * prune deletes every blob no legacy tag names (spec §2.5.1, the
 * downgrade hazard): the weights of a model only manifests-v2/ names, and
 * the manifest blobs of a v2 tag with no legacy anchor (a copy, a retired
 * conversion), which leaves that tag dangling. Count, per manifests-v2
 * row, what it would lose. */
static void mark_downgrade_loss(oa_store *s)
{
	legacy_set legacy = { NULL, 0 };
	bool built = false;
	for (size_t i = 0; i < s->n_models; i++) {
		oa_model *m = &s->models[i];
		if (!m->v2 || !m->manifest_ok)
			continue;
		if (!built) {
			legacy = legacy_digests(s);
			built = true;
		}
		oa_blob *seen = NULL;
		uint64_t model = 0, manifests = 0;
		for (size_t k = 0; k <= m->m.n_layers; k++) {
			const oa_layer *l = k == 0 ? &m->m.config : &m->m.layers[k - 1];
			oa_blob *b = k == 0 ? m->config_blob : m->layer_blobs ? m->layer_blobs[k - 1] : NULL;
			if (b && b != seen && b->stat_ok && !legacy_names(&legacy, l->digest))
				model += (uint64_t)b->st.blocks * 512;
			seen = b;
		}
		oa_blob *mb[2];
		/* an anchored tag survives as its anchor: only an unanchored one loses its manifests */
		size_t nmb = m->anchored ? 0 : oa_model_manifest_blobs(s, m, mb);
		for (size_t k = 0; k < nmb; k++) {
			char d[72];
			snprintf(d, sizeof d, "sha256:%s", mb[k]->hex);
			if (mb[k]->stat_ok && !legacy_names(&legacy, d))
				manifests += (uint64_t)mb[k]->st.blocks * 512;
		}
		m->downgrade_loss = model + manifests;
		if (!m->downgrade_loss)
			continue;
		char h[32];
		oa_human_bytes(m->downgrade_loss, h, sizeof h);
		oa_findings_add(&s->findings, OA_FINDING_DOWNGRADE_LOSS, m->display, m->sibling ? m->m.id : NULL,
		                m->rel_path, "no legacy tag names %s of %s%s: one start of an Ollama from before manifest "
		                "lists deletes %s%s (see prune --predict-server --server-version 0.33)",
		                model ? "the blobs" : "the manifest blobs", m->display,
		                m->sibling || m->list_rows > 1 ? " (this child)" : "", h,
		                model ? " of its blobs" : " of its manifests (other legacy tags keep its weights), "
		                "and the tag no longer resolves");
	}
	free(legacy.v);
}

/* metadata/.gguf-metadata-*.tmp: a cache being written, or a write that
 * never reached its rename. */
static bool metadata_temp(oa_store *s, int fd, const char *nm)
{
	struct stat st;
	if (!oa_str_has_prefix(nm, OA_METADATA_TEMP_PREFIX) || !oa_str_has_suffix(nm, ".tmp") ||
	    fstatat(fd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return false;
	char *rel = oa_xasprintf("metadata/%s", nm);
	oa_findings_add(&s->findings, OA_FINDING_TEMP_FILE, NULL, NULL, rel,
	                "a metadata cache write that was not renamed into place; prune removes it after the grace period");
	s->metadata_temps = oa_xreallocarray(s->metadata_temps, s->n_metadata_temps + 1, sizeof *s->metadata_temps);
	s->metadata_temps[s->n_metadata_temps++] = rel;
	return true;
}

/* metadata/sha256-<hex>.json: extracted GGUF key-values, deleted with its
 * blob (spec §2.5.2); one whose blob is gone is stale. */
static void scan_metadata(oa_store *s)
{
	int fd = s->root_fd < 0 ? -1 : openat(s->root_fd, "metadata", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t n;
	char **names = oa_list_dir(fd, &n, NULL);
	for (size_t i = 0; names && i < n; i++) {
		const char *nm = names[i];
		struct stat st;
		if (metadata_temp(s, fd, nm) || strlen(nm) != 7 + 64 + 5 || strncmp(nm, "sha256-", 7) != 0 ||
		    !oa_is_hex(nm + 7, 64) || strcmp(nm + 71, ".json") != 0 || fstatat(fd, nm, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		char hex[65];
		memcpy(hex, nm + 7, 64);
		hex[64] = '\0';
		s->metadata_bytes += (uint64_t)st.st_blocks * 512;
		if (store_blob_by_hex(s, hex)) {
			s->n_metadata++;
			continue;
		}
		char *rel = oa_xasprintf("metadata/%s", nm);
		oa_findings_add(&s->findings, OA_FINDING_STALE_METADATA, NULL, NULL, rel,
		                "a metadata cache whose blob is gone; prune removes it after the grace period");
		s->stale_metadata = oa_xreallocarray(s->stale_metadata, s->n_stale_metadata + 1, sizeof *s->stale_metadata);
		s->stale_metadata[s->n_stale_metadata++] = rel;
	}
	oa_free_names(names, n);
	close(fd);
}

void oa_store_read(oa_store *s)
{
	store_blob_scan blobs;
	store_scan_blobs_start(s, &blobs);
	size_t cap = 0;
	store_walk(s, &cap, &blobs);
	store_add_list_rows(s, &cap);
	store_mark_anchors(s);
	if (s->n_models)
		qsort(s->models, s->n_models, sizeof *s->models, cmp_model_mtime);
	config_prefetch pre = { s, oa_xcalloc(s->n_models + 1, sizeof *pre.v) };
	oa_pool_run(s->jobs, s->n_models, OA_POOL_MIN_PARALLEL, prefetch_config, &pre);
	for (size_t i = 0; i < s->n_models; i++)
		resolve_model(s, &s->models[i], &pre.v[i]);
	for (size_t i = 0; i < s->n_models; i++)
		free(pre.v[i].perr); /* one read_config did not take (none, normally) */
	free(pre.v);
	check_blob_files(s);
	mark_shadows(s);
	mark_downgrade_loss(s);
	scan_metadata(s);
	store_index_names(s);
}
