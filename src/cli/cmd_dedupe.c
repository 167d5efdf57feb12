/* cmd_dedupe.c - `ollama-audit du --duplicates` (the same blob in several
 * stores) and `ollama-audit dedupe` (replace them by reflinks or, for one
 * owner, hard links). docs/multi-store.md. */
#include "cli_multi.h"
#include "ollama_audit/dedupe.h"
#include "base/jsonutil.h"
#include "ollama_audit/dupes.h"
#include "ollama_audit/headers.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DUPES_SCHEMA OA_SCHEMA_DUPLICATES
#define DEDUPE_SCHEMA OA_SCHEMA_DEDUPE

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* A path or name from the filesystem, printable on a terminal (oa_escape). */
static void put_esc(const char *s)
{
	char *e = oa_escape(s, strlen(s));
	fputs(e, stdout);
	free(e);
}

static char *esc(const char *s)
{
	return oa_escape(s, strlen(s));
}

/* Fewer than two stores to compare. That is a usage error (16) when the user
 * named fewer than two; when two named paths turned out to be one store, or
 * --all-users found one, there is simply nothing to share (not an error).
 * 8 when stores were given but could not be opened. */
static bool too_few(const cli *c, size_t ok)
{
	return ok == 0 || (ok < 2 && c->n_stores < 2 && !c->all_users);
}

static int too_few_stores(cli *c, const char *what, size_t n, size_t ok)
{
	cli_err("%s needs two or more stores: use --all-users or repeat --store", what);
	return c->exit_code | (ok < n ? OA_EXIT_OPERATIONAL : OA_EXIT_USAGE);
}

/* The scanned stores as an array of pointers (NULL for the ones not open). */
static oa_store **store_ptrs(opened_store *st, size_t n, size_t *ok)
{
	oa_store **v = oa_xcalloc(n ? n : 1, sizeof *v);
	*ok = 0;
	for (size_t i = 0; i < n; i++)
		if (st[i].ok) {
			v[i] = &st[i].s;
			(*ok)++;
		}
	return v;
}

static json_t *copy_json(oa_store *const *sv, const oa_dupe_copy *cp)
{
	const oa_store *s = sv[cp->store];
	json_t *models = json_array();
	for (size_t m = 0; m < cp->n_models; m++)
		json_array_append_new(models, oa_json_str(cp->models[m]));
	json_t *o = json_pack("{s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:b,s:o}", "store", oa_json_str(s->root), "user",
	                      oa_json_str(cli_store_user(s)), "path", oa_json_str(cp->blob->name), "uid", (json_int_t)cp->uid, "dev",
	                      (json_int_t)cp->dev, "inode", (json_int_t)cp->ino, "disk_bytes",
	                      (json_int_t)cp->allocated, "symlink", cp->symlink, "models", models);
	if (cp->same_inode_as >= 0)
		json_object_set_new(o, "same_inode_as", json_integer(cp->same_inode_as));
	return o;
}

/* Open the stores and find the digests they share. Returns -1 when there is
 * something to compare, else the exit code (nothing is left open then). */
static int open_dupes(cli *c, const char *what, opened_store **st, size_t *n, size_t *ok,
                      oa_store ***sv, oa_dupes *d)
{
	*st = cli_open_stores(c, n, OA_HEADERS_NONE);
	*sv = store_ptrs(*st, *n, ok);
	if (too_few(c, *ok)) {
		int rc = too_few_stores(c, what, *n, *ok);
		free(*sv);
		cli_close_stores(*st, *n);
		return rc;
	}
	oa_dupes_find(*sv, *n, d);
	return -1;
}

