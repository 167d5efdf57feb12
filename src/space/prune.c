/* prune.c - plans, their JSON form, and applying them safely (prune.h). */
#include "ollama_audit/prune.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/model.h"
#include "base/platform.h"
#include "base/util.h"
#include "base/jsonutil.h"
#include "space/listedit.h"
#include "space/plan_path.h"
#include "space/quarantine.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int open_parent(const oa_store *s, const char *path, const char **leaf);

/* ---- plan lists ------------------------------------------------------------- */

static oa_plan_entry *list_add(oa_plan_list *l)
{
	OA_ALLOC_GROW(l->v, l->n + 1, l->cap);
	oa_plan_entry *e = &l->v[l->n++];
	memset(e, 0, sizeof *e);
	return e;
}

static void entry_free(oa_plan_entry *e)
{
	free(e->path);
	free(e->category);
	free(e->note);
	free(e->model);
}

static void list_free(oa_plan_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		entry_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

void oa_plan_free(oa_plan *p)
{
	for (size_t i = 0; i < p->n_shared; i++) {
		free(p->shared_store[i]);
		free(p->shared_how[i]);
	}
	free(p->shared_store);
	free(p->shared_how);
	for (size_t i = 0; i < p->n_shadows; i++) {
		free(p->shadows[i].name);
		free(p->shadows[i].path);
	}
	free(p->shadows);
	if (p->rewrite) {
		free(p->rewrite->path);
		free(p->rewrite->runner);
		free(p->rewrite->kept);
		free(p->rewrite->bytes);
		free(p->rewrite->link_target);
		free(p->rewrite->anchor);
		free(p->rewrite);
	}
	free(p->command);
	free(p->store);
	list_free(&p->todo);
	list_free(&p->kept);
	memset(p, 0, sizeof *p);
}

static void entry_from_stat(oa_plan_entry *e, const struct stat *st)
{
	e->type = S_ISDIR(st->st_mode) ? 'd' : S_ISLNK(st->st_mode) ? 'l' : 'f';
	e->dev = (uint64_t)st->st_dev;
	e->ino = (uint64_t)st->st_ino;
	e->nlink = (uint64_t)st->st_nlink;
	e->size = (int64_t)st->st_size;
	e->mtime_ns = oa_stat_mtime_ns(st);
	e->allocated = (uint64_t)st->st_blocks * 512;
	e->age = oa_wall_now() - (double)e->mtime_ns / 1e9;
}

static void plan_init(oa_plan *p, oa_store *s, const char *command)
{
	memset(p, 0, sizeof *p);
	p->command = oa_xstrdup(command);
	p->store = oa_xstrdup(s->root);
	p->store_dev = (uint64_t)s->root_st.st_dev;
	p->store_ino = (uint64_t)s->root_st.st_ino;
	double now = oa_wall_now();
	oa_iso8601((time_t)now, 0, p->created, sizeof p->created);
}

static int cmp_u64pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	if (x[1] != y[1])
		return x[1] < y[1] ? -1 : 1;
	return 0;
}

/* rm --child: the entry of the list tag rewritten, never removed. */
static bool is_rewrite(const oa_plan_entry *e)
{
	return e->category && strcmp(e->category, "list-rewrite") == 0;
}

/* What the whole plan frees: a file with several links frees its blocks only
 * when the plan removes every link. */
static void plan_totals(oa_plan *p)
{
	size_t n = p->todo.n;
	uint64_t (*keys)[3] = oa_xcalloc(n ? n : 1, sizeof *keys);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (p->todo.v[i].type == 'f')
			keys[k][0] = p->todo.v[i].dev, keys[k][1] = p->todo.v[i].ino, keys[k++][2] = i;
	qsort(keys, k, sizeof *keys, cmp_u64pair);
	p->freed = p->allocated = p->apparent = 0;
	for (size_t i = 0; i < n; i++) {
		oa_plan_entry *e = &p->todo.v[i];
		if (e->type != 'f')
			e->freed = is_rewrite(e) ? 0 : e->type == 'd' && !e->empty_dir ? e->freed : e->allocated;
	}
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && keys[j][0] == keys[i][0] && keys[j][1] == keys[i][1])
			j++;
		oa_plan_entry *first = &p->todo.v[keys[i][2]];
		for (size_t m = i; m < j; m++)
			p->todo.v[keys[m][2]].freed = 0;
		/* a rewritten tag is replaced, not freed: its link still goes */
		for (size_t m = i; m < j && is_rewrite(first); m++)
			first = &p->todo.v[keys[m][2]];
		if (is_rewrite(first)) {
			/* only the tag: a new one takes its place */
		} else if (j - i >= first->nlink) {
			first->freed = first->allocated;
		} else {
			for (size_t m = i; m < j; m++) {
				oa_plan_entry *e = &p->todo.v[keys[m][2]];
				if (!e->note)
					e->note = oa_xasprintf("hardlinked (%llu links, %zu in this plan): frees no space",
					                       (unsigned long long)e->nlink, j - i);
			}
		}
		i = j;
	}
	/* Apparent: each inode once too. */
	for (size_t i = 0; i < n; i++) {
		p->freed += p->todo.v[i].freed;
		p->allocated += p->todo.v[i].allocated;
	}
	for (size_t i = 0; i < k; i++)
		if (i == 0 || cmp_u64pair(keys[i], keys[i - 1]) != 0)
			p->apparent += (uint64_t)p->todo.v[keys[i][2]].size;
	free(keys);
}

void oa_plan_note_shared(oa_plan *p, const oa_refset *r)
{
	p->shared_store = oa_xcalloc(r->n_shared ? r->n_shared : 1, sizeof *p->shared_store);
	p->shared_how = oa_xcalloc(r->n_shared ? r->n_shared : 1, sizeof *p->shared_how);
	for (size_t i = 0; i < r->n_shared; i++) {
		p->shared_store[i] = oa_xstrdup(r->shared_store[i]);
		p->shared_how[i] = oa_xstrdup(r->shared_how[i]);
	}
	p->n_shared = r->n_shared;
}

size_t oa_plan_blockers(const oa_store *s, const oa_plan *p, oa_blocker **out)
{
	const char **removed = oa_xcalloc(p && p->todo.n ? p->todo.n : 1, sizeof *removed);
	size_t n = 0;
	for (size_t k = 0; p && k < p->todo.n; k++)
		if (strcmp(p->todo.v[k].category, "manifest") == 0)
			removed[n++] = p->todo.v[k].path;
	size_t nb = oa_store_blockers(s, removed, n, out);
	free(removed);
	return nb;
}

/* ---- prune plans ----------------------------------------------------------------- */

