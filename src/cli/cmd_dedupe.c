/* cmd_dedupe.c - `ollama-audit du --duplicates` (the same blob in several
 * stores) and `ollama-audit dedupe` (replace them by reflinks or, for one
 * owner, hard links). docs/multi-store.md. */
#include "cmd_dedupe.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "confirm.h"
#include "host.h"
#include "open_stores.h"
#include "output.h"
#include "views/csv.h"
#include "usage.h"
#include "ollama_audit/dedupe.h"
#include "ollama_audit/dedupe_report.h"
#include "ollama_audit/dupes.h"
#include "ollama_audit/guard.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/apply.h"
#include "ollama_audit/prune.h"
#include "base/platform.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
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
	/* --all-users that found no store has said so (exit 8): nothing to add. */
	if (c->all_users && (c->exit_code & OA_EXIT_OPERATIONAL) && !ok)
		return c->exit_code;
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

/* The owner of each store (NULL for one not open), as the views name them. */
static const char **store_users(oa_store *const *sv, size_t n)
{
	const char **u = oa_xcalloc(n ? n : 1, sizeof *u);
	for (size_t i = 0; i < n; i++)
		u[i] = sv[i] ? cli_store_user(sv[i]) : NULL;
	return u;
}

/* A view rendered as json (the document) or ndjson (its records). */
static void put_report(cli *c, json_t *doc, json_t *(*records)(json_t *))
{
	if (c->format == OUT_JSON) {
		cli_emit_document(c, doc);
		return;
	}
	json_t *recs = records(doc);
	for (size_t i = 0; i < json_array_size(recs); i++)
		oa_json_dump_line(json_array_get(recs, i), stdout);
	json_decref(recs);
	json_decref(doc);
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

static void dupes_csv(oa_store *const *sv, const char *const *users, const oa_dupes *d)
{
	FILE *out = cli_text_out();
	fprintf(out, "digest,apparent_bytes,store,user,path,inode,same_inode_as,disk_bytes,models\n");
	for (size_t i = 0; i < d->n; i++)
		for (size_t j = 0; j < d->v[i].n_copies; j++) {
			const oa_dupe_copy *cp = &d->v[i].copies[j];
			char digest[72], num[4][32];
			snprintf(digest, sizeof digest, "sha256:%s", d->v[i].hex);
			snprintf(num[0], 32, "%llu", (unsigned long long)d->v[i].size);
			snprintf(num[1], 32, "%llu", (unsigned long long)cp->ino);
			snprintf(num[2], 32, "%ld", cp->same_inode_as);
			snprintf(num[3], 32, "%llu", (unsigned long long)cp->allocated);
			oa_buf mb;
			oa_buf_init(&mb);
			for (size_t m = 0; m < cp->n_models; m++)
				oa_buf_printf(&mb, "%s%s", m ? ";" : "", cp->models[m]);
			oa_csv_field(out, digest, false);
			oa_csv_field(out, num[0], false);
			oa_csv_field(out, sv[cp->store]->root, false);
			oa_csv_field(out, users[cp->store], false);
			oa_csv_field(out, cp->blob->name, false);
			oa_csv_field(out, num[1], false);
			oa_csv_field(out, cp->same_inode_as >= 0 ? num[2] : "", false);
			oa_csv_field(out, num[3], false);
			oa_csv_field(out, mb.data ? mb.data : "", true);
			oa_buf_free(&mb);
		}
}

/* "  alice        /home/alice/.ollama/models  (llama3:8b)  [symlink]" */
static void print_copy(oa_store *const *sv, const char *const *users, const oa_dupe *dp,
                       const oa_dupe_copy *cp)
{
	char *user = esc(users[cp->store]);
	printf("  %-12s ", user);
	free(user);
	put_esc(sv[cp->store]->root);
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

static void dupes_table(const cli *c, oa_store *const *sv, const char *const *users, const oa_dupes *d,
                        size_t ok)
{
	for (size_t i = 0; i < d->n; i++) {
		const oa_dupe *dp = &d->v[i];
		char size[32], saving[32];
		oa_format_size(dp->size, c->units, size, sizeof size);
		oa_format_size(dp->saving, c->units, saving, sizeof saving);
		printf("sha256:%.12s  %s, %zu copies, %zu inode%s, sharing saves %s\n", dp->hex, size,
		       dp->n_copies, dp->n_inodes, dp->n_inodes == 1 ? "" : "s", saving);
		for (size_t j = 0; j < dp->n_copies; j++)
			print_copy(sv, users, dp, &dp->copies[j]);
	}
	size_t nu;
	oa_dupes_user *u = oa_dupes_users(d, users, &nu);
	if (nu) {
		printf("%s%-12s %6s %12s\n", d->n ? "\n" : "", "USER", "COPIES", "IN COPIES");
		for (size_t k = 0; k < nu; k++) {
			char b[32];
			oa_format_size(u[k].bytes, c->units, b, sizeof b);
			char *user = esc(u[k].user);
			printf("%-12s %6zu %12s\n", user, u[k].copies, b);
			free(user);
		}
	}
	free(u);
	char s1[32], s2[32], s3[32];
	oa_format_size(d->saving, c->units, s1, sizeof s1);
	oa_format_size(d->linkable, c->units, s2, sizeof s2);
	oa_format_size(d->already_shared, c->units, s3, sizeof s3);
	printf("%s%zu blob%s in several of %zu stores: sharing would save %s (%s by `dedupe` on the "
	       "same filesystem); %s already shared\n",
	       d->n || nu ? "\n" : "", d->n, d->n == 1 ? "" : "s", ok, s1, s2, s3);
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
	const char **users = store_users(sv, n);
	if (c->format == OUT_JSON || c->format == OUT_NDJSON)
		put_report(c, oa_dupes_report(sv, users, &d, ok, cli_host()), oa_dupes_records);
	else if (c->format == OUT_CSV)
		dupes_csv(sv, users, &d);
	else
		dupes_table(c, sv, users, &d, ok);
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
		char why[256] = "";
		char *root = esc(sv[i]->root);
		oa_store_user users[4];
		int found = oa_store_in_use(sv[i], users, 4, why, sizeof why);
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
	oa_dedupe_plan_probe(&p, sv, false); /* stores only reads: the filesystem type answers */
	uint64_t reflink = p.bytes;
	oa_dedupe_plan_free(&p);
	size_t n;
	uint64_t links;
	hardlink_alternative(sv, d, &n, &links);
	*hardlink = links > reflink;
	return *hardlink ? links : reflink;
}

/* Plan the replacements, promising only what this filesystem can do
 * (docs/multi-store.md); where reflinks cannot be made, what --hardlink
 * would do instead. */
static void plan_dedupe(const cli *c, oa_store *const *sv, const oa_dupes *d, oa_dedupe_plan *p,
                        oa_dedupe_outcome *o)
{
	oa_dedupe_plan_build(sv, d, c->hardlink ? OA_DEDUPE_HARDLINK : OA_DEDUPE_REFLINK, p);
	oa_dedupe_plan_probe(p, sv, true);
	o->hardlink = c->hardlink;
	for (size_t i = 0; i < p->n; i++) {
		o->planned += p->v[i].status == OA_DD_PLANNED;
		o->alternative |= p->v[i].status == OA_DD_UNSUPPORTED;
	}
	if (o->alternative)
		hardlink_alternative(sv, d, &o->hardlink_planned, &o->hardlink_planned_bytes);
}

/* Do the planned actions; after the first reflink a filesystem refuses, the
 * others on it are not tried. */
static void apply_actions(oa_dedupe_plan *p, oa_store *const *sv)
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
		oa_dedupe_apply(p, sv, a, &interrupted);
		if (a->status == OA_DD_UNSUPPORTED && n_bad < 16)
			bad_dev[n_bad++] = a->dst->st.dev;
	}
}

