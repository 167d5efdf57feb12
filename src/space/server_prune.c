/* server_prune.c - what `ollama serve` does to a store at start-up, told
 * offline (server_prune.h). Each step follows the server's Go code: fixBlobs,
 * then PruneLayers and PruneDirectory, unless OLLAMA_NOPRUNE is set or a
 * manifest it cannot decode blocks the prune. */
#include "ollama_audit/server_prune.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/model.h"
#include "base/platform.h"
#include "base/util.h"
#include "space/prune_private.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* envconfig.Bool("OLLAMA_NOPRUNE"): Var() trims blanks and quotes; any
 * non-empty value strconv.ParseBool rejects counts as true. */
bool oa_server_noprune(const char **value)
{
	const char *env = getenv("OLLAMA_NOPRUNE");
	*value = env;
	char *v = oa_env_trim(env);
	if (!v)
		return false;
	static const char *const falses[] = { "0", "f", "F", "FALSE", "false", "False" };
	bool set = true; /* "1", "t", "true", ... and anything ParseBool cannot parse */
	for (size_t i = 0; i < sizeof falses / sizeof falses[0]; i++)
		if (strcmp(v, falses[i]) == 0)
			set = false;
	free(v);
	return set;
}

static bool server_blob_name(const char *name)
{
	/* every '-' becomes ':', then ^sha256[:-][0-9a-fA-F]{64}$ */
	return strlen(name) == 71 && strncmp(name, "sha256", 6) == 0 && (name[6] == '-' || name[6] == ':') &&
	       oa_is_hex(name + 7, 64);
}

/* Manifests jansson refuses but Go's decoder reads: JSON null (an empty
 * manifest) and invalid UTF-8 inside strings (each bad byte becomes U+FFFD).
 * They neither block the server's prune nor lose their references. */
typedef struct go_decoded {
	oa_manifest *v;
	const char **paths; /* rel_path of each, to match their prune-blocker findings */
	size_t n;
} go_decoded;

/* Go's string decoding: every byte that does not start a valid UTF-8
 * sequence is replaced by U+FFFD (EF BF BD). */
static uint8_t *replace_bad_utf8(const uint8_t *b, size_t len, size_t *out_len)
{
	uint8_t *out = oa_xcalloc(len * 3 + 1, 1);
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t k = oa_utf8_seq(b + i, len - i);
		if (k) {
			memcpy(out + o, b + i, k);
			o += k, i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3, i++;
		}
	}
	*out_len = o;
	return out;
}

static bool is_json_null(const uint8_t *b, size_t len)
{
	size_t i = 0;
	while (i < len && strchr(" \t\r\n", b[i]))
		i++;
	return len - i >= 4 && memcmp(b + i, "null", 4) == 0;
}

static void collect_go_decoded(const oa_store *s, go_decoded *g)
{
	memset(g, 0, sizeof *g);
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		uint8_t *bytes;
		size_t len;
		if (m->manifest_ok || !oa_str_has_prefix(m->rel_path, "manifests/") ||
		    oa_read_file_at(s->manifests_fd, m->rel_path + 10, OA_MANIFEST_MAX, &bytes, &len) < 0)
			continue;
		oa_manifest man;
		char err[256];
		size_t flen;
		uint8_t *fixed = replace_bad_utf8(bytes, len, &flen);
		bool ok = is_json_null(bytes, len);
		if (ok)
			memset(&man, 0, sizeof man);
		else if (!(ok = oa_manifest_parse(fixed, flen, &man, err, sizeof err) == 0))
			oa_manifest_free(&man); /* a failed parse still holds what it read */
		free(fixed);
		free(bytes);
		if (!ok)
			continue;
		g->v = oa_xreallocarray(g->v, g->n + 1, sizeof *g->v);
		g->paths = oa_xreallocarray(g->paths, g->n + 1, sizeof *g->paths);
		g->v[g->n] = man;
		g->paths[g->n++] = m->rel_path;
	}
}