void oa_plan_prune(oa_store *s, const oa_junk_list *j, unsigned what, int64_t min_age, oa_plan *p)
{
	plan_init(p, s, "prune");
	p->what = what;
	p->min_age = min_age;
	/* Files first, in name order; empty directories last, deepest first. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < j->n; i++) {
			const oa_junk *x = &j->v[i];
			bool dir_pass = x->cat == OA_JUNK_EMPTY_DIR;
			if (dir_pass != (pass == 1) || !(what & (1u << x->cat)))
				continue;
			const char *why = x->keep;
			char buf[96];
			if (!why && !dir_pass && x->age < (double)min_age) {
				long m = (long)(x->age / 60);
				snprintf(buf, sizeof buf, "younger than --min-age (%ld min old)", m < 0 ? 0 : m);
				why = buf;
			}
			oa_plan_entry *e = list_add(why ? &p->kept : &p->todo);
			e->path = oa_xstrdup(x->path);
			e->category = oa_xstrdup(oa_junk_cat_name(x->cat));
			memcpy(e->hex, x->hex, sizeof e->hex);
			entry_from_stat(e, &x->lst);
			e->age = x->age;
			e->allocated = x->allocated;
			e->freed = x->freed_alone;
			e->empty_dir = dir_pass;
			e->check_refs = x->cat == OA_JUNK_ORPHAN || x->cat == OA_JUNK_MANIFEST_BLOB ||
			                x->cat == OA_JUNK_LEGACY;
			if (why)
				e->note = oa_xstrdup(why);
			else if (x->note)
				e->note = oa_xstrdup(x->note);
		}
	}
	plan_totals(p);
}

/* ---- rm plans ---------------------------------------------------------------------- */

static bool str_in(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* Would directory `rel` (relative to the root) be empty once `gone` are removed? */
static bool dir_would_empty(int root_fd, const char *rel, char **gone, size_t n_gone)
{
	int fd = openat(root_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool empty = true;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *full = oa_xasprintf("%s/%s", rel, e->d_name);
		if (!str_in(gone, n_gone, full))
			empty = false;
		free(full);
	}
	closedir(d);
	return empty;
}

/* For each blob of the store, the first model that is not being removed
 * and reaches it (its config and layers, its manifest blob, a list's
 * children here and what they name), or NULL. */
static const char **staying_users(oa_store *s, const size_t *models, size_t n, const char *rewrite)
{
	const char **by = oa_xcalloc(s->n_blobs ? s->n_blobs : 1, sizeof *by);
	for (size_t q = 0; q < s->n_models; q++) {
		bool selected = rewrite && strcmp(s->models[q].rel_path, rewrite) == 0; /* kept_rows_use adds its rows */
		for (size_t z = 0; z < n && !selected; z++)
			selected = models[z] == q;
		if (selected)
			continue;
		oa_blob **reach;
		size_t k = oa_model_reach(s, &s->models[q], &reach);
		for (size_t i = 0; i < k; i++)
			if (!by[reach[i] - s->blobs])
				by[reach[i] - s->blobs] = s->models[q].display;
		free(reach);
	}
	return by;
}

/* Whether legacy tag a is the anchor of v2 tag m: the same name ignoring
 * case, and no other v2 tag has a's name in its exact case (v2 tiny and
 * TINY both shadow legacy tiny; rm TINY leaves it to tiny). */
static bool anchor_of(const oa_store *s, const oa_model *a, const oa_model *m)
{
	oa_name an;
	oa_model_name_get(&a->name, &an);
	if (!oa_model_name_is(&m->name, &an, true))
		return false;
	if (oa_model_name_is(&m->name, &an, false))
		return true;
	for (size_t i = 0; i < s->n_models; i++)
		if (s->models[i].v2 && &s->models[i] != m && oa_model_name_is(&s->models[i].name, &an, false))
			return false;
	return true;
}

/* The models rm removes: those asked for, the legacy anchor of each
 * manifests-v2 tag among them (left behind, it would bring the model back:
 * reads fall back to manifests/), and the other rows (children) of a list. */
static size_t *with_anchors(const oa_store *s, const size_t *models, size_t n, size_t *out_n)
{
	size_t *v = oa_xcalloc(n + s->n_models + 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		v[k++] = models[i];
	for (size_t i = 0; i < n; i++) {
		const oa_model *m = &s->models[models[i]];
		for (size_t q = 0; m->v2 && q < s->n_models; q++) {
			bool dup = false;
			for (size_t z = 0; z < k && !dup; z++)
				dup = v[z] == q;
			if (!dup && ((s->models[q].anchor && anchor_of(s, &s->models[q], m)) ||
			             (s->models[q].sibling && strcmp(s->models[q].rel_path, m->rel_path) == 0)))
				v[k++] = q; /* its anchor; a list's other rows are the same tag */
		}
	}
	*out_n = k;
	return v;
}

/* What an rm plan is built from: the models removed, and what they leave. */
typedef struct rm_ctx {
	oa_store *s;
	oa_plan *p;
	size_t *models, n;   /* the models removed, with their anchors */
	const char **skip;   /* their manifest paths, left out of the reference set */
	size_t n_skip;
	char **gone;         /* every path removed, relative to the root */
	size_t n_gone;
	oa_refset refs;      /* what the manifests that stay mention */
	const char **users;  /* per blob: a model that stays and uses it, or NULL */
	oa_ino_set targets;  /* what symlinked blobs that stay resolve through */
	int64_t min_age;
	const char *rewrite; /* rm --child: the list tag rewritten (its rows are not users as they are) */
	const oa_model *dropped; /* rm --child: the row of the child removed */
} rm_ctx;

static void kept_rows_use(rm_ctx *c);

/* 1. the manifests (tags under manifests/ or manifests-v2/) */
static void rm_manifests(rm_ctx *c)
{
	oa_store *s = c->s;
	for (size_t i = 0; i < c->n; i++) {
		const oa_model *m = &s->models[c->models[i]];
		struct stat lst;
		if (m->sibling || fstatat(s->root_fd, m->rel_path, &lst, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* a list's other row is its tag's file */
		c->skip[c->n_skip++] = m->rel_path;
		oa_plan_entry *e = list_add(&c->p->todo);
		e->path = oa_xstrdup(m->rel_path);
		e->category = oa_xstrdup("manifest");
		e->model = oa_xstrdup(m->display);
		entry_from_stat(e, &lst);
		if (!m->manifest_ok)
			e->note = oa_xstrdup("the manifest cannot be parsed: its blobs are kept (prune removes "
			                     "them later if nothing references them)");
		else if (m->anchor && c->rewrite)
			e->note = oa_xstrdup("the downgrade anchor: a legacy copy of the child removed, which would "
			                     "keep all its blobs; an Ollama from before manifest lists no longer sees "
			                     "this model");
		else if (m->anchor)
			e->note = oa_xstrdup("the legacy anchor of a manifests-v2 tag removed too: reads fall "
			                     "back to it");
		c->gone[c->n_gone++] = oa_xstrdup(m->rel_path);
	}
}

/* 2. the directories that become empty, deepest first, up to (not
 * including) manifests/ or manifests-v2/ */
static void rm_empty_dirs(rm_ctx *c)
{
	oa_store *s = c->s;
	for (size_t i = 0; i < c->n; i++) {
		char *dir = oa_xstrdup(s->models[c->models[i]].rel_path);
		for (int depth = 0; depth < 3; depth++) {
			char *slash = strrchr(dir, '/');
			if (!slash)
				break;
			*slash = '\0';
			if (str_in(c->gone, c->n_gone, dir) || !dir_would_empty(s->root_fd, dir, c->gone, c->n_gone))
				break;
			struct stat lst;
			if (fstatat(s->root_fd, dir, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(lst.st_mode))
				break;
			oa_plan_entry *e = list_add(&c->p->todo);
			e->path = oa_xstrdup(dir);
			e->category = oa_xstrdup("empty-dir");
			e->model = oa_xstrdup(s->models[c->models[i]].display);
			entry_from_stat(e, &lst);
			e->empty_dir = true;
			c->gone = oa_xreallocarray(c->gone, c->n_gone + 2, sizeof *c->gone);
			c->gone[c->n_gone++] = oa_xstrdup(dir);
		}
		free(dir);
	}
}

/* What keeps a removed model's blob: the reference set, a model that
 * stays, a symlinked blob that stays; built once for every blob. */
static void rm_keepers(rm_ctx *c)
{
	oa_store *s = c->s;
	oa_refset_build(s, c->skip, c->n_skip, &c->refs);
	c->users = staying_users(s, c->models, c->n, c->rewrite);
	if (c->rewrite)
		kept_rows_use(c);
	for (size_t i = 0; s->blobs_fd >= 0 && i < s->n_blobs; i++) {
		const oa_blob *b = &s->blobs[i];
		if (!b->is_symlink)
			continue;
		bool used = b->hex[0] && b->cls != OA_BLOB_CREATE_TEMP && oa_refset_has(&c->refs, b->hex);
		if (used || c->users[i])
			oa_symlink_chain(s->blobs_fd, b->name, &c->targets);
	}
	oa_ino_set_sort(&c->targets);
}

/* 3. one blob a removed model reaches: removed, or kept with the reason. */
static void rm_blob(rm_ctx *c, const oa_model *m, oa_blob *b)
{
	oa_store *s = c->s;
	oa_plan *p = c->p;
	char *path = oa_xasprintf("blobs/%s", b->name);
	bool dup = false;
	for (size_t q = 0; q < p->todo.n && !dup; q++)
		dup = strcmp(p->todo.v[q].path, path) == 0;
	for (size_t q = 0; q < p->kept.n && !dup; q++)
		dup = strcmp(p->kept.v[q].path, path) == 0;
	struct stat lst;
	if (dup || fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
		free(path);
		return;
	}
	char *why = NULL;
	/* Another model that stays uses it (whatever the byte scan says). */
	const char *other = c->users[b - s->blobs];
	if (other) {
		why = oa_xasprintf("also used by %s", other);
	} else if (oa_refset_has(&c->refs, b->hex)) {
		why = oa_xstrdup(c->refs.n_shared ? "another file under manifests/, or a store sharing these "
		                 "blob files, references this digest" : "another file under manifests/ mentions "
		                 "this digest");
	} else if (oa_ino_set_has(&c->targets, lst.st_dev, lst.st_ino)) {
		why = oa_xstrdup("a symlinked blob that another manifest uses resolves to it");
	} else if (c->refs.incomplete) {
		why = oa_xasprintf("cannot re-read every manifest (%s)", c->refs.why);
	}
	oa_plan_entry *e = list_add(why ? &p->kept : &p->todo);
	e->path = path;
	e->category = oa_xstrdup("model-blob");
	e->model = oa_xstrdup(m->display);
	memcpy(e->hex, b->hex, sizeof e->hex);
	e->check_refs = true;
	entry_from_stat(e, &lst);
	e->freed = e->allocated;
	if (why)
		e->note = why;
	else if (b->is_symlink)
		e->note = oa_xstrdup("a symlink: only the link is removed, never its target");
	if (!why && c->min_age > 0 && e->age < (double)c->min_age) {
		/* move it to the kept list */
		oa_plan_entry *kk = list_add(&p->kept);
		*kk = p->todo.v[--p->todo.n];
		free(kk->note);
		kk->note = oa_xstrdup("younger than --min-age");
	}
}

/* The rm plan of exactly these models (anchors and siblings included). */
static void plan_rm_models(oa_store *s, size_t *models, size_t n, int64_t min_age, oa_plan *p)
{
	plan_init(p, s, "rm");
	p->min_age = min_age;
	rm_ctx c = { .s = s, .p = p, .min_age = min_age };
	c.models = models;
	c.n = n;
	/* The reference set leaves out exactly the paths being removed; another
	 * name of the same file (a hard link, a symlink) is another tag that stays. */
	c.skip = oa_xcalloc(c.n ? c.n : 1, sizeof *c.skip);
	c.gone = oa_xcalloc(c.n * 4 + 1, sizeof *c.gone);
	rm_manifests(&c);
	rm_empty_dirs(&c);
	rm_keepers(&c);
	oa_plan_note_shared(p, &c.refs);
	for (size_t i = 0; i < c.n; i++) {
		const oa_model *m = &s->models[c.models[i]];
		oa_blob **reach;
		size_t n_reach = oa_model_reach(s, m, &reach);
		for (size_t k = 0; k < n_reach; k++)
			rm_blob(&c, m, reach[k]);
		free(reach);
	}
	oa_refset_free(&c.refs);
	oa_ino_set_free(&c.targets);
	free(c.users);
	for (size_t i = 0; i < c.n_gone; i++)
		free(c.gone[i]);
	free(c.gone);
	free(c.skip);
	plan_totals(p);
}

/* Whether model q is the compatibility shadow of one of the n models v
 * (and not one of them itself). */
static bool shadow_of_any(const oa_store *s, size_t q, const size_t *v, size_t n)
{
	const oa_model *sh = &s->models[q];
	if (!sh->shadow || !sh->shadow_of)
		return false;
	bool of = false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] == q)
			return false;
		of |= s->models[v[i]].v2 && strcmp(s->models[v[i]].display, sh->shadow_of) == 0;
	}
	return of;
}

/* What the plan frees, computed without touching anything. */
static uint64_t rm_frees(oa_store *s, size_t *models, size_t n)
{
	oa_plan p;
	plan_rm_models(s, models, n, 0, &p);
	uint64_t freed = p.freed;
	oa_plan_free(&p);
	return freed;
}

void oa_plan_rm(oa_store *s, const size_t *asked, size_t n_asked, int64_t min_age, bool with_shadow, oa_plan *p)
{
	size_t n;
	size_t *v = with_anchors(s, asked, n_asked, &n); /* room for every model */
	size_t n_tags = n;
	oa_plan_shadow *sh = NULL;
	size_t n_sh = 0;
	uint64_t base = 0;
	size_t *probe = oa_xcalloc(n_tags + 1, sizeof *probe); /* the tags and one shadow */
	memcpy(probe, v, n_tags * sizeof *probe);
	for (size_t q = 0; q < s->n_models; q++) {
		if (!shadow_of_any(s, q, v, n_tags))
			continue;
		/* Ollama's rm leaves the shadow: what it alone holds once the tag is gone. */
		if (!n_sh)
			base = rm_frees(s, v, n_tags);
		probe[n_tags] = q;
		uint64_t with = rm_frees(s, probe, n_tags + 1);
		sh = oa_xreallocarray(sh, n_sh + 1, sizeof *sh);
		sh[n_sh++] = (oa_plan_shadow){ .name = oa_xstrdup(s->models[q].display),
		                               .path = oa_xstrdup(s->models[q].rel_path),
		                               .bytes_only_it_holds = with > base ? with - base : 0,
		                               .removed = with_shadow };
		if (with_shadow)
			v[n++] = q;
	}
	free(probe);
	plan_rm_models(s, v, n, min_age, p);
	p->shadows = sh;
	p->n_shadows = n_sh;
	free(v);
}

/* ---- rm --child: one child of a list ---------------------------------------------------- */

/* The list entry a row of a list tag stands for, or NULL. */
static const oa_list_entry *row_entry_of(const oa_model *r)
{
	if (r->sibling)
		return r->row_entry;
	return r->is_list && r->child >= 0 ? &r->list->entries[r->child] : NULL;
}

/* What one child of a list reaches: its manifest blob, its config and
 * layers (a new array of the store's blobs). */
static size_t row_child_reach(const oa_store *s, const oa_model *r, oa_blob ***out)
{
	size_t n = 0, cap = r->m.n_layers + 2;
	oa_blob **v = oa_xcalloc(cap, sizeof *v);
	const oa_list_entry *e = row_entry_of(r);
	oa_blob *b = e && e->digest_valid ? oa_store_blob_by_hex(s, e->hex) : NULL;
	if (b)
		v[n++] = b;
	if (r->manifest_ok && r->config_blob)
		v[n++] = r->config_blob;
	for (size_t k = 0; r->manifest_ok && r->layer_blobs && k < r->m.n_layers; k++)
		if (r->layer_blobs[k])
			v[n++] = r->layer_blobs[k];
	*out = v;
	return n;
}

static bool row_is_child(const oa_model *r, const char *hex)
{
	const oa_list_entry *e = row_entry_of(r);
	return e && e->digest_valid && strcmp(e->hex, hex) == 0;
}

static bool row_of(const oa_model *r, const oa_model *t)
{
	return r == t || (r->sibling && strcmp(r->rel_path, t->rel_path) == 0);
}

/* The children the rewritten list keeps use their blobs, whatever else goes. */
static void kept_rows_use(rm_ctx *c)
{
	oa_store *s = c->s;
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *r = &s->models[q];
		if (strcmp(r->rel_path, c->rewrite) != 0 || r == c->dropped || (!r->sibling && !r->is_list))
			continue;
		oa_blob **reach;
		size_t k = row_child_reach(s, r, &reach);
		for (size_t i = 0; i < k; i++)
			if (!c->users[reach[i] - s->blobs])
				c->users[reach[i] - s->blobs] = r->display;
		free(reach);
	}
}

/* The plan's first entry: the list tag, rewritten (not removed). */
static void rm_rewrite_entry(rm_ctx *c, const oa_model *t, const struct stat *lst)
{
	const oa_plan_rewrite *rw = c->p->rewrite;
	oa_plan_entry *e = list_add(&c->p->todo);
	e->path = oa_xstrdup(t->rel_path);
	e->category = oa_xstrdup("list-rewrite");
	e->model = oa_xstrdup(t->display);
	entry_from_stat(e, lst);
	e->note = oa_xasprintf("rewritten without its %s child (sha256:%.12s...): the list keeps %s%s", rw->runner,
	                       rw->child, rw->kept,
	                       rw->anchor_removed ? "; its downgrade anchor goes too, so an Ollama from before "
	                       "manifest lists no longer sees this model" : "");
	c->skip[c->n_skip++] = t->rel_path;
}

/* The plan of dropping row d of list tag t, removing the models v (its
 * anchor, its shadow) with it. */
static void plan_rm_child_models(oa_store *s, const oa_model *t, const oa_model *d, size_t *v, size_t n,
                                 int64_t min_age, oa_plan_rewrite *rw, const struct stat *lst, oa_plan *p)
{
	plan_init(p, s, "rm");
	p->min_age = min_age;
	p->rewrite = rw;
	rm_ctx c = { .s = s, .p = p, .min_age = min_age, .models = v, .n = n, .rewrite = t->rel_path, .dropped = d };
	c.skip = oa_xcalloc(n + 2, sizeof *c.skip);
	c.gone = oa_xcalloc(n * 4 + 1, sizeof *c.gone);
	rm_rewrite_entry(&c, t, lst);
	rm_manifests(&c);
	rm_empty_dirs(&c);
	rm_keepers(&c);
	oa_plan_note_shared(p, &c.refs);
	oa_blob **reach;
	size_t k = row_child_reach(s, d, &reach);
	for (size_t i = 0; i < k; i++)
		rm_blob(&c, d, reach[i]);
	free(reach);
	oa_blob *old = t->tag_blob[0] ? oa_store_blob_by_hex(s, t->tag_blob) : NULL;
	if (old)
		rm_blob(&c, t, old); /* the list as it was: nothing names it once the tag is rewritten */
	for (size_t i = 0; i < n; i++) {
		oa_blob **r2;
		size_t k2 = oa_model_reach(s, &s->models[v[i]], &r2);
		for (size_t j = 0; j < k2; j++)
			rm_blob(&c, &s->models[v[i]], r2[j]);
		free(r2);
	}
	oa_refset_free(&c.refs);
	oa_ino_set_free(&c.targets);
	free(c.users);
	for (size_t i = 0; i < c.n_gone; i++)
		free(c.gone[i]);
	free(c.gone);
	free(c.skip);
	plan_totals(p);
	p->rewrite = NULL; /* the caller hands it over */
}

/* The row of tag t whose child has this runner, here. */
static const oa_model *child_row(const oa_store *s, const oa_model *t, const char *runner, oa_buf *kept)
{
	const oa_model *d = NULL;
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *r = &s->models[q];
		if (!row_of(r, t))
			continue;
		if (!d && strcmp(oa_model_list_runner(r), runner) == 0)
			d = r;
		else
			oa_buf_printf(kept, "%s%s", kept->len ? ", " : "", oa_model_list_runner(r));
	}
	return d;
}

/* The rewrite of t without row d's child: its bytes, kind and new link. */
static int rewrite_prepare(oa_store *s, const oa_model *t, const oa_model *d, oa_plan_rewrite *rw,
                           struct stat *lst, char *err, size_t errlen)
{
	const oa_list_entry *e = row_entry_of(d);
	if (!e || !e->digest_valid) {
		snprintf(err, errlen, "%s: its %s child is inline in the list (no digest): not removed on its own",
		         t->display, rw->runner);
		return -1;
	}
	memcpy(rw->child, e->hex, sizeof rw->child);
	const char *kind = t->tag_kind ? t->tag_kind : "file";
	rw->kind = strcmp(kind, "symlink") == 0 ? 'l' : strcmp(kind, "hardlink") == 0 ? 'h'
	           : strcmp(kind, "copy") == 0 ? 'c' : 'f';
	memcpy(rw->old_list, t->tag_blob, sizeof rw->old_list);
	const char *leaf;
	int pfd = open_parent(s, t->rel_path, &leaf);
	char why[256] = "the tag cannot be opened";
	size_t len = 0, left = 0;
	uint8_t *bytes = NULL;
	list_new now = { .kind = rw->kind, .old_hex = rw->old_list };
	if (pfd >= 0 && fstatat(pfd, leaf, lst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (S_ISREG(lst->st_mode) || (S_ISLNK(lst->st_mode) && rw->kind == 'l' && rw->old_list[0])))
		bytes = list_tag_read(s, pfd, leaf, &now, &len, why, sizeof why);
	else if (pfd >= 0)
		snprintf(why, sizeof why, "the tag is neither a regular file nor a symlink to a manifest blob");
	if (bytes) {
		oa_sha256_hex(bytes, len, rw->old_list);
		if (rw->kind == 'l') {
			char target[OA_PATH_MAX];
			ssize_t n = readlinkat(pfd, leaf, target, sizeof target - 1);
			target[n > 0 ? n : 0] = '\0';
			const char *base = strrchr(target, '/');
			size_t pre = base ? (size_t)(base + 1 - target) : 0;
			rw->link_target = oa_xasprintf("%.*s", (int)pre, target);
		}
		rw->bytes = list_without_child(bytes, len, rw->child, &rw->len, &left, why, sizeof why);
		free(bytes);
	}
	if (pfd >= 0)
		close(pfd);
	if (!rw->bytes) {
		snprintf(err, errlen, "%s: %s", t->display, why);
		return -1;
	}
	oa_sha256_hex(rw->bytes, rw->len, rw->new_list);
	if (rw->link_target) {
		char *full = oa_xasprintf("%ssha256-%s", rw->link_target, rw->new_list);
		free(rw->link_target);
		rw->link_target = full;
	}
	return 0;
}

/* The legacy copies of row d's child: the migration's anchor (a ggml
 * child) and its compatibility shadows. */
static bool anchor_of_child(const oa_store *s, const oa_model *a, const oa_model *t, const oa_model *d)
{
	return a->anchor && anchor_of(s, a, t) &&
	       ((a->migration_anchor && strcmp(oa_model_list_runner(d), "ggml") == 0) || strcmp(a->m.id, d->m.id) == 0);
}

int oa_plan_rm_child(oa_store *s, size_t model, const char *runner, int64_t min_age, bool with_shadow, oa_plan *p,
                     char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	const oa_model *t = &s->models[oa_store_row_tag(s, model)];
	if (!t->is_list) {
		snprintf(err, errlen, "%s is not a manifest list: --child removes one child of a list (rm %s "
		         "removes the model)", t->display, t->display);
		return -1;
	}
	oa_buf kept;
	oa_buf_init(&kept);
	const oa_model *d = child_row(s, t, runner, &kept);
	if (!d || !kept.len) {
		snprintf(err, errlen, d ? "%s: removing its %s child would leave the list with no child here: rm %s "
		         "removes the model" : "%s has no %s child here (its children here: %s)", t->display, runner,
		         d ? t->display : kept.len ? kept.data : "none");
		oa_buf_free(&kept);
		return -1;
	}
	oa_plan_rewrite *rw = oa_xcalloc(1, sizeof *rw);
	rw->path = oa_xstrdup(t->rel_path);
	rw->runner = oa_xstrdup(runner);
	rw->kept = oa_buf_take(&kept);
	struct stat lst;
	if (rewrite_prepare(s, t, d, rw, &lst, err, errlen) < 0) {
		oa_plan tmp = { .rewrite = rw };
		oa_plan_free(&tmp);
		return -1;
	}
	size_t *v = oa_xcalloc(s->n_models + 1, sizeof *v), n = 0;
	for (size_t q = 0; q < s->n_models; q++)
		if (anchor_of_child(s, &s->models[q], t, d)) {
			v[n++] = q;
			rw->anchor_removed = true;
			free(rw->anchor);
			rw->anchor = oa_xstrdup(s->models[q].rel_path);
		}
	oa_plan_shadow *sh = NULL;
	size_t n_sh = 0, n_base = n;
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *m = &s->models[q];
		if (!m->shadow || strcmp(m->m.id, rw->child) != 0)
			continue;
		/* what the shadow alone keeps once the child is gone */
		oa_plan a, b;
		size_t *probe = oa_xcalloc(n_base + 1, sizeof *probe);
		memcpy(probe, v, n_base * sizeof *probe);
		plan_rm_child_models(s, t, d, probe, n_base, 0, rw, &lst, &a);
		probe[n_base] = q;
		plan_rm_child_models(s, t, d, probe, n_base + 1, 0, rw, &lst, &b);
		free(probe);
		sh = oa_xreallocarray(sh, n_sh + 1, sizeof *sh);
		sh[n_sh++] = (oa_plan_shadow){ .name = oa_xstrdup(m->display), .path = oa_xstrdup(m->rel_path),
		                               .bytes_only_it_holds = b.freed > a.freed ? b.freed - a.freed : 0,
		                               .removed = with_shadow };
		oa_plan_free(&a);
		oa_plan_free(&b);
		if (with_shadow)
			v[n++] = q;
	}
	plan_rm_child_models(s, t, d, v, n, min_age, rw, &lst, p);
	p->rewrite = rw;
	p->shadows = sh;
	p->n_shadows = n_sh;
	free(v);
	return 0;
}

/* ---- plan JSON ------------------------------------------------------------------------ */

const char *plan_type_name(char t)
{
	return t == 'd' ? "dir" : t == 'l' ? "symlink" : "file";
}

static json_t *entry_json(const oa_plan_entry *e)
{
	char mt[48];
	oa_iso8601((time_t)(e->mtime_ns / 1000000000), (long)(e->mtime_ns % 1000000000), mt, sizeof mt);
	json_t *o = json_object();
	json_object_set_new(o, "path", json_string(e->path));
	json_object_set_new(o, "category", json_string(e->category));
	json_object_set_new(o, "digest", e->hex[0] ? json_sprintf("sha256:%s", e->hex) : json_null());
	json_object_set_new(o, "type", json_string(plan_type_name(e->type)));
	json_object_set_new(o, "empty_dir", json_boolean(e->empty_dir));
	json_object_set_new(o, "check_refs", json_boolean(e->check_refs));
	json_object_set_new(o, "dev", json_integer((json_int_t)e->dev));
	json_object_set_new(o, "ino", json_integer((json_int_t)e->ino));
	json_object_set_new(o, "nlink", json_integer((json_int_t)e->nlink));
	json_object_set_new(o, "apparent_bytes", json_integer(e->size));
	json_object_set_new(o, "mtime_ns", json_integer(e->mtime_ns));
	json_object_set_new(o, "mtime", json_string(mt));
	json_object_set_new(o, "age_seconds", json_integer((json_int_t)e->age));
	json_object_set_new(o, "disk_bytes", json_integer((json_int_t)e->allocated));
	json_object_set_new(o, "freed_bytes", json_integer((json_int_t)e->freed));
	json_object_set_new(o, "model", e->model ? json_string(e->model) : json_null());
	json_object_set_new(o, "note", e->note ? json_string(e->note) : json_null());
	return o;
}

/* rm --child: what the list tag becomes; null for any other plan. */
static json_t *rewrite_json(const oa_plan_rewrite *rw)
{
	if (!rw)
		return json_null();
	static const char *kinds[] = { "symlink", "hardlink", "copy", "file" };
	const char *k = kinds[rw->kind == 'l' ? 0 : rw->kind == 'h' ? 1 : rw->kind == 'c' ? 2 : 3];
	json_t *kept = json_array();
	char *runners = oa_xstrdup(rw->kept);
	for (char *save = NULL, *w = strtok_r(runners, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
		json_array_append_new(kept, json_string(w));
	free(runners);
	return json_pack("{s:s, s:s, s:s+, s:o, s:s+, s:s+, s:s, s:b, s:s?}", "path", rw->path, "child_removed",
	                 rw->runner, "child_digest", "sha256:", rw->child, "children_kept", kept, "list_digest",
	                 "sha256:", rw->old_list, "new_list_digest", "sha256:", rw->new_list, "tag_kind", k,
	                 "anchor_removed", rw->anchor_removed, "anchor", rw->anchor);
}

json_t *oa_plan_to_json(const oa_plan *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string(OA_PLAN_SCHEMA));
	json_object_set_new(o, "command", json_string(p->command));
	json_object_set_new(o, "created", json_string(p->created));
	json_object_set_new(o, "store", json_string(p->store));
	json_object_set_new(o, "store_dev", json_integer((json_int_t)p->store_dev));
	json_object_set_new(o, "store_ino", json_integer((json_int_t)p->store_ino));
	json_t *what = json_array();
	for (int c = 0; c < OA_JUNK_CAT_COUNT; c++)
		if (p->what & (1u << c))
			json_array_append_new(what, json_string(oa_junk_cat_name((enum oa_junk_cat)c)));
	json_object_set_new(o, "what", what);
	json_object_set_new(o, "min_age_seconds", json_integer(p->min_age));
	json_object_set_new(o, "freed_bytes", json_integer((json_int_t)p->freed));
	json_object_set_new(o, "disk_bytes", json_integer((json_int_t)p->allocated));
	json_object_set_new(o, "apparent_bytes", json_integer((json_int_t)p->apparent));
	json_t *v = json_array();
	for (size_t i = 0; i < p->todo.n; i++)
		json_array_append_new(v, entry_json(&p->todo.v[i]));
	json_object_set_new(o, "entries", v);
	json_t *k = json_array();
	for (size_t i = 0; i < p->kept.n; i++)
		json_array_append_new(k, entry_json(&p->kept.v[i]));
	json_object_set_new(o, "kept", k);
	if (strcmp(p->command, "rm") == 0) {
		json_t *sv = json_array();
		for (size_t i = 0; i < p->n_shadows; i++)
			json_array_append_new(sv, json_pack("{s:s, s:s, s:I, s:b}", "name", p->shadows[i].name, "path",
			                                    p->shadows[i].path, "bytes_only_it_holds",
			                                    (json_int_t)p->shadows[i].bytes_only_it_holds, "removed",
			                                    p->shadows[i].removed));
		json_object_set_new(o, "shadows", sv);
		json_object_set_new(o, "list_rewrite", rewrite_json(p->rewrite));
	}
	return o;
}

int oa_plan_write(const oa_plan *p, const char *file, char *err, size_t errlen)
{
	char *dir = oa_xstrdup(file);
	char *slash = strrchr(dir, '/');
	const char *name = file;
	int dfd;
	if (slash) {
		*slash = '\0';
		name = file + (slash - dir) + 1;
		dfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (dfd < 0) {
		snprintf(err, errlen, "%s: cannot open its directory: %s", file, strerror(errno));
		free(dir);
		return -1;
	}
	json_t *v = oa_plan_to_json(p);
	/* A list rewrite (rm --child) is done as planned or not at all: read
	 * back, its entry would be a tag's removal. */
	if (p->rewrite) {
		snprintf(err, errlen, "--plan %s: an rm --child plan is not saved; apply it with --apply", file);
		json_decref(v);
		close(dfd);
		free(dir);
		return -1;
	}
	json_object_del(v, "list_rewrite"); /* the report's, not the plan file's */
	char rroot[PATH_MAX];
	if (realpath(p->store, rroot))
		json_object_set_new(v, "store", json_string(rroot));
	char why[512];
	int rc = oa_json_write_at(dfd, name, v, why, sizeof why);
	if (rc < 0)
		snprintf(err, errlen, "--plan %s: %s", file, why);
	json_decref(v);
	close(dfd);
	free(dir);
	return rc;
}

static bool digits_after(const char *s, const char *prefix)
{
	return oa_str_has_prefix(s, prefix) && oa_all_digits(s + strlen(prefix));
}

/* Relative, no empty, "." or ".." component; the number of components. */
static size_t path_parts(const char *path)
{
	if (!path || !*path || path[0] == '/' || strlen(path) > 4096)
		return 0;
	size_t parts = 0;
	const char *p = path;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		parts++;
		p += n;
		if (*p == '/')
			p++;
		if (e && !*p)
			return 0;
	}
	return parts;
}

/* command "prune": blobs/<one entry> (a directory only split-gguf-<digits>),
 * directories under manifests/ (1..OA_MANIFESTS_DEPTH_MAX deep) and root
 * ollama-safetensors<digits> directories. command "rm": manifest files at
 * depth 4, directories under manifests/, files in blobs/. */
path_kind plan_path_kind(const char *command, const char *path, char type)
{
	size_t parts = path_parts(path);
	bool prune = command && strcmp(command, "prune") == 0, rm = command && strcmp(command, "rm") == 0;
	if (!parts || (!prune && !rm))
		return PK_BAD;
	if (oa_str_has_prefix(path, "blobs/") && parts == 2) {
		if (type != 'd')
			return PK_BLOB;
		return prune && digits_after(path + 6, "split-gguf-") ? PK_BLOB_TREE : PK_BAD;
	}
	const char *leaf = strrchr(path, '/');
	if (prune && type != 'd' && leaf && ((oa_str_has_prefix(path, "manifests-v2/") && parts == 5 &&
	                                      oa_str_has_prefix(leaf + 1, ".manifest-")) ||
	                                     (oa_str_has_prefix(path, "metadata/sha256-") && parts == 2 &&
	                                      oa_str_has_suffix(leaf + 1, ".json"))))
		return PK_STORE_TEMP;
	if ((oa_str_has_prefix(path, "manifests/") || oa_str_has_prefix(path, "manifests-v2/")) && parts >= 2 &&
	    parts - 1 <= OA_MANIFESTS_DEPTH_MAX) {
		if (type == 'd')
			return PK_MANIFEST_DIR;
		return rm && parts == 5 ? PK_MANIFEST : PK_BAD;
	}
	if (prune && parts == 1 && type == 'd' && digits_after(path, "ollama-safetensors"))
		return PK_ROOT_TREE;
	return PK_BAD;
}

/* The digest a blobs/sha256[-:]<64 hex>... name carries (lowercase), or "". */
static void path_hex(const char *path, oa_digest_hex hex)
{
	hex[0] = '\0';
	const char *n = path + 6;
	if (!oa_str_has_prefix(path, "blobs/") || strncmp(n, "sha256", 6) != 0 ||
	    (n[6] != '-' && n[6] != ':') || strlen(n) < 7 + 64 || !oa_is_hex(n + 7, 64))
		return;
	for (int k = 0; k < 64; k++)
		hex[k] = (char)tolower((unsigned char)n[7 + k]);
	hex[64] = '\0';
}

char plan_type_char(const char *type)
{
	return !type ? 0 : strcmp(type, "dir") == 0 ? 'd' : strcmp(type, "symlink") == 0 ? 'l'
	                   : strcmp(type, "file") == 0 ? 'f' : 0;
}

static int entry_from_json(json_t *o, const char *command, oa_plan_entry *e, char *err,
                           size_t errlen, size_t idx)
{
	const char *path = json_string_value(json_object_get(o, "path"));
	const char *cat = json_string_value(json_object_get(o, "category"));
	const char *type = json_string_value(json_object_get(o, "type"));
	json_t *dg = json_object_get(o, "digest");
	if (!path_parts(path)) {
		snprintf(err, errlen, "entry %zu: path is missing or not a path inside the store", idx);
		return -1;
	}
	if (!cat || !plan_type_char(type)) {
		snprintf(err, errlen, "entry %zu (%s): bad category or type", idx, path);
		return -1;
	}
	e->type = plan_type_char(type);
	path_kind kind = plan_path_kind(command, path, e->type);
	if (kind == PK_BAD) {
		snprintf(err, errlen, "entry %zu (%s, %s): not something `%s` removes", idx, path, type, command);
		return -1;
	}
	if (json_is_string(dg)) {
		const char *d = json_string_value(dg);
		if (strlen(d) != 71 || strncmp(d, "sha256:", 7) != 0 || !oa_is_hex(d + 7, 64)) {
			snprintf(err, errlen, "entry %zu (%s): bad digest", idx, path);
			return -1;
		}
	}
	e->path = oa_xstrdup(path);
	/* Safety comes from the path alone: the plan's digest, check_refs,
	 * empty_dir and category are not trusted. */
	path_hex(path, e->hex);
	e->check_refs = kind == PK_BLOB;
	e->empty_dir = kind == PK_MANIFEST_DIR;
	e->category = oa_xstrdup(kind == PK_MANIFEST ? "manifest"
	                         : kind == PK_MANIFEST_DIR ? (strcmp(command, "rm") == 0 ? "empty-dir" : "empty-dirs")
	                         : cat);
	if (!oa_json_get_u64(o, "dev", &e->dev) || !oa_json_get_u64(o, "ino", &e->ino) ||
	    !oa_json_get_i64(o, "apparent_bytes", &e->size) || !oa_json_get_i64(o, "mtime_ns", &e->mtime_ns)) {
		snprintf(err, errlen, "entry %zu (%s): dev, ino, apparent_bytes and mtime_ns are required", idx, path);
		return -1;
	}
	oa_json_get_u64(o, "nlink", &e->nlink);
	oa_json_get_u64(o, "disk_bytes", &e->allocated);
	oa_json_get_u64(o, "freed_bytes", &e->freed);
	const char *note = json_string_value(json_object_get(o, "note"));
	const char *model = json_string_value(json_object_get(o, "model"));
	if (note)
		e->note = oa_xstrdup(note);
	if (model)
		e->model = oa_xstrdup(model);
	e->age = oa_wall_now() - (double)e->mtime_ns / 1e9;
	return 0;
}

int oa_plan_read(const char *file, oa_plan *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	json_error_t jerr;
	json_t *o = json_load_file(file, 0, &jerr);
	if (!o) {
		snprintf(err, errlen, "%s: not a plan: %s (line %d)", file, jerr.text, jerr.line);
		return -1;
	}
	const char *schema = json_string_value(json_object_get(o, "schema"));
	const char *cmd = json_string_value(json_object_get(o, "command"));
	const char *store = json_string_value(json_object_get(o, "store"));
	json_t *entries = json_object_get(o, "entries");
	int rc = -1;
	if (schema && strcmp(schema, "ollama-audit.plan/1") == 0) {
		snprintf(err, errlen, "%s: a plan of an older ollama-audit (%s); plan again", file, schema);
		goto out;
	}
	if (!schema || strcmp(schema, OA_PLAN_SCHEMA) != 0) {
		snprintf(err, errlen, "%s: not a plan (schema is not %s)", file, OA_PLAN_SCHEMA);
		goto out;
	}
	if (!cmd || (strcmp(cmd, "prune") && strcmp(cmd, "rm")) || !store || !json_is_array(entries) ||
	    !oa_json_get_u64(o, "store_dev", &p->store_dev) || !oa_json_get_u64(o, "store_ino", &p->store_ino)) {
		snprintf(err, errlen, "%s: command, store, store_dev, store_ino and entries are required", file);
		goto out;
	}
	p->command = oa_xstrdup(cmd);
	p->store = oa_xstrdup(store);
	oa_json_get_i64(o, "min_age_seconds", &p->min_age);
	const char *created = json_string_value(json_object_get(o, "created"));
	snprintf(p->created, sizeof p->created, "%s", created ? created : "");
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		oa_plan_entry *e = list_add(&p->todo);
		if (!json_is_object(x) || entry_from_json(x, p->command, e, err, errlen, i) < 0) {
			if (!json_is_object(x))
				snprintf(err, errlen, "entry %zu is not an object", i);
			char tmp[512];
			snprintf(tmp, sizeof tmp, "%s: %s", file, err);
			snprintf(err, errlen, "%s", tmp);
			goto out;
		}
	}
	plan_totals(p);
	rc = 0;
out:
	json_decref(o);
	if (rc < 0)
		oa_plan_free(p);
	return rc;
}

/* ---- applying --------------------------------------------------------------------------- */

/* Open the directory holding `path` without following any symlink; the last
 * component goes to *leaf. Returns a new fd, or -1 with errno. */
static int open_parent(const oa_store *s, const char *path, const char **leaf)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		*leaf = path;
		return dup(s->root_fd);
	}
	*leaf = slash + 1;
	int fd = dup(s->root_fd);
	const char *p = path;
	/* blobs/ as the store opened it (it may be a symlink to another disk:
	 * the reference set then holds every store that reaches it). */
	if (oa_str_has_prefix(path, "blobs/") && s->blobs_fd >= 0) {
		close(fd);
		fd = dup(s->blobs_fd);
		p = path + strlen("blobs/");
	}
	while (fd >= 0 && p < slash) {
		const char *e = strchr(p, '/');
		char *part = oa_xstrndup(p, (size_t)(e - p));
		int nfd = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		free(part);
		close(fd);
		fd = nfd;
		errno = saved;
		p = e + 1;
	}
	return fd;
}

