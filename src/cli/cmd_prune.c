/* cmd_prune.c - `ollama-audit prune` and the plan/confirm/apply steps that
 * `rm` shares (docs/disk-space.md). */
#include "cli.h"
#include "cli_multi.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/junk.h"
#include "base/platform.h"
#include "ollama_audit/prune.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void age_text(double age, char *buf, size_t len)
{
	if (age < 0)
		age = 0;
	if (age < 120)
		snprintf(buf, len, "%.0fs", age);
	else if (age < 7200)
		snprintf(buf, len, "%.0fm", age / 60);
	else if (age < 172800)
		snprintf(buf, len, "%.0fh", age / 3600);
	else
		snprintf(buf, len, "%.0fd", age / 86400);
}

static const oa_partial_group *group_of(const oa_junk_list *j, const char *path)
{
	if (!j)
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i].group >= 0 && strcmp(j->v[i].path, path) == 0 &&
		    strcmp(j->v[i].kind, "partial") == 0)
			return &j->groups[j->v[i].group];
	return NULL;
}

static void print_entries(cli *c, const oa_plan_list *l, const oa_junk_list *junk, bool kept)
{
	size_t wcat = 8;
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i].category) > wcat)
			wcat = strlen(l->v[i].category);
	if (!kept)
		printf("  %-*s  %5s  %9s  %9s  %s\n", (int)wcat, "CATEGORY", "AGE", "ON DISK", "FREED", "PATH");
	for (size_t i = 0; i < l->n; i++) {
		const oa_plan_entry *e = &l->v[i];
		char age[16], al[48], fr[48];
		age_text(e->age, age, sizeof age);
		oa_format_size(e->allocated, c->units, al, sizeof al);
		oa_format_size(e->freed, c->units, fr, sizeof fr);
		char *p = oa_escape(e->path, strlen(e->path));
		if (kept) {
			printf("  %s: %s\n", p, e->note ? e->note : "kept");
		} else {
			printf("  %-*s  %5s  %9s  %9s  %s%s", (int)wcat, e->category, age, al, fr, p,
			       e->type == 'd' ? "/" : "");
			if (e->model)
				printf("  [%s]", e->model);
			printf("\n");
			if (e->note)
				printf("  %*s  note: %s\n", (int)wcat, "", e->note);
			const oa_partial_group *g = group_of(junk, e->path);
			if (g) {
				char a[48], b[48];
				if (g->downloaded >= 0 && g->total > 0) {
					oa_format_size((uint64_t)g->downloaded, c->units, a, sizeof a);
					oa_format_size((uint64_t)g->total, c->units, b, sizeof b);
					printf("  %*s  download: %s of %s (%.0f%%) in %zu part file%s\n", (int)wcat, "",
					       a, b, 100.0 * (double)g->downloaded / (double)g->total, g->n_parts,
					       g->n_parts == 1 ? "" : "s");
				} else {
					printf("  %*s  download: progress unknown (%s)\n", (int)wcat, "",
					       g->n_parts ? "a part file is unreadable or implausible" : "no part files");
				}
			}
		}
		free(p);
	}
}

/* The manifests that block a prune (the server skips its own for them). */
static bool is_blocker(const oa_finding *f)
{
	return strcmp(f->code, "prune-blocker") == 0 ||
	       (strcmp(f->code, "unreadable") == 0 && f->path && oa_str_has_prefix(f->path, "manifests"));
}

/* The manifests that block an --apply: one per path, however many findings
 * it has (an unreadable manifest is both `unreadable` and `prune-blocker`). */
static size_t blockers(const oa_store *s, const oa_plan *p, bool print)
{
	size_t n = 0;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!is_blocker(f))
			continue;
		bool seen = false;
		for (size_t j = 0; f->path && j < i && !seen; j++)
			seen = is_blocker(&s->findings.v[j]) && s->findings.v[j].path &&
			       strcmp(s->findings.v[j].path, f->path) == 0;
		if (seen)
			continue;
		/* rm of the broken manifest itself is fine */
		bool removing = false;
		for (size_t k = 0; f->path && k < p->todo.n; k++)
			if (strcmp(p->todo.v[k].category, "manifest") == 0 && strcmp(p->todo.v[k].path, f->path) == 0)
				removing = true;
		if (removing)
			continue;
		if (print)
			cli_err("  %s: %s", f->path ? f->path : "?", f->message);
		n++;
	}
	return n;
}