int cmd_du_duplicates(cli *c)
{
	size_t n, ok;
	opened_store *st;
	oa_store **sv;
	oa_dupes d;
	int rc = open_dupes(c, "du --duplicates", &st, &n, &ok, &sv, &d);
	if (rc >= 0)
		return rc;

	/* per user: the copies they hold and the allocated bytes of those that
	 * are a distinct inode (a hard-linked name of an earlier copy costs nothing) */
	typedef struct ut { const char *user; size_t copies; uint64_t bytes; } ut;
	ut *users = oa_xcalloc(n ? n : 1, sizeof *users);
	size_t nu = 0;
	for (size_t i = 0; i < d.n; i++)
		for (size_t j = 0; j < d.v[i].n_copies; j++) {
			const oa_dupe_copy *cp = &d.v[i].copies[j];
			const char *u = cli_store_user(sv[cp->store]);
			size_t k = 0;
			while (k < nu && strcmp(users[k].user, u) != 0)
				k++;
			if (k == nu)
				users[nu++].user = u;
			users[k].copies++;
			if (cp->same_inode_as < 0)
				users[k].bytes += cp->allocated;
		}

	if (c->format == OUT_JSON || c->format == OUT_NDJSON) {
		json_t *arr = json_array();
		for (size_t i = 0; i < d.n; i++) {
			const oa_dupe *dp = &d.v[i];
			json_t *copies = json_array();
			for (size_t j = 0; j < dp->n_copies; j++)
				json_array_append_new(copies, copy_json(sv, &dp->copies[j]));
			char digest[72];
			snprintf(digest, sizeof digest, "sha256:%s", dp->hex);
			json_array_append_new(arr, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "digest", digest,
			                                     "apparent_bytes", (json_int_t)dp->size, "inodes",
			                                     (json_int_t)dp->n_inodes, "saving_bytes",
			                                     (json_int_t)dp->saving, "linkable_bytes",
			                                     (json_int_t)dp->linkable, "already_shared_bytes",
			                                     (json_int_t)dp->already_shared, "copies", copies));
		}
		json_t *ua = json_array();
		for (size_t k = 0; k < nu; k++)
			json_array_append_new(ua, json_pack("{s:s,s:I,s:I}", "user", users[k].user, "copies",
			                                    (json_int_t)users[k].copies, "disk_bytes",
			                                    (json_int_t)users[k].bytes));
		json_t *tot = json_pack("{s:I,s:I,s:I,s:I,s:I}", "stores", (json_int_t)ok, "digests",
		                        (json_int_t)d.n, "saving_bytes", (json_int_t)d.saving, "linkable_bytes",
		                        (json_int_t)d.linkable, "already_shared_bytes",
		                        (json_int_t)d.already_shared);
		if (c->format == OUT_JSON) {
			json_t *doc = json_pack("{s:s,s:s,s:o,s:o,s:o}", "schema", DUPES_SCHEMA, "host", cli_host(),
			                        "duplicates", arr, "users", ua, "total", tot);
			oa_json_dump_line(doc, stdout);
			json_decref(doc);
		} else {
			for (int t = 0; t < 3; t++) {
				json_t *list = t == 0 ? arr : t == 1 ? ua : NULL;
				size_t cnt = list ? json_array_size(list) : 1;
				for (size_t i = 0; i < cnt; i++) {
					json_t *rec = json_pack("{s:s,s:s,s:s}", "type",
					                        t == 0 ? "duplicate" : t == 1 ? "user" : "summary", "schema",
					                        DUPES_SCHEMA, "host", cli_host());
					json_object_update(rec, list ? json_array_get(list, i) : tot);
					oa_json_dump_line(rec, stdout);
					json_decref(rec);
				}
			}
			json_decref(arr);
			json_decref(ua);
			json_decref(tot);
		}
	} else if (c->format == OUT_CSV) {
		printf("digest,apparent_bytes,store,user,path,inode,same_inode_as,disk_bytes,models\n");
		for (size_t i = 0; i < d.n; i++)
			for (size_t j = 0; j < d.v[i].n_copies; j++) {
				const oa_dupe_copy *cp = &d.v[i].copies[j];
				char digest[72], num[4][32];
				snprintf(digest, sizeof digest, "sha256:%s", d.v[i].hex);
				snprintf(num[0], 32, "%llu", (unsigned long long)d.v[i].size);
				snprintf(num[1], 32, "%llu", (unsigned long long)cp->ino);
				snprintf(num[2], 32, "%ld", cp->same_inode_as);
				snprintf(num[3], 32, "%llu", (unsigned long long)cp->allocated);
				oa_buf mb;
				oa_buf_init(&mb);
				for (size_t m = 0; m < cp->n_models; m++)
					oa_buf_printf(&mb, "%s%s", m ? ";" : "", cp->models[m]);
				csv_field(stdout, digest, false);
				csv_field(stdout, num[0], false);
				csv_field(stdout, sv[cp->store]->root, false);
				csv_field(stdout, cli_store_user(sv[cp->store]), false);
				csv_field(stdout, cp->blob->name, false);
				csv_field(stdout, num[1], false);
				csv_field(stdout, cp->same_inode_as >= 0 ? num[2] : "", false);
				csv_field(stdout, num[3], false);
				csv_field(stdout, mb.data ? mb.data : "", true);
				oa_buf_free(&mb);
			}
	} else {
		for (size_t i = 0; i < d.n; i++) {
			const oa_dupe *dp = &d.v[i];
			char size[32], saving[32];
			oa_format_size(dp->size, c->units, size, sizeof size);
			oa_format_size(dp->saving, c->units, saving, sizeof saving);
			printf("sha256:%.12s  %s, %zu copies, %zu inode%s, sharing saves %s\n", dp->hex, size,
			       dp->n_copies, dp->n_inodes, dp->n_inodes == 1 ? "" : "s", saving);
			for (size_t j = 0; j < dp->n_copies; j++) {
				const oa_dupe_copy *cp = &dp->copies[j];
				const oa_store *s = sv[cp->store];
				char *user = esc(cli_store_user(s));
				printf("  %-12s ", user);
				free(user);
				put_esc(s->root);
				if (cp->n_models) {
					printf("  (");
					for (size_t m = 0; m < cp->n_models; m++) {
						printf("%s", m ? ", " : "");
						put_esc(cp->models[m]);
					}
					printf(")");
				} else {
					printf("  (no model: orphaned)");
				}
				if (cp->same_inode_as >= 0) {
					printf("  [same inode as ");
					put_esc(sv[dp->copies[cp->same_inode_as].store]->root);
					printf(": already shared]");
				} else if (cp->shared_with >= 0) {
					printf("  [shares its extents with ");
					put_esc(sv[dp->copies[cp->shared_with].store]->root);
					printf(": already shared]");
				} else if (cp->symlink) {
					printf("  [symlink]");
				}
				printf("\n");
			}
		}
		if (nu) {
			printf("%s%-12s %6s %12s\n", d.n ? "\n" : "", "USER", "COPIES", "IN COPIES");
			for (size_t k = 0; k < nu; k++) {
				char b[32];
				oa_format_size(users[k].bytes, c->units, b, sizeof b);
				char *user = esc(users[k].user);
				printf("%-12s %6zu %12s\n", user, users[k].copies, b);
				free(user);
			}
		}
		char s1[32], s2[32], s3[32];
		oa_format_size(d.saving, c->units, s1, sizeof s1);
		oa_format_size(d.linkable, c->units, s2, sizeof s2);
		oa_format_size(d.already_shared, c->units, s3, sizeof s3);
		printf("%s%zu blob%s in several of %zu stores: sharing would save %s (%s by `dedupe` on the "
		       "same filesystem); %s already shared\n",
		       d.n || nu ? "\n" : "", d.n, d.n == 1 ? "" : "s", ok, s1, s2, s3);
	}
	free(users);
	oa_dupes_free(&d);
	free(sv);
	cli_close_stores(st, n);
	return c->exit_code;
}

