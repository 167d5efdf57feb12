/* repair_run.c - a repair from the damage found to the last file swapped
 * (repair_run.h). */
#include "ollama_audit/repair_run.h"
#include "ollama_audit/apply.h"
#include "ollama_audit/set_aside.h"
#include "carry/repair_private.h"
#include "carry/repair_source.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether blobs/<name> is still the damaged file the scan saw (the same
 * device, inode, size, mtime and ctime; or still nothing); why not in *why. */
static bool unchanged(const oa_store *s, const oa_repair_blob *x, const char *name, bool *there, const char **why)
{
	struct stat now;
	*there = fstatat(s->blobs_fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0;
	*why = NULL;
	if (!*there && x->size_here >= 0)
		*why = "gone since it was looked at";
	else if (*there && !S_ISREG(now.st_mode))
		*why = "not a regular file (a symlink?): replace it by hand";
	else if (*there && x->size_here < 0)
		*why = "appeared since it was looked at";
	else if (*there && ((uint64_t)now.st_dev != x->st.dev || (uint64_t)now.st_ino != x->st.ino ||
	                    (int64_t)now.st_size != x->size_here || oa_stat_mtime_ns(&now) != x->st.mtime_ns ||
	                    oa_stat_ctime_ns(&now) != x->st.ctime_ns))
		*why = "changed since it was looked at"; /* rewritten in place, perhaps with its good bytes */
	return !*why;
}

/* The damaged file of x dealt with: the good copy over it, or it away
 * into the quarantine. */
static void fix_one(const oa_store *s, land *l, oa_set_aside *q, bool source_failed, oa_repair_blob *x)
{
	char name[80], err[512] = "";
	snprintf(name, sizeof name, "sha256-%s", x->hex);
	bool there;
	const char *why;
	if (x->intact)
		return; /* kept: its bytes are what its name says, or could not be read to tell */
	if (!unchanged(s, x, name, &there, &why)) {
		x->state = OA_REPAIR_SKIPPED;
		x->note = oa_xstrdup(why);
		return;
	}
	if (!x->tmp[0] && there && (source_failed || x->note)) {
		x->state = OA_REPAIR_KEPT;
		if (!x->note)
			x->note = oa_xstrdup("the source could not be read: nothing moved away");
		return;
	}
	int rc = 0;
	if (there && q) {
		rc = oa_set_aside_blob(q, name, x->n_models ? x->models[0] : NULL, x->tmp[0] != '\0', err, sizeof err);
	} else if (there && !x->tmp[0] && unlinkat(s->blobs_fd, name, 0) < 0) {
		/* Its bytes are not what its name says (re-checked above): what a
		 * manifest names is the digest, which only a pull brings back. */
		snprintf(err, sizeof err, "cannot remove blobs/%s: %s", name, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && x->tmp[0] && there)
		rc = land_swap(l, x->tmp, x->hex, err, sizeof err);
	else if (rc == 0 && x->tmp[0] && (rc = land_place(l, x->tmp, x->hex)) != 0)
		snprintf(err, sizeof err, "cannot put blobs/%s in place as blobs/%s: %s", x->tmp, name,
		         rc > 0 ? "it appeared meanwhile" : strerror(errno));
	if (rc != 0) {
		x->state = rc > 0 ? OA_REPAIR_SKIPPED : OA_REPAIR_FAILED;
		free(x->note);
		x->note = oa_xstrdup(err);
		return;
	}
	x->state = x->tmp[0] ? OA_REPAIR_MENDED : !there ? OA_REPAIR_ABSENT : q ? OA_REPAIR_REMOVED : OA_REPAIR_DELETED;
	x->tmp[0] = '\0';
}

static int apply(oa_store *s, land *l, const oa_repair_opts *o, oa_repair_result *r, char *err, size_t errlen)
{
	oa_set_aside *q = NULL;
	if (o->quarantine) {
		const char **names = NULL; /* the models the operation concerns, each once */
		size_t nn = 0;
		for (size_t i = 0; i < r->n_blobs; i++)
			for (size_t k = 0; k < r->blobs[i].n_models; k++) {
				bool seen = false;
				for (size_t j = 0; j < nn && !seen; j++)
					seen = strcmp(names[j], r->blobs[i].models[k]) == 0;
				if (!seen) {
					names = oa_xreallocarray(names, nn + 1, sizeof *names);
					names[nn++] = r->blobs[i].models[k];
				}
			}
		q = oa_set_aside_begin(s, o->quarantine, o->no_lock, "repair", names, nn, err, errlen);
		free(names);
		if (!q)
			return -1;
	}
	for (size_t i = 0; i < r->n_blobs; i++) {
		if (o->stop && *o->stop) {
			r->interrupted = true;
			break;
		}
		fix_one(s, l, q, r->source_error != NULL, &r->blobs[i]);
	}
	return q ? oa_set_aside_end(q, r->operation, err, errlen) : 0;
}

int oa_repair(oa_store *s, const size_t *models, size_t n, const oa_repair_opts *o, oa_repair_result *r, char *err,
              size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->store = oa_xstrdup(s->root);
	repair_find_opts fo = { .cache = o->cache, .verify = o->verify, .jobs = o->jobs, .stop = o->stop };
	if (repair_find_damage(s, models, n, &fo, r, err, errlen) < 0)
		return -1;
	if (!r->n_blobs)
		return 0;
	land l;
	if (land_open(&l, s->root_fd, false, o->stop, err, errlen) < 0)
		return -1;
	int rc = 0;
	if (o->apply) {
		int got = oa_store_write_lock(s, o->no_lock, err, errlen);
		rc = got < 0 ? -1 : 0;
		r->unlocked = got > 0;
	}
	if (rc == 0) {
		repair_find_sources(s, o->from, &l, o->apply, r);
		for (size_t i = 0; i < r->n_blobs; i++)
			r->blobs[i].state = r->blobs[i].intact ? OA_REPAIR_KEPT : r->blobs[i].source ? OA_REPAIR_CAN_MEND
			                    : r->blobs[i].size_here >= 0 ? OA_REPAIR_CAN_REMOVE : OA_REPAIR_ABSENT;
		if (o->apply) {
			oa_test_pause(o->pause_dir, "repair-apply", 0, o->stop);
			rc = apply(s, &l, o, r, err, errlen);
		}
		r->applied = o->apply && rc == 0;
		if (o->apply)
			oa_store_write_unlock(s);
	}
	r->leftover = land_close(&l); /* the temporaries not used */
	repair_advise(r, s);
	if (o->stop && *o->stop)
		r->interrupted = true;
	return rc;
}
