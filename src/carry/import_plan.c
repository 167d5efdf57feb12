/* import_plan.c - the models of an import, what they need, and writing
 * them (import_plan.h). */
#include "carry/import_plan.h"
#include "ollama_audit/manifest.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Refuse model mi (the first reason counts). */
static void refuse_model(imp *m, size_t mi, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse_model(imp *m, size_t mi, const char *fmt, ...)
{
	oa_import_model *md = &m->r->models[mi];
	if (md->state == OA_IMP_REFUSED)
		return;
	md->state = OA_IMP_REFUSED;
	va_list ap;
	va_start(ap, fmt);
	md->why = oa_xvasprintf(fmt, ap);
	va_end(ap);
}

static size_t model_for(oa_import_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_models; i++)
		if (strcmp(r->models[i].name, name) == 0)
			return i;
	r->models = oa_xreallocarray(r->models, r->n_models + 1, sizeof *r->models);
	r->models[r->n_models] = (oa_import_model){ .name = oa_xstrdup(name), .state = OA_IMP_NEW };
	return r->n_models++;
}

/* The bytes of a blob small enough to be a manifest: read with the
 * bundle, or from the store. NULL when neither has it; *owned when the
 * caller frees them. */
static const uint8_t *small_bytes(imp *m, const char *hex, size_t *len, bool *owned)
{
	size_t i = imp_blob_find(m->r, hex);
	*owned = false;
	if (i != (size_t)-1 && m->r->blobs[i].bytes) {
		*len = (size_t)m->r->blobs[i].size;
		return m->r->blobs[i].bytes;
	}
	char name[80];
	uint8_t *bytes;
	snprintf(name, sizeof name, "sha256-%s", hex);
	if (m->l.blobs_fd < 0 || oa_read_regular_at(m->l.blobs_fd, name, OA_MANIFEST_MAX, &bytes, len) < 0)
		return NULL;
	*owned = true;
	return bytes;
}

/* Model mi needs blob hex of `size` bytes (-1: not declared). */
static void need(imp *m, size_t mi, const char *hex, int64_t size)
{
	oa_import_result *r = m->r;
	size_t i = imp_blob_find(r, hex);
	if (i == (size_t)-1 || !r->blobs[i].in_source) {
		int64_t have;
		enum land_blob st = land_blob_state(&m->l, hex, size, &have);
		if (st == LB_PRESENT || (st == LB_OTHER && size < 0 && have >= 0)) {
			i = imp_blob_add(r, hex, have);
			r->blobs[i].state = OA_IMP_PRESENT;
		} else if (st == LB_ABSENT) {
			refuse_model(m, mi, "blob sha256:%s is neither in the %s nor in the store", hex,
			             m->from ? "source store" : "bundle");
			return;
		} else {
			refuse_model(m, mi, "blob sha256:%s is here damaged (%lld bytes, not %lld): mend it first with "
			             "ollama-audit repair", hex, (long long)have, (long long)size);
			return;
		}
	}
	oa_import_blob *b = &r->blobs[i];
	if (b->state == OA_IMP_CONFLICT)
		refuse_model(m, mi, "blob sha256:%s is here damaged (%lld bytes, not %lld): mend it first with "
		             "ollama-audit repair", hex, (long long)b->size_here, (long long)b->size);
	else if (size >= 0 && b->size != size)
		refuse_model(m, mi, "its manifest declares %lld bytes for blob sha256:%s, which has %lld",
		             (long long)size, hex, (long long)b->size);
	oa_import_model *md = &r->models[mi];
	for (size_t k = 0; k < md->n_needs; k++)
		if (md->needs[k] == i)
			return;
	md->needs = oa_xreallocarray(md->needs, md->n_needs + 1, sizeof *md->needs);
	md->needs[md->n_needs++] = i;
	if (!b->model)
		b->model = oa_xstrdup(md->name);
}

/* Config and layers of a parsed manifest; false when a digest is not one. */
static bool need_layers(imp *m, size_t mi, const oa_manifest *mf, const char *where)
{
	for (size_t i = 0; i <= mf->n_layers; i++) {
		const oa_layer *l = i == 0 ? &mf->config : &mf->layers[i - 1];
		if (i == 0 && !*l->digest)
			continue;
		if (!l->digest_valid || l->hex_uppercase) {
			refuse_model(m, mi, "%s names a digest that is not sha256:<64 lowercase hex>", where);
			return false;
		}
		need(m, mi, l->hex, l->size);
	}
	return true;
}