static void free_go_decoded(go_decoded *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].config.digest)
			oa_manifest_free(&g->v[i]);
	free(g->v);
	free(g->paths);
}

/* Is the server's prune still blocked once the manifests Go reads are not
 * counted as corrupt? A server before manifest lists never reads a
 * manifests-v2 tag. */
static bool go_prune_blocked(const oa_store *s, const go_decoded *g, enum oa_server_era era)
{
	for (size_t i = 0; s->prune_blocked && i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (f->id != OA_FINDING_PRUNE_BLOCKER ||
		    (era == OA_SERVER_LEGACY && f->path && oa_str_has_prefix(f->path, "manifests-v2/")))
			continue;
		bool decoded = false;
		for (size_t k = 0; !decoded && k < g->n; k++)
			decoded = f->path && strcmp(f->path, g->paths[k]) == 0;
		if (!decoded)
			return true;
	}
	return false;
}

static bool manifest_names(const oa_manifest *m, const char *key)
{
	if (m->config.digest && *m->config.digest && strcmp(m->config.digest, key) == 0)
		return true;
	for (size_t k = 0; k < m->n_layers; k++)
		if (strcmp(m->layers[k].digest, key) == 0)
			return true;
	return false;
}

/* The manifests a server of that era reads: before manifest lists only
 * manifests/, where a list decodes to a manifest naming nothing. */
static bool server_reads(const oa_model *m, enum oa_server_era era)
{
	if (!m->manifest_ok)
		return false;
	return era != OA_SERVER_LEGACY || (!m->v2 && !m->is_list && !m->sibling);
}

static bool retired_away(const oa_server_prune *p, const oa_model *m);

/* Whether a manifest the server reads names key exactly (p: what the
 * newest server's retirements took away is no longer read). */
static bool server_referenced(const oa_store *s, const go_decoded *g, enum oa_server_era era, const char *key,
                              const oa_server_prune *p)
{
	for (size_t i = 0; i < g->n; i++)
		if (manifest_names(&g->v[i], key))
			return true;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (server_reads(m, era) && !retired_away(p, m) && manifest_names(&m->m, key))
			return true;
	}
	return false;
}

/* fixBlobs' new name: the first ':' becomes '-' (strings.Cut). */
static char *fixed_blob_name(const char *name)
{
	char *to = oa_xstrdup(name);
	char *colon = strchr(to, ':');
	if (colon)
		*colon = '-';
	return to;
}

/* fixBlobs walks blobs/ with filepath.Walk, which goes into subdirectories
 * (not through symlinks); the prune after it stays at the top level. */
static void predict_renames(int dirfd, const char *rel, oa_server_prune *p, int depth)
{
	size_t n;
	char **names = oa_list_dir(dirfd, &n, NULL);
	for (size_t i = 0; names && i < n; i++) {
		struct stat st;
		if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		char *path = oa_xasprintf("%s/%s", rel, names[i]);
		if (S_ISDIR(st.st_mode) && depth < 64) {
			int sub = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				predict_renames(sub, path, p, depth + 1);
				close(sub);
			}
		} else if (!S_ISDIR(st.st_mode) && strncmp(names[i], "sha256:", 7) == 0) {
			char *to = fixed_blob_name(names[i]);
			p->renames = oa_xreallocarray(p->renames, p->n_renames + 1, sizeof *p->renames);
			p->renames[p->n_renames].from = path;
			p->renames[p->n_renames++].to = oa_xasprintf("%s/%s", rel, to);
			free(to);
			path = NULL;
		}
		free(path);
	}
	oa_free_names(names, n);
}

/* Does anything but directories remain under manifests/? PruneDirectory
 * removes manifests/ itself when nothing does. */
static bool tree_has_files(int dirfd, int depth)
{
	size_t n;
	char **names = oa_list_dir(dirfd, &n, NULL);
	bool found = !names;
	for (size_t i = 0; names && !found && i < n; i++) {
		struct stat st;
		if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
			found = true;
			break;
		}
		int sub = depth < 64 ? openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		found = sub < 0 || tree_has_files(sub, depth + 1);
		if (sub >= 0)
			close(sub);
	}
	oa_free_names(names, n);
	return found;
}