/* Remove a directory tree, never following a symlink, and never removing a
 * name whose inode is in `protect` (what a symlinked blob in use resolves
 * through): such a tree is left in part, with EBUSY. */
static int remove_tree(int parent, const char *name, int depth, const oa_ino_set *protect)
{
	if (depth > 32) {
		errno = ELOOP;
		return -1;
	}
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		names = oa_xreallocarray(names, n + 1, sizeof *names);
		names[n++] = oa_xstrdup(e->d_name);
	}
	int rc = 0, err = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		bool have = fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (have && oa_ino_set_has(protect, st.st_dev, st.st_ino)) {
			rc = -1;
			err = EBUSY;
		} else if (have && S_ISDIR(st.st_mode)) {
			if (remove_tree(fd, names[i], depth + 1, protect) < 0) {
				rc = -1;
				err = err ? err : errno;
			}
		} else if (unlinkat(fd, names[i], 0) < 0 && errno != ENOENT) {
			rc = -1;
			err = err ? err : errno;
		}
		free(names[i]);
	}
	free(names);
	closedir(d);
	if (rc < 0) {
		errno = err;
		return -1;
	}
	return unlinkat(parent, name, AT_REMOVEDIR);
}

typedef enum { R_DONE, R_SKIP, R_FAIL } outcome;

