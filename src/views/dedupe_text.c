/* dedupe_text.c - the text and csv of du --duplicates and dedupe
 * (dedupe_text.h). */
#include "views/dedupe_text.h"
#include "views/csv.h"
#include "ollama_audit/dedupe_report.h"
#include "ollama_audit/humanize.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* A path or name from the filesystem, printable on a terminal (oa_escape). */
static void put_esc(FILE *out, const char *s)
{
	char *e = oa_escape(s, strlen(s));
	fputs(e, out);
	free(e);
}

static char *esc(const char *s)
{
	return oa_escape(s, strlen(s));
}

void oa_dupes_csv(FILE *out, oa_store *const *sv, const char *const *users, const oa_dupes *d)
{
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
static void put_copy(FILE *out, oa_store *const *sv, const char *const *users, const oa_dupe *dp,
                     const oa_dupe_copy *cp)
{
	char *user = esc(users[cp->store]);
	fprintf(out, "  %-12s ", user);
	free(user);
	put_esc(out, sv[cp->store]->root);
	if (cp->n_models) {
		fprintf(out, "  (");
		for (size_t m = 0; m < cp->n_models; m++) {
			fprintf(out, "%s", m ? ", " : "");
			put_esc(out, cp->models[m]);
		}
		fprintf(out, ")");
	} else {
		fprintf(out, "  (no model: orphaned)");
	}
	if (cp->same_inode_as >= 0) {
		fprintf(out, "  [same inode as ");
		put_esc(out, sv[dp->copies[cp->same_inode_as].store]->root);
		fprintf(out, ": already shared]");
	} else if (cp->shared_with >= 0) {
		fprintf(out, "  [shares its extents with ");
		put_esc(out, sv[dp->copies[cp->shared_with].store]->root);
		fprintf(out, ": already shared]");
	} else if (cp->symlink) {
		fprintf(out, "  [symlink]");
	}
	fprintf(out, "\n");
}

void oa_dupes_text(const oa_text_style *st, FILE *out, oa_store *const *sv, const char *const *users,
                   const oa_dupes *d, size_t ok)
{
	for (size_t i = 0; i < d->n; i++) {
		const oa_dupe *dp = &d->v[i];
		char size[32], saving[32];
		oa_format_size(dp->size, st->units, size, sizeof size);
		oa_format_size(dp->saving, st->units, saving, sizeof saving);
		fprintf(out, "sha256:%.12s  %s, %zu copies, %zu inode%s, sharing saves %s\n", dp->hex, size,
		        dp->n_copies, dp->n_inodes, dp->n_inodes == 1 ? "" : "s", saving);
		for (size_t j = 0; j < dp->n_copies; j++)
			put_copy(out, sv, users, dp, &dp->copies[j]);
	}
	size_t nu;
	oa_dupes_user *u = oa_dupes_users(d, users, &nu);
	if (nu) {
		fprintf(out, "%s%-12s %6s %12s\n", d->n ? "\n" : "", "USER", "COPIES", "IN COPIES");
		for (size_t k = 0; k < nu; k++) {
			char b[32];
			oa_format_size(u[k].bytes, st->units, b, sizeof b);
			char *user = esc(u[k].user);
			fprintf(out, "%-12s %6zu %12s\n", user, u[k].copies, b);
			free(user);
		}
	}
	free(u);
	char s1[32], s2[32], s3[32];
	oa_format_size(d->saving, st->units, s1, sizeof s1);
	oa_format_size(d->linkable, st->units, s2, sizeof s2);
	oa_format_size(d->already_shared, st->units, s3, sizeof s3);
	fprintf(out, "%s%zu blob%s in several of %zu stores: sharing would save %s (%s by `dedupe` on the "
	        "same filesystem); %s already shared\n",
	        d->n || nu ? "\n" : "", d->n, d->n == 1 ? "" : "s", ok, s1, s2, s3);
}

void oa_dedupe_csv(FILE *out, oa_store *const *sv, const char *const *users, const oa_dedupe_plan *p)
{
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

/* One line for n actions like a, freeing bytes (n 1: a, by its digest). */
static void put_actions(const oa_text_style *st, FILE *out, oa_store *const *sv, const char *const *users,
                        const oa_dedupe_action *a, size_t n, uint64_t bytes)
{
	char b[32], what[32];
	oa_format_size(bytes, st->units, b, sizeof b);
	if (n == 1)
		snprintf(what, sizeof what, "sha256:%.12s", a->hex);
	else
		snprintf(what, sizeof what, "%zu blobs", n);
	char *sr = esc(sv[a->src_store]->root), *su = esc(users[a->src_store]);
	char *dr = esc(sv[a->dst_store]->root), *du = esc(users[a->dst_store]);
	fprintf(out, "%-19s %-8s %10s  %-19s  %s (%s) -> %s (%s)\n", oa_dedupe_status_name(a->status),
	        oa_dedupe_how_name(a->how), b, what, sr, su, dr, du);
	free(sr);
	free(su);
	free(dr);
	free(du);
}

/* An action's note, under its line (or the lines it speaks for). */
static void put_note(FILE *out, const oa_dedupe_action *a)
{
	if (!a->note[0])
		return;
	char *note = esc(a->note);
	fprintf(out, "%-19s %s\n", "", note);
	free(note);
}

/* What an action's line says whatever its stores: status, method, note. */
static int cmp_outcome(const oa_dedupe_action *a, const oa_dedupe_action *b)
{
	if (a->status != b->status)
		return a->status < b->status ? -1 : 1;
	if (a->how != b->how)
		return a->how < b->how ? -1 : 1;
	return strcmp(a->note, b->note);
}

/* The same outcome between the same two stores. */
static int cmp_kind(const oa_dedupe_action *a, const oa_dedupe_action *b)
{
	int r = cmp_outcome(a, b);
	if (r || a->src_store != b->src_store)
		return r ? r : a->src_store < b->src_store ? -1 : 1;
	return a->dst_store < b->dst_store ? -1 : a->dst_store > b->dst_store;
}

/* By kind, then in plan order. */
static int cmp_alike(const void *x, const void *y)
{
	const oa_dedupe_action *a = *(const oa_dedupe_action *const *)x, *b = *(const oa_dedupe_action *const *)y;
	int r = cmp_kind(a, b);
	return r ? r : a < b ? -1 : a > b;
}

/* The actions of one kind: the first in plan order, how many, their bytes,
 * and the first action of their outcome (block), in plan order. */
typedef struct alike {
	const oa_dedupe_action *first, *block;
	size_t n;
	uint64_t bytes;
} alike;

/* Outcome by outcome, as each first comes in the plan; pairs likewise. */
static int cmp_shown(const void *x, const void *y)
{
	const alike *a = x, *b = y;
	if (a->block != b->block)
		return a->block < b->block ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* The plan's actions, one line per store pair and outcome (however many
 * blobs three stores share, a few lines), each outcome's note once under
 * its lines; false when no two actions were alike. */
static bool put_pairs(const oa_text_style *st, FILE *out, oa_store *const *sv, const char *const *users,
                      const oa_dedupe_plan *p)
{
	const oa_dedupe_action **v = oa_xcalloc(p->n + 1, sizeof *v);
	alike *g = oa_xcalloc(p->n + 1, sizeof *g);
	for (size_t i = 0; i < p->n; i++)
		v[i] = &p->v[i];
	qsort(v, p->n, sizeof *v, cmp_alike);
	size_t ng = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (!ng || cmp_kind(g[ng - 1].first, v[i]) != 0)
			g[ng++] = (alike){ v[i], v[i], 0, 0 };
		g[ng - 1].n++;
		g[ng - 1].bytes += v[i]->bytes;
	}
	/* (sorted by outcome first: each outcome's groups are one run) */
	for (size_t a = 0, b; a < ng; a = b) {
		const oa_dedupe_action *block = g[a].first;
		for (b = a; b < ng && cmp_outcome(g[b].first, g[a].first) == 0; b++)
			if (g[b].first < block)
				block = g[b].first;
		for (size_t k = a; k < b; k++)
			g[k].block = block;
	}
	qsort(g, ng, sizeof *g, cmp_shown);
	for (size_t k = 0; k < ng; k++) {
		put_actions(st, out, sv, users, g[k].first, g[k].n, g[k].bytes);
		if (k + 1 == ng || g[k + 1].block != g[k].block)
			put_note(out, g[k].first);
	}
	free(v);
	free(g);
	return ng < p->n;
}

/* When reflinks cannot be made: what --hardlink would do, and what to do
 * about copies of different owners, which nothing here can share. */
static void put_no_reflink(const oa_text_style *st, FILE *out, const oa_dedupe_outcome *o)
{
	size_t unsupported = o->counts[OA_DD_UNSUPPORTED];
	char b[32];
	fprintf(out, "%zu cannot be reflinked: the filesystem cannot (tested).", unsupported);
	if (o->hardlink_planned) {
		oa_format_size(o->hardlink_planned_bytes, st->units, b, sizeof b);
		fprintf(out, " `dedupe --hardlink` would replace %zu (between stores of one owner), freeing %s.",
		        o->hardlink_planned, b);
	}
	fputc('\n', out);
	if (o->hardlink_refused_owner) {
		oa_format_size(o->hardlink_refused_owner_bytes, st->units, b, sizeof b);
		bool one = o->hardlink_refused_owner == 1;
		fprintf(out, "%zu duplicate%s (%s) %s another user's than the copy kept: a hard link would let one "
		        "user change the other's model, so only a filesystem that reflinks (btrfs, XFS with "
		        "reflink=1, bcachefs) can share %s, or those users sharing one store (OLLAMA_MODELS).\n",
		        o->hardlink_refused_owner, one ? "" : "s", b, one ? "is" : "are", one ? "it" : "them");
	}
}

void oa_dedupe_text(const oa_text_style *st, FILE *out, oa_store *const *sv, const char *const *users,
                    const oa_dedupe_plan *p, const oa_dedupe_outcome *o, bool apply, bool each)
{
	bool grouped = false;
	if (each)
		for (size_t i = 0; i < p->n; i++) {
			put_actions(st, out, sv, users, &p->v[i], 1, p->v[i].bytes);
			put_note(out, &p->v[i]);
		}
	else
		grouped = put_pairs(st, out, sv, users, p);
	char b1[32], b2[32];
	oa_format_size(p->bytes, st->units, b1, sizeof b1);
	oa_format_size(o->freed, st->units, b2, sizeof b2);
	const char *how = o->hardlink ? "hard link" : "reflink";
	if (!apply)
		fprintf(out, "%sdry run: %zu duplicate%s would be replaced by %ss, freeing %s.%s\n", p->n ? "\n" : "",
		        o->planned, o->planned == 1 ? "" : "s", how, b1, o->planned ? " Re-run with --apply to do it." : "");
	else
		fprintf(out, "%s%zu of %zu replaced by %ss, %s freed\n", p->n ? "\n" : "", o->done, o->planned, how, b2);
	if (o->counts[OA_DD_UNSUPPORTED])
		put_no_reflink(st, out, o);
	size_t junk = o->counts[OA_DD_JUNK];
	if (junk)
		fprintf(out, "%zu cop%s that nothing references left alone: `prune` removes %s.\n", junk,
		        junk == 1 ? "y" : "ies", junk == 1 ? "it" : "them");
	if (grouped)
		fprintf(out, "One line per store pair and outcome; -v lists each blob.\n");
}

char *oa_dedupe_question(const oa_dedupe_plan *p, const oa_dedupe_outcome *o, enum oa_units units)
{
	char b[32];
	oa_format_size(p->bytes, units, b, sizeof b);
	return oa_xasprintf("Replace %zu duplicate blob%s by %ss (frees %s)?", o->planned, o->planned == 1 ? "" : "s",
	                    o->hardlink ? "hard link" : "reflink", b);
}

void oa_dupes_refs_text(oa_say_fn say, const oa_dupes *d)
{
	if (!d->refs_incomplete[0])
		return;
	char *why = esc(d->refs_incomplete);
	say("%s: so no copy there is taken for junk", why);
	free(why);
}

void oa_dedupe_busy_text(oa_say_fn say, oa_store *const *sv, const oa_dedupe_busy *b, size_t n, bool force)
{
	for (size_t i = 0; i < n; i++) {
		char *root = esc(sv[b[i].store]->root);
		if (b[i].found < 0)
			say("%s: %s", root, b[i].why[0] ? b[i].why : "cannot tell whether a server uses the store");
		for (int k = 0; k < b[i].found && k < OA_DEDUPE_BUSY_MAX; k++) {
			char *how = esc(b[i].users[k].how);
			say("%s: in use by pid %ld (%s): %s", root, b[i].users[k].pid, b[i].users[k].cmd, how);
			free(how);
		}
		if (b[i].found > 0 && force)
			say("%s: --force: going on although a server uses it", root);
		else if (b[i].found > 0)
			say("%s: an Ollama server or runner uses this store: its duplicates are left alone "
			    "(stop it, or --force)", root);
		free(root);
	}
}