static bool confirm(cli *c, const oa_plan *p)
{
	if (c->yes)
		return true;
	char fr[48];
	char *q;
	if (c->quarantine) {
		oa_format_size(p->allocated, c->units, fr, sizeof fr);
		q = oa_xasprintf("Move %zu entr%s (%s) from %s into %s?", p->todo.n,
		                 p->todo.n == 1 ? "y" : "ies", fr, p->store, c->quarantine);
	} else {
		oa_format_size(p->freed, c->units, fr, sizeof fr);
		q = oa_xasprintf("Remove %zu entr%s from %s, freeing %s?", p->todo.n,
		                 p->todo.n == 1 ? "y" : "ies", p->store, fr);
	}
	bool yes = cli_confirm(q);
	free(q);
	return yes;
}

void cli_run_plan(cli *c, oa_store *s, oa_plan *p, const oa_junk_list *junk, bool from_file,
                  bool first, bool last)
{
	bool json = c->format == OUT_JSON || c->format == OUT_NDJSON;
	json_t *doc = json ? oa_plan_to_json(p) : NULL;
	if (!json) {
		printf("%s%s: %s plan%s%s\n", first ? "" : "\n", s->root, p->command,
		       from_file ? " from " : "", from_file ? c->plan_path : "");
		if (p->todo.n)
			print_entries(c, &p->todo, junk, false);
		if (p->kept.n) {
			printf("kept (%zu):\n", p->kept.n);
			print_entries(c, &p->kept, junk, true);
		}
		char fr[48], al[48];
		oa_format_size(p->freed, c->units, fr, sizeof fr);
		oa_format_size(p->allocated, c->units, al, sizeof al);
		printf("%zu entr%s, %s freed (%s allocated)%s\n", p->todo.n, p->todo.n == 1 ? "y" : "ies", fr,
		       al, c->apply ? "" : "; dry run, nothing removed: --apply removes");
	}
	/* --plan FILE without --apply: save the plan. */
	if (!c->apply && c->plan_path) {
		char err[512];
		if (cli_refuse_store_path(c, "--plan", c->plan_path)) {
			c->exit_code |= OA_EXIT_USAGE;
		} else if (oa_plan_write(p, c->plan_path, err, sizeof err) < 0) {
			cli_err("%s", err);
			c->exit_code |= OA_EXIT_OPERATIONAL;
		} else if (!json) {
			printf("plan written to %s\n", c->plan_path);
		}
	}
	json_t *result = NULL;
	if (c->apply && p->todo.n) {
		bool refused = false;
		/* Refusal 1: a manifest that cannot be parsed or read. */
		size_t nb = blockers(s, p, false);
		if (nb) {
			if (c->force) {
				cli_err("%s: %zu manifest%s cannot be parsed or read; going on because of --force",
				        s->root, nb, nb == 1 ? "" : "s");
			} else {
				cli_err("%s: refusing to %s: %zu manifest%s cannot be parsed or read (the server "
				        "skips its prune too); fix or remove %s, or pass --force:",
				        s->root, p->command, nb, nb == 1 ? "" : "s", nb == 1 ? "it" : "them");
				blockers(s, p, true);
				refused = true;
			}
		}
		/* Refusal 2: an Ollama server or runner using the store. */
		if (!refused) {
			oa_proc_user users[8];
			char why[256] = "";
			int nu = oa_find_store_users(s->root, users, 8, why, sizeof why);
			if (nu < 0) {
				cli_err("%s: %s; make sure no Ollama server uses the store", s->root, why);
			} else if (nu > 0) {
				if (c->force) {
					cli_err("%s: an Ollama server or runner uses the store; going on because of --force",
					        s->root);
				} else {
					cli_err("%s: refusing to %s: %d Ollama server/runner process%s use%s the store "
					        "(stop %s, or pass --force):", s->root, p->command, nu,
					        nu == 1 ? "" : "es", nu == 1 ? "s" : "", nu == 1 ? "it" : "them");
					for (int k = 0; k < nu && k < 8; k++)
						cli_err("  pid %ld (%s): %s", users[k].pid, users[k].cmd, users[k].how);
					refused = true;
				}
			}
		}
		if (refused) {
			c->exit_code |= OA_EXIT_OPERATIONAL;
		} else if (!c->yes && !isatty(STDIN_FILENO)) {
			cli_err("refusing to --apply without --yes: standard input is not a terminal, so "
			        "nothing can be confirmed");
			c->exit_code |= OA_EXIT_USAGE;
		} else if (!confirm(c, p)) {
			/* a "no" is an answer, not an interruption: exit 0 */
			cli_err("declined: nothing done");
		} else {
			struct sigaction sa, old_int, old_term, old_hup;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_signal;
			sigemptyset(&sa.sa_mask);
			sigaction(SIGINT, &sa, &old_int);
			sigaction(SIGTERM, &sa, &old_term);
			sigaction(SIGHUP, &sa, &old_hup);
			const char *delay = getenv("OA_TEST_APPLY_DELAY_US");
			oa_apply_opts o = {
				.quarantine = c->quarantine,
				.min_age = p->min_age,
				.force = c->force,
				.stop = &stop_requested,
				.log = json ? stderr : stdout,
				.delay_us = delay ? (unsigned)strtoul(delay, NULL, 10) : 0,
			};
			oa_apply_result r;
			char err[768];
			if (oa_plan_apply(s, p, &o, &r, err, sizeof err) < 0) {
				cli_err("%s: %s", s->root, err);
				c->exit_code |= OA_EXIT_OPERATIONAL;
			} else {
				char fr[48], mv[48];
				oa_format_size(r.freed, c->units, fr, sizeof fr);
				oa_format_size(r.moved, c->units, mv, sizeof mv);
				if (!json && c->quarantine)
					/* moving frees nothing until the quarantine is deleted */
					printf("moved %zu, skipped %zu, failed %zu: %s moved to %s%s\n", r.done, r.skipped,
					       r.failed, mv, c->quarantine, r.interrupted ? " (interrupted)" : "");
				else if (!json)
					printf("removed %zu, skipped %zu, failed %zu: %s freed%s\n", r.done, r.skipped,
					       r.failed, fr, r.interrupted ? " (interrupted)" : "");
				result = json_pack("{s:I,s:I,s:I,s:I,s:I,s:b}", "done", (json_int_t)r.done, "skipped",
				                   (json_int_t)r.skipped, "failed", (json_int_t)r.failed,
				                   "bytes_freed", (json_int_t)r.freed, "bytes_moved",
				                   (json_int_t)r.moved, "interrupted", r.interrupted);
				if (r.failed)
					c->exit_code |= OA_EXIT_OPERATIONAL;
				if (r.interrupted)
					c->exit_code |= OA_EXIT_INTERRUPTED;
				if (r.skipped && c->fail_on <= OA_SEV_WARNING)
					c->exit_code |= OA_EXIT_WARNINGS;
			}
			sigaction(SIGINT, &old_int, NULL);
			sigaction(SIGTERM, &old_term, NULL);
			sigaction(SIGHUP, &old_hup, NULL);
		}
	} else if (c->apply && !json) {
		printf("nothing to remove\n");
	}
	if (json) {
		json_object_set_new(doc, "dry_run", json_boolean(!c->apply));
		if (result)
			json_object_set_new(doc, "result", result);
		if (first)
			printf("{\"schema\":\"ollama-audit.%s/1\",\"stores\":[", p->command);
		else
			printf(",");
		json_dumpf(doc, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (last)
			printf("]}\n");
		json_decref(doc);
	} else {
		json_decref(result);
	}
}

/* ---- --predict-server ------------------------------------------------------------- */

/* envconfig.Bool("OLLAMA_NOPRUNE"): Var() trims blanks and quotes; any
 * non-empty value strconv.ParseBool rejects counts as true. */
static bool noprune_set(const char **value)
{
	const char *env = getenv("OLLAMA_NOPRUNE");
	*value = env;
	char *v = oa_env_trim(env);
	if (!v)
		return false;
	static const char *falses[] = { "0", "f", "F", "FALSE", "false", "False" };
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
 * counted as corrupt? */
static bool go_prune_blocked(const oa_store *s, const go_decoded *g)
{
	for (size_t i = 0; s->prune_blocked && i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (strcmp(f->code, "prune-blocker") != 0)
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

static bool server_referenced(const oa_store *s, const go_decoded *g, const char *key)
{
	for (size_t i = 0; i < g->n; i++)
		if (manifest_names(&g->v[i], key))
			return true;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (m->manifest_ok && manifest_names(&m->m, key))
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
static void predict_renames(int dirfd, const char *rel, json_t *renames, int depth)
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
				predict_renames(sub, path, renames, depth + 1);
				close(sub);
			}
		} else if (!S_ISDIR(st.st_mode) && strncmp(names[i], "sha256:", 7) == 0) {
			char *to = fixed_blob_name(names[i]);
			json_array_append_new(renames, json_pack("{s:s,s:s++}", "from", path, "to", rel,
			                                         "/", to));
			free(to);
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

static void predict(cli *c, oa_store *s, bool first, bool last)
{
	bool json = c->format == OUT_JSON || c->format == OUT_NDJSON;
	json_t *o = oa_report_store(s);
	json_t *renames = json_array(), *deletes = json_array(), *later = json_array(), *dirs = json_array();
	const char *nv;
	bool noprune = noprune_set(&nv);
	const char *nothing = NULL;
	double now = oa_wall_now();
	uint64_t freed = 0;
	/* 1. fixBlobs: sha256:* files become sha256-*, in subdirectories too */
	if (s->blobs_fd >= 0)
		predict_renames(s->blobs_fd, "blobs", renames, 0);
	go_decoded g;
	collect_go_decoded(s, &g);
	if (noprune)
		nothing = "nothing: OLLAMA_NOPRUNE is set";
	else if (go_prune_blocked(s, &g))
		nothing = "nothing: a corrupt manifest blocks it";
	if (!nothing) {
		for (size_t i = 0; i < s->n_blobs; i++) {
			oa_blob *b = &s->blobs[i];
			struct stat lst;
			if (fstatat(s->blobs_fd, b->name, &lst, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(lst.st_mode))
				continue;
			char *name = fixed_blob_name(b->name); /* after fixBlobs */
			const char *why = NULL;
			char key[80] = "";
			if (!server_blob_name(name)) {
				why = "not a blob name";
			} else {
				snprintf(key, sizeof key, "sha256:%s", name + 7);
				if (!server_referenced(s, &g, key)) {
					bool upper = false;
					for (const char *p = name + 7; *p; p++)
						upper |= isupper((unsigned char)*p) != 0;
					why = upper ? "unreferenced (upper-case hex never matches a manifest digest)"
					      : b->cls == OA_BLOB_VALID && oa_blob_looks_like_manifest(s, b)
					              ? "unreferenced; its content is a manifest (current Ollama does not know these)"
					              : "unreferenced";
				}
			}
			if (why) {
				double age = now - (double)oa_stat_mtime_ns(&lst) / 1e9;
				json_t *x = json_pack("{s:s+,s:s,s:I,s:I}", "path", "blobs/", name, "reason", why,
				                      "bytes", (json_int_t)lst.st_blocks * 512, "age_seconds",
				                      (json_int_t)age);
				if (age < OA_SERVER_GRACE_SECONDS) {
					char when[48];
					oa_iso8601((time_t)(oa_stat_mtime_ns(&lst) / 1000000000) + OA_SERVER_GRACE_SECONDS, 0,
					           when, sizeof when);
					json_object_set_new(x, "deleted_by_a_start_after", json_string(when));
					json_array_append_new(later, x);
				} else {
					freed += (uint64_t)lst.st_blocks * 512;
					json_array_append_new(deletes, x);
				}
			}
			free(name);
		}
		oa_junk_list j;
		oa_refset r = { 0 };
		oa_junk_collect(s, &r, now, &j);
		for (size_t i = 0; i < j.n; i++)
			if (j.v[i].cat == OA_JUNK_EMPTY_DIR)
				json_array_append_new(dirs, json_string(j.v[i].path));
		oa_junk_free(&j);
		if (s->manifests_fd >= 0 && !tree_has_files(s->manifests_fd, 0))
			json_array_append_new(dirs, json_string("manifests"));
	}
	free_go_decoded(&g);
	json_object_set_new(o, "nothing", nothing ? json_string(nothing) : json_null());
	json_object_set_new(o, "renames", renames);
	json_object_set_new(o, "deletes", deletes);
	json_object_set_new(o, "deleted_later", later);
	json_object_set_new(o, "empty_dirs_removed", dirs);
	json_object_set_new(o, "bytes_freed", json_integer((json_int_t)freed));
	if (json) {
		if (first)
			printf("{\"schema\":\"ollama-audit.predict-server/1\",\"stores\":[");
		else
			printf(",");
		json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (last)
			printf("]}\n");
		json_decref(o);
		return;
	}
	printf("%s%s: what `ollama serve` does to this store at start-up\n", first ? "" : "\n", s->root);
	size_t i;
	json_t *x;
	json_array_foreach(renames, i, x)
		printf("  rename  %s -> %s\n", json_string_value(json_object_get(x, "from")),
		       json_string_value(json_object_get(x, "to")));
	if (nothing) {
		printf("  prune: %s\n", nothing);
		if (s->prune_blocked && !noprune)
			for (size_t k = 0; k < s->findings.n; k++)
				if (strcmp(s->findings.v[k].code, "prune-blocker") == 0)
					printf("    %s: %s\n", s->findings.v[k].path ? s->findings.v[k].path : "?",
					       s->findings.v[k].message);
	} else {
		json_array_foreach(deletes, i, x)
			printf("  delete  %s  (%s)\n", json_string_value(json_object_get(x, "path")),
			       json_string_value(json_object_get(x, "reason")));
		json_array_foreach(later, i, x)
			printf("  later   %s  (%s; younger than 1 h: kept until a start after %s)\n",
			       json_string_value(json_object_get(x, "path")),
			       json_string_value(json_object_get(x, "reason")),
			       json_string_value(json_object_get(x, "deleted_by_a_start_after")));
		json_array_foreach(dirs, i, x)
			printf("  rmdir   %s\n", json_string_value(x));
		char fr[48];
		oa_format_size(freed, c->units, fr, sizeof fr);
		printf("  %zu file%s deleted, %s freed%s\n", json_array_size(deletes),
		       json_array_size(deletes) == 1 ? "" : "s", fr,
		       json_array_size(deletes) ? "" : " (nothing to delete)");
	}
	json_decref(o);
}

/* ---- prune ---------------------------------------------------------------------------- */

int cmd_prune(cli *c)
{
	if (c->n_args) {
		cli_err("prune takes no arguments (to remove models: ollama-audit rm MODEL...)");
		return OA_EXIT_USAGE;
	}
	if (c->predict_server && (c->apply || c->plan_path || c->quarantine)) {
		cli_err("--predict-server only prints; it does not combine with --apply, --plan or --quarantine");
		return OA_EXIT_USAGE;
	}
	if (!cli_apply_options_ok(c))
		return OA_EXIT_USAGE;
	size_t n;
	opened_store *st = cli_open_stores(c, &n, OA_HEADERS_NONE);
	bool json = c->format == OUT_JSON || c->format == OUT_NDJSON;
	size_t n_opened = 0;
	for (size_t i = 0; i < n; i++)
		n_opened += st[i].ok;
	if (c->plan_path && n_opened > 1) {
		cli_err("--plan works on one store at a time, and %zu were opened: name one with --store",
		        n_opened);
		cli_close_stores(st, n);
		return OA_EXIT_USAGE;
	}
	if (c->predict_server) {
		size_t last = 0, n_ok = 0;
		for (size_t i = 0; i < n; i++)
			if (st[i].ok)
				last = i, n_ok++;
		bool first = true;
		for (size_t i = 0; i < n; i++) {
			if (!st[i].ok)
				continue;
			predict(c, &st[i].s, first, i == last);
			first = false;
		}
		if (json && !n_ok)
			printf("{\"schema\":\"ollama-audit.predict-server/1\",\"stores\":[]}\n");
		cli_close_stores(st, n);
		return c->exit_code;
	}
	/* Plan every store first, so the JSON document is closed after the last
	 * plan that is printed, whichever store fails. */
	typedef struct planned {
		oa_store *s;
		oa_plan p;
		oa_junk_list j;
	} planned;
	planned *pl = oa_xcalloc(n ? n : 1, sizeof *pl);
	size_t np = 0;
	bool from_file = c->apply && c->plan_path;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ok)
			continue;
		oa_store *s = &st[i].s;
		oa_plan p;
		oa_junk_list j = { 0 };
		if (from_file) {
			char err[768];
			if (oa_plan_read(c->plan_path, &p, err, sizeof err) < 0) {
				cli_err("%s", err);
				c->exit_code |= OA_EXIT_USAGE;
				continue;
			}
			if (p.store_dev != (uint64_t)s->root_st.st_dev || p.store_ino != (uint64_t)s->root_st.st_ino) {
				cli_err("%s: the plan %s was made for another store (%s)", s->root, c->plan_path, p.store);
				c->exit_code |= OA_EXIT_OPERATIONAL;
				oa_plan_free(&p);
				continue;
			}
			if (strcmp(p.command, "prune") != 0) {
				cli_err("%s is a plan for `%s`; apply it with `ollama-audit %s --apply --plan %s`",
				        c->plan_path, p.command, p.command, c->plan_path);
				c->exit_code |= OA_EXIT_USAGE;
				oa_plan_free(&p);
				continue;
			}
			if (c->min_age >= 0)
				p.min_age = c->min_age;
		} else {
			oa_refset refs;
			oa_refset_build(s, NULL, 0, &refs);
			if (refs.incomplete)
				cli_err("%s: %s: no complete blob can be proven unreferenced, so every one is kept; "
				        "only partial downloads and temp files can go", s->root, refs.why);
			oa_junk_collect(s, &refs, oa_wall_now(), &j);
			oa_refset_free(&refs);
			oa_plan_prune(s, &j, c->what ? c->what : OA_JUNK_DEFAULT,
			              c->min_age >= 0 ? c->min_age : OA_SERVER_GRACE_SECONDS, &p);
		}
		pl[np++] = (planned){ s, p, j };
	}
	for (size_t i = 0; i < np; i++) {
		cli_run_plan(c, pl[i].s, &pl[i].p, &pl[i].j, from_file, i == 0, i + 1 == np);
		oa_plan_free(&pl[i].p);
		oa_junk_free(&pl[i].j);
	}
	if (json && !np)
		printf("{\"schema\":\"ollama-audit.prune/1\",\"stores\":[]}\n");
	free(pl);
	cli_close_stores(st, n);
	return c->exit_code;
}

bool cli_apply_options_ok(const cli *c)
{
	if ((c->plan_path || c->apply) && c->n_stores > 1) {
		cli_err("--apply and --plan work on one store at a time");
		return false;
	}
	/* One plan file per run: with several stores each would overwrite (or,
	 * with --apply, be checked against) the previous one. */
	if (c->plan_path && c->all_users) {
		cli_err("--plan works on one store at a time: name it with --store, not --all-users");
		return false;
	}
	if (c->quarantine && !c->apply) {
		cli_err("--quarantine needs --apply (without it nothing is moved)");
		return false;
	}
	return true;
}
