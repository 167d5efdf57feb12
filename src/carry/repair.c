/* repair.c - the damaged blobs of a store's models, the models that name
 * them, and what to tell about the ones no good copy mends (repair.h,
 * repair_private.h); the run is repair_run.c's. */
#include "ollama_audit/repair.h"
#include "ollama_audit/carry.h"
#include "ollama_audit/verify.h"
#include "ollama_audit/verify_store.h"
#include "carry/repair_private.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *oa_damage_name(enum oa_damage d)
{
	static const char *const names[] = { "missing", "empty", "truncated", "wrong-size", "digest-mismatch" };
	return (unsigned)d < sizeof names / sizeof names[0] ? names[d] : "?";
}

const char *oa_repair_state_name(enum oa_repair_state s)
{
	static const char *const names[] = { "can-mend", "can-remove", "absent", "mended", "removed", "skipped", "failed",
		                       "kept", "deleted" };
	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

static oa_repair_blob *find(oa_repair_result *r, const char *hex)
{
	for (size_t i = 0; i < r->n_blobs; i++)
		if (strcmp(r->blobs[i].hex, hex) == 0)
			return &r->blobs[i];
	return NULL;
}

static void add_damage(oa_repair_result *r, const char *hex, int64_t size, const oa_blob *b, enum oa_damage d,
                       const char *known_by)
{
	if (find(r, hex))
		return;
	r->blobs = oa_xreallocarray(r->blobs, r->n_blobs + 1, sizeof *r->blobs);
	oa_repair_blob *x = &r->blobs[r->n_blobs++];
	*x = (oa_repair_blob){ .size = size, .size_here = -1, .damage = d, .known_by = known_by };
	memcpy(x->hex, hex, sizeof x->hex);
	if (b && b->stat_ok && !b->dangling) {
		x->st = b->st;
		x->size_here = b->st.size;
	}
}

/* What is wrong with the blob a layer names, by its size; -1 when nothing is. */
static int size_damage(const oa_blob *b, int64_t declared)
{
	if (!b || b->cls != OA_BLOB_VALID || b->dangling || (!b->stat_ok && b->stat_errno == ENOENT))
		return OA_DAMAGE_MISSING;
	if (!b->stat_ok || b->st.size == declared)
		return -1; /* unreadable: check says so; nothing repair can judge */
	return b->st.size == 0 ? OA_DAMAGE_EMPTY : b->st.size < declared ? OA_DAMAGE_TRUNCATED : OA_DAMAGE_SIZE;
}

/* The models to look at: each selected tag, its list's other rows, its anchor. */
static bool *selection(const oa_store *s, const size_t *models, size_t n)
{
	bool *sel = oa_xcalloc(s->n_models + 1, sizeof *sel);
	for (size_t i = 0; i < s->n_models; i++) {
		size_t t = oa_store_row_tag(s, i);
		bool on = !models || !n;
		for (size_t k = 0; k < n && !on; k++) {
			size_t want = oa_store_row_tag(s, models[k]);
			on = t == want || (s->models[i].anchor && strcmp(s->models[i].display, s->models[want].display) == 0);
		}
		sel[i] = on;
	}
	return sel;
}

/* Every blob of the selected models, by its size; the rest, whole in size,
 * as verify jobs. */
static void by_size(const oa_store *s, const bool *sel, oa_repair_result *r, oa_verify_job **jobs, size_t *nj)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		for (size_t k = 0; sel[i] && m->manifest_ok && k <= m->m.n_layers; k++) {
			const oa_layer *l = k == 0 ? &m->m.config : &m->m.layers[k - 1];
			if (!l->digest_valid)
				continue;
			const oa_blob *b = oa_store_find_blob(s, l);
			int d = size_damage(b, l->size);
			if (d >= 0) {
				add_damage(r, l->hex, l->size, b, (enum oa_damage)d, "size");
				continue;
			}
			if (!b || !b->stat_ok)
				continue;
			bool dup = false;
			for (size_t j = 0; j < *nj && !dup; j++)
				dup = strcmp((*jobs)[j].expected_hex, l->hex) == 0;
			if (dup)
				continue;
			*jobs = oa_xreallocarray(*jobs, *nj + 1, sizeof **jobs);
			oa_verify_job *j = &(*jobs)[(*nj)++];
			*j = (oa_verify_job){ .path = oa_xasprintf("%s/blobs/%s", s->root, b->name),
			                      .expected_size = (uint64_t)l->size, .user = (void *)b };
			memcpy(j->expected_hex, l->hex, sizeof j->expected_hex);
		}
	}
}

