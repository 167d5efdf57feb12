/* overview.c - the typed result of `report` (overview.h). */
#include "ollama_audit/overview.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static void add_tile(oa_overview_store *o, enum oa_tile_kind kind, char *label, const char *blob,
                     uint64_t bytes)
{
	o->tiles = oa_xreallocarray(o->tiles, o->n_tiles + 1, sizeof *o->tiles);
	o->tiles[o->n_tiles++] = (oa_overview_tile){ kind, label, blob, bytes };
}

/* A shared blob by the models that share it: "a + b", or "a + b + c + 4 more". */
static char *shared_label(const oa_store *s, const oa_du_shared *b)
{
	oa_buf t;
	oa_buf_init(&t);
	for (size_t k = 0; k < b->n_rows && k < 3; k++)
		oa_buf_printf(&t, "%s%s", k ? " + " : "", s->models[b->models[k]].display);
	if (b->n_rows > 3)
		oa_buf_printf(&t, " + %zu more", b->n_rows - 3);
	return oa_buf_take(&t);
}

/* The tags of a row, as du names it ("a, b"). */
static char *row_label(const oa_store *s, const oa_du_row *r)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t k = 0; k < r->n_models; k++)
		oa_buf_printf(&b, "%s%s", k ? ", " : "", s->models[r->models[k]].display);
	if (!r->manifest_ok)
		oa_buf_adds(&b, " (unparseable manifest)");
	return oa_buf_take(&b);
}

static void tiles(const oa_store *s, const oa_du_store *d, oa_overview_store *o)
{
	for (size_t i = 0; i < d->du.n_rows; i++) /* du sorts rows by unique bytes */
		if (d->du.rows[i].unique)
			add_tile(o, OA_TILE_UNIQUE, row_label(s, &d->du.rows[i]), NULL, d->du.rows[i].unique);
	for (size_t i = 0; i < d->du.n_shared; i++) {
		const oa_du_shared *b = &d->du.shared[i];
		add_tile(o, OA_TILE_SHARED, shared_label(s, b), b->blob, b->allocated);
	}
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++)
		if (d->junk.allocated[k])
			add_tile(o, OA_TILE_JUNK,
			         oa_xasprintf("junk: %s, %zu entr%s", oa_junk_cat_name((enum oa_junk_cat)k),
			                      d->junk.count[k], d->junk.count[k] == 1 ? "y" : "ies"),
			         NULL, d->junk.allocated[k]);
}

static void model_of(const oa_store *s, const oa_du_row *r, size_t j, const oa_last_used *lu,
                     oa_overview_model *x)
{
	const oa_model *m = &s->models[j];
	x->name = m->display;
	x->format = m->manifest_ok ? oa_format_name(m->format) : "invalid";
	x->runner = m->manifest_ok ? oa_runner_name(m->runner) : "-";
	x->arch = m->arch;
	x->params = m->params;
	x->quant = m->quant;
	/* list prints "-" for any model /api/tags gives a remote_model */
	x->size_known = !(m->remote || (m->config_state == OA_CONFIG_OK && *m->cfg.remote_model));
	x->size = m->m.size;
	x->unique = r->unique;
	x->disk = r->allocated;
	x->loaded = lu && lu->have_logs && oa_last_used_newest(lu, &j, 1, &x->last_ns);
}

static void models(const oa_store *s, const oa_du_store *d, const oa_last_used *lu, oa_overview_store *o)
{
	o->models = oa_xcalloc(s->n_models + 1, sizeof *o->models);
	for (size_t i = 0; i < d->du.n_rows; i++) {
		const oa_du_row *r = &d->du.rows[i];
		for (size_t k = 0; k < r->n_models; k++)
			if (!s->models[r->models[k]].anchor) /* list does not show a shadowed legacy tag */
				model_of(s, r, r->models[k], lu, &o->models[o->n_models++]);
	}
	o->have_logs = lu && lu->have_logs;
}

static void findings(const oa_store *s, oa_overview_store *o)
{
	o->findings = oa_xcalloc(s->findings.n + 1, sizeof *o->findings);
	for (int sev = OA_SEV_ERROR; sev >= OA_SEV_INFO; sev--)
		for (size_t i = 0; i < s->findings.n; i++)
			if ((int)s->findings.v[i].severity == sev) {
				o->findings[o->n_findings++] = &s->findings.v[i];
				o->t.findings[sev]++;
			}
}