static void say(const oa_apply_opts *o, const char *verb, const oa_plan_entry *e, const char *why)
{
	if (!o->log)
		return;
	char *p = oa_escape(e->path, strlen(e->path));
	if (why)
		fprintf(o->log, "%s %s: %s\n", verb, p, why);
	else
		fprintf(o->log, "%s %s\n", verb, p);
	fflush(o->log);
	free(p);
}

/* What applying consults besides the entry itself: the store's reference
 * cache (built once, refreshed before each batch of blobs, see refs_current)
 * and the blob files the parseable manifests that stay reference by path. */
typedef struct apply_ctx {
	oa_store *s;
	const char *command;
	const oa_apply_opts *o;
	oa_refcache *refs;
	size_t since_refresh;   /* blobs checked against the last refresh */
	size_t refreshes;
	double refreshed_at, refresh_took; /* when the last refresh ended, and its cost (s) */
	bool refresh_due;       /* before the next blob check, whatever the count */
	bool blobs_linked;      /* blobs/ is a symlink: only names Ollama writes go */
	char **in_use;      /* sorted blob names */
	size_t n_in_use;
	oa_ino_set targets; /* what the symlinked blobs that stay resolve through */
	const oa_plan_rewrite *rewrite; /* rm --child: the list tag to rewrite, or NULL */
} apply_ctx;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Blob names used by every parseable model whose manifest this plan does not remove. */
static void in_use_build(apply_ctx *c, const oa_plan *p)
{
	oa_store *s = c->s;
	size_t cap = 0;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		bool removed = false;
		for (size_t k = 0; k < p->todo.n && !removed; k++)
			removed = plan_path_kind(p->command, p->todo.v[k].path, p->todo.v[k].type) == PK_MANIFEST &&
			          strcmp(p->todo.v[k].path, m->rel_path) == 0;
		if (removed && !(p->rewrite && strcmp(m->rel_path, p->rewrite->path) == 0 &&
		                 (m->sibling || m->is_list) && !row_is_child(m, p->rewrite->child)))
			continue;
		oa_blob **reach;
		/* a rewritten list's rows: each child it keeps, with what that names */
		size_t n_reach = removed ? row_child_reach(s, m, &reach) : oa_model_reach(s, m, &reach);
		for (size_t k = 0; k < n_reach; k++) {
			OA_ALLOC_GROW(c->in_use, c->n_in_use + 1, cap);
			c->in_use[c->n_in_use++] = reach[k]->name;
		}
		free(reach);
	}
	if (c->n_in_use)
		qsort(c->in_use, c->n_in_use, sizeof *c->in_use, cmp_str);
}