/* What verify found about these very files and still holds (its cache). */
static void by_cache(oa_store *s, oa_verify_cache *vc, const oa_verify_job *jobs, size_t nj, oa_repair_result *r)
{
	size_t from = s->findings.n;
	oa_verify_cached_findings(s, vc);
	for (size_t f = from; f < s->findings.n; f++) {
		const oa_finding *x = &s->findings.v[f];
		for (size_t j = 0; x->digest && j < nj; j++)
			if (strcmp(x->digest + 7, jobs[j].expected_hex) == 0)
				add_damage(r, jobs[j].expected_hex, (int64_t)jobs[j].expected_size, jobs[j].user,
				           OA_DAMAGE_DIGEST, "verify-cache");
	}
}

/* The jobs hashed: each one's status in a new array (NULL with err when
 * the hashing could not start). */
static oa_verify_result *hash_jobs(const oa_verify_job *jobs, size_t nj, int threads, volatile sig_atomic_t *stop,
                                   int *rc, char *err, size_t errlen)
{
	oa_verify_opts vo;
	oa_verify_opts_init(&vo);
	vo.jobs = threads;
	vo.interrupt = stop;
	oa_verify_result *res = oa_xcalloc(nj ? nj : 1, sizeof *res);
	*rc = oa_verify_run(jobs, nj, &vo, res, NULL, err, errlen);
	if (*rc < 0) {
		free(res);
		return NULL;
	}
	return res;
}

static int by_hash(const oa_verify_job *jobs, size_t nj, int threads, volatile sig_atomic_t *stop,
                   oa_repair_result *r, char *err, size_t errlen)
{
	int rc;
	oa_verify_result *res = hash_jobs(jobs, nj, threads, stop, &rc, err, errlen);
	for (size_t j = 0; res && j < nj; j++)
		if (res[j].status == OA_VERIFY_DIGEST_MISMATCH)
			add_damage(r, jobs[j].expected_hex, (int64_t)jobs[j].expected_size, jobs[j].user, OA_DAMAGE_DIGEST,
			           "hashed");
	free(res);
	r->verified = rc == 0;
	return rc < 0 ? -1 : 0;
}

/* A file judged by its size alone is hashed at the size it has: when its
 * bytes are what its name says, the manifest that declares another size is
 * wrong, not the file (two tags can name one digest with different sizes),
 * and the file is the only copy of those bytes. Such a file, or one that
 * could not be read to tell, is kept: never moved away nor replaced. */
static void by_own_size(const oa_store *s, int threads, volatile sig_atomic_t *stop, oa_repair_result *r)
{
	oa_verify_job *jobs = NULL;
	size_t nj = 0;
	for (size_t i = 0; i < r->n_blobs; i++) {
		oa_repair_blob *x = &r->blobs[i];
		char name[80];
		struct stat st; /* a symlink is left alone by --apply, and never followed to be read */
		snprintf(name, sizeof name, "sha256-%s", x->hex);
		if (x->damage == OA_DAMAGE_MISSING || x->damage == OA_DAMAGE_DIGEST || x->size_here < 0 ||
		    fstatat(s->blobs_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		jobs = oa_xreallocarray(jobs, nj + 1, sizeof *jobs);
		jobs[nj] = (oa_verify_job){ .path = oa_xasprintf("%s/blobs/%s", s->root, name),
		                            .expected_size = (uint64_t)x->size_here, .user = x };
		memcpy(jobs[nj++].expected_hex, x->hex, sizeof jobs->expected_hex);
	}
	int rc = 0;
	char err[256] = "";
	oa_verify_result *res = nj ? hash_jobs(jobs, nj, threads, stop, &rc, err, sizeof err) : NULL;
	for (size_t j = 0; j < nj; j++) {
		oa_repair_blob *x = jobs[j].user;
		enum oa_verify_status st = res ? res[j].status : OA_VERIFY_ERROR;
		free((char *)jobs[j].path);
		if (st == OA_VERIFY_DIGEST_MISMATCH)
			continue;
		x->intact = true;
		if (st == OA_VERIFY_OK)
			x->note = oa_xasprintf("its %lld bytes hash to its name: the manifest declaring %lld is wrong, not "
			                       "the file, the only copy of those bytes", (long long)x->size_here,
			                       (long long)x->size);
		else
			x->note = oa_xasprintf("could not be read to tell whether its bytes are what its name says (%s)",
			                       !res ? err : res[j].err ? strerror(res[j].err)
			                       : st == OA_VERIFY_NOT_DONE ? "interrupted" : "it changed while it was read");
	}
	free(res);
	free(jobs);
}

/* Every tag of the store that names the blob (a legacy anchor once, under its v2 tag's name). */
static void name_models(const oa_store *s, oa_repair_blob *x)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		bool uses = false;
		for (size_t k = 0; m->manifest_ok && k <= m->m.n_layers && !uses; k++) {
			const oa_layer *l = k == 0 ? &m->m.config : &m->m.layers[k - 1];
			uses = l->digest_valid && strcmp(l->hex, x->hex) == 0;
		}
		for (size_t k = 0; uses && k < x->n_models; k++)
			uses = strcmp(x->models[k], m->display) != 0;
		if (!uses)
			continue;
		x->models = oa_xreallocarray(x->models, x->n_models + 1, sizeof *x->models);
		x->models[x->n_models++] = oa_xstrdup(m->display);
	}
}