/* A list's children here (in the bundle or the store), each with what it names. */
static void need_children(imp *m, size_t mi, const oa_manifest *list, const char *where)
{
	size_t children = 0;
	for (size_t e = 0; e < list->n_manifests; e++) {
		const oa_list_entry *en = &list->entries[e];
		size_t len;
		bool owned;
		const uint8_t *bytes = en->digest_valid ? small_bytes(m, en->hex, &len, &owned) : NULL;
		if (!bytes)
			continue; /* a child not pulled: normal for a list */
		oa_manifest child;
		char err[256] = "";
		if (oa_manifest_parse(bytes, len, &child, err, sizeof err) == 0 && !child.is_list) {
			need(m, mi, en->hex, (int64_t)len);
			need_layers(m, mi, &child, where);
			children++;
		}
		oa_manifest_free(&child);
		if (owned)
			free((void *)bytes);
	}
	if (!children)
		refuse_model(m, mi, "%s is a manifest list none of whose children is in the %s or the store", where,
		             m->from ? "source store" : "bundle");
}

static void tag_needs(imp *m, size_t mi, oa_import_tag *t)
{
	oa_manifest mf;
	char err[256] = "";
	if (oa_manifest_parse(t->bytes, t->len, &mf, err, sizeof err) < 0) {
		refuse_model(m, mi, "its tag %s is not a manifest: %s", t->path, err);
	} else {
		if (t->v2) /* 0.40 keeps every tag's manifest as a blob too */
			need(m, mi, t->sha256, (int64_t)t->len);
		if (mf.is_list)
			need_children(m, mi, &mf, t->path);
		else
			need_layers(m, mi, &mf, t->path);
	}
	oa_manifest_free(&mf);
}

/* Each tag's model, its state here, and what the models need. */
static void plan_models(imp *m)
{
	oa_import_result *r = m->r;
	for (size_t i = 0; i < r->n_tags; i++) {
		oa_import_tag *t = &r->tags[i];
		size_t mi = model_for(r, t->model);
		enum land_tag st = land_tag_state(&m->l, t->path, t->bytes, t->len);
		t->state = st == LT_ABSENT ? OA_IMP_NEW : st == LT_SAME ? OA_IMP_PRESENT : OA_IMP_CONFLICT;
		if (t->state == OA_IMP_CONFLICT)
			refuse_model(m, mi, "its tag %s is here with other content: never replaced", t->path);
		tag_needs(m, mi, t);
	}
	for (size_t mi = 0; mi < r->n_models; mi++) {
		oa_import_model *md = &r->models[mi];
		if (r->refused)
			refuse_model(m, mi, "the %s is refused: %s", m->from ? "source" : "bundle", r->refused);
		bool all_here = true; /* every tag here and every blob: nothing to do */
		for (size_t i = 0; i < r->n_tags; i++)
			if (strcmp(r->tags[i].model, md->name) == 0)
				all_here &= r->tags[i].state == OA_IMP_PRESENT;
		for (size_t k = 0; md->state == OA_IMP_NEW && k < md->n_needs; k++)
			if (r->blobs[md->needs[k]].state == OA_IMP_NEW) {
				md->bytes_new += (uint64_t)r->blobs[md->needs[k]].size;
				all_here = false;
			}
		if (md->state == OA_IMP_NEW && all_here)
			md->state = OA_IMP_PRESENT;
	}
}

/* ---- writing ------------------------------------------------------------------ */

/* The new blobs of model mi in place. false: the model is refused. */
static bool place_blobs(imp *m, size_t mi, imp_fetch_fn fetch)
{
	oa_import_model *md = &m->r->models[mi];
	for (size_t k = 0; k < md->n_needs; k++) {
		oa_import_blob *b = &m->r->blobs[md->needs[k]];
		if (b->state != OA_IMP_NEW)
			continue;
		if (!b->tmp[0] && (!fetch || fetch(m, md->needs[k]) < 0)) {
			refuse_model(m, mi, "blob sha256:%s: %s", b->hex, *m->err ? m->err : "not copied");
			return false;
		}
		b = &m->r->blobs[md->needs[k]];
		int rc = land_place(&m->l, b->tmp, b->hex);
		if (rc < 0) {
			refuse_model(m, mi, "cannot put blob sha256:%s in place: %s", b->hex, strerror(errno));
			return false;
		}
		b->tmp[0] = '\0';
		b->state = rc == 0 ? OA_IMP_ADDED : OA_IMP_PRESENT;
	}
	return true;
}