/* Why the server deletes a top-level blob (its name after fixBlobs), or
 * NULL when it keeps it. kept: the newest server's reference set, by blob
 * (after its retirements), else NULL. */
static const char *delete_reason(oa_store *s, const go_decoded *g, enum oa_server_era era, const bool *kept,
                                 const oa_server_prune *p, oa_blob *b, const char *name)
{
	if (!server_blob_name(name))
		return "not a blob name";
	char key[80];
	snprintf(key, sizeof key, "sha256:%s", name + 7);
	if (server_referenced(s, g, era, key, p))
		return NULL;
	for (const char *c = name + 7; *c; c++)
		if (isupper((unsigned char)*c))
			return "unreferenced (upper-case hex never matches a manifest digest)";
	/* manifest lists: every blob a tag reaches is kept (manifest blobs, lists, children) */
	if (kept ? kept[b - s->blobs] : era == OA_SERVER_LISTS && (b->refs || b->weak_refs))
		return NULL;
	if (kept && b->refs)
		return "only the retired ggml child (or its anchor, or the list as it was) reached it";
	if (b->cls == OA_BLOB_VALID && oa_blob_looks_like_manifest(s, b))
		return era != OA_SERVER_LEGACY ? "unreferenced; its content is a manifest no tag reaches"
		                               : "unreferenced; its content is a manifest (an Ollama before manifest lists does not know these)";
	if (era == OA_SERVER_LEGACY && b->refs)
		return "named only under manifests-v2/, which an Ollama before manifest lists does not read";
	return "unreferenced";
}

static void add_delete(oa_sp_delete **v, size_t *n, oa_sp_delete d)
{
	*v = oa_xreallocarray(*v, *n + 1, sizeof **v);
	(*v)[(*n)++] = d;
}

/* The top-level blobs the server deletes now or at a later start. */
static void predict_deletes(oa_store *s, const go_decoded *g, enum oa_server_era era, const bool *kept, double now,
                            oa_server_prune *p)
{
	for (size_t i = 0; i < s->n_blobs; i++) {
		oa_blob *b = &s->blobs[i];
		struct stat lst;
		if (fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(lst.st_mode))
			continue;
		char *name = fixed_blob_name(b->name); /* after fixBlobs */
		const char *why = delete_reason(s, g, era, kept, p, b, name);
		if (why) {
			int64_t mtime = oa_stat_mtime_ns(&lst) / 1000000000;
			oa_sp_delete d = { .path = oa_xasprintf("blobs/%s", name), .reason = why,
			                   .bytes = (uint64_t)lst.st_blocks * 512,
			                   .age_seconds = (int64_t)(now - (double)oa_stat_mtime_ns(&lst) / 1e9) };
			if (d.age_seconds < OA_SERVER_GRACE_SECONDS) {
				d.after = mtime + OA_SERVER_GRACE_SECONDS;
				add_delete(&p->later, &p->n_later, d);
			} else {
				p->bytes_freed += d.bytes;
				add_delete(&p->deletes, &p->n_deletes, d);
			}
		}
		free(name);
	}
}

static void add_dir(oa_server_prune *p, const char *path)
{
	p->dirs = oa_xreallocarray(p->dirs, p->n_dirs + 1, sizeof *p->dirs);
	p->dirs[p->n_dirs++] = oa_xstrdup(path);
}

