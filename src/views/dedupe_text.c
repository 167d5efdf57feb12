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

static void put_action(const oa_text_style *st, FILE *out, oa_store *const *sv, const char *const *users,
                       const oa_dedupe_action *a)
{
	char b[32];
	oa_format_size(a->bytes, st->units, b, sizeof b);
	char *sr = esc(sv[a->src_store]->root), *su = esc(users[a->src_store]);
	char *dr = esc(sv[a->dst_store]->root), *du = esc(users[a->dst_store]);
	fprintf(out, "%-19s %-8s %10s  sha256:%.12s  %s (%s) -> %s (%s)\n", oa_dedupe_status_name(a->status),
	        oa_dedupe_how_name(a->how), b, a->hex, sr, su, dr, du);
	free(sr);
	free(su);
	free(dr);
	free(du);
	if (a->note[0]) {
		char *note = esc(a->note);
		fprintf(out, "%-19s %s\n", "", note);
		free(note);
	}
}

void oa_dedupe_text(const oa_text_style *st, FILE *out, oa_store *const *sv, const char *const *users,
                    const oa_dedupe_plan *p, const oa_dedupe_outcome *o, bool apply)
{
	for (size_t i = 0; i < p->n; i++)
		put_action(st, out, sv, users, &p->v[i]);
	char b1[32], b2[32];
	oa_format_size(p->bytes, st->units, b1, sizeof b1);
	oa_format_size(o->freed, st->units, b2, sizeof b2);
	const char *how = o->hardlink ? "hard link" : "reflink";
	if (!apply)
		fprintf(out, "%sdry run: %zu duplicate%s would be replaced by %ss, freeing %s.%s\n", p->n ? "\n" : "",
		        o->planned, o->planned == 1 ? "" : "s", how, b1, o->planned ? " Re-run with --apply to do it." : "");
	else
		fprintf(out, "%s%zu of %zu replaced by %ss, %s freed\n", p->n ? "\n" : "", o->done, o->planned, how, b2);
	size_t unsupported = o->counts[OA_DD_UNSUPPORTED], junk = o->counts[OA_DD_JUNK];
	if (unsupported) {
		oa_format_size(o->hardlink_planned_bytes, st->units, b1, sizeof b1);
		fprintf(out, "%zu cannot be reflinked: the filesystem cannot (tested). `dedupe --hardlink` would "
		        "replace %zu (between stores of one owner), freeing %s.\n",
		        unsupported, o->hardlink_planned, b1);
	}
	if (junk)
		fprintf(out, "%zu cop%s that nothing references left alone: `prune` removes %s.\n", junk,
		        junk == 1 ? "y" : "ies", junk == 1 ? "it" : "them");
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