/* Take the write lock of every store (restore and prune/rm --apply take it
 * too). Returns how many of sv are locked: n, or fewer after a refusal. */
static size_t lock_stores(cli *c, oa_store *const *sv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool again = false; /* the same store twice: one flock would wait on the other */
		for (size_t k = 0; k < i; k++)
			again |= sv[k]->root_st.st_dev == sv[i]->root_st.st_dev && sv[k]->root_st.st_ino == sv[i]->root_st.st_ino;
		char err[768];
		if (!again && oa_store_write_lock(sv[i], err, sizeof err) < 0) {
			cli_err("%s", err);
			c->exit_code |= OA_EXIT_OPERATIONAL;
			return i;
		}
	}
	return n;
}

/* --apply: refuse stores in use, confirm, apply. Returns false when the
 * user declined. */
static bool apply_dedupe(cli *c, oa_store *const *sv, size_t n, oa_dedupe_plan *p, oa_dedupe_outcome *o)
{
	if (check_servers(c, sv, n, p))
		c->exit_code |= OA_EXIT_OPERATIONAL;
	o->planned = 0;
	p->bytes = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].status == OA_DD_PLANNED) {
			o->planned++;
			p->bytes += p->v[i].bytes;
		}
	if (!o->planned)
		return true;
	if (!confirm(c, o->planned, p->bytes)) {
		/* a "no" is an answer, not an interruption: exit 0 */
		cli_err("declined: nothing done");
		return false;
	}
	o->applied = true;
	p->force = c->force; /* else oa_dedupe_apply refuses a store in use by itself */
	size_t locked = lock_stores(c, sv, n);
	if (locked == n)
		apply_actions(p, sv);
	for (size_t i = 0; i < locked; i++)
		oa_store_write_unlock(sv[i]);
	return true;
}

