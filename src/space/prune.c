/* prune.c - building a plan (prune.h): plan lists and their totals, prune's
 * categories, rm and rm --child. Its JSON and --plan FILE are plan_file.c,
 * applying it apply.c, what an entry's path may be plan_path.c. */
#include "ollama_audit/prune.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/model.h"
#include "base/platform.h"
#include "base/strset.h"
#include "base/util.h"
#include "space/listedit.h"
#include "space/plan_path.h"
#include "space/prune_private.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- plan lists ------------------------------------------------------------- */

oa_plan_entry *plan_list_add(oa_plan_list *l)
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
	for (oa_plan_rewrite *rw = p->rewrite, *next; rw; rw = next) {
		next = rw->next;
		free(rw->path);
		free(rw->runner);
		free(rw->kept);
		free(rw->bytes);
		free(rw->link_target);
		free(rw->anchor);
		free(rw->model);
		free(rw);
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

/* rm --child, rm DIGEST: the entry of a list tag rewritten, never removed. */
bool plan_is_rewrite(const oa_plan_entry *e)
{
	return e->category && strcmp(e->category, "list-rewrite") == 0;
}

const oa_plan_rewrite *plan_rewrite_at(const oa_plan *p, const char *path)
{
	for (const oa_plan_rewrite *rw = p ? p->rewrite : NULL; rw; rw = rw->next)
		if (path && strcmp(rw->path, path) == 0)
			return rw;
	return NULL;
}

/* What the whole plan frees: a file with several links frees its blocks only
 * when the plan removes every link. */
void plan_totals(oa_plan *p)
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
			e->freed = plan_is_rewrite(e) ? 0 : e->type == 'd' && !e->empty_dir ? e->freed : e->allocated;
	}
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && keys[j][0] == keys[i][0] && keys[j][1] == keys[i][1])
			j++;
		oa_plan_entry *first = &p->todo.v[keys[i][2]];
		for (size_t m = i; m < j; m++)
			p->todo.v[keys[m][2]].freed = 0;
		/* a rewritten tag is replaced, not freed: its link still goes */
		for (size_t m = i; m < j && plan_is_rewrite(first); m++)
			first = &p->todo.v[keys[m][2]];
		if (plan_is_rewrite(first)) {
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
			oa_plan_entry *e = plan_list_add(why ? &p->kept : &p->todo);
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

/* Would directory `rel` (relative to the root) be empty once `gone` are removed? */
static bool dir_would_empty(int root_fd, const char *rel, const oa_strset *gone)
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
	while (empty && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *full = oa_xasprintf("%s/%s", rel, e->d_name);
		empty = oa_strset_has(gone, full);
		free(full);
	}
	closedir(d);
	return empty;
}

/* A list tag rewritten without one child (rm --child, rm DIGEST): what
 * the plan carries, the tag, its row of that child, the tag's lstat. */
typedef struct child_rewrite {
	oa_plan_rewrite *rw;
	const oa_model *tag, *row;
	struct stat st;
} child_rewrite;

static const child_rewrite *rewrite_of(const child_rewrite *cw, size_t n, const oa_model *m)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(cw[i].tag->rel_path, m->rel_path) == 0)
			return &cw[i];
	return NULL;
}

/* For each blob of the store, the first model that is not being removed
 * and reaches it (its config and layers, its manifest blob, a list's
 * children here and what they name), or NULL. */
static const char **staying_users(oa_store *s, const size_t *models, size_t n, const child_rewrite *cw, size_t n_cw)
{
	const char **by = oa_xcalloc(s->n_blobs ? s->n_blobs : 1, sizeof *by);
	bool *removed = oa_xcalloc(s->n_models + 1, sizeof *removed);
	for (size_t z = 0; z < n; z++)
		removed[models[z]] = true;
	for (size_t q = 0; q < s->n_models; q++) {
		/* kept_rows_use adds the rewritten lists' rows */
		if (removed[q] || rewrite_of(cw, n_cw, &s->models[q]))
			continue;
		oa_blob **reach;
		size_t k = oa_model_reach(s, &s->models[q], &reach);
		for (size_t i = 0; i < k; i++)
			if (!by[reach[i] - s->blobs])
				by[reach[i] - s->blobs] = s->models[q].display;
		free(reach);
	}
	free(removed);
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
	bool *in = oa_xcalloc(s->n_models + 1, sizeof *in);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		v[k++] = models[i];
	for (size_t i = 0; i < n; i++)
		in[models[i]] = true;
	for (size_t i = 0; i < n; i++) {
		const oa_model *m = &s->models[models[i]];
		for (size_t q = 0; m->v2 && q < s->n_models; q++) {
			if (!in[q] && ((s->models[q].anchor && anchor_of(s, &s->models[q], m)) ||
			               (s->models[q].sibling && strcmp(s->models[q].rel_path, m->rel_path) == 0))) {
				v[k++] = q; /* its anchor; a list's other rows are the same tag */
				in[q] = true;
			}
		}
	}
	free(in);
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
	size_t n_gone, cap_gone;
	oa_strset gone_set;  /* the same paths, to look up */
	bool *planned;       /* per blob: rm_blob has put it in the plan */
	oa_refset refs;      /* what the manifests that stay mention */
	const char **users;  /* per blob: a model that stays and uses it, or NULL */
	oa_inode_ledger targets;  /* what symlinked blobs that stay resolve through */
	int64_t min_age;
	const child_rewrite *cw; /* rm --child, rm DIGEST: the lists rewritten (their rows are not users as */
	size_t n_cw;             /* they are: each keeps its other children) */
} rm_ctx;

