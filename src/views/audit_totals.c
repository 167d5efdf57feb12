/* audit_totals.c - a store's check/verify summary as JSON, and the totals
 * per user and over every store (audit_totals.h). */
#include "ollama_audit/audit_totals.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

json_t *oa_audit_summary_json(const oa_audit_summary *s)
{
	json_t *o;
	if (s->verify)
		o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:f,s:b,s:b}", "models", (json_int_t)s->models, "blobs",
		              (json_int_t)s->blobs, "bytes_hashed", (json_int_t)s->bytes_hashed,
		              "skipped_unchanged", (json_int_t)s->skipped_unchanged, "not_done",
		              (json_int_t)s->not_done, "seconds", s->seconds, "interrupted", s->interrupted,
		              "timed_out", s->timed_out);
	else
		o = json_pack("{s:I,s:I,s:f,s:b}", "models", (json_int_t)s->models, "blob_files",
		              (json_int_t)s->blob_files, "seconds", s->seconds, "prune_blocked", s->prune_blocked);
	json_object_set_new(o, "errors", json_integer((json_int_t)s->errors));
	json_object_set_new(o, "warnings", json_integer((json_int_t)s->warnings));
	json_object_set_new(o, "infos", json_integer((json_int_t)s->infos));
	return o;
}

void oa_audit_totals_init(oa_audit_totals *t)
{
	memset(t, 0, sizeof *t);
}

static oa_audit_total *user_total(oa_audit_totals *t, const char *user)
{
	for (size_t i = 0; i < t->n_users; i++)
		if (strcmp(t->users[i].user, user) == 0)
			return &t->users[i];
	t->users = oa_xreallocarray(t->users, t->n_users + 1, sizeof *t->users);
	oa_audit_total *u = &t->users[t->n_users++];
	memset(u, 0, sizeof *u);
	u->user = oa_xstrdup(user);
	return u;
}

static void add_to(oa_audit_total *x, const oa_audit_summary *s)
{
	x->stores++;
	if (!s) {
		x->unreadable_stores++;
		return;
	}
	x->models += (long long)s->models;
	x->errors += (long long)s->errors;
	x->warnings += (long long)s->warnings;
	x->bytes_hashed += s->bytes_hashed;
}

void oa_audit_totals_add(oa_audit_totals *t, const char *user, const oa_audit_summary *s)
{
	t->verify = t->verify || (s && s->verify);
	add_to(user_total(t, user ? user : ""), s);
	add_to(&t->all, s);
}

void oa_audit_totals_free(oa_audit_totals *t)
{
	for (size_t i = 0; i < t->n_users; i++)
		free(t->users[i].user);
	free(t->users);
	oa_audit_totals_init(t);
}

json_t *oa_audit_total_record(const oa_audit_totals *t, const oa_audit_total *x, const char *host)
{
	json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I}", "type", x->user ? "user_total" : "total",
	                        "host", host, "stores", (json_int_t)x->stores, "unreadable_stores",
	                        (json_int_t)x->unreadable_stores, "models", (json_int_t)x->models, "errors",
	                        (json_int_t)x->errors, "warnings", (json_int_t)x->warnings);
	if (x->user)
		json_object_set_new(rec, "user", json_string(x->user));
	if (t->verify)
		json_object_set_new(rec, "bytes_hashed", json_integer((json_int_t)x->bytes_hashed));
	return rec;
}
