/* open_stores.c - the stores a command audits, opened and scanned, and a
 * MODEL argument resolved in one of them. */
#include "open_stores.h"
#include "cli_machine.h"
#include "cli_multi.h"
#include "findings.h"
#include "usage.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/shared.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void cli_scan_opened(cli *c, opened_store *o, int header_mode)
{
	if (!o->s.has_manifests && !o->s.has_manifests_v2)
		cli_err("%s: no manifests/ directory: no models", o->s.root);
	if (!o->s.has_blobs)
		cli_err("%s: no blobs/ directory: every referenced blob is missing", o->s.root);
	oa_store_set_header_mode(&o->s, header_mode);
	o->s.platform = c->platform;
	oa_store_scan(&o->s);
	cli_account_unreadable(c, &o->s);
	o->ok = true;
	c->stores_read++;
}

opened_store *cli_open_stores(cli *c, size_t *n, int header_mode)
{
	/* Every store named is looked at when a store's blob files may be
	 * shared (shared.h), besides the ones discovery finds. */
	oa_peers_name(c->stores, c->n_stores);
	if (c->all_users)
		return cli_open_discovered(c, n, header_mode);
	const char *how = "--store";
	char *def = NULL;
	size_t count = c->n_stores ? c->n_stores : 1;
	opened_store *v = oa_xcalloc(count, sizeof *v);
	for (size_t i = 0; i < count; i++) {
		const char *path;
		if (c->n_stores) {
			path = c->stores[i];
		} else {
			def = oa_store_default_path(&how);
			struct stat st;
			/* A standard Linux install has its store under the service
			 * user (/usr/share/ollama), none in the caller's home. */
			if (strcmp(how, "default") == 0 && stat(def, &st) < 0) {
				char *found = cli_machine_store(&how);
				if (found) {
					free(def);
					def = found;
				} else {
					how = "default";
				}
			}
			path = def;
		}
		char err[512];
		if (oa_store_open(&v[i].s, path, how, err, sizeof err) < 0) {
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
		cli_scan_opened(c, &v[i], header_mode);
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
