/* remedy.c - the fix each finding prints: its code's template
 * (OA_FINDING_CODES, finding.h) with the store's names filled in, quoted
 * for a shell (remedy.h). */
#include "audit/remedy.h"
#include "ollama_audit/reclaim.h"
#include "base/strset.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The store's models by name and findings by path, so that filling in
 * 10,000 fixes is no 10,000 passes over the models. */
typedef struct fix_index {
	const oa_model **models; /* by display name, tags before legacy anchors */
	size_t n_models;
	const oa_finding **paths; /* the findings that name a file, by path */
	size_t n_paths;
	struct flat_name *flats;  /* their set-aside names, by name then path */
	size_t n_flats;
	bool weak_refs;           /* a blob only a manifest that cannot be read names (unparsed-reference) */
} fix_index;

/* A path's set-aside name as first made: "set-aside-" and its slashes as
 * dashes, which two paths can share (a/b-c, a-b/c). */
struct flat_name {
	char *name;
	const char *path;
};

typedef struct fix_ctx {
	const oa_store *s;
	const oa_finding *f;
	const oa_remedy_facts *facts;
	const fix_index *ix;
	oa_buf out;
} fix_ctx;

/* The store's file rel (relative to its root), with a suffix, as one word. */
static void put_file(fix_ctx *x, const char *rel, const char *suffix)
{
	char *p = oa_xasprintf("%s/%s%s", x->s->root, rel, suffix);
	oa_buf_add_shell_word(&x->out, p);
	free(p);
}

static int by_display(const void *a, const void *b)
{
	const oa_model *x = *(const oa_model *const *)a, *y = *(const oa_model *const *)b;
	int c = strcmp(x->display, y->display);
	return c ? c : (x->anchor > y->anchor) - (x->anchor < y->anchor);
}

static int by_path(const void *a, const void *b)
{
	const oa_finding *x = *(const oa_finding *const *)a, *y = *(const oa_finding *const *)b;
	int c = strcmp(x->path, y->path);
	return c ? c : (x > y) - (x < y);
}

/* Room in one file name for the ".N" put_aside may add. */
#define FLAT_MAX (255 - 24)

static char *flat_of(const char *path)
{
	char *flat = oa_xasprintf("set-aside-%s", path);
	for (char *p = flat; *p; p++)
		if (*p == '/')
			*p = '-';
	size_t n = strlen(flat);
	if (n > FLAT_MAX) { /* a deep path: its head, cut where a UTF-8 character starts */
		n = FLAT_MAX;
		while (n > 0 && ((unsigned char)flat[n] & 0xC0) == 0x80)
			n--;
		flat[n] = '\0';
	}
	return flat;
}

static int by_flat(const void *a, const void *b)
{
	const struct flat_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->path, y->path);
}

static void index_build(fix_index *ix, const oa_store *s)
{
	ix->models = oa_xcalloc(s->n_models + 1, sizeof *ix->models);
	for (size_t j = 0; j < s->n_models; j++)
		ix->models[j] = &s->models[j];
	ix->n_models = s->n_models;
	qsort(ix->models, ix->n_models, sizeof *ix->models, by_display);
	ix->paths = oa_xcalloc(s->findings.n + 1, sizeof *ix->paths);
	ix->n_paths = 0;
	for (size_t i = 0; i < s->findings.n; i++)
		if (s->findings.v[i].path)
			ix->paths[ix->n_paths++] = &s->findings.v[i];
	qsort(ix->paths, ix->n_paths, sizeof *ix->paths, by_path);
	ix->flats = oa_xcalloc(ix->n_paths + 1, sizeof *ix->flats);
	ix->n_flats = 0;
	for (size_t i = 0; i < ix->n_paths; i++)
		if (i == 0 || strcmp(ix->paths[i]->path, ix->paths[i - 1]->path) != 0)
			ix->flats[ix->n_flats++] = (struct flat_name){ flat_of(ix->paths[i]->path), ix->paths[i]->path };
	qsort(ix->flats, ix->n_flats, sizeof *ix->flats, by_flat);
	ix->weak_refs = false;
	for (size_t i = 0; i < s->findings.n; i++)
		ix->weak_refs |= s->findings.v[i].id == OA_FINDING_UNPARSED_REFERENCE;
}

static void index_free(fix_index *ix)
{
	for (size_t i = 0; i < ix->n_flats; i++)
		free(ix->flats[i].name);
	free(ix->flats);
	free(ix->models);
	free(ix->paths);
}

/* The first of the n elements of size `size` at v (sorted by field) whose
 * field is not below key. */