int oa_server_era_parse(const char *v)
{
	static const struct { const char *name; enum oa_server_era era; } names[] = {
		{ "before-lists", OA_SERVER_LEGACY }, { "pr-16590", OA_SERVER_LISTS }, { "newest", OA_SERVER_NEWEST },
	};
	for (size_t i = 0; v && i < sizeof names / sizeof names[0]; i++)
		if (strcmp(v, names[i].name) == 0)
			return names[i].era;
	char *end;
	if (!v || !isdigit((unsigned char)*v))
		return -1;
	unsigned long major = strtoul(v, &end, 10), minor = 0;
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -1;
	minor = strtoul(end + 1, &end, 10);
	if (*end == '.') {
		if (!isdigit((unsigned char)end[1]))
			return -1;
		strtoul(end + 1, &end, 10);
	}
	if (*end)
		return -1;
	/* the releases that read manifest lists (0.40.0 on) carry the newest cleanup */
	return major > 0 || minor >= 40 ? OA_SERVER_NEWEST : OA_SERVER_LEGACY;
}

static bool deleted(const oa_server_prune *p, const oa_blob *b)
{
	for (int pass = 0; pass < 2; pass++) {
		const oa_sp_delete *v = pass ? p->later : p->deletes;
		size_t n = pass ? p->n_later : p->n_deletes;
		for (size_t i = 0; i < n; i++)
			if (strcmp(v[i].path + strlen("blobs/"), b->name) == 0)
				return true;
	}
	return false;
}

/* The models whose config, layers or manifest blobs (the tag then
 * resolves no more) the prune deletes, each list row on its own. */
static void predict_destroyed(const oa_store *s, oa_server_prune *p)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (!m->manifest_ok || m->anchor)
			continue;
		oa_sp_model d = { .name = m->display };
		if (m->is_list || m->sibling)
			d.runner = m->d_runner;
		const oa_blob *prev = NULL;
		oa_blob *mb[2]; /* a tag without an anchor no longer resolves without them */
		size_t nmb = m->anchored ? 0 : oa_model_manifest_blobs(s, m, mb);
		for (size_t k = 0; k <= m->m.n_layers + nmb; k++) {
			const oa_blob *b = k > m->m.n_layers ? mb[k - m->m.n_layers - 1] : k == 0 ? m->config_blob
			                   : m->layer_blobs ? m->layer_blobs[k - 1] : NULL;
			if (!b || b == prev)
				continue;
			prev = b;
			if (!deleted(p, b))
				continue;
			d.n_blobs++;
			d.weights |= k > 0 && k <= m->m.n_layers && (m->m.layers[k - 1].kind == OA_LAYER_MODEL ||
			                                             m->m.layers[k - 1].kind == OA_LAYER_TENSOR);
			d.bytes += b->stat_ok ? (uint64_t)b->st.blocks * 512 : 0;
		}
		if (!d.n_blobs)
			continue;
		p->destroyed = oa_xreallocarray(p->destroyed, p->n_destroyed + 1, sizeof *p->destroyed);
		p->destroyed[p->n_destroyed++] = d;
	}
}

/* ---- the newest server: retirement, its reference set, metadata/ ------------------------ */

/* Whether legacy tag a links (a layer naming a manifest blob) digest hex. */
static bool links(const oa_model *a, const char *hex)
{
	for (size_t k = 0; k < a->m.n_layers; k++)
		if (a->m.layers[k].kind == OA_LAYER_MANIFEST && a->m.layers[k].digest_valid &&
		    strcmp(a->m.layers[k].hex, hex) == 0)
			return true;
	return false;
}

/* The list entry of list tag t (models[ti]) whose child has runner r and
 * is complete here (every blob it names), or NULL. A tag's rows follow it
 * in the store's order (the same path, the same mtime). */
static const oa_list_entry *runner_entry(const oa_store *s, size_t ti, const char *r)
{
	const oa_model *t = &s->models[ti];
	for (size_t q = ti; q < s->n_models && strcmp(s->models[q].rel_path, t->rel_path) == 0; q++) {
		const oa_model *x = &s->models[q];
		if (x->manifest_ok && !x->missing_blobs && strcmp(oa_model_list_runner(x), r) == 0)
			return x->sibling ? x->row_entry : t->child >= 0 ? &t->list->entries[t->child] : NULL;
	}
	return NULL;
}

/* RetireConvertedModels (compatmigrate/retire.go): a list tag whose
 * downgrade anchor links both its ggml child and its converted llamacpp
 * child, both here and complete, loses the ggml child and the anchor. */
