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
#include "ollama_audit/metrics.h"
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
	oa_store_metrics m;
	oa_store_metrics_compute(s, oa_wall_now(), &m);
	info.metrics = &m;
	oa_prom_add_store(prom(c), s, &info);
	oa_store_metrics_free(&m);
}

/* Add a ready-made store's metrics (the stores and du commands). */
void cli_multi_prom_store(cli *c, const oa_store *s, double seconds, const oa_store_metrics *m,
                          const oa_last_used *lu)
{
	oa_prom_store info = { .user = cli_store_user(s), .source = s->how, .timestamp = oa_wall_now(),
	                       .duration = seconds, .success = store_readable(s),
	                       .no_findings = strcmp(c->cmd, "du") == 0, .metrics = m, .last_used = lu };
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
	printf("%s: %lld store%s%s, %lld model%s, %lld error%s, %lld warning%s%s\n", oa_text_safe(label), x->stores,
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

static void add_root(char ***roots, size_t *n, const char *path, const char *how)
{
	oa_store s;
	char err[512];
	if (oa_open_candidate(&s, path, oa_store_source_of(how), NULL, NULL, err, sizeof err) == 0) {
		*roots = oa_xreallocarray(*roots, *n + 1, sizeof **roots);
		(*roots)[(*n)++] = oa_xstrdup(s.root);
	}
	oa_store_close(&s);
}

/* Every store a file the tool writes could land in, resolved once: each
 * --store, the default store and, with `everywhere` (a path the user
 * named), every store discovery finds (another user's, the service's),
 * whatever the command audits. */
static char **store_roots(const cli *c, bool everywhere, size_t *n)
{
	static char **roots;
	static size_t nroots, near; /* roots[0..near) are the command line's and the default */
	static bool done, found;
	if (!done) {
		done = true;
		for (size_t i = 0; i < c->n_stores; i++)
			add_root(&roots, &nroots, c->stores[i], "--store");
		const char *how = "--store";
		char *def = oa_store_default_path(&how);
		if (def)
			add_root(&roots, &nroots, def, how);
		free(def);
		near = nroots;
	}
	if (everywhere && !found) {
		found = true;
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
	*n = everywhere ? nroots : near;
	return roots;
}

/* The root of the store (of those store_roots names) that path lies in, or NULL. */
static const char *store_holding(const cli *c, bool everywhere, const char *path)
{
	size_t n;
	char **roots = store_roots(c, everywhere, &n);
	for (size_t i = 0; i < n; i++)
		if (oa_outfile_inside(path, roots[i]))
			return roots[i];
	return NULL;
}

bool cli_refuse_store_path(const cli *c, const char *opt, const char *path)
{
	const char *root = store_holding(c, true, path);
	if (root)
		cli_err("%s %s is inside the store %s; the tool never writes to a store", opt, path, root);
	return root != NULL;
}

bool cli_default_cache_in_store(const cli *c, const char *path)
{
	static bool said;
	const char *root = store_holding(c, false, path);
	if (root && !said)
		cli_err("verification cache: the default %s lies inside the store %s: going on without a cache "
		        "(the tool never writes to a store; point XDG_CACHE_HOME elsewhere)", path, root);
	said |= root != NULL;
	return root != NULL;
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
	if (!c->output || strcmp(c->cmd, "export") == 0) /* export's -o is where its bundle goes */
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
