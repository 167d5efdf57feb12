/* dedupe_run.c - a dedupe run over a plan: its promise, the stores a server
 * uses, applying it under the write locks, the outcome (dedupe_run.h). */
#include "ollama_audit/dedupe_run.h"
#include "ollama_audit/apply.h"
#include "ollama_audit/shared.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

/* The actions and bytes a --hardlink plan would have; refused (may be
 * NULL): the actions it would refuse between owners, and their bytes. */
static void hardlink_alternative(oa_store *const *sv, const oa_dupes *d, size_t *n, uint64_t *bytes,
                                 size_t *refused, uint64_t *refused_bytes)
{
	oa_dedupe_plan h;
	oa_dedupe_plan_build(sv, d, OA_DEDUPE_HARDLINK, &h);
	*n = 0;
	for (size_t i = 0; i < h.n; i++) {
		*n += h.v[i].status == OA_DD_PLANNED;
		if (refused && h.v[i].status == OA_DD_REFUSED_OWNER) {
			++*refused;
			*refused_bytes += h.v[i].bytes;
		}
	}
	*bytes = h.bytes;
	oa_dedupe_plan_free(&h);
}

uint64_t oa_dedupe_can_free(oa_store *const *sv, const oa_dupes *d, bool *hardlink)
{
	oa_dedupe_plan p;
	oa_dedupe_plan_build(sv, d, OA_DEDUPE_REFLINK, &p);
	oa_dedupe_plan_probe(&p, sv, false);
	uint64_t reflink = p.bytes;
	oa_dedupe_plan_free(&p);
	size_t n;
	uint64_t links;
	hardlink_alternative(sv, d, &n, &links, NULL, NULL);
	*hardlink = links > reflink;
	return *hardlink ? links : reflink;
}

void oa_dedupe_plan_make(oa_store *const *sv, const oa_dupes *d, oa_dedupe_how how, oa_dedupe_plan *p,
                         oa_dedupe_outcome *o)
{
	oa_dedupe_plan_build(sv, d, how, p);
	oa_dedupe_plan_probe(p, sv, true);
	o->hardlink = how == OA_DEDUPE_HARDLINK;
	for (size_t i = 0; i < p->n; i++) {
		o->planned += p->v[i].status == OA_DD_PLANNED;
		o->alternative |= p->v[i].status == OA_DD_UNSUPPORTED;
	}
	if (o->alternative)
		hardlink_alternative(sv, d, &o->hardlink_planned, &o->hardlink_planned_bytes, &o->hardlink_refused_owner,
		                     &o->hardlink_refused_owner_bytes);
}

static bool planned_on(const oa_dedupe_plan *p, size_t store)
{
	for (size_t k = 0; k < p->n; k++)
		if (p->v[k].status == OA_DD_PLANNED && (p->v[k].src_store == store || p->v[k].dst_store == store))
			return true;
	return false;
}

bool oa_dedupe_hold_busy(oa_dedupe_plan *p, oa_store *const *sv, size_t n, bool force, oa_dedupe_busy **out,
                         size_t *n_out)
{
	bool held = false;
	*out = oa_xcalloc(n ? n : 1, sizeof **out);
	*n_out = 0;
	for (size_t i = 0; i < n; i++) {
		if (!sv[i] || !planned_on(p, i))
			continue;
		oa_dedupe_busy *b = &(*out)[*n_out];
		b->store = i;
		b->found = oa_store_in_use(sv[i], b->users, OA_DEDUPE_BUSY_MAX, b->why, sizeof b->why);
		if (b->found == 0)
			continue;
		(*n_out)++;
		if (b->found < 0 || force)
			continue;
		held = true;
		for (size_t k = 0; k < p->n; k++)
			if (p->v[k].status == OA_DD_PLANNED && (p->v[k].src_store == i || p->v[k].dst_store == i)) {
				p->v[k].status = OA_DD_SERVER;
				snprintf(p->v[k].note, sizeof p->v[k].note, "an Ollama server uses %s", sv[i]->root);
			}
	}
	return held;
}