/* ---- dedupe ----------------------------------------------------------------------- */

static bool confirm(cli *c, size_t n, uint64_t bytes)
{
	if (c->yes)
		return true;
	char b[32], q[160];
	oa_format_size(bytes, c->units, b, sizeof b);
	snprintf(q, sizeof q, "Replace %zu duplicate blob%s by %ss (frees %s)?", n, n == 1 ? "" : "s",
	         c->hardlink ? "hard link" : "reflink", b);
	return cli_confirm(q);
}

/* Refuse stores an Ollama server or runner uses (unless --force). Returns
 * true when some action was blocked. */
static bool check_servers(cli *c, oa_store *const *sv, size_t n, oa_dedupe_plan *p)
{
	bool blocked = false;
	for (size_t i = 0; i < n; i++) {
		if (!sv[i])
			continue;
		bool used = false;
		for (size_t k = 0; k < p->n && !used; k++)
			used = p->v[k].status == OA_DD_PLANNED &&
			       (p->v[k].src_store == i || p->v[k].dst_store == i);
		if (!used)
			continue;
		char real[PATH_MAX], why[256] = "";
		char *root = esc(sv[i]->root);
		if (!realpath(sv[i]->root, real))
			snprintf(real, sizeof real, "%s", sv[i]->root);
		oa_proc_user users[4];
		int found = oa_find_store_users(real, users, 4, why, sizeof why);
		if (found < 0) {
			cli_err("%s: %s", root, why[0] ? why : "cannot tell whether a server uses the store");
			free(root);
			continue;
		}
		if (found == 0) {
			free(root);
			continue;
		}
		for (int k = 0; k < found && k < 4; k++) {
			char *how = esc(users[k].how);
			cli_err("%s: in use by pid %ld (%s): %s", root, users[k].pid, users[k].cmd, how);
			free(how);
		}
		if (c->force) {
			cli_err("%s: --force: going on although a server uses it", root);
			free(root);
			continue;
		}
		cli_err("%s: an Ollama server or runner uses this store: its duplicates are left alone "
		        "(stop it, or --force)", root);
		free(root);
		blocked = true;
		for (size_t k = 0; k < p->n; k++)
			if (p->v[k].status == OA_DD_PLANNED && (p->v[k].src_store == i || p->v[k].dst_store == i)) {
				p->v[k].status = OA_DD_SERVER;
				snprintf(p->v[k].note, sizeof p->v[k].note, "an Ollama server uses %s", sv[i]->root);
			}
	}
	return blocked;
}