/* Everything a symlinked blob that stays resolves through, re-stat'ed now:
 * the blobs/ symlinks that a manifest which stays uses by path, or whose
 * digest a file under manifests/ (but the ones this plan removes) mentions. */
static void targets_build(apply_ctx *c, const oa_plan *p)
{
	oa_store *s = c->s;
	if (s->blobs_fd < 0)
		return;
	oa_refcache_update(c->refs);
	const char **skip = oa_xcalloc(p->todo.n ? p->todo.n : 1, sizeof *skip);
	size_t n_skip = 0;
	for (size_t k = 0; k < p->todo.n; k++)
		if (plan_path_kind(p->command, p->todo.v[k].path, p->todo.v[k].type) == PK_MANIFEST)
			skip[n_skip++] = p->todo.v[k].path;
	oa_refset refs;
	oa_refcache_refset(c->refs, skip, n_skip, &refs);
	free(skip);
	for (size_t i = 0; i < s->n_blobs; i++) {
		const oa_blob *b = &s->blobs[i];
		struct stat lst;
		if (fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode))
			continue;
		const char *name = b->name;
		oa_digest_hex hex;
		char *path = oa_xasprintf("blobs/%s", b->name);
		path_hex(path, hex);
		free(path);
		if ((hex[0] && oa_refset_has(&refs, hex)) ||
		    (c->n_in_use && bsearch(&name, c->in_use, c->n_in_use, sizeof *c->in_use, cmp_str)))
			oa_symlink_chain(s->blobs_fd, b->name, &c->targets);
	}
	oa_refset_free(&refs);
	oa_ino_set_sort(&c->targets);
}