void oa_dedupe_recount(oa_dedupe_plan *p, oa_dedupe_outcome *o)
{
	o->planned = 0;
	p->bytes = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].status == OA_DD_PLANNED) {
			o->planned++;
			p->bytes += p->v[i].bytes;
		}
}

static void apply_actions(oa_dedupe_plan *p, oa_store *const *sv, volatile sig_atomic_t *interrupt)
{
	dev_t bad_dev[16];
	size_t n_bad = 0;
	for (size_t i = 0; i < p->n; i++) {
		oa_dedupe_action *a = &p->v[i];
		if (a->status != OA_DD_PLANNED)
			continue;
		bool known_bad = false;
		for (size_t k = 0; k < n_bad; k++)
			known_bad |= a->dst->st.dev == bad_dev[k];
		if (known_bad && a->how == OA_DEDUPE_REFLINK) {
			a->status = OA_DD_UNSUPPORTED;
			snprintf(a->note, sizeof a->note, "this filesystem cannot reflink");
			continue;
		}
		oa_dedupe_apply(p, sv, a, interrupt);
		if (a->status == OA_DD_UNSUPPORTED && n_bad < 16)
			bad_dev[n_bad++] = a->dst->st.dev;
	}
}

/* Store a before store b in the one order every run locks them in: device,
 * then inode of the root. */
static int cmp_root(const void *x, const void *y)
{
	const oa_store *a = *(oa_store *const *)x, *b = *(oa_store *const *)y;
	if (a->root_st.st_dev != b->root_st.st_dev)
		return a->root_st.st_dev < b->root_st.st_dev ? -1 : 1;
	return a->root_st.st_ino < b->root_st.st_ino ? -1 : a->root_st.st_ino > b->root_st.st_ino;
}

/* Whether a store that would change shares its blob files with one that
 * cannot be found (shared.h); err says which, unless p->force. */
static bool owner_unfound(const oa_dedupe_plan *p, oa_store *const *sv, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n && !p->force; i++) {
		char why[400];
		if (sv[i] && planned_on(p, i) && oa_peers_unfound(sv[i], why, sizeof why)) {
			snprintf(err, errlen, "refusing to dedupe: %s: %s; pass --force to go on", sv[i]->root, why);
			return true;
		}
	}
	return false;
}

int oa_dedupe_apply_all(oa_dedupe_plan *p, oa_store *const *sv, size_t n, volatile sig_atomic_t *interrupt,
                        char *err, size_t errlen)
{
	if (owner_unfound(p, sv, n, err, errlen))
		return -1;
	/* Each store once, in one order (device, inode): two runs naming the
	 * same stores in another order never hold one each and wait for the
	 * other. */
	oa_store **order = oa_xcalloc(n ? n : 1, sizeof *order);
	size_t m = 0, locked = 0;
	for (size_t i = 0; i < n; i++)
		if (sv[i])
			order[m++] = sv[i];
	qsort(order, m, sizeof *order, cmp_root);
	int rc = 0;
	for (; locked < m; locked++) {
		if (locked && cmp_root(&order[locked - 1], &order[locked]) == 0)
			continue; /* the same store twice: one flock would wait on the other */
		int got = oa_store_write_lock(order[locked], p->no_lock, err, errlen);
		if (got < 0) {
			rc = -1;
			break;
		}
		p->unlocked |= got > 0;
	}
	if (rc == 0)
		apply_actions(p, sv, interrupt);
	for (size_t i = 0; i < locked; i++)
		oa_store_write_unlock(order[i]);
	free(order);
	return rc;
}

void oa_dedupe_tally(const oa_dedupe_plan *p, oa_dedupe_outcome *o)
{
	for (size_t i = 0; i < p->n; i++) {
		const oa_dedupe_action *a = &p->v[i];
		o->counts[a->status]++;
		o->keepers_bad += a->keeper_bad;
		if (a->status == OA_DD_DONE) {
			o->done++;
			o->freed += a->bytes;
		}
	}
	o->planned_bytes = p->bytes;
}