static json_t *action_json(oa_store *const *sv, const oa_dedupe_action *a)
{
	char digest[72];
	snprintf(digest, sizeof digest, "sha256:%s", a->hex);
	/* Roots, user names and notes come from disk: oa_json_str escapes what
	 * is not UTF-8 instead of letting json_pack drop the whole record. */
	json_t *o = json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:I}", "digest", digest, "how",
	                      oa_dedupe_how_name(a->how), "status", oa_dedupe_status_name(a->status), "keep",
	                      oa_json_str(sv[a->src_store]->root), "keep_user",
	                      oa_json_str(cli_store_user(sv[a->src_store])), "replace",
	                      oa_json_str(sv[a->dst_store]->root), "replace_user",
	                      oa_json_str(cli_store_user(sv[a->dst_store])), "disk_bytes", (json_int_t)a->bytes);
	if (a->note[0])
		json_object_set_new(o, "note", oa_json_str(a->note));
	return o;
}

/* The actions and bytes a --hardlink plan would have. */
static void hardlink_alternative(oa_store *const *sv, const oa_dupes *d, size_t *n, uint64_t *bytes)
{
	oa_dedupe_plan h;
	oa_dedupe_plan_build(sv, d, OA_DEDUPE_HARDLINK, &h);
	*n = 0;
	for (size_t i = 0; i < h.n; i++)
		*n += h.v[i].status == OA_DD_PLANNED;
	*bytes = h.bytes;
	oa_dedupe_plan_free(&h);
}

uint64_t cli_dedupe_can_free(oa_store *const *sv, const oa_dupes *d, bool *hardlink)
{
	oa_dedupe_plan p;
	oa_dedupe_plan_build(sv, d, OA_DEDUPE_REFLINK, &p);
	oa_dedupe_plan_probe(&p, sv);
	uint64_t reflink = p.bytes;
	oa_dedupe_plan_free(&p);
	size_t n;
	uint64_t links;
	hardlink_alternative(sv, d, &n, &links);
	*hardlink = links > reflink;
	return *hardlink ? links : reflink;
}