/* How long the blobs checked against one refresh of the reference cache
 * may go on: until as much time has passed as the refresh took (so
 * refreshing is at most half of the apply, linear in manifests + entries,
 * and a slow apply refreshes before every blob), and never more than
 * REFS_BATCH blobs, or one per REFS_BATCH_SHARE files and directories the
 * refresh stats in a larger store. A pull that lands during the apply is
 * seen within one batch. */
#define REFS_BATCH 64
#define REFS_BATCH_SHARE 16

/* Refresh the reference cache when a batch is over, or when a manifest was
 * removed (rm: the blobs it used must see it gone). */
static void refs_current(apply_ctx *c)
{
	size_t size = oa_refcache_size(c->refs);
	size_t batch = size / REFS_BATCH_SHARE > REFS_BATCH ? size / REFS_BATCH_SHARE : REFS_BATCH;
	double now = oa_now();
	if (c->refresh_due || c->since_refresh >= batch || now - c->refreshed_at >= c->refresh_took) {
		oa_test_pause(c->o->pause_dir, "refresh", c->refreshes++, c->o->stop);
		double t0 = oa_now();
		oa_refcache_update(c->refs);
		c->refreshed_at = oa_now();
		c->refresh_took = c->refreshed_at - t0;
		c->refresh_due = false;
		c->since_refresh = 0;
	}
	c->since_refresh++;
}