/* Count the actions by status and fold them into the exit status. */
static void tally(cli *c, const oa_dedupe_plan *p, oa_dedupe_outcome *o)
{
	for (size_t i = 0; i < p->n; i++) {
		const oa_dedupe_action *a = &p->v[i];
		o->counts[a->status]++;
		if (a->status == OA_DD_DONE) {
			o->done++;
			o->freed += a->bytes;
		}
		if (a->status == OA_DD_FAILED || a->status == OA_DD_SERVER)
			c->exit_code |= OA_EXIT_OPERATIONAL;
		if (a->status == OA_DD_MISMATCH || a->keeper_bad)
			c->exit_code |= OA_EXIT_ERRORS;
		if (a->status == OA_DD_NOT_DONE)
			c->exit_code |= OA_EXIT_INTERRUPTED;
	}
	o->planned_bytes = p->bytes;
}

static void dedupe_csv(oa_store *const *sv, const char *const *users, const oa_dedupe_plan *p)
{
	FILE *out = cli_text_out();
	fprintf(out, "digest,how,status,keep,keep_user,replace,replace_user,disk_bytes,note\n");
	for (size_t i = 0; i < p->n; i++) {
		const oa_dedupe_action *a = &p->v[i];
		char digest[72], b[32];
		snprintf(digest, sizeof digest, "sha256:%s", a->hex);
		snprintf(b, sizeof b, "%llu", (unsigned long long)a->bytes);
		oa_csv_field(out, digest, false);
		oa_csv_field(out, oa_dedupe_how_name(a->how), false);
		oa_csv_field(out, oa_dedupe_status_name(a->status), false);
		oa_csv_field(out, sv[a->src_store]->root, false);
		oa_csv_field(out, users[a->src_store], false);
		oa_csv_field(out, sv[a->dst_store]->root, false);
		oa_csv_field(out, users[a->dst_store], false);
		oa_csv_field(out, b, false);
		oa_csv_field(out, a->note, true);
	}
}

