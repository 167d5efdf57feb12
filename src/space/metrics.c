/* metrics.c - one store's space figures, computed once (metrics.h). */
#include "ollama_audit/metrics.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[OA_BLOB_STATE_COUNT] = { "referenced", "orphaned", "partial", "temp",
	                                                          "foreign" };

enum oa_blob_state oa_blob_state_of(const oa_blob *b)
{
	switch (b->cls) {
	case OA_BLOB_VALID: return b->refs ? OA_BLOB_STATE_REFERENCED : OA_BLOB_STATE_ORPHANED;
	case OA_BLOB_PARTIAL:
	case OA_BLOB_PARTIAL_PART: return OA_BLOB_STATE_PARTIAL;
	case OA_BLOB_TMP:
	case OA_BLOB_CREATE_TEMP:
	case OA_BLOB_QUANT_TEMP:
	case OA_BLOB_TEMP_DIR:
	case OA_BLOB_SPLIT_DIR: return OA_BLOB_STATE_TEMP;
	default: return OA_BLOB_STATE_FOREIGN;
	}
}

const char *oa_blob_state_name(enum oa_blob_state st)
{
	return (unsigned)st < OA_BLOB_STATE_COUNT ? state_names[st] : "foreign";
}

/* The state of each top-level entry the walk found in blobs/ (both lists
 * are in strcmp order); a name the scan did not see is foreign. */
static enum oa_blob_state *top_states(const oa_store *s, const oa_usage *u)
{
	enum oa_blob_state *v = oa_xcalloc(u->n_tops ? u->n_tops : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < u->n_tops; i++) {
		while (k < s->n_blobs && strcmp(s->blobs[k].name, u->tops[i]) < 0)
			k++;
		v[i] = k < s->n_blobs && strcmp(s->blobs[k].name, u->tops[i]) == 0 ? oa_blob_state_of(&s->blobs[k])
		                                                                    : OA_BLOB_STATE_FOREIGN;
	}
	return v;
}

/* Entries and bytes by state, from the one walk (so the states sum to `du -s blobs`). */
static void by_state(const oa_store *s, oa_store_metrics *m)
{
	for (size_t i = 0; i < s->n_blobs; i++)
		m->blobs[oa_blob_state_of(&s->blobs[i])]++;
	const oa_usage *u = &m->usage;
	enum oa_blob_state *tst = top_states(s, u);
	const oa_inode_ledger *l = &u->names;
	for (size_t i = 0, end; i < l->n; i = end) {
		end = oa_inode_ledger_run(l, i);
		enum oa_blob_state state = OA_BLOB_STATE_COUNT;
		for (size_t j = i; j < end; j++) {
			size_t top = l->v[j].owner;
			enum oa_blob_state sj = top == OA_USAGE_ROOT ? OA_BLOB_STATE_REFERENCED : tst[top];
			if (state == OA_BLOB_STATE_COUNT || sj == OA_BLOB_STATE_REFERENCED)
				state = sj;
		}
		m->blobs_bytes[state] += l->v[i].allocated;
		m->blobs_apparent[state] += l->v[i].apparent;
	}
	free(tst);
}

void oa_store_metrics_compute(oa_store *s, double now, oa_store_metrics *out)
{
	memset(out, 0, sizeof *out);
	oa_usage_blobs(s, &out->usage);
	oa_du_store_compute_usage(s, &out->usage, now, &out->du);
	by_state(s, out);
}

void oa_store_metrics_free(oa_store_metrics *m)
{
	oa_du_store_free(&m->du);
	oa_usage_free(&m->usage);
	memset(m, 0, sizeof *m);
}

bool oa_store_metrics_quarantine(oa_store_metrics *m, const oa_store *s, const char *dir,
                                 const oa_quarantine_held *q)
{
	if ((uint64_t)s->root_st.st_dev != q->store_dev || (uint64_t)s->root_st.st_ino != q->store_ino)
		return false;
	m->du.quarantine = dir;
	m->du.quarantine_entries = q->entries;
	m->du.quarantine_bytes = q->disk_bytes;
	return true;
}