static void predict_retirements(const oa_store *s, oa_server_prune *p)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *a = &s->models[i];
		long ti = a->anchor && a->manifest_ok && !a->v2 ? oa_store_resolve_name(s, a->display) : -1;
		const oa_model *t = ti >= 0 ? &s->models[ti] : NULL;
		if (!t || !t->v2 || !t->is_list || !t->manifest_ok)
			continue;
		const oa_list_entry *ge = runner_entry(s, (size_t)ti, "ggml"), *le = runner_entry(s, (size_t)ti, "llamacpp");
		if (!ge || !le || !ge->digest_valid || !le->digest_valid || !links(a, ge->hex) || !links(a, le->hex))
			continue;
		p->retired = oa_xreallocarray(p->retired, p->n_retired + 1, sizeof *p->retired);
		oa_sp_retire *r = &p->retired[p->n_retired++];
		*r = (oa_sp_retire){ .name = t->display, .tag = t->rel_path, .anchor = a->rel_path };
		memcpy(r->child, ge->hex, sizeof r->child);
	}
}

/* What retirement leaves of model m: NULL when m is untouched, else the
 * retirement (m is then the anchor removed, a row of the rewritten list). */
static const oa_sp_retire *retired_by(const oa_server_prune *p, const oa_model *m)
{
	for (size_t i = 0; i < p->n_retired; i++)
		if (strcmp(m->rel_path, p->retired[i].anchor) == 0 || strcmp(m->rel_path, p->retired[i].tag) == 0)
			return &p->retired[i];
	return NULL;
}

/* The anchor a retirement removes, or the ggml child it drops. */
static bool retired_away(const oa_server_prune *p, const oa_model *m)
{
	const oa_sp_retire *r = retired_by(p, m);
	return r && (!m->v2 || row_is_child(m, r->child));
}

/* The newest server's reference set, by blob: everything a tag reaches
 * once conversions are retired (a rewritten list keeps its other
 * children's blobs, not its old list blob), and what a manifest that does
 * not parse mentions. */
static bool *newest_keeps(oa_store *s, const go_decoded *g, const oa_server_prune *p)
{
	bool *kept = oa_xcalloc(s->n_blobs + 1, sizeof *kept);
	for (size_t i = 0; i < s->n_blobs; i++)
		kept[i] = s->blobs[i].weak_refs > 0;
	for (size_t q = 0; q < s->n_models; q++) {
		const oa_model *m = &s->models[q];
		const oa_sp_retire *r = retired_by(p, m);
		if (retired_away(p, m))
			continue; /* the anchor, the ggml child */
		oa_blob **v;
		size_t n = r ? row_child_reach(s, m, &v) : oa_model_reach(s, m, &v);
		for (size_t k = 0; k < n; k++)
			kept[v[k] - s->blobs] = true;
		free(v);
	}
	for (size_t i = 0; i < g->n; i++)
		for (size_t k = 0; k <= g->v[i].n_layers; k++) {
			const oa_layer *l = k == 0 ? &g->v[i].config : &g->v[i].layers[k - 1];
			oa_blob *b = l->digest_valid ? oa_store_find_blob(s, l) : NULL;
			if (b)
				kept[b - s->blobs] = true;
		}
	return kept;
}