/* 1. Nothing may reference a blob: by path, and by its digest in any file
 * under manifests/ as of the last refresh (refs_current). False (why set)
 * when something does. */
static bool blob_unreferenced(apply_ctx *c, const oa_plan_entry *e, char *why, size_t whylen)
{
	const char *name = e->path + strlen("blobs/");
	if (c->n_in_use && bsearch(&name, c->in_use, c->n_in_use, sizeof *c->in_use, cmp_str)) {
		snprintf(why, whylen, "a manifest references it now (by path)");
		return false;
	}
	oa_digest_hex hex;
	path_hex(e->path, hex);
	if (!hex[0])
		return true;
	refs_current(c);
	const char *inc = oa_refcache_incomplete(c->refs);
	if (oa_refcache_has(c->refs, hex)) {
		snprintf(why, whylen, "a manifest references it now");
		return false;
	}
	/* --force never overrides this: only a partial download or a
	 * temp file, which no manifest can name, may go. */
	if (inc && oa_digest_parse(name, hex, NULL)) {
		snprintf(why, whylen, "cannot re-read every manifest (%s): no complete blob can be "
		         "proven unreferenced", inc);
		return false;
	}
	/* Links this store does not explain may be another store's names for it. */
	struct stat st;
	if (oa_digest_parse(name, hex, NULL) && fstatat(c->s->blobs_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode) && st.st_nlink > 1 &&
	    (size_t)st.st_nlink > oa_store_names_of(c->s, st.st_dev, st.st_ino)) {
		snprintf(why, whylen, "it has hard links outside this store, which may be another store's: "
		         "it cannot be proven unreferenced");
		return false;
	}
	return true;
}

/* A tree holds a name a symlinked blob in use resolves through (or cannot
 * be read completely, so it might). */
static bool tree_holds_target(apply_ctx *c, int pfd, const char *leaf)
{
	int tfd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	oa_usage u;
	oa_usage_walk(tfd, &u);
	bool hit = tfd < 0 || u.incomplete;
	for (size_t i = 0; i < u.n && !hit; i++)
		hit = oa_ino_set_has(&c->targets, u.v[i].dev, u.v[i].ino);
	oa_usage_free(&u);
	if (tfd >= 0)
		close(tfd);
	return hit;
}

/* 2. Still the same file: same type, device, inode, size and mtime; and
 * not what a symlinked blob in use resolves through (its target, a
 * directory on the way there), nor a tree holding such a name. 3. Old
 * enough (empty directories are exempt). False with *oc and why set. */
static bool still_removable(apply_ctx *c, const oa_plan_entry *e, const oa_apply_opts *o, path_kind kind,
                            int pfd, const char *leaf, outcome *oc, char *why, size_t whylen)
{
	struct stat st;
	*oc = R_SKIP;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int err = errno;
		snprintf(why, whylen, err == ENOENT ? "gone already" : "cannot stat: %s", strerror(err));
		*oc = err == ENOENT ? R_SKIP : R_FAIL;
		return false;
	}
	char type = S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'f';
	if (type != e->type || (uint64_t)st.st_dev != e->dev || (uint64_t)st.st_ino != e->ino ||
	    (type != 'd' && ((int64_t)st.st_size != e->size || oa_stat_mtime_ns(&st) != e->mtime_ns))) {
		snprintf(why, whylen, "changed since it was planned");
		return false;
	}
	if (oa_ino_set_has(&c->targets, st.st_dev, st.st_ino)) {
		snprintf(why, whylen, "a symlinked blob that a manifest uses resolves to it");
		return false;
	}
	if ((kind == PK_BLOB_TREE || kind == PK_ROOT_TREE) && c->targets.n && tree_holds_target(c, pfd, leaf)) {
		snprintf(why, whylen, "holds the target of a symlinked blob that a manifest uses (or "
		         "cannot be read completely)");
		return false;
	}
	if (kind != PK_MANIFEST_DIR && o->min_age > 0 &&
	    oa_wall_now() - (double)oa_stat_mtime_ns(&st) / 1e9 < (double)o->min_age) {
		snprintf(why, whylen, "younger than --min-age");
		return false;
	}
	return true;
}

/* 4. Remove or move. Under manifests/ a directory is only ever rmdir'ed;
 * only the two kinds of temp directory are removed recursively. */
static outcome remove_entry(apply_ctx *c, path_kind kind, quarantine *q, json_t *qe, int pfd,
                            const char *leaf, char *why, size_t whylen)
{
	int rc;
	if (kind == PK_MANIFEST_DIR) {
		rc = unlinkat(pfd, leaf, AT_REMOVEDIR);
		if (rc < 0 && (errno == ENOTEMPTY || errno == EEXIST)) {
			snprintf(why, whylen, "no longer empty");
			return R_SKIP;
		}
		if (rc == 0 && qe)
			quarantine_set_state(q, qe, "removed-dir");
	} else if (q) {
		const char *stored = json_string_value(json_object_get(qe, "stored")) + strlen("files/");
		rc = renameat(pfd, leaf, q->files_fd, stored);
		if (rc == 0)
			quarantine_set_state(q, qe, "moved");
	} else if (kind == PK_BLOB_TREE || kind == PK_ROOT_TREE) {
		rc = remove_tree(pfd, leaf, 0, &c->targets);
	} else {
		rc = unlinkat(pfd, leaf, 0);
	}
	int err = errno;
	if (rc == 0 && kind == PK_MANIFEST) {
		fsync(pfd); /* the manifest is gone for good before any of its blobs goes */
		c->refresh_due = true;
	}
	if (rc < 0) {
		snprintf(why, whylen, "%s", strerror(err));
		return R_FAIL;
	}
	return R_DONE;
}

/* rm --child: the tag, still the list planned, gets its new bytes (a new
 * list blob and a tag of the same kind, made beside it), then replaces the
 * old tag by rename, re-checked just before: only the planned symlink or
 * regular file is ever replaced. With a quarantine the old tag is first
 * hard-linked into it, so restore puts the list back (restore.c). */