int repair_find_damage(oa_store *s, const size_t *models, size_t n, const repair_find_opts *o, oa_repair_result *r,
                       char *err, size_t errlen)
{
	bool *sel = selection(s, models, n);
	oa_verify_job *jobs = NULL;
	size_t nj = 0;
	by_size(s, sel, r, &jobs, &nj);
	int rc = 0;
	if (o->cache)
		by_cache(s, o->cache, jobs, nj, r);
	if (o->verify)
		rc = by_hash(jobs, nj, o->jobs, o->stop, r, err, errlen);
	by_own_size(s, o->jobs, o->stop, r);
	for (size_t j = 0; j < nj; j++)
		free((char *)jobs[j].path);
	free(jobs);
	free(sel);
	for (size_t i = 0; i < r->n_blobs; i++)
		name_models(s, &r->blobs[i]);
	return rc;
}

/* ---- what a pull can and cannot bring back --------------------------------------- */

/* A registry serves a manifest as its raw bytes, compact and with no final
 * newline; `ollama create` writes its own with Go's json.Encoder, which
 * ends it with one (spec §2.1). `ollama cp` keeps the bytes. */
static bool registry_form(const oa_store *s, const oa_model *m)
{
	uint8_t *bytes;
	size_t len;
	if (oa_store_read_rel(s, m->rel_path, OA_MANIFEST_MAX, &bytes, &len) < 0)
		return true; /* cannot tell: a pull is the usual way */
	bool reg = len && bytes[len - 1] != '\n';
	free(bytes);
	return reg;
}

static void advise(oa_repair_result *r, const oa_store *s, const char *name)
{
	for (size_t i = 0; i < r->n_advice; i++)
		if (strcmp(r->advice[i].name, name) == 0)
			return;
	long idx = oa_store_resolve(s, name);
	bool reg = idx < 0 || registry_form(s, &s->models[idx]);
	r->advice = oa_xreallocarray(r->advice, r->n_advice + 1, sizeof *r->advice);
	oa_repair_advice *a = &r->advice[r->n_advice++];
	*a = (oa_repair_advice){ .name = oa_xstrdup(name), .registry = reg };
	if (reg) {
		a->command = oa_xasprintf("ollama pull %s", name);
		a->text = oa_xasprintf("%s: `ollama pull %s` fetches what is missing (Ollama keeps a blob file that is "
		                       "there: the damaged ones must be gone first)", name, name);
	} else {
		a->text = oa_xasprintf("%s was made on this machine (its manifest is in the form `ollama create` writes): "
		                       "no registry has it; recreate it with `ollama create %s -f Modelfile` from its "
		                       "original weights (`ollama show --modelfile %s` prints how it was made)",
		                       name, name, name);
	}
}

void repair_advise(oa_repair_result *r, const oa_store *s)
{
	for (size_t i = 0; i < r->n_blobs; i++) {
		const oa_repair_blob *x = &r->blobs[i];
		if (x->state == OA_REPAIR_CAN_MEND || x->state == OA_REPAIR_MENDED || x->intact)
			continue;
		for (size_t k = 0; k < x->n_models; k++)
			advise(r, s, x->models[k]);
	}
}

void oa_repair_result_free(oa_repair_result *r)
{
	for (size_t i = 0; i < r->n_blobs; i++) {
		oa_free_names(r->blobs[i].models, r->blobs[i].n_models);
		free(r->blobs[i].source);
		free(r->blobs[i].note);
	}
	free(r->blobs);
	for (size_t i = 0; i < r->n_advice; i++) {
		free(r->advice[i].name);
		free(r->advice[i].command);
		free(r->advice[i].text);
	}
	free(r->advice);
	free(r->store);
	free(r->source_error);
	free(r->leftover);
	memset(r, 0, sizeof *r);
}