int cmd_dedupe(cli *c)
{
	if (c->n_args) {
		cli_err("dedupe takes no arguments");
		return OA_EXIT_USAGE;
	}
	if (c->apply && !c->yes && !isatty(STDIN_FILENO)) {
		cli_err("dedupe --apply asks for confirmation; standard input is not a terminal: add --yes");
		return OA_EXIT_USAGE;
	}
	size_t n, ok;
	opened_store *st;
	oa_store **sv;
	oa_dupes d;
	int rc = open_dupes(c, "dedupe", &st, &n, &ok, &sv, &d);
	if (rc >= 0)
		return rc;
	if (d.refs_incomplete[0]) {
		char *why = esc(d.refs_incomplete);
		cli_err("%s: so no copy there is taken for junk", why);
		free(why);
	}
	oa_dedupe_plan p;
	oa_dedupe_plan_build(sv, &d, c->hardlink ? OA_DEDUPE_HARDLINK : OA_DEDUPE_REFLINK, &p);
	/* Promise only what this filesystem can do (docs/multi-store.md). */
	oa_dedupe_plan_probe(&p, sv);
	size_t planned = 0;
	for (size_t i = 0; i < p.n; i++)
		planned += p.v[i].status == OA_DD_PLANNED;
	/* Where reflinks cannot be made: what --hardlink would do instead. */
	size_t alt_n = 0;
	uint64_t alt_bytes = 0;
	bool unsupported = false;
	for (size_t i = 0; i < p.n; i++)
		unsupported |= p.v[i].status == OA_DD_UNSUPPORTED;
	if (unsupported)
		hardlink_alternative(sv, &d, &alt_n, &alt_bytes);
	size_t planned_first = planned;

	/* SIGINT, SIGTERM, SIGHUP: finish or undo the current action (its
	 * .oa-dedupe.* temporary is removed), then stop. */
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term, old_hup;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	bool applied = false, declined = false;
	if (c->apply && planned) {
		if (check_servers(c, sv, n, &p))
			c->exit_code |= OA_EXIT_OPERATIONAL;
		planned = 0;
		p.bytes = 0;
		for (size_t i = 0; i < p.n; i++)
			if (p.v[i].status == OA_DD_PLANNED) {
				planned++;
				p.bytes += p.v[i].bytes;
			}
		if (planned && !confirm(c, planned, p.bytes)) {
			/* a "no" is an answer, not an interruption: exit 0 */
			cli_err("declined: nothing done");
			declined = true;
		} else if (planned) {
			applied = true;
			dev_t bad_dev[16];
			size_t n_bad = 0;
			for (size_t i = 0; i < p.n; i++) {
				oa_dedupe_action *a = &p.v[i];
				if (a->status != OA_DD_PLANNED)
					continue;
				bool known_bad = false;
				for (size_t k = 0; k < n_bad; k++)
					known_bad |= a->dst->st.st_dev == bad_dev[k];
				if (known_bad && a->how == OA_DEDUPE_REFLINK) {
					a->status = OA_DD_UNSUPPORTED;
					snprintf(a->note, sizeof a->note, "this filesystem cannot reflink");
					continue;
				}
				oa_dedupe_apply(&p, sv, a, &interrupted);
				if (a->status == OA_DD_UNSUPPORTED && n_bad < 16)
					bad_dev[n_bad++] = a->dst->st.st_dev;
			}
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);

	uint64_t freed = 0;
	size_t done = 0, counts[OA_DD_STATUS_COUNT] = { 0 };
	for (size_t i = 0; i < p.n; i++) {
		const oa_dedupe_action *a = &p.v[i];
		counts[a->status]++;
		if (a->status == OA_DD_DONE) {
			done++;
			freed += a->bytes;
		}
		if (a->status == OA_DD_FAILED || a->status == OA_DD_SERVER)
			c->exit_code |= OA_EXIT_OPERATIONAL;
		if (a->status == OA_DD_MISMATCH || a->keeper_bad)
			c->exit_code |= OA_EXIT_ERRORS;
		if (a->status == OA_DD_NOT_DONE)
			c->exit_code |= OA_EXIT_INTERRUPTED;
	}
	/* --apply that could not do what it was asked to (reflinks on a
	 * filesystem without them, or nothing of the plan done) is a failure. */
	if (c->apply && !declined && !interrupted && (counts[OA_DD_UNSUPPORTED] || (planned_first && !done)))
		c->exit_code |= OA_EXIT_OPERATIONAL;

	if (c->format == OUT_JSON || c->format == OUT_NDJSON) {
		json_t *arr = json_array();
		for (size_t i = 0; i < p.n; i++)
			json_array_append_new(arr, action_json(sv, &p.v[i]));
		json_t *sum = json_pack("{s:s,s:b,s:I,s:I,s:I,s:I}", "mode", c->hardlink ? "hardlink" : "reflink",
		                        "applied", applied, "planned", (json_int_t)planned, "planned_bytes",
		                        (json_int_t)p.bytes, "done", (json_int_t)done, "freed_bytes",
		                        (json_int_t)freed);
		json_t *byst = json_object();
		for (int k = 0; k < OA_DD_STATUS_COUNT; k++)
			if (counts[k])
				json_object_set_new(byst, oa_dedupe_status_name((oa_dedupe_status)k),
				                    json_integer((json_int_t)counts[k]));
		json_object_set_new(sum, "by_status", byst);
		if (unsupported) {
			json_object_set_new(sum, "hardlink_planned", json_integer((json_int_t)alt_n));
			json_object_set_new(sum, "hardlink_planned_bytes", json_integer((json_int_t)alt_bytes));
		}
		if (c->format == OUT_JSON) {
			json_t *doc = json_pack("{s:s,s:s,s:o,s:o}", "schema", DEDUPE_SCHEMA, "host", cli_host(),
			                        "actions", arr, "summary", sum);
			oa_json_dump_line(doc, stdout);
			json_decref(doc);
		} else {
			for (size_t i = 0; i < json_array_size(arr); i++) {
				json_t *rec = json_pack("{s:s,s:s,s:s}", "type", "action", "schema", DEDUPE_SCHEMA, "host",
				                        cli_host());
				json_object_update(rec, json_array_get(arr, i));
				oa_json_dump_line(rec, stdout);
				json_decref(rec);
			}
			json_t *rec = json_pack("{s:s,s:s,s:s}", "type", "summary", "schema", DEDUPE_SCHEMA, "host",
			                        cli_host());
			json_object_update(rec, sum);
			oa_json_dump_line(rec, stdout);
			json_decref(rec);
			json_decref(arr);
			json_decref(sum);
		}
	} else if (c->format == OUT_CSV) {
		printf("digest,how,status,keep,keep_user,replace,replace_user,disk_bytes,note\n");
		for (size_t i = 0; i < p.n; i++) {
			const oa_dedupe_action *a = &p.v[i];
			char digest[72], b[32];
			snprintf(digest, sizeof digest, "sha256:%s", a->hex);
			snprintf(b, sizeof b, "%llu", (unsigned long long)a->bytes);
			csv_field(stdout, digest, false);
			csv_field(stdout, oa_dedupe_how_name(a->how), false);
			csv_field(stdout, oa_dedupe_status_name(a->status), false);
			csv_field(stdout, sv[a->src_store]->root, false);
			csv_field(stdout, cli_store_user(sv[a->src_store]), false);
			csv_field(stdout, sv[a->dst_store]->root, false);
			csv_field(stdout, cli_store_user(sv[a->dst_store]), false);
			csv_field(stdout, b, false);
			csv_field(stdout, a->note, true);
		}
	} else {
		for (size_t i = 0; i < p.n; i++) {
			const oa_dedupe_action *a = &p.v[i];
			char b[32];
			oa_format_size(a->bytes, c->units, b, sizeof b);
			char *sr = esc(sv[a->src_store]->root), *su = esc(cli_store_user(sv[a->src_store]));
			char *dr = esc(sv[a->dst_store]->root), *du = esc(cli_store_user(sv[a->dst_store]));
			printf("%-19s %-8s %10s  sha256:%.12s  %s (%s) -> %s (%s)\n", oa_dedupe_status_name(a->status),
			       oa_dedupe_how_name(a->how), b, a->hex, sr, su, dr, du);
			free(sr);
			free(su);
			free(dr);
			free(du);
			if (a->note[0]) {
				char *note = esc(a->note);
				printf("%-19s %s\n", "", note);
				free(note);
			}
		}
		char b1[32], b2[32];
		oa_format_size(p.bytes, c->units, b1, sizeof b1);
		oa_format_size(freed, c->units, b2, sizeof b2);
		const char *how = c->hardlink ? "hard link" : "reflink";
		if (!c->apply)
			printf("%sdry run: %zu duplicate%s would be replaced by %ss, freeing %s.%s\n",
			       p.n ? "\n" : "", planned, planned == 1 ? "" : "s", how, b1,
			       planned ? " Re-run with --apply to do it." : "");
		else
			printf("%s%zu of %zu replaced by %ss, %s freed\n", p.n ? "\n" : "", done, planned, how, b2);
		if (counts[OA_DD_UNSUPPORTED]) {
			oa_format_size(alt_bytes, c->units, b1, sizeof b1);
			printf("%zu cannot be reflinked: the filesystem cannot (tested). `dedupe --hardlink` would "
			       "replace %zu (between stores of one owner), freeing %s.\n",
			       counts[OA_DD_UNSUPPORTED], alt_n, b1);
		}
		if (counts[OA_DD_JUNK])
			printf("%zu cop%s that nothing references left alone: `prune` removes %s.\n",
			       counts[OA_DD_JUNK], counts[OA_DD_JUNK] == 1 ? "y" : "ies",
			       counts[OA_DD_JUNK] == 1 ? "it" : "them");
	}
	oa_dedupe_plan_free(&p);
	oa_dupes_free(&d);
	free(sv);
	cli_close_stores(st, n);
	if (interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	return c->exit_code;
}