static void kept_rows_use(rm_ctx *c);

static void gone_add(rm_ctx *c, const char *path)
{
	OA_ALLOC_GROW(c->gone, c->n_gone + 1, c->cap_gone);
	c->gone[c->n_gone] = oa_xstrdup(path);
	oa_strset_add(&c->gone_set, c->gone[c->n_gone++]);
}

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
		oa_plan_entry *e = plan_list_add(&c->p->todo);
		e->path = oa_xstrdup(m->rel_path);
		e->category = oa_xstrdup("manifest");
		e->model = oa_xstrdup(m->display);
		entry_from_stat(e, &lst);
		if (!m->manifest_ok)
			e->note = oa_xstrdup("the manifest cannot be parsed: its blobs are kept (prune removes "
			                     "them later if nothing references them)");
		else if (m->anchor && c->n_cw)
			e->note = oa_xstrdup("the downgrade anchor: a legacy copy of the child removed, which would "
			                     "keep all its blobs; an Ollama from before manifest lists no longer sees "
			                     "this model");
		else if (m->anchor)
			e->note = oa_xstrdup("the legacy anchor of a manifests-v2 tag removed too: reads fall "
			                     "back to it");
		gone_add(c, m->rel_path);
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
			if (oa_strset_has(&c->gone_set, dir) || !dir_would_empty(s->root_fd, dir, &c->gone_set))
				break;
			struct stat lst;
			if (fstatat(s->root_fd, dir, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(lst.st_mode))
				break;
			oa_plan_entry *e = plan_list_add(&c->p->todo);
			e->path = oa_xstrdup(dir);
			e->category = oa_xstrdup("empty-dir");
			e->model = oa_xstrdup(s->models[c->models[i]].display);
			entry_from_stat(e, &lst);
			e->empty_dir = true;
			gone_add(c, dir);
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
	c->users = staying_users(s, c->models, c->n, c->cw, c->n_cw);
	if (c->n_cw)
		kept_rows_use(c);
	for (size_t i = 0; s->blobs_fd >= 0 && i < s->n_blobs; i++) {
		const oa_blob *b = &s->blobs[i];
		if (!b->is_symlink)
			continue;
		bool used = b->hex[0] && b->cls != OA_BLOB_CREATE_TEMP && oa_refset_has(&c->refs, b->hex);
		if (used || c->users[i])
			oa_symlink_chain(s->blobs_fd, b->name, &c->targets);
	}
	oa_inode_ledger_unique(&c->targets);
}

/* 3. one blob a removed model reaches: removed, or kept with the reason. */
static void rm_blob(rm_ctx *c, const oa_model *m, oa_blob *b)
{
	oa_store *s = c->s;
	oa_plan *p = c->p;
	/* Only rm_blob plans blobs/ paths: a flag per blob says it did. */
	if (!c->planned)
		c->planned = oa_xcalloc(s->n_blobs + 1, sizeof *c->planned);
	struct stat lst;
	if (c->planned[b - s->blobs] || fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	c->planned[b - s->blobs] = true;
	char *path = oa_xasprintf("blobs/%s", b->name);
	char *why = NULL;
	/* Another model that stays uses it (whatever the byte scan says). */
	const char *other = c->users[b - s->blobs];
	if (other) {
		why = oa_xasprintf("also used by %s", other);
	} else if (oa_refset_has(&c->refs, b->hex)) {
		why = oa_xstrdup(c->refs.n_shared ? "another file under manifests/, or a store sharing these "
		                 "blob files, references this digest" : "another file under manifests/ mentions "
		                 "this digest");
	} else if (oa_inode_ledger_has(&c->targets, lst.st_dev, lst.st_ino)) {
		why = oa_xstrdup("a symlinked blob that another manifest uses resolves to it");
	} else if (c->refs.incomplete) {
		why = oa_xasprintf("cannot re-read every manifest (%s)", c->refs.why);
	}
	oa_plan_entry *e = plan_list_add(why ? &p->kept : &p->todo);
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
		oa_plan_entry *kk = plan_list_add(&p->kept);
		*kk = p->todo.v[--p->todo.n];
		free(kk->note);
		kk->note = oa_xstrdup("younger than --min-age");
	}
}

