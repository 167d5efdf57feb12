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