static outcome rewrite_one(apply_ctx *c, const oa_plan_entry *e, const oa_apply_opts *o, quarantine *q,
                           json_t *qe, int pfd, const char *leaf, char *why, size_t whylen)
{
	const oa_plan_rewrite *rw = c->rewrite;
	const list_new n = { .kind = rw->kind, .old_hex = rw->old_list, .hex = rw->new_list, .bytes = rw->bytes,
	                     .len = rw->len, .link_target = rw->link_target };
	outcome oc;
	struct stat old, now;
	if (!still_removable(c, e, o, PK_MANIFEST, pfd, leaf, &oc, why, whylen))
		return oc;
	if (list_tag_check(c->s, pfd, leaf, &n, why, whylen) < 0 || fstatat(pfd, leaf, &old, AT_SYMLINK_NOFOLLOW) < 0)
		return R_SKIP;
	char tmp[64];
	if (list_tag_prepare(c->s, pfd, &n, &old, tmp, why, whylen) < 0)
		return R_FAIL;
	if (fstatat(pfd, leaf, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_ino != old.st_ino || now.st_dev != old.st_dev ||
	    (now.st_mode & S_IFMT) != (old.st_mode & S_IFMT) || !(S_ISREG(now.st_mode) || S_ISLNK(now.st_mode))) {
		unlinkat(pfd, tmp, 0);
		snprintf(why, whylen, "the tag changed just before the rewrite: not replaced");
		return R_SKIP;
	}
	if (q) {
		const char *stored = json_string_value(json_object_get(qe, "stored")) + strlen("files/");
		if (linkat(pfd, leaf, q->files_fd, stored, 0) < 0) {
			snprintf(why, whylen, "cannot keep the old tag in the quarantine: %s", strerror(errno));
			unlinkat(pfd, tmp, 0);
			return R_FAIL;
		}
		quarantine_set_state(q, qe, "moved");
	}
	if (renameat(pfd, tmp, pfd, leaf) < 0) {
		snprintf(why, whylen, "cannot rename the new tag over it: %s", strerror(errno));
		unlinkat(pfd, tmp, 0);
		return R_FAIL;
	}
	fsync(pfd); /* the list no longer names the child before any of its blobs goes */
	c->refresh_due = true;
	return R_DONE;
}

static outcome apply_one(apply_ctx *c, const oa_plan_entry *e, const oa_apply_opts *o, quarantine *q,
                         json_t *qe, char *why, size_t whylen)
{
	/* What may be done is decided from the path alone, whatever the plan says. */
	path_kind kind = plan_path_kind(c->command, e->path, e->type);
	if (kind == PK_BAD) {
		snprintf(why, whylen, "not something `%s` removes", c->command);
		return R_FAIL;
	}
	if (kind == PK_BLOB && !blob_unreferenced(c, e, why, whylen))
		return R_SKIP;
	if (kind == PK_BLOB && c->blobs_linked && oa_blob_name_class(e->path + strlen("blobs/")) == OA_BLOB_FOREIGN) {
		snprintf(why, whylen, "%s", OA_LINKED_FOREIGN_KEEP);
		return R_SKIP;
	}
	const char *leaf;
	int pfd = open_parent(c->s, e->path, &leaf);
	if (pfd < 0) {
		snprintf(why, whylen, errno == ENOENT ? "gone already" : "cannot open its directory: %s",
		         strerror(errno));
		return errno == ENOENT ? R_SKIP : R_FAIL;
	}
	outcome oc;
	if (kind == PK_MANIFEST && c->rewrite && is_rewrite(e) && strcmp(e->path, c->rewrite->path) == 0)
		oc = rewrite_one(c, e, o, q, qe, pfd, leaf, why, whylen);
	else if (still_removable(c, e, o, kind, pfd, leaf, &oc, why, whylen))
		oc = remove_entry(c, kind, q, qe, pfd, leaf, why, whylen);
	close(pfd);
	return oc;
}

static void apply_ctx_free(apply_ctx *c)
{
	oa_refcache_free(c->refs);
	free(c->in_use);
	oa_ino_set_free(&c->targets);
}

/* A plan that touches manifests/ through a symlink would fail on every
 * entry (they are opened with O_NOFOLLOW): refuse once, up front. A
 * symlinked blobs/ is used as the store opened it (open_parent). */
static int check_top_dirs(const oa_store *s, const oa_plan *p, bool to_quarantine, char *err, size_t errlen)
{
	/* restore puts files back without following symlinks: nothing is
	 * quarantined from a symlinked blobs/ it could not put back */
	static const char *tops[] = { "manifests", "manifests-v2", "blobs" };
	for (size_t t = 0; t < (to_quarantine ? 3u : 2u); t++) {
		size_t n = strlen(tops[t]);
		bool used = false;
		for (size_t i = 0; i < p->todo.n && !used; i++)
			used = strncmp(p->todo.v[i].path, tops[t], n) == 0 && p->todo.v[i].path[n] == '/';
		struct stat lst;
		if (!used || fstatat(s->root_fd, tops[t], &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode))
			continue;
		char target[PATH_MAX];
		ssize_t len = readlinkat(s->root_fd, tops[t], target, sizeof target - 1);
		target[len > 0 ? len : 0] = '\0';
		char *et = oa_escape(target, strlen(target));
		if (t == 2)
			snprintf(err, errlen, "blobs/ is a symlink to %s; --quarantine does not work through it "
			         "(restore never follows a symlink): prune without --quarantine", et);
		else
			snprintf(err, errlen, "%s/ is a symlink to %s; run against the target store (nothing is "
			         "removed through a symlink)", tops[t], et);
		free(et);
		return -1;
	}
	return 0;
}

int oa_plan_check(oa_store *s, const oa_plan *p, bool force, char *err, size_t errlen)
{
	if (oa_store_unowned(s)) {
		oa_refcache *rc = oa_refcache_new(s);
		oa_refcache_update(rc);
		const char *why = oa_refcache_incomplete(rc);
		snprintf(err, errlen, "refusing to %s: %s", p->command, why ? why : "no manifests/ here");
		oa_refcache_free(rc);
		return -1;
	}
	if (force)
		return 0;
	oa_blocker *b;
	size_t nb = oa_plan_blockers(s, p, &b);
	free(b);
	if (nb) {
		snprintf(err, errlen, "refusing to %s: %zu manifest%s cannot be parsed or read (the server "
		         "skips its prune too); fix or remove %s, or pass --force", p->command, nb,
		         nb == 1 ? "" : "s", nb == 1 ? "it" : "them");
		return -1;
	}
	oa_store_user u[1];
	char why[256] = "";
	int nu = oa_store_in_use(s, u, 1, why, sizeof why);
	if (nu > 0) {
		snprintf(err, errlen, "refusing to %s: %d Ollama server/runner process%s use%s the store (pid "
		         "%ld: %s); stop %s, or pass --force", p->command, nu, nu == 1 ? "" : "es",
		         nu == 1 ? "s" : "", u[0].pid, u[0].how, nu == 1 ? "it" : "them");
		return -1;
	}
	return 0;
}

#define QUARANTINE_BATCH 64

/* An entry as the quarantine records it; the list tag rm --child rewrites
 * says what replaced it, so restore may put the old one back over that
 * (and over nothing else). */
static json_t *quarantine_entry_json(const oa_plan *p, const oa_plan_entry *e)
{
	json_t *x = entry_json(e);
	if (p->rewrite && is_rewrite(e) && strcmp(e->path, p->rewrite->path) == 0) {
		json_object_set_new(x, "rewritten_to", json_sprintf("sha256:%s", p->rewrite->new_list));
		json_object_set_new(x, "child_removed", json_sprintf("sha256:%s", p->rewrite->child));
	}
	return x;
}

/* The quarantine operation of this apply: its command, the models whose
 * manifests it removes (rm), what it plans. */
static void begin_operation(quarantine *q, const oa_plan *p)
{
	json_t *models = json_array();
	for (size_t i = 0; i < p->todo.n; i++) {
		const oa_plan_entry *e = &p->todo.v[i];
		if (!e->model || plan_path_kind(p->command, e->path, e->type) != PK_MANIFEST)
			continue;
		bool seen = false;
		for (size_t k = 0; k < json_array_size(models) && !seen; k++)
			seen = strcmp(json_string_value(json_array_get(models, k)), e->model) == 0;
		if (!seen)
			json_array_append_new(models, json_string(e->model));
	}
	quarantine_begin_op(q, p->command, models, p->todo.n, p->allocated);
}

static int apply_plan(oa_store *s, const oa_plan *p, const oa_apply_opts *o, oa_apply_result *r,
                      char *err, size_t errlen)
{
	apply_ctx ctx = { .s = s, .command = p->command, .o = o, .refs = oa_refcache_new(s), .refresh_due = true,
	                  .rewrite = p->rewrite };
	quarantine q;
	bool use_q = o->quarantine != NULL;
	if (oa_plan_check(s, p, o->force, err, errlen) < 0 ||
	    (use_q && quarantine_open(s, o->quarantine, &q, err, errlen) < 0)) {
		apply_ctx_free(&ctx);
		return -1;
	}
	if (use_q)
		begin_operation(&q, p);
	struct stat blst;
	ctx.blobs_linked = fstatat(s->root_fd, "blobs", &blst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(blst.st_mode);
	in_use_build(&ctx, p);
	targets_build(&ctx, p);
	json_t **qes = oa_xcalloc(p->todo.n ? p->todo.n : 1, sizeof *qes);
	for (size_t start = 0; start < p->todo.n; start += QUARANTINE_BATCH) {
		size_t end = start + QUARANTINE_BATCH < p->todo.n ? start + QUARANTINE_BATCH : p->todo.n;
		if (o->stop && *o->stop) {
			r->interrupted = true;
			break;
		}
		if (use_q) {
			/* Record the batch as planned before anything moves. */
			for (size_t i = start; i < end; i++)
				qes[i] = quarantine_add(&q, quarantine_entry_json(p, &p->todo.v[i]), p->todo.v[i].path,
				                        p->command);
			if (quarantine_flush(&q, err, errlen) < 0) {
				free(qes);
				quarantine_close(&q);
				apply_ctx_free(&ctx);
				return -1;
			}
		}
		for (size_t i = start; i < end; i++) {
			if (o->stop && *o->stop) {
				r->interrupted = true;
				break;
			}
			if (o->delay_us)
				usleep(o->delay_us);
			const oa_plan_entry *e = &p->todo.v[i];
			char why[512] = "";
			outcome oc = apply_one(&ctx, e, o, use_q ? &q : NULL, qes[i], why, sizeof why);
			if (oc == R_DONE) {
				r->done++;
				/* A move frees nothing until the quarantine is deleted. */
				if (use_q && !e->empty_dir)
					r->moved += e->allocated;
				else
					r->freed += e->freed;
				say(o, is_rewrite(e) ? "rewrote" : use_q ? (e->empty_dir ? "removed" : "moved") : "removed", e,
				    NULL);
			} else {
				if (oc == R_SKIP)
					r->skipped++;
				else
					r->failed++;
				if (use_q)
					quarantine_set_state(&q, qes[i], oc == R_SKIP ? "skipped" : "failed");
				say(o, oc == R_SKIP ? "skipped" : "FAILED", e, why);
			}
		}
		if (use_q && quarantine_flush(&q, err, errlen) < 0) {
			free(qes);
			quarantine_close(&q);
			apply_ctx_free(&ctx);
			return -1;
		}
		if (r->interrupted)
			break;
	}
	if (o->stop && *o->stop)
		r->interrupted = true;
	free(qes);
	int rc = use_q ? quarantine_commit(&q, err, errlen) : 0;
	if (use_q) {
		snprintf(r->operation, sizeof r->operation, "%s", q.op);
		quarantine_held(q.entries, &r->quarantine_entries, &r->quarantine_bytes);
		quarantine_close(&q);
	}
	apply_ctx_free(&ctx);
	return rc;
}

int oa_store_write_lock(const oa_store *s, char *err, size_t errlen)
{
	return apply_lock(s->root_fd, s->root, err, errlen);
}

void oa_store_write_unlock(const oa_store *s)
{
	oa_unlock(s->root_fd);
}

/* Under the store's lock, which restore takes too: a restore is never seen
 * half done. */
int oa_plan_apply(oa_store *s, const oa_plan *p, const oa_apply_opts *o, oa_apply_result *r,
                  char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	if (check_top_dirs(s, p, o->quarantine != NULL, err, errlen) < 0 || oa_store_write_lock(s, err, errlen) < 0)
		return -1;
	int rc = apply_plan(s, p, o, r, err, errlen);
	oa_store_write_unlock(s);
	return rc;
}
