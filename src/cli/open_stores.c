/* open_stores.c - the stores a command audits, opened and scanned, and a
 * MODEL argument resolved in one of them. */
#include "open_stores.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "findings.h"
#include "suggest.h"
#include "usage.h"
#include "ollama_audit/discover.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/shared.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void cli_scan_opened(cli *c, opened_store *o)
{
	if (!o->s.has_manifests && !o->s.has_manifests_v2)
		cli_err("%s: no manifests/ directory: no models", o->s.root);
	if (!o->s.has_blobs)
		cli_err("%s: no blobs/ directory: every referenced blob is missing", o->s.root);
	oa_store_scan(&o->s);
	cli_account_unreadable(c, &o->s);
	o->ok = true;
	c->stores_read++;
}

/* ---- the one store of this machine, and --all-users: discovery ------------ */

/* No --store, no OLLAMA_MODELS and no ~/.ollama/models: the one store this
 * machine has (a Linux service's /usr/share/ollama/.ollama/models), said on
 * stderr, with *source the way discovery found it; NULL when there is none
 * or several (stderr names them). Free the result. */
static char *machine_store(oa_store_source *source)
{
	oa_discovery d;
	oa_discover(&d, NULL, 0);
	size_t n = 0, one = 0;
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].state == OA_CAND_STORE && d.v[i].root) {
			n++;
			one = i;
		}
	char *root = NULL;
	if (n == 1) {
		root = oa_xstrdup(d.v[one].root);
		*source = oa_store_source_of(d.v[one].found[0].source);
		fprintf(stderr, "ollama-audit: reading %s, the one store on this machine (found by %s)\n", root,
		        oa_store_source_name(*source));
	} else if (n > 1) {
		fprintf(stderr, "ollama-audit: %zu stores on this machine; name one with --store DIR (or "
		        "--all-users for all):\n", n);
		for (size_t i = 0; i < d.n; i++)
			if (d.v[i].state == OA_CAND_STORE && d.v[i].root)
				fprintf(stderr, "  %s\n", d.v[i].root);
	}
	oa_discovery_free(&d);
	return root;
}

static char *found_text(const oa_candidate *k)
{
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < k->n_found; i++)
		oa_buf_printf(&b, "%s%s (%s)", i ? ", " : "", k->found[i].source, k->found[i].detail);
	return oa_buf_take(&b);
}

/* The stores opened borrow their candidates' found_by until the run ends. */
static oa_discovery discovered;
/* ... and the peer index of the set until they are closed. */
static oa_peer_index *peers;

static void free_discovered(void)
{
	oa_discovery_free(&discovered);
}

static opened_store *open_discovered(cli *c, size_t *n, int header_mode)
{
	oa_discovery_free(&discovered);
	oa_discovery d;
	oa_discover(&d, c->stores, c->n_stores);
	for (size_t i = 0; i < d.n_notes; i++)
		cli_err("discovery: %s", d.notes[i]);
	opened_store *v = oa_xcalloc(d.n ? d.n : 1, sizeof *v);
	size_t k = 0;
	oa_open_options opt = { c->platform, header_mode, c->jobs, c->no_tag_facts, peers };
	for (size_t i = 0; i < d.n; i++) {
		const oa_candidate *cand = &d.v[i];
		oa_store_source source = oa_store_source_of(cand->found[0].source);
		const char *how = oa_store_source_name(source);
		char *found = found_text(cand);
		switch (cand->state) {
		case OA_CAND_STORE:
		case OA_CAND_DENIED: {
			char err[512];
			if (oa_open_candidate(&v[k].s, cand->root, source, cand, &opt, err, sizeof err) < 0) {
				cli_fail(c, "store-unreadable", cand->root, "%s (store of %s, found by %s): skipped", err,
				         cand->user ? cand->user : "?", found);
				c->exit_code |= OA_EXIT_OPERATIONAL;
				cli_multi_failed(c, cand->root, how);
				oa_store_close(&v[k].s);
				k++;
				break;
			}
			cli_scan_opened(c, &v[k++]);
			break;
		}
		case OA_CAND_MISSING:
		case OA_CAND_NOT_STORE:
			if (oa_candidate_named(cand)) {
				cli_fail(c, "store-unreadable", cand->path, "%s: %s", cand->path,
				         cand->state == OA_CAND_MISSING ? strerror(cand->err)
				                                        : "not an Ollama store (no manifests/ or blobs/)");
				c->exit_code |= OA_EXIT_OPERATIONAL;
			} else if (oa_candidate_configured(cand)) {
				cli_err("note: %s is configured as a store by %s but %s", cand->path, found,
				        cand->state == OA_CAND_MISSING ? "does not exist"
				                                       : "holds no manifests/ or blobs/ yet");
			}
			break;
		case OA_CAND_UNKNOWN:
			cli_err("skipped %s (found by %s): cannot tell whether a store is there: %s", cand->path,
			        found, strerror(cand->err));
			if (oa_candidate_named(cand))
				c->exit_code |= OA_EXIT_OPERATIONAL;
			break;
		}
		free(found);
	}
	discovered = d; /* kept: the stores borrow found_by from it */
	static bool hooked;
	if (!hooked)
		atexit(free_discovered);
	hooked = true;
	if (k == 0) {
		/* Printing nothing and exit 0 would read as "no models anywhere". */
		cli_fail(c, "no-store", NULL, "--all-users: no Ollama store found on this machine%s",
		         c->n_stores ? " (nor at any --store)" : "; `ollama-audit stores --all` shows where it looked");
		c->exit_code |= OA_EXIT_OPERATIONAL;
	}
	*n = k;
	return v;
}