/* pruneGGUFMetadata: the caches whose blob is gone, or goes now. */
static void predict_metadata(const oa_store *s, oa_server_prune *p)
{
	for (size_t i = 0; i < s->n_stale_metadata; i++) {
		p->metadata = oa_xreallocarray(p->metadata, p->n_metadata + 1, sizeof *p->metadata);
		p->metadata[p->n_metadata++] = oa_xstrdup(s->stale_metadata[i]);
	}
	for (size_t i = 0; s->root_fd >= 0 && i < p->n_deletes; i++) {
		const char *name = p->deletes[i].path + strlen("blobs/");
		if (!server_blob_name(name))
			continue;
		char *rel = oa_xasprintf("metadata/%s.json", name);
		struct stat st;
		if (fstatat(s->root_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
			p->metadata = oa_xreallocarray(p->metadata, p->n_metadata + 1, sizeof *p->metadata);
			p->metadata[p->n_metadata++] = rel;
		} else {
			free(rel);
		}
	}
}

static void set_era(oa_server_prune *p, enum oa_server_era era)
{
	p->era = era;
	p->server = era == OA_SERVER_NEWEST ? "0.40" : era == OA_SERVER_LISTS ? "0.40 at PR #16590's head" : "0.33";
	p->generation = era == OA_SERVER_NEWEST ? "newest" : era == OA_SERVER_LISTS ? "pr-16590" : "before-lists";
}

void oa_server_prune_predict(oa_store *s, double now, enum oa_server_era era, oa_server_prune *p)
{
	memset(p, 0, sizeof *p);
	p->assumed = era == OA_SERVER_AUTO;
	p->chosen_by = p->assumed ? "layout" : "option";
	set_era(p, era != OA_SERVER_AUTO ? era : s->has_manifests_v2 ? OA_SERVER_NEWEST : OA_SERVER_LEGACY);
	era = p->era;
	const char *nv;
	p->noprune = oa_server_noprune(&nv);
	/* 1. fixBlobs: sha256:* files become sha256-*, in subdirectories too */
	if (s->blobs_fd >= 0)
		predict_renames(s->blobs_fd, "blobs", p, 0);
	go_decoded g;
	collect_go_decoded(s, &g);
	/* 2. the newest retires converted models first */
	if (!p->noprune && era == OA_SERVER_NEWEST)
		predict_retirements(s, p);
	if (p->noprune)
		p->nothing = "nothing: OLLAMA_NOPRUNE is set";
	else if (go_prune_blocked(s, &g, era))
		p->nothing = era == OA_SERVER_NEWEST ? "nothing: it cannot read every tag, and fails closed (no blob is deleted)"
		                                     : "nothing: a corrupt manifest blocks it";
	if (!p->nothing) {
		bool *kept = era == OA_SERVER_NEWEST ? newest_keeps(s, &g, p) : NULL;
		predict_deletes(s, &g, era, kept, now, p);
		free(kept);
		predict_destroyed(s, p);
		if (era == OA_SERVER_NEWEST)
			predict_metadata(s, p);
		oa_junk_list j;
		oa_refset r = { 0 };
		oa_junk_collect(s, &r, now, &j);
		for (size_t i = 0; i < j.n; i++)
			if (j.v[i].cat == OA_JUNK_EMPTY_DIR)
				add_dir(p, j.v[i].path);
		oa_junk_free(&j);
		if (s->manifests_fd >= 0 && !tree_has_files(s->manifests_fd, 0))
			add_dir(p, "manifests");
	}
	free_go_decoded(&g);
}

void oa_server_prune_predict_version(oa_store *s, double now, const char *version, const char *chosen_by,
                                     oa_server_prune *p)
{
	int era = version ? oa_server_era_parse(version) : -1;
	oa_server_prune_predict(s, now, era < 0 ? OA_SERVER_AUTO : (enum oa_server_era)era, p);
	if (era >= 0) {
		p->version = isdigit((unsigned char)*version) ? version : NULL; /* a generation's name says no version */
		p->assumed = false;
		p->chosen_by = chosen_by;
	}
}

static void free_deletes(oa_sp_delete *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

void oa_server_prune_free(oa_server_prune *p)
{
	for (size_t i = 0; i < p->n_renames; i++) {
		free(p->renames[i].from);
		free(p->renames[i].to);
	}
	free(p->renames);
	free_deletes(p->deletes, p->n_deletes);
	free_deletes(p->later, p->n_later);
	free(p->destroyed);
	free(p->retired);
	oa_free_names(p->metadata, p->n_metadata);
	oa_free_names(p->dirs, p->n_dirs);
	memset(p, 0, sizeof *p);
}