/* Every blob the removed models reach, each kept or planned by rm_blob. */
static void rm_models_blobs(rm_ctx *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const oa_model *m = &c->s->models[c->models[i]];
		oa_blob **reach;
		size_t n_reach = oa_model_reach(c->s, m, &reach);
		for (size_t k = 0; k < n_reach; k++)
			rm_blob(c, m, reach[k]);
		free(reach);
	}
}

static void rm_ctx_free(rm_ctx *c)
{
	oa_refset_free(&c->refs);
	oa_inode_ledger_free(&c->targets);
	free(c->users);
	for (size_t i = 0; i < c->n_gone; i++)
		free(c->gone[i]);
	free(c->gone);
	oa_strset_free(&c->gone_set);
	free(c->planned);
	free(c->skip);
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
	rm_manifests(&c);
	rm_empty_dirs(&c);
	rm_keepers(&c);
	oa_plan_note_shared(p, &c.refs);
	rm_models_blobs(&c);
	rm_ctx_free(&c);
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

char **oa_plan_rm_unrelated_dirs(oa_store *s, const oa_plan *p, size_t *n)
{
	oa_junk_list j;
	oa_refset none = { 0 };
	oa_junk_collect(s, &none, oa_wall_now(), &j);
	char **dirs = oa_xcalloc(j.n ? j.n : 1, sizeof *dirs);
	*n = 0;
	for (size_t i = 0; i < j.n; i++) {
		bool planned = false;
		for (size_t k = 0; !planned && k < p->todo.n; k++)
			planned = strcmp(p->todo.v[k].path, j.v[i].path) == 0;
		if (j.v[i].cat == OA_JUNK_EMPTY_DIR && !planned)
			dirs[(*n)++] = oa_xstrdup(j.v[i].path);
	}
	oa_junk_free(&j);
	return dirs;
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
size_t row_child_reach(const oa_store *s, const oa_model *r, oa_blob ***out)
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

bool row_is_child(const oa_model *r, const char *hex)
{
	const oa_list_entry *e = row_entry_of(r);
	return e && e->digest_valid && strcmp(e->hex, hex) == 0;
}

static bool row_of(const oa_model *r, const oa_model *t)
{
	return r == t || (r->sibling && strcmp(r->rel_path, t->rel_path) == 0);
}

/* The children the rewritten lists keep use their blobs, whatever else goes. */
static void kept_rows_use(rm_ctx *c)
{
	oa_store *s = c->s;
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *r = &s->models[q];
		const child_rewrite *w = rewrite_of(c->cw, c->n_cw, r);
		if (!w || row_is_child(r, w->rw->child) || (!r->sibling && !r->is_list))
			continue;
		oa_blob **reach;
		size_t k = row_child_reach(s, r, &reach);
		for (size_t i = 0; i < k; i++)
			if (!c->users[reach[i] - s->blobs])
				c->users[reach[i] - s->blobs] = r->display;
		free(reach);
	}
}

/* The plan's first entries: the list tags, rewritten (not removed). */
static void rm_rewrite_entry(rm_ctx *c, const child_rewrite *w)
{
	const oa_plan_rewrite *rw = w->rw;
	oa_plan_entry *e = plan_list_add(&c->p->todo);
	e->path = oa_xstrdup(w->tag->rel_path);
	e->category = oa_xstrdup("list-rewrite");
	e->model = oa_xstrdup(w->tag->display);
	entry_from_stat(e, &w->st);
	char named[48] = "";
	if (rw->entries_removed > 1)
		snprintf(named, sizeof named, ", named by %zu entries", rw->entries_removed);
	e->note = oa_xasprintf("rewritten without its %s child (sha256:%.12s...%s): the list keeps %s%s", rw->runner,
	                       rw->child, named, rw->kept,
	                       rw->anchor_removed ? "; its downgrade anchor goes too, so an Ollama from before "
	                       "manifest lists no longer sees this model" : "");
	c->skip[c->n_skip++] = w->tag->rel_path;
}

/* The blobs a rewrite frees: what the dropped child reaches, and the list as
 * it was (nothing names it once the tag is rewritten). */
static void rm_rewrite_blobs(rm_ctx *c, const child_rewrite *w)
{
	oa_blob **reach;
	size_t k = row_child_reach(c->s, w->row, &reach);
	for (size_t i = 0; i < k; i++)
		rm_blob(c, w->row, reach[i]);
	free(reach);
	oa_blob *old = w->tag->tag_blob ? oa_store_blob_by_hex(c->s, w->tag->tag_blob) : NULL;
	if (old)
		rm_blob(c, w->tag, old);
}

/* The plan of the rewrites cw (each list without its child), removing the
 * models v (anchors, shadows, lists left with no child here) with them. */
static void plan_rm_child_models(oa_store *s, const child_rewrite *cw, size_t n_cw, size_t *v, size_t n,
                                 int64_t min_age, oa_plan *p)
{
	plan_init(p, s, "rm");
	p->min_age = min_age;
	for (size_t i = n_cw; i-- > 0;) { /* the plan carries the chain, in order */
		cw[i].rw->next = p->rewrite;
		p->rewrite = cw[i].rw;
	}
	rm_ctx c = { .s = s, .p = p, .min_age = min_age, .models = v, .n = n, .cw = cw, .n_cw = n_cw };
	c.skip = oa_xcalloc(n + n_cw + 1, sizeof *c.skip);
	for (size_t i = 0; i < n_cw; i++)
		rm_rewrite_entry(&c, &cw[i]);
	rm_manifests(&c);
	rm_empty_dirs(&c);
	rm_keepers(&c);
	oa_plan_note_shared(p, &c.refs);
	for (size_t i = 0; i < n_cw; i++)
		rm_rewrite_blobs(&c, &cw[i]);
	rm_models_blobs(&c);
	rm_ctx_free(&c);
	plan_totals(p);
	p->rewrite = NULL; /* the caller hands the chain over */
}

/* The row of tag t whose child has this runner, here; kept gets the
 * runners of the rows the rewrite keeps: every other row but those naming
 * the same child (its digest), which go with it. */
static const oa_model *child_row(const oa_store *s, const oa_model *t, const char *runner, oa_buf *kept)
{
	const oa_model *d = NULL;
	for (size_t q = 0; q < s->n_models && !d; q++)
		if (row_of(&s->models[q], t) && strcmp(oa_model_list_runner(&s->models[q]), runner) == 0)
			d = &s->models[q];
	const oa_list_entry *de = d ? row_entry_of(d) : NULL;
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *r = &s->models[q];
		if (!row_of(r, t) || r == d || (de && de->digest_valid && row_is_child(r, de->hex)))
			continue;
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
	snprintf(rw->old_list, sizeof rw->old_list, "%s", t->tag_blob ? t->tag_blob : "");
	const char *leaf;
	int pfd = plan_open_parent(s, t->rel_path, &leaf);
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
		rw->bytes = list_without_child(bytes, len, rw->child, &rw->len, &left, &rw->entries_removed, why,
		                               sizeof why);
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
	       ((a->migration_anchor && strcmp(oa_model_list_runner(d), "ggml") == 0) || strcmp(a->m.id, d->m.id) == 0 ||
	        oa_model_same_manifest(a, d));
}

/* The chain of rewrites, handed over to p (which frees it). */
static void hand_over(const child_rewrite *cw, size_t n_cw, oa_plan *p)
{
	for (size_t i = n_cw; i-- > 0;) {
		cw[i].rw->next = p->rewrite;
		p->rewrite = cw[i].rw;
	}
}

static void free_rewrites(child_rewrite *cw, size_t n_cw)
{
	oa_plan tmp = { 0 };
	hand_over(cw, n_cw, &tmp);
	oa_plan_free(&tmp);
}

/* The compatibility shadows of the children dropped (named in p->shadows,
 * with what each alone keeps once they are gone; added to v when
 * with_shadow), then the plan itself, which takes the rewrites. */
static void plan_child_drop(oa_store *s, child_rewrite *cw, size_t n_cw, size_t *v, size_t n, int64_t min_age,
                            bool with_shadow, oa_plan *p)
{
	oa_plan_shadow *sh = NULL;
	size_t n_sh = 0, n_base = n;
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *m = &s->models[q];
		bool of = false;
		for (size_t i = 0; i < n_cw && !of; i++)
			of = strcmp(m->m.id, cw[i].rw->child) == 0;
		if (!m->shadow || !of)
			continue;
		oa_plan a, b;
		size_t *probe = oa_xcalloc(n_base + 1, sizeof *probe);
		memcpy(probe, v, n_base * sizeof *probe);
		plan_rm_child_models(s, cw, n_cw, probe, n_base, 0, &a);
		probe[n_base] = q;
		plan_rm_child_models(s, cw, n_cw, probe, n_base + 1, 0, &b);
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
	plan_rm_child_models(s, cw, n_cw, v, n, min_age, p);
	hand_over(cw, n_cw, p);
	p->shadows = sh;
	p->n_shadows = n_sh;
}

/* A rewrite of tag t without row d's child; false (err) when it cannot be. */
static bool child_rewrite_make(oa_store *s, const oa_model *t, const oa_model *d, const char *runner, char *kept,
                               child_rewrite *w, char *err, size_t errlen)
{
	w->rw = oa_xcalloc(1, sizeof *w->rw);
	w->rw->path = oa_xstrdup(t->rel_path);
	w->rw->runner = oa_xstrdup(runner);
	w->rw->kept = kept;
	w->rw->model = oa_xstrdup(t->display);
	w->tag = t;
	w->row = d;
	if (rewrite_prepare(s, t, d, w->rw, &w->st, err, errlen) == 0)
		return true;
	free_rewrites(w, 1);
	return false;
}

/* The anchors of t that are legacy copies of row d's child go with it. */
static void child_anchors(const oa_store *s, child_rewrite *w, size_t *v, size_t *n)
{
	for (size_t q = 0; q < s->n_models; q++)
		if (anchor_of_child(s, &s->models[q], w->tag, w->row)) {
			v[(*n)++] = q;
			w->rw->anchor_removed = true;
			free(w->rw->anchor);
			w->rw->anchor = oa_xstrdup(s->models[q].rel_path);
		}
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
	child_rewrite w;
	if (!child_rewrite_make(s, t, d, runner, oa_buf_take(&kept), &w, err, errlen))
		return -1;
	size_t *v = oa_xcalloc(s->n_models + 1, sizeof *v), n = 0;
	child_anchors(s, &w, v, &n);
	plan_child_drop(s, &w, 1, v, n, min_age, with_shadow, p);
	free(v);
	return 0;
}

/* The row of list tag t whose child is hex, or NULL. */
static const oa_model *row_with_child(const oa_store *s, const oa_model *t, const char *hex)
{
	for (size_t q = 0; q < s->n_models; q++)
		if (row_of(&s->models[q], t) && row_is_child(&s->models[q], hex))
			return &s->models[q];
	return NULL;
}

/* The runners of t's children here but hex: what its list keeps. NULL when none. */
static char *children_kept(const oa_store *s, const oa_model *t, const char *hex)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *r = &s->models[q];
		if (row_of(r, t) && (r->sibling || r->is_list) && !row_is_child(r, hex))
			oa_buf_printf(&b, "%s%s", b.len ? ", " : "", oa_model_list_runner(r));
	}
	if (b.len)
		return oa_buf_take(&b);
	oa_buf_free(&b);
	return NULL;
}