void oa_overview_build(const oa_store *s, const oa_du_store *d, const oa_last_used *lu,
                       const char *user, oa_overview_store *out)
{
	memset(out, 0, sizeof *out);
	out->root = s->root;
	out->how = s->how;
	out->user = user;
	oa_overview_totals *t = &out->t;
	t->stores = 1;
	t->models = oa_store_listed_models(s);
	t->manifests = d->du.n_rows;
	t->referenced = d->du.referenced;
	for (size_t i = 0; i < d->du.n_rows; i++)
		t->unique += d->du.rows[i].unique;
	t->shared = d->du.shared_total;
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		t->junk_bytes[k] = d->junk.allocated[k];
		t->junk_count[k] = d->junk.count[k];
		t->junk += d->junk.allocated[k];
		t->junk_entries += d->junk.count[k];
	}
	t->reclaimable = d->reclaimable;
	t->blobs = d->du.blobs_total;
	tiles(s, d, out);
	models(s, d, lu, out);
	findings(s, out);
}

void oa_overview_free(oa_overview_store *o)
{
	for (size_t i = 0; i < o->n_tiles; i++)
		free(o->tiles[i].label);
	free(o->tiles);
	free(o->models);
	free(o->findings);
	memset(o, 0, sizeof *o);
}

void oa_overview_totals_add(oa_overview_totals *sum, const oa_overview_totals *t)
{
	sum->stores += t->stores;
	sum->models += t->models;
	sum->manifests += t->manifests;
	sum->referenced += t->referenced;
	sum->unique += t->unique;
	sum->shared += t->shared;
	sum->junk += t->junk;
	sum->junk_entries += t->junk_entries;
	for (int k = 0; k < OA_JUNK_CAT_COUNT; k++) {
		sum->junk_bytes[k] += t->junk_bytes[k];
		sum->junk_count[k] += t->junk_count[k];
	}
	sum->reclaimable += t->reclaimable;
	sum->blobs += t->blobs;
	sum->quarantine_known |= t->quarantine_known;
	sum->quarantine_entries += t->quarantine_entries;
	sum->quarantine_bytes += t->quarantine_bytes;
	for (int k = 0; k < 3; k++)
		sum->findings[k] += t->findings[k];
}

/* A switch without default: a new finding code without a remedy is a
 * compiler warning (-Wswitch), an error under OA_WERROR. */