static void print_action(const cli *c, oa_store *const *sv, const char *const *users,
                         const oa_dedupe_action *a)
{
	char b[32];
	oa_format_size(a->bytes, c->units, b, sizeof b);
	char *sr = esc(sv[a->src_store]->root), *su = esc(users[a->src_store]);
	char *dr = esc(sv[a->dst_store]->root), *du = esc(users[a->dst_store]);
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

static void dedupe_table(const cli *c, oa_store *const *sv, const char *const *users,
                         const oa_dedupe_plan *p, const oa_dedupe_outcome *o)
{
	for (size_t i = 0; i < p->n; i++)
		print_action(c, sv, users, &p->v[i]);
	char b1[32], b2[32];
	oa_format_size(p->bytes, c->units, b1, sizeof b1);
	oa_format_size(o->freed, c->units, b2, sizeof b2);
	const char *how = c->hardlink ? "hard link" : "reflink";
	if (!c->apply)
		printf("%sdry run: %zu duplicate%s would be replaced by %ss, freeing %s.%s\n", p->n ? "\n" : "",
		       o->planned, o->planned == 1 ? "" : "s", how, b1,
		       o->planned ? " Re-run with --apply to do it." : "");
	else
		printf("%s%zu of %zu replaced by %ss, %s freed\n", p->n ? "\n" : "", o->done, o->planned, how, b2);
	size_t unsupported = o->counts[OA_DD_UNSUPPORTED], junk = o->counts[OA_DD_JUNK];
	if (unsupported) {
		oa_format_size(o->hardlink_planned_bytes, c->units, b1, sizeof b1);
		printf("%zu cannot be reflinked: the filesystem cannot (tested). `dedupe --hardlink` would "
		       "replace %zu (between stores of one owner), freeing %s.\n",
		       unsupported, o->hardlink_planned, b1);
	}
	if (junk)
		printf("%zu cop%s that nothing references left alone: `prune` removes %s.\n", junk,
		       junk == 1 ? "y" : "ies", junk == 1 ? "it" : "them");
}

static bool dedupe_args_ok(const cli *c)
{
	if (c->n_args) {
		cli_err("dedupe takes no arguments");
		return false;
	}
	if (c->apply && !c->yes && !isatty(STDIN_FILENO)) {
		cli_err("dedupe --apply asks for confirmation; standard input is not a terminal: add --yes");
		return false;
	}
	return true;
}

/* What every format of `dedupe` renders (the slots in commands.c). */
typedef struct dedupe_view {
	oa_store *const *sv;
	const char *const *users;
	const oa_dedupe_plan *p;
	const oa_dedupe_outcome *o;
} dedupe_view;

void dedupe_render_table(cli *c, const void *view)
{
	const dedupe_view *v = view;
	dedupe_table(c, v->sv, v->users, v->p, v->o);
}

void dedupe_render_json(cli *c, const void *view)
{
	const dedupe_view *v = view;
	put_report(c, oa_dedupe_report(v->sv, v->users, v->p, v->o, cli_host()), oa_dedupe_records);
}

void dedupe_render_csv(cli *c, const void *view)
{
	(void)c;
	const dedupe_view *v = view;
	dedupe_csv(v->sv, v->users, v->p);
}

int cmd_dedupe(cli *c)
{
	if (!dedupe_args_ok(c))
		return OA_EXIT_USAGE;
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
	oa_dedupe_outcome o = { 0 };
	plan_dedupe(c, sv, &d, &p, &o);
	size_t planned_first = o.planned;

	/* SIGINT, SIGTERM, SIGHUP: finish or undo the current action (its
	 * .oa-dedupe.* temporary is removed), then stop. */
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term, old_hup;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	bool declined = c->apply && o.planned && !apply_dedupe(c, sv, n, &p, &o);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);

	tally(c, &p, &o);
	/* --apply that could not do what it was asked to (reflinks on a
	 * filesystem without them, or nothing of the plan done) is a failure. */
	if (c->apply && !declined && !interrupted && (o.counts[OA_DD_UNSUPPORTED] || (planned_first && !o.done)))
		c->exit_code |= OA_EXIT_OPERATIONAL;

	const char **users = store_users(sv, n);
	cli_render(c, &(dedupe_view){ .sv = sv, .users = users, .p = &p, .o = &o });
	free(users);
	oa_dedupe_plan_free(&p);
	oa_dupes_free(&d);
	free(sv);
	cli_close_stores(st, n);
	if (interrupted)
		c->exit_code |= OA_EXIT_INTERRUPTED;
	return c->exit_code;
}