int oa_plan_rm_digest(oa_store *s, const char *hex, int64_t min_age, bool with_shadow, oa_plan *p, char *err,
                      size_t errlen)
{
	memset(p, 0, sizeof *p);
	child_rewrite *cw = oa_xcalloc(s->n_models + 1, sizeof *cw);
	size_t *gone = oa_xcalloc(s->n_models + 1, sizeof *gone), n_cw = 0, n_gone = 0;
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *t = &s->models[q];
		const oa_model *d = t->is_list && !t->sibling ? row_with_child(s, t, hex) : NULL;
		if (!d)
			continue;
		char *kept = children_kept(s, t, hex);
		if (!kept) { /* left with no child here: the tag goes, as rm of it would */
			gone[n_gone++] = q;
			continue;
		}
		const char *runner = *oa_model_list_runner(d) ? oa_model_list_runner(d) : "unnamed";
		if (!child_rewrite_make(s, t, d, runner, kept, &cw[n_cw], err, errlen)) {
			free_rewrites(cw, n_cw);
			free(cw);
			free(gone);
			return -1;
		}
		n_cw++;
	}
	size_t n;
	size_t *v = with_anchors(s, gone, n_gone, &n); /* room for every model */
	for (size_t i = 0; i < n_cw; i++)
		child_anchors(s, &cw[i], v, &n);
	plan_child_drop(s, cw, n_cw, v, n, min_age, with_shadow, p);
	free(v);
	free(cw);
	free(gone);
	return 0;
}
