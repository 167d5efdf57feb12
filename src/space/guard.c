/* guard.c - the preconditions of every write to a store (guard.h). */
#include "ollama_audit/guard.h"
#include "base/platform.h"
#include "base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int oa_store_in_use(const oa_store *s, oa_store_user *users, int max, char *why, size_t whylen)
{
	char real[PATH_MAX];
	if (!realpath(s->root, real))
		snprintf(real, sizeof real, "%s", s->root);
	if (s->users_probe)
		return s->users_probe(real, users, max, why, whylen);
	oa_proc_user found[8];
	int n = oa_find_store_users(real, found, 8, why, whylen);
	for (int i = 0; i < n && i < 8 && i < max; i++) {
		users[i].pid = found[i].pid;
		snprintf(users[i].cmd, sizeof users[i].cmd, "%s", found[i].cmd);
		snprintf(users[i].how, sizeof users[i].how, "%s", found[i].how);
	}
	return n;
}

/* The manifests that block a prune (the server skips its own for them);
 * not rm --child's own temp tag, which is junk prune removes. */
static bool is_blocker(const oa_finding *f)
{
	const char *leaf = f->path ? strrchr(f->path, '/') : NULL;
	if (f->id == OA_FINDING_PRUNE_BLOCKER && leaf && oa_is_tag_rewrite_temp(leaf + 1))
		return false;
	return f->id == OA_FINDING_PRUNE_BLOCKER ||
	       (f->id == OA_FINDING_UNREADABLE && f->path && oa_str_has_prefix(f->path, "manifests"));
}

static bool seen_before(const oa_store *s, size_t i)
{
	const oa_finding *f = &s->findings.v[i];
	for (size_t j = 0; f->path && j < i; j++)
		if (is_blocker(&s->findings.v[j]) && s->findings.v[j].path &&
		    strcmp(s->findings.v[j].path, f->path) == 0)
			return true;
	return false;
}

static bool removed_path(const char *const *removed, size_t n, const char *path)
{
	for (size_t k = 0; path && k < n; k++)
		if (strcmp(removed[k], path) == 0)
			return true;
	return false;
}

size_t oa_store_blockers(const oa_store *s, const char *const *removed, size_t n_removed, oa_blocker **out)
{
	size_t n = 0;
	*out = NULL;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!is_blocker(f) || seen_before(s, i) || removed_path(removed, n_removed, f->path))
			continue;
		*out = oa_xreallocarray(*out, n + 1, sizeof **out);
		(*out)[n++] = (oa_blocker){ f->path ? f->path : "?", f->message };
	}
	return n;
}

bool oa_store_unowned(const oa_store *s)
{
	return s->has_blobs && !s->has_manifests && !s->has_manifests_v2;
}