/* ---- the stores named, or the default one ---------------------------------- */

opened_store *cli_open_stores(cli *c, size_t *n, int header_mode)
{
	/* Every store named is looked at when a store's blob files may be
	 * shared (shared.h), besides the ones discovery finds: once for the
	 * set, the first time a store asks. */
	oa_peer_index_free(peers);
	peers = oa_peer_index_new(c->stores, c->n_stores);
	if (c->all_users)
		return open_discovered(c, n, header_mode);
	oa_store_source source = OA_SOURCE_STORE_OPTION;
	oa_open_options opt = { c->platform, header_mode, c->jobs, c->no_tag_facts, peers };
	char *def = NULL;
	size_t count = c->n_stores ? c->n_stores : 1;
	opened_store *v = oa_xcalloc(count, sizeof *v);
	for (size_t i = 0; i < count; i++) {
		const char *path;
		if (c->n_stores) {
			path = c->stores[i];
		} else {
			const char *how;
			def = oa_store_default_path(&how);
			source = oa_store_source_of(how);
			struct stat st;
			/* A standard Linux install has its store under the service
			 * user (/usr/share/ollama), none in the caller's home. */
			if (source == OA_SOURCE_DEFAULT && stat(def, &st) < 0) {
				char *found = machine_store(&source);
				if (found) {
					free(def);
					def = found;
				} else {
					source = OA_SOURCE_DEFAULT;
				}
			}
			path = def;
		}
		const char *how = oa_store_source_name(source);
		char err[512];
		if (oa_open_candidate(&v[i].s, path, source, NULL, &opt, err, sizeof err) < 0) {
			cli_fail(c, "store-unreadable", path, "%s (store from %s)", err, how);
			if (!c->n_stores && !c->all_users)
				fprintf(stderr, "  name one with --store DIR, or run `ollama-audit stores` to find "
				                "the stores on this machine\n");
			c->exit_code |= OA_EXIT_OPERATIONAL;
			cli_multi_failed(c, path, how);
			oa_store_close(&v[i].s);
			continue;
		}
		/* The same store reached by two paths (a symlink, a bind mount) is
		 * audited once, so nothing is counted twice. */
		bool again = false;
		for (size_t k = 0; k < i && !again; k++)
			if (v[k].ok && v[k].s.root_st.st_dev == v[i].s.root_st.st_dev &&
			    v[k].s.root_st.st_ino == v[i].s.root_st.st_ino) {
				cli_err("%s is the same store as %s: audited once", v[i].s.root, v[k].s.root);
				again = true;
			}
		if (again) {
			oa_store_close(&v[i].s);
			continue;
		}
		cli_scan_opened(c, &v[i]);
	}
	free(def);
	*n = count;
	return v;
}

void cli_close_stores(opened_store *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].ok)
			oa_store_close(&v[i].s);
	free(v);
	oa_peer_index_free(peers);
	peers = NULL;
}

long cli_resolve_model(cli *c, const oa_store *s, const char *query)
{
	long idx = oa_store_resolve(s, query);
	if (idx != OA_RESOLVE_AMBIGUOUS_NAME)
		return idx;
	oa_name want;
	oa_name_parse(query, &want);
	oa_buf b;
	oa_buf_init(&b);
	for (size_t i = 0; i < s->n_models; i++)
		if (oa_model_name_is(&s->models[i].name, &want, true))
			oa_buf_printf(&b, "%s%s", b.len ? ", " : "", s->models[i].display);
	char *names = oa_buf_take(&b);
	cli_fail(c, "ambiguous-model", s->root, "%s: ambiguous: %s matches %s; name one in its exact case",
	         s->root, query, names);
	free(names);
	c->exit_code |= OA_EXIT_USAGE;
	return idx;
}

/* The models the MODEL arguments name, each once; false (reported, exit
 * 16) when one names none or several. */
bool cli_resolve_models(cli *c, const oa_store *s, size_t *sel, size_t *ns)
{
	bool bad = false;
	*ns = 0;
	for (size_t a = 0; a < c->n_args; a++) {
		long idx = cli_resolve_model(c, s, c->args[a]);
		if (idx < 0 && idx != OA_RESOLVE_AMBIGUOUS_NAME)
			cli_model_unresolved(c, s, c->args[a], idx);
		bad |= idx < 0;
		bool dup = idx < 0;
		for (size_t k = 0; k < *ns; k++)
			dup |= sel[k] == (size_t)idx;
		if (!dup)
			sel[(*ns)++] = (size_t)idx;
	}
	if (bad)
		c->exit_code |= OA_EXIT_USAGE;
	return !bad;
}
