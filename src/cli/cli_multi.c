/* cli_multi.c - --all-users, --output, --format prometheus and
 * the combined totals of check/verify; see cli_multi.h. */
#include "cli_multi.h"
#include "cli_machine.h"
#include "findings.h"
#include "host.h"
#include "output.h"
#include "usage.h"
#include "ollama_audit/audit_totals.h"
#include "ollama_audit/discover.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/outfile.h"
#include "ollama_audit/report.h"
#include "base/platform.h"
#include "ollama_audit/prometheus.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- users --------------------------------------------------------------- */

const char *cli_store_user(const oa_store *s)
{
	return oa_report_owner(s);
}

/* ---- --all-users ------------------------------------------------------------ */

/* oa_store.how is borrowed: map a discovery source to a static string. */
static const char *how_literal(const char *source)
{
	static const char *known[] = { "--store", "OLLAMA_MODELS", "systemd", "environment-file", "home",
	                               "default" };
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(source, known[i]) == 0)
			return known[i];
	return "discovered";
}

char *cli_machine_store(const char **how)
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
		*how = how_literal(d.v[one].found[0].source);
		fprintf(stderr, "ollama-audit: reading %s, the one store on this machine (found by %s)\n", root,
		        *how);
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

static bool configured(const oa_candidate *k, bool *explicit_store)
{
	bool yes = false;
	*explicit_store = false;
	for (size_t i = 0; i < k->n_found; i++) {
		const char *src = k->found[i].source;
		if (strcmp(src, "--store") == 0)
			*explicit_store = true;
		if (strcmp(src, "home") != 0 && strcmp(src, "default") != 0)
			yes = true;
	}
	return yes;
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

static void free_discovered(void)
{
	oa_discovery_free(&discovered);
}

opened_store *cli_open_discovered(cli *c, size_t *n, int header_mode)
{
	oa_discovery_free(&discovered);
	oa_discovery d;
	oa_discover(&d, c->stores, c->n_stores);
	for (size_t i = 0; i < d.n_notes; i++)
		cli_err("discovery: %s", d.notes[i]);
	opened_store *v = oa_xcalloc(d.n ? d.n : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < d.n; i++) {
		const oa_candidate *cand = &d.v[i];
		bool explicit_store;
		bool conf = configured(cand, &explicit_store);
		const char *how = how_literal(cand->found[0].source);
		char *found = found_text(cand);
		switch (cand->state) {
		case OA_CAND_STORE:
		case OA_CAND_DENIED: {
			char err[512];
			if (oa_store_open(&v[k].s, cand->root, how, err, sizeof err) < 0) {
				cli_fail(c, "store-unreadable", cand->root, "%s (store of %s, found by %s): skipped", err,
				         cand->user ? cand->user : "?", found);
				c->exit_code |= OA_EXIT_OPERATIONAL;
				cli_multi_failed(c, cand->root, how);
				oa_store_close(&v[k].s);
				k++;
				break;
			}
			if (!v[k].s.has_manifests && !v[k].s.has_manifests_v2)
				cli_err("%s: no manifests/ directory: no models", v[k].s.root);
			if (!v[k].s.has_blobs)
				cli_err("%s: no blobs/ directory: every referenced blob is missing", v[k].s.root);
			oa_store_set_header_mode(&v[k].s, header_mode);
			v[k].s.platform = c->platform;
			v[k].s.found = cand->found;
			v[k].s.n_found = cand->n_found;
			oa_store_scan(&v[k].s);
			cli_account_unreadable(c, &v[k].s);
			v[k].ok = true;
			c->stores_read++;
			k++;
			break;
		}
		case OA_CAND_MISSING:
		case OA_CAND_NOT_STORE:
			if (explicit_store) {
				cli_fail(c, "store-unreadable", cand->path, "%s: %s", cand->path,
				         cand->state == OA_CAND_MISSING ? strerror(cand->err)
				                                        : "not an Ollama store (no manifests/ or blobs/)");
				c->exit_code |= OA_EXIT_OPERATIONAL;
			} else if (conf) {
				cli_err("note: %s is configured as a store by %s but %s", cand->path, found,
				        cand->state == OA_CAND_MISSING ? "does not exist"
				                                       : "holds no manifests/ or blobs/ yet");
			}
			break;
		case OA_CAND_UNKNOWN:
			cli_err("skipped %s (found by %s): cannot tell whether a store is there: %s", cand->path,
			        found, strerror(cand->err));
			if (explicit_store)
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

/* ---- totals and metrics ---------------------------------------------------------- */

static struct {
	oa_audit_totals totals;
	oa_prom *prom;
	/* --output */
	oa_outfile out;
	bool out_open;
	int saved_stdout;
} M = { .saved_stdout = -1 };

/* The metrics of this job: ollama_check_..., ollama_verify_..., ollama_du_...;
 * the stores inventory keeps ollama_store_... (prometheus.h). */
static oa_prom *prom(const cli *c)
{
	if (!M.prom)
		M.prom = oa_prom_new_job(c && strcmp(c->cmd, "stores") != 0 ? c->cmd : NULL);
	return M.prom;
}

/* Whether the scan could read everything it tried (for the metrics). */
static bool store_readable(const oa_store *s)
{
	for (size_t i = 0; i < s->findings.n; i++)
		if (s->findings.v[i].id == OA_FINDING_UNREADABLE)
			return false;
	return true;
}

void cli_multi_failed(cli *c, const char *path, const char *how)
{
	char user[64] = "";
	struct stat st;
	if (stat(path, &st) == 0)
		oa_user_name(st.st_uid, user, sizeof user);
	oa_audit_totals_add(&M.totals, user, NULL);
	if (c->format != OUT_PROMETHEUS)
		return;
	oa_prom_store info = { .user = user, .source = how, .timestamp = oa_wall_now() };
	oa_prom_add_failed(prom(c), path, &info);
}

void cli_multi_store_done(cli *c, oa_store *s, const oa_audit_summary *sum)
{
	oa_audit_totals_add(&M.totals, cli_store_user(s), sum);
	if (c->format != OUT_PROMETHEUS)
		return;
	oa_prom_store info = {
		.user = cli_store_user(s),
		.source = s->how,
		.timestamp = oa_wall_now(),
		.duration = s->scan_seconds + (sum->verify ? sum->seconds : 0),
		.success = store_readable(s) && !sum->interrupted,
		.verified = sum->verify,
		.verified_bytes = sum->bytes_hashed,
	};
	oa_prom_add_store(prom(c), s, &info);
}

/* Add a ready-made store's metrics (the stores and du commands). */
void cli_multi_prom_store(cli *c, oa_store *s, double seconds, const oa_du_store *du)
{
	oa_prom_store info = { .user = cli_store_user(s), .source = s->how, .timestamp = oa_wall_now(),
	                       .duration = seconds, .success = store_readable(s),
	                       .no_findings = strcmp(c->cmd, "du") == 0, .du = du };
	oa_prom_add_store(prom(c), s, &info);
}

void cli_multi_prom_add(const char *metric, double value)
{
	oa_prom_add(prom(NULL), metric, value, (const char *)NULL);
}

/* "user alice: 2 stores, 3 models, 1 error, 0 warnings, 4.1 GB verified" */
static void print_total(const cli *c, const oa_audit_total *x)
{
	char hashed[64] = "";
	if (M.totals.verify) {
		char b[32];
		oa_format_size(x->bytes_hashed, c->units, b, sizeof b);
		snprintf(hashed, sizeof hashed, ", %s verified", b);
	}
	char label[96];
	if (x->user)
		snprintf(label, sizeof label, "user %s", x->user[0] ? x->user : "?");
	else
		snprintf(label, sizeof label, "all stores");
	char failed[48] = "";
	if (x->unreadable_stores)
		snprintf(failed, sizeof failed, " (%lld unreadable)", x->unreadable_stores);
	printf("%s: %lld store%s%s, %lld model%s, %lld error%s, %lld warning%s%s\n", cli_safe(label), x->stores,
	       x->stores == 1 ? "" : "s", failed, x->models, x->models == 1 ? "" : "s", x->errors,
	       x->errors == 1 ? "" : "s", x->warnings, x->warnings == 1 ? "" : "s", hashed);
}

/* check/verify over several stores: per user, then all of them. */
static void print_totals(cli *c)
{
	const oa_audit_totals *t = &M.totals;
	bool check_like = strcmp(c->cmd, "check") == 0 || strcmp(c->cmd, "verify") == 0;
	if (!check_like || t->all.stores < 2 || (c->format != OUT_TABLE && c->format != OUT_NDJSON))
		return;
	if (c->format == OUT_TABLE)
		printf("\n");
	for (size_t j = 0; j <= t->n_users; j++) {
		const oa_audit_total *x = j < t->n_users ? &t->users[j] : &t->all;
		if (c->format == OUT_NDJSON)
			cli_put_record(oa_audit_total_record(t, x, cli_host()));
		else
			print_total(c, x);
	}
}

/* ---- what the tool writes never lands in a store ------------------------------------------ */

/* Every store this command may audit, resolved once: each --store (or the
 * default store) as oa_store_open() resolves it, and with --all-users every
 * store discovery finds. */
static char **store_roots(const cli *c, size_t *n)
{
	static char **roots;
	static size_t nroots;
	static bool done;
	if (done) {
		*n = nroots;
		return roots;
	}
	done = true;
	const char *how = "--store";
	char *def = c->n_stores ? NULL : oa_store_default_path(&how);
	size_t count = c->n_stores ? c->n_stores : 1;
	for (size_t i = 0; i < count; i++) {
		oa_store s;
		char err[512];
		if (oa_store_open(&s, c->n_stores ? c->stores[i] : def, how, err, sizeof err) == 0) {
			roots = oa_xreallocarray(roots, nroots + 1, sizeof *roots);
			roots[nroots++] = oa_xstrdup(s.root);
		}
		oa_store_close(&s);
	}
	free(def);
	if (c->all_users) {
		oa_discovery d;
		oa_discover(&d, c->stores, c->n_stores);
		for (size_t i = 0; i < d.n; i++) {
			if (!d.v[i].root)
				continue;
			roots = oa_xreallocarray(roots, nroots + 1, sizeof *roots);
			roots[nroots++] = oa_xstrdup(d.v[i].root);
		}
		oa_discovery_free(&d);
	}
	*n = nroots;
	return roots;
}

bool cli_refuse_store_path(const cli *c, const char *opt, const char *path)
{
	size_t n;
	char **roots = store_roots(c, &n);
	for (size_t i = 0; i < n; i++) {
		if (oa_outfile_inside(path, roots[i])) {
			cli_err("%s %s is inside the store %s; the tool never writes to a store", opt, path,
			        roots[i]);
			return true;
		}
	}
	return false;
}

/* ---- --output and the end of a command ------------------------------------------------- */

int cli_output_begin(cli *c)
{
	if (c->all_users && (strcmp(c->cmd, "rm") == 0 || strcmp(c->cmd, "restore") == 0)) {
		cli_err("--all-users is not an option of %s: name the store with --store", c->cmd);
		return OA_EXIT_USAGE;
	}
	if (c->hardlink && strcmp(c->cmd, "dedupe") != 0) {
		cli_err("--hardlink is an option of dedupe");
		return OA_EXIT_USAGE;
	}
	if (c->duplicates && strcmp(c->cmd, "du") != 0) {
		cli_err("--duplicates is an option of du");
		return OA_EXIT_USAGE;
	}
	if (!c->output)
		return 0;
	if (!*c->output) {
		cli_err("--output needs a file name");
		return OA_EXIT_USAGE;
	}
	if (cli_refuse_store_path(c, "--output", c->output))
		return OA_EXIT_USAGE;
	char err[512];
	if (oa_outfile_open(&M.out, c->output, 0644, 0, err, sizeof err) < 0) {
		cli_err("--output %s: %s", c->output, err);
		return OA_EXIT_OPERATIONAL;
	}
	fflush(stdout);
	M.saved_stdout = dup(STDOUT_FILENO);
	if (M.saved_stdout < 0 || dup2(M.out.fd, STDOUT_FILENO) < 0) {
		cli_err("--output: %s", strerror(errno));
		oa_outfile_abort(&M.out);
		return OA_EXIT_OPERATIONAL;
	}
	M.out_open = true;
	return 0;
}

int cli_output_end(cli *c, int rc)
{
	if (M.prom && !(rc & OA_EXIT_USAGE))
		oa_prom_write(M.prom, stdout);
	if (!(rc & OA_EXIT_USAGE))
		print_totals(c);
	oa_prom_free(M.prom);
	M.prom = NULL;
	oa_audit_totals_free(&M.totals);
	if (!M.out_open)
		return rc;
	M.out_open = false;
	bool ok = fflush(stdout) == 0 && !ferror(stdout);
	int e = errno;
	dup2(M.saved_stdout, STDOUT_FILENO);
	close(M.saved_stdout);
	clearerr(stdout);
	char err[512];
	if (!ok) {
		cli_err("--output %s: write error: %s", c->output, strerror(e));
		oa_outfile_abort(&M.out);
		rc |= OA_EXIT_OPERATIONAL;
	} else if (rc & OA_EXIT_USAGE) {
		oa_outfile_abort(&M.out); /* nothing was audited: keep the previous file */
	} else if (oa_outfile_commit(&M.out, err, sizeof err) < 0) {
		cli_err("--output %s: %s", c->output, err);
		rc |= OA_EXIT_OPERATIONAL;
	}
	return rc;
}