/* Whether every blob model mi needs is here now, just before its tags
 * name them: one that was here already and unreferenced (an orphan over an
 * hour old) or a hard link with its source's old mtime is what a server's
 * start-up prune removes meanwhile. false: the model is refused. */
static bool blobs_still_here(imp *m, size_t mi)
{
	oa_import_model *md = &m->r->models[mi];
	for (size_t k = 0; k < md->n_needs; k++) {
		const oa_import_blob *b = &m->r->blobs[md->needs[k]];
		int64_t have;
		if (land_blob_state(&m->l, b->hex, b->size, &have) != LB_PRESENT) {
			refuse_model(m, mi, "blob sha256:%s is no longer here (removed meanwhile, as a server's start-up "
			             "prune removes unreferenced blobs over an hour old): no tag written; import again",
			             b->hex);
			return false;
		}
	}
	return true;
}

/* The tags of model mi, manifests-v2 first (0.40 writes the anchor after). */
static void write_tags(imp *m, size_t mi)
{
	oa_import_model *md = &m->r->models[mi];
	if (!blobs_still_here(m, mi))
		return;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < m->r->n_tags; i++) {
			oa_import_tag *t = &m->r->tags[i];
			if (strcmp(t->model, md->name) != 0 || t->v2 != (pass == 0) || t->state != OA_IMP_NEW)
				continue;
			char err[512];
			int rc = land_tag_write(&m->l, t->path, t->bytes, t->len, err, sizeof err);
			t->state = rc == LT_ABSENT ? OA_IMP_ADDED : rc == LT_SAME ? OA_IMP_PRESENT : OA_IMP_CONFLICT;
			if (rc == LT_OTHER)
				refuse_model(m, mi, "its tag %s appeared meanwhile with other content", t->path);
			else if (rc < 0)
				refuse_model(m, mi, "%s", err);
		}
	if (md->state == OA_IMP_NEW)
		md->state = OA_IMP_ADDED;
}

static void commit(imp *m, imp_fetch_fn fetch)
{
	oa_import_result *r = m->r;
	for (size_t mi = 0; mi < r->n_models; mi++) {
		if (m->o->stop && *m->o->stop) {
			r->interrupted = true;
			refuse_model(m, mi, "interrupted");
		}
		if (r->models[mi].state == OA_IMP_NEW && place_blobs(m, mi, fetch)) {
			(void)fsync(m->l.blobs_fd); /* the blobs are there for good before a tag names them */
			oa_test_pause(m->o->pause_dir, "tags", mi, m->o->stop);
			write_tags(m, mi);
		}
	}
}

/* What became of every blob and tag once the models are decided. */
static void settle(imp *m)
{
	oa_import_result *r = m->r;
	bool *needed = oa_xcalloc(r->n_blobs + 1, sizeof *needed);
	for (size_t mi = 0; mi < r->n_models; mi++)
		for (size_t k = 0; r->models[mi].state != OA_IMP_REFUSED && k < r->models[mi].n_needs; k++)
			needed[r->models[mi].needs[k]] = true;
	r->bytes_new = r->bytes_present = 0;
	r->hashed = true;
	for (size_t i = 0; i < r->n_blobs; i++) {
		oa_import_blob *b = &r->blobs[i];
		bool refused = b->model && !needed[i];
		if ((b->state == OA_IMP_NEW || b->state == OA_IMP_ADDED) && needed[i]) {
			r->bytes_new += (uint64_t)b->size;
			r->hashed &= b->hashed;
		}
		else if (b->state == OA_IMP_PRESENT && needed[i])
			r->bytes_present += (uint64_t)b->size;
		else if (b->state == OA_IMP_NEW)
			b->state = refused ? OA_IMP_REFUSED : OA_IMP_UNUSED;
	}
	for (size_t i = 0; i < r->n_tags; i++) {
		oa_import_tag *t = &r->tags[i];
		size_t mi = model_for(r, t->model);
		if (r->models[mi].state == OA_IMP_REFUSED && t->state == OA_IMP_NEW)
			t->state = OA_IMP_REFUSED;
	}
	free(needed);
}

void import_plan(imp *m, imp_fetch_fn fetch)
{
	plan_models(m);
	if (m->o->apply && !m->r->refused)
		commit(m, fetch);
	settle(m);
}