static size_t lower_bound(const void *v, size_t n, size_t size, const char *key, const char *(*field)(const void *))
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (strcmp(field((const char *)v + mid * size), key) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

static const char *model_display(const void *e)
{
	return (*(const oa_model *const *)e)->display;
}

static const char *finding_path(const void *e)
{
	return (*(const oa_finding *const *)e)->path;
}

static const char *flat_name_of(const void *e)
{
	return ((const struct flat_name *)e)->name;
}

static bool references(const oa_model *m, const char *hex)
{
	for (size_t i = 0; i < m->m.n_layers; i++)
		if (m->layer_blobs && m->layer_blobs[i] && strcmp(m->layer_blobs[i]->hex, hex) == 0)
			return true;
	return m->config_blob && strcmp(m->config_blob->hex, hex) == 0;
}

/* The model a finding is about: its tag (a legacy anchor only when no tag
 * has its name), or with none named, one that references its blob, pulled
 * rather than created here (a pull of it brings the blob back). */
static const oa_model *model_of(const fix_ctx *x)
{
	const oa_finding *f = x->f;
	if (f->model) {
		size_t k = lower_bound(x->ix->models, x->ix->n_models, sizeof *x->ix->models, f->model, model_display);
		return k < x->ix->n_models && strcmp(x->ix->models[k]->display, f->model) == 0 ? x->ix->models[k] : NULL;
	}
	if (!f->digest || !oa_str_has_prefix(f->digest, "sha256:"))
		return NULL;
	const oa_model *any = NULL;
	for (size_t j = 0; j < x->s->n_models; j++) {
		const oa_model *m = &x->s->models[j];
		if (!m->anchor && references(m, f->digest + 7) && (!any || (any->created_here && !m->created_here)))
			any = m;
	}
	return any;
}

/* Is rel (relative to the store's root) a name a mv or cp onto would
 * replace? (One that cannot be looked at cannot be written either.) */
static bool name_taken(const oa_store *s, const char *rel)
{
	struct stat st;
	return fstatat(s->root_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static bool is_dangling_link(const oa_store *s, const char *rel)
{
	struct stat st;
	return fstatat(s->root_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
	       fstatat(s->root_fd, rel, &st, 0) < 0;
}

/* No model to fetch: a link to nothing goes (it holds nothing). */
static void fix_nameless(fix_ctx *x)
{
	const char *rel = x->f->path;
	if (rel && is_dangling_link(x->s, rel)) {
		oa_buf_adds(&x->out, "rm -- ");
		put_file(x, rel, "");
	} else {
		oa_buf_adds(&x->out, "none by a pull: no model of this store names it");
	}
}

/* A model created here: no registry has it, and a pull would fetch
 * another model or nothing. */
static void created_here(fix_ctx *x, const oa_model *m)
{
	oa_buf_adds(&x->out, "by hand: ");
	oa_buf_add_shell_word(&x->out, m->display);
	oa_buf_adds(&x->out, " was created here (ollama create), not pulled, so no registry has it: create it "
	                     "again from its source files");
}

/* {pull}: the model fetched again; a pull writes its manifest and fetches
 * every blob that is not there. */
static void fix_pull(fix_ctx *x)
{
	const oa_model *m = model_of(x);
	if (!m) {
		fix_nameless(x);
	} else if (m->created_here) {
		created_here(x, m);
		oa_buf_adds(&x->out, ", or remove it: ollama-audit rm ");
		oa_buf_add_shell_word(&x->out, m->display);
		oa_buf_adds(&x->out, " --apply --store ");
		oa_buf_add_shell_word(&x->out, x->s->root);
	} else {
		oa_buf_adds(&x->out, "ollama pull ");
		oa_buf_add_shell_word(&x->out, m->display);
	}
}

/* {repair}: a blob file that is missing or whose bytes are wrong. Ollama's
 * pull keeps a blob file that exists, whatever its size or content (it
 * verifies only what it downloads), so the one remedy is repair: it puts a
 * good copy from another store on the machine in place, or removes the
 * damaged file and prints the `ollama pull` to run (for a model created
 * here, how to create it again: never a pull). How repair knows the damage:
 * by the file's size, by verify's record in its cache (the one the run
 * names, else --verify when there is none), or by a hash alone. */
enum repair_knows { BY_SIZE, BY_RECORD, BY_HASH };

static void fix_repair(fix_ctx *x, enum repair_knows how)
{
	const oa_model *m = model_of(x);
	if (!m) {
		fix_nameless(x);
		return;
	}
	oa_buf_adds(&x->out, "ollama-audit repair ");
	oa_buf_add_shell_word(&x->out, m->display);
	oa_buf_adds(&x->out, " --apply --store ");
	oa_buf_add_shell_word(&x->out, x->s->root);
	bool recorded = how == BY_RECORD && x->facts->has_cache && x->facts->has_cache(x->facts->ctx);
	if (recorded && x->facts->cache_path) {
		oa_buf_adds(&x->out, " --cache ");
		oa_buf_add_shell_word(&x->out, x->facts->cache_path);
	} else if (how == BY_HASH || (how == BY_RECORD && !recorded)) {
		oa_buf_adds(&x->out, " --verify");
	}
}

/* What a prune --apply waits for while a manifest blocks it (guard.h). */
#define BLOCKERS_FIRST "by hand: first fix what its prune-blocker finding names; then "

/* {emptydir}: prune removes an empty directory under manifests/ (once no
 * manifest blocks it); one under manifests-v2/, which prune leaves, goes
 * by rmdir. */
static void fix_empty_dir(fix_ctx *x)
{
	const char *rel = x->f->path;
	if (rel && !oa_str_has_prefix(rel, "manifests/")) {
		oa_buf_adds(&x->out, "rmdir -- ");
		put_file(x, rel, "");
		return;
	}
	if (x->facts->blockers)
		oa_buf_adds(&x->out, BLOCKERS_FIRST);
	oa_buf_adds(&x->out, "ollama-audit prune --apply --what empty-dirs --store ");
	oa_buf_add_shell_word(&x->out, x->s->root);
}

static int cmp_junk_path(const void *a, const void *b)
{
	return strcmp((*(const oa_junk *const *)a)->path, (*(const oa_junk *const *)b)->path);
}

/* {prune}: what a plain `prune` does with the file: remove it now, later
 * (the grace period), or never (why it keeps it). */
static void fix_prune(fix_ctx *x)
{
	const oa_remedy_prune *p = x->facts->prune;
	const char *rel = x->f->path;
	if (p && rel && oa_strset_has(&p->todo, rel)) {
		if (x->facts->blockers) /* --apply refuses while a manifest blocks the server's prune */
			oa_buf_adds(&x->out, BLOCKERS_FIRST);
		oa_buf_adds(&x->out, "ollama-audit prune --apply --store ");
		oa_buf_add_shell_word(&x->out, x->s->root);
		return;
	}
	oa_junk key = { .path = (char *)rel }, *kp = &key;
	oa_junk *const *e = p && rel ? bsearch(&kp, p->junk, p->n_junk, sizeof *p->junk, cmp_junk_path) : NULL;
	if (e && (*e)->keep) {
		oa_buf_printf(&x->out, "none: prune keeps it: %s", (*e)->keep);
		return;
	}
	if (e) {
		oa_buf_adds(&x->out, "wait: inside the server's 1 h grace period (what made it, a pull, a create or a "
		                     "load, may still be using it); prune --apply removes it after");
		return;
	}
	oa_buf_adds(&x->out, "none: prune does not plan it (see ollama-audit prune --store ");
	oa_buf_add_shell_word(&x->out, x->s->root);
	oa_buf_addc(&x->out, ')');
}

/* {perm}: make it readable, as Ollama writes its files (a+r, a directory
 * a+rx); as root (sudo) when someone else owns it. Never through a symlink,
 * which may lead out of the store. */
static void fix_perm(fix_ctx *x)
{
	const char *rel = x->f->path;
	struct stat st;
	if (!rel || fstatat(x->s->root_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		oa_buf_adds(&x->out, "by hand: let the store's owner read it and the directories above it");
		return;
	}
	if (S_ISLNK(st.st_mode)) { /* chmod follows it: it would open up the file it leads to, not the link */
		oa_buf_adds(&x->out, "by hand: it is a symbolic link, and what it leads to cannot be read: let that "
		                     "file's owner make it readable (a mode given to the link goes to that file)");
		return;
	}
	bool dir = S_ISDIR(st.st_mode);
	if (faccessat(x->s->root_fd, rel, dir ? R_OK | X_OK : R_OK, AT_EACCESS) == 0) {
		oa_buf_adds(&x->out, "none by permissions: it reads now (an I/O error, or it changed during the "
		                     "audit); run the audit again, and check the disk if it stays");
		return;
	}
	if (x->facts->euid != 0 && st.st_uid != x->facts->euid)
		oa_buf_adds(&x->out, "sudo ");
	oa_buf_adds(&x->out, dir ? "chmod a+rx -- " : "chmod a+r -- ");
	put_file(x, rel, "");
}

/* {relink}: a symlinked blob becomes the file it points to; a link to
 * nothing goes. */
static void fix_relink(fix_ctx *x)
{
	const char *rel = x->f->path;
	if (rel && is_dangling_link(x->s, rel)) {
		oa_buf_adds(&x->out, "rm -- ");
		put_file(x, rel, "");
		return;
	}
	/* the copy's name must be free: cp writes over what has it */
	char *copy = oa_xasprintf("%s.copy", rel);
	for (unsigned n = 1; name_taken(x->s, copy); n++) {
		free(copy);
		copy = oa_xasprintf("%s.copy.%u", rel, n);
	}
	oa_buf_adds(&x->out, "cp -- ");
	put_file(x, rel, "");
	oa_buf_addc(&x->out, ' ');
	put_file(x, copy, "");
	oa_buf_adds(&x->out, " && mv -- ");
	put_file(x, copy, "");
	oa_buf_addc(&x->out, ' ');
	put_file(x, rel, "");
	free(copy);
}

static char *fix_of(const fix_ctx *outer, const oa_finding *f);

/* {same}: the fix of the other finding about the same file (what blocks
 * the server's prune is a file another finding describes). */
static void fix_same(fix_ctx *x)
{
	const fix_index *ix = x->ix;
	size_t k = x->f->path ? lower_bound(ix->paths, ix->n_paths, sizeof *ix->paths, x->f->path, finding_path)
	                      : ix->n_paths;
	for (; k < ix->n_paths && strcmp(ix->paths[k]->path, x->f->path) == 0; k++) {
		const oa_finding *g = ix->paths[k];
		if (g != x->f && strstr(oa_finding_kinds[g->id].fix, "{same}") == NULL) {
			char *fix = fix_of(x, g);
			oa_buf_adds(&x->out, fix);
			free(fix);
			return;
		}
	}
	oa_buf_adds(&x->out, "by hand: fix or move out what the message names");
}

/* The first of ix's flat names that is not below key: the first of its group. */
static size_t flat_first(const fix_index *ix, const char *key)
{
	return lower_bound(ix->flats, ix->n_flats, sizeof *ix->flats, key, flat_name_of);
}

/* {aside}: a name in the store's root, where neither Ollama nor this tool
 * looks, made of the file's own path. A mv onto it must replace nothing:
 * when another path of the store flattens to the same name, or the name
 * is there (an earlier set-aside), ".N" follows it; the paths of one name
 * take N a group-size apart (the k-th of m: k, k+m, ...), so no two meet,
 * and no N makes another path's own name (digits hold no dot). */
static void put_aside(fix_ctx *x)
{
	const char *path = x->f->path ? x->f->path : "file";
	char *flat = flat_of(path);
	const fix_index *ix = x->ix;
	size_t first = flat_first(ix, flat), m = 0, k = 0;
	for (size_t i = first; i < ix->n_flats && strcmp(ix->flats[i].name, flat) == 0; i++, m++)
		if (strcmp(ix->flats[i].path, path) == 0)
			k = m;
	if (m <= 1 && !name_taken(x->s, flat)) {
		put_file(x, flat, "");
		free(flat);
		return;
	}
	m = m ? m : 1;
	for (size_t n = k + 1;; n += m) {
		char *name = oa_xasprintf("%s.%zu", flat, n);
		size_t j = flat_first(ix, name);
		if (!name_taken(x->s, name) && !(j < ix->n_flats && strcmp(ix->flats[j].name, name) == 0)) {
			put_file(x, name, "");
			free(name);
			break;
		}
		free(name);
	}
	free(flat);
}

/* {setaside}: a file under manifests/ the server skips goes out of the
 * way, mv -- {path} {aside}. Unless blobs are kept only because a file
 * like it names them (unparsed-reference): set aside, it names them no
 * more, and the server's start, or prune, removes them. Which file names
 * them is the user's to see (a model renamed by hand wants its name back). */
static void fix_set_aside(fix_ctx *x)
{
	if (x->ix->weak_refs)
		oa_buf_adds(&x->out, "by hand: blobs are kept only because a file the server cannot read names them "
		                     "(unparsed-reference); if this is one, give it a valid model name "
		                     "(manifests/HOST/NAMESPACE/MODEL/TAG), as setting it aside leaves them to prune; "
		                     "else: mv -- ");
	else
		oa_buf_adds(&x->out, "mv -- ");
	put_file(x, x->f->path ? x->f->path : "", "");
	oa_buf_addc(&x->out, ' ');
	put_aside(x);
}

/* {blob}: where a legacy blobs/sha256:<hex> file goes, the name the
 * server's start gives it: blobs/sha256-<hex>, its hex as written (so two
 * files whose hex differs in case never go to one name). When a file
 * already has that name, a mv would replace it (the server's start does),
 * so the legacy one is set aside instead: both are kept. */
static void put_blob(fix_ctx *x)
{
	const char *p = x->f->path;
	char *rel = oa_xasprintf("blobs/sha256-%s", p && oa_str_has_prefix(p, "blobs/sha256:") ? p + 13 : "?");
	if (name_taken(x->s, rel))
		put_aside(x);
	else
		put_file(x, rel, "");
	free(rel);
}

static void put_token(fix_ctx *x, const char *tok, size_t n)
{
#define IS(t) (n == sizeof t - 1 && memcmp(tok, t, n) == 0)
	const oa_finding *f = x->f;
	if (IS("model"))
		oa_buf_add_shell_word(&x->out, f->model ? f->model : "?");
	else if (IS("path"))
		put_file(x, f->path ? f->path : "", "");
	else if (IS("store"))
		oa_buf_add_shell_word(&x->out, x->s->root);
	else if (IS("blob"))
		put_blob(x);
	else if (IS("aside"))
		put_aside(x);
	else if (IS("setaside"))
		fix_set_aside(x);
	else if (IS("pull"))
		fix_pull(x);
	else if (IS("repair"))
		fix_repair(x, BY_SIZE);
	else if (IS("repair-recorded"))
		fix_repair(x, BY_RECORD);
	else if (IS("repair-hashed"))
		fix_repair(x, BY_HASH);
	else if (IS("prune"))
		fix_prune(x);
	else if (IS("emptydir"))
		fix_empty_dir(x);
	else if (IS("perm"))
		fix_perm(x);
	else if (IS("relink"))
		fix_relink(x);
	else if (IS("same"))
		fix_same(x);
	else
		abort(); /* a template names a token this file does not know: a programming error */
#undef IS
}

/* f's fix: its code's template filled in, with outer's store and facts. */
static char *fix_of(const fix_ctx *outer, const oa_finding *f)
{
	fix_ctx x = { .s = outer->s, .f = f, .facts = outer->facts, .ix = outer->ix };
	oa_buf_init(&x.out);
	for (const char *t = oa_finding_kinds[f->id].fix; *t;) {
		const char *end = *t == '{' ? strchr(t, '}') : NULL;
		if (end) {
			put_token(&x, t + 1, (size_t)(end - t - 1));
			t = end + 1;
		} else {
			oa_buf_addc(&x.out, *t++);
		}
	}
	return oa_buf_take(&x.out);
}

bool oa_fix_is_command(const char *fix)
{
	static const char *const manual[] = { "none", "by hand: ", "wait: " };
	for (size_t i = 0; i < sizeof manual / sizeof manual[0]; i++)
		if (oa_str_has_prefix(fix, manual[i]))
			return false;
	return true;
}

void oa_remedy_prune_read(oa_remedy_prune *p, const oa_reclaim *r)
{
	memset(p, 0, sizeof *p);
	for (size_t i = 0; i < r->plan.todo.n; i++)
		oa_strset_add(&p->todo, r->plan.todo.v[i].path);
	p->junk = oa_xcalloc(r->junk.n + 1, sizeof *p->junk);
	for (size_t i = 0; i < r->junk.n; i++)
		p->junk[p->n_junk++] = &r->junk.v[i];
	qsort(p->junk, p->n_junk, sizeof *p->junk, cmp_junk_path);
}

void oa_remedy_prune_free(oa_remedy_prune *p)
{
	oa_strset_free(&p->todo);
	free(p->junk);
	memset(p, 0, sizeof *p);
}

void oa_remedy_fill(oa_store *s, const oa_remedy_facts *facts)
{
	fix_index ix;
	index_build(&ix, s);
	fix_ctx top = { .s = s, .facts = facts, .ix = &ix };
	for (size_t i = 0; i < s->findings.n; i++) {
		oa_finding *f = &s->findings.v[i];
		/* junk waits for prune's plan: no plan, no word on it */
		if (!f->fix && (unsigned)f->id < OA_FINDING_NCODES && (facts->prune || !oa_finding_is(f, OA_FC_JUNK)))
			f->fix = fix_of(&top, f);
	}
	index_free(&ix);
}