const char *oa_finding_remedy(oa_finding_code id)
{
	switch (id) {
	case OA_FINDING_MISSING_BLOB:
	case OA_FINDING_MISSING_CONFIG:
	case OA_FINDING_EMPTY_BLOB:
	case OA_FINDING_SIZE_MISMATCH:
	case OA_FINDING_DIGEST_MISMATCH:
		/* ollama pull keeps any blob file that is there: the damaged one must go first */
		return "Mend it: ollama-audit repair NAME (a dry run; --apply puts a good copy in place, or moves the "
		       "blob away so that ollama pull fetches it).";
	case OA_FINDING_FINGERPRINT_MISMATCH:
		return "Run a full ollama-audit verify (without --quick) to see whether the content is still good.";
	case OA_FINDING_INVALID_MANIFEST:
		return "Pull the tag again, or remove the manifest file; the blobs it may name are kept meanwhile.";
	case OA_FINDING_INVALID_NAME:
		return "Move the file out of manifests/: no model name reaches it.";
	case OA_FINDING_INVALID_CONFIG:
		return "Pull the model again: its config blob cannot be read.";
	case OA_FINDING_INVALID_GGUF:
	case OA_FINDING_INVALID_SAFETENSORS:
		return "Pull the model again, or create it again from good weight files.";
	case OA_FINDING_GGUF_WARNING:
	case OA_FINDING_SAFETENSORS_WARNING:
		return "Check that the model loads; create it again from fixed weight files if not.";
	case OA_FINDING_CONFIG_MISMATCH:
		return "Pull or create the model again so that its config and weights agree.";
	case OA_FINDING_UNKNOWN_MEDIA_TYPE:
		return "A newer Ollama may know this layer; otherwise nothing to do.";
	case OA_FINDING_INVALID_DIGEST:
		return "Fix or remove the manifest: a digest that is not sha256 names no blob.";
	case OA_FINDING_LEGACY_BLOB_NAME:
		return "Nothing to do: the server renames it when it starts.";
	case OA_FINDING_SYMLINK_OUT_OF_STORE:
	case OA_FINDING_SYMLINKED_BLOB:
		return "Replace the link by the file itself: prune and rm only ever remove the link.";
	case OA_FINDING_UNREADABLE:
		return "Fix the permissions, or run as the store's owner or root.";
	case OA_FINDING_PRUNE_BLOCKER:
		return "Fix what it names: until then the server's start-up prune removes nothing.";
	case OA_FINDING_HIDDEN_FROM_LIST:
		return "Pull it under a name ollama list shows, or remove it with ollama-audit rm.";
	case OA_FINDING_ORPHAN_BLOB:
		return "ollama-audit prune --apply removes it (the server does at its next start).";
	case OA_FINDING_UNPARSED_REFERENCE:
		return "Kept on purpose: fix or remove the broken manifest that names it.";
	case OA_FINDING_MANIFEST_BLOB:
		return "Nothing to do; prune --what manifest-blobs removes it.";
	case OA_FINDING_PARTIAL_DOWNLOAD:
		return "Resume the pull, or let ollama-audit prune --apply remove it.";
	case OA_FINDING_TEMP_FILE:
		return "ollama-audit prune --apply removes it once it is an hour old.";
	case OA_FINDING_FOREIGN_FILE:
		return "Move it out of blobs/: Ollama did not write it (prune --what foreign).";
	case OA_FINDING_IGNORED_FILE:
	case OA_FINDING_EMPTY_MANIFEST_DIR:
		return "Harmless; remove it to tidy the store (prune --what empty-dirs for directories).";
	case OA_FINDING_MANIFEST_LIST:
	case OA_FINDING_RUNNER_CHANGED:
		return "Information only.";
	case OA_FINDING_MISSING_CHILD:
	case OA_FINDING_NESTED_LIST:
	case OA_FINDING_CHILD_MISMATCH:
	case OA_FINDING_DANGLING_TAG:
		return "Pull the tag again on this platform, or remove it with ollama-audit rm.";
	case OA_FINDING_LEGACY_ANCHOR:
		return "Nothing to do: the manifests-v2 tag is the one used; rm the legacy tag to tidy.";
	case OA_FINDING_COMPAT_SHADOW:
		return "Nothing to do: it keeps the converted copy for an older Ollama; rm it if you never downgrade.";
	case OA_FINDING_ORPHANED_SHADOW:
		return "Remove it with ollama-audit rm: no model uses the converted copy it keeps.";
	case OA_FINDING_DOWNGRADE_LOSS:
		return "Do not start an Ollama older than 0.40 on this store, or pull the model again after a downgrade.";
	case OA_FINDING_STALE_METADATA:
		return "Run ollama-audit prune: the cache's blob is gone.";
	case OA_FINDING_UNSERVABLE:
		return "Remove it (ollama-audit rm) or keep an Ollama version that still serves it.";
	case OA_FINDING_LOAD_FAILED:
		return "See the server's reason in ollama-audit history for the model (often memory).";
	case OA_FINDING_NO_RUNTIME_FOR_MODEL:
		return "Run it where Ollama's MLX runtime exists, or pull a GGUF variant.";
	case OA_FINDING_SPLIT_DIR:
		return "Nothing to do while its model is loaded; ollama-audit prune --apply removes it once it is an hour old.";
	case OA_FINDING_SPLIT_MISMATCH:
		return "Pull the model again: llama.cpp cannot load shards that do not make one model.";
	case OA_FINDING_NCODES:
		break;
	}
	return "";
}

char *oa_finding_remedy_for(const oa_finding *f)
{
	const char *r = oa_finding_remedy(f->id), *at = strstr(r, "NAME");
	if (!at)
		return oa_xstrdup(r);
	return oa_xasprintf("%.*s%s%s", (int)(at - r), r, f->model ? f->model : "MODEL", at + 4);
}
