/* log_usage.c - what the server's logs say about each model of a store
 * (log_usage.h): LAST USED, failures, --unused-for, and check's findings. */
#include "ollama_audit/log_usage.h"
#include "ollama_audit/finding.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/manifest_list.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A time in a finding's message, which a person reads: to the second. */
static void utc_time(int64_t ns, char *buf, size_t len)
{
	oa_iso8601((time_t)(ns / 1000000000), 0, buf, len);
}

/* Per model its newest failed load, "TIME: reason"; h is newest first. */
static void usage_failures(oa_log_usage *u, const oa_history *h, const oa_store *s)
{
	u->failure = oa_xcalloc(s->n_models + 1, sizeof *u->failure);
	u->n_failure = s->n_models;
	for (size_t i = 0; i < h->n; i++) {
		const oa_load *ld = &h->v[i];
		if (ld->result != OA_LOAD_FAILED)
			continue;
		char when[48] = "at an unknown time";
		if (ld->has_time)
			utc_time(ld->time_ns, when, sizeof when);
		for (size_t k = 0; k < ld->n_models; k++)
			if (ld->models[k] < s->n_models && !u->failure[ld->models[k]])
				u->failure[ld->models[k]] = oa_xasprintf("%s: %s", when, ld->reason ? ld->reason : "failed");
	}
	for (size_t i = 0; i < s->n_models; i++) { /* a list's other rows: their tag's failure */
		size_t tag = oa_store_row_tag(s, i);
		if (tag != i && !u->failure[i] && u->failure[tag])
			u->failure[i] = oa_xstrdup(u->failure[tag]);
	}
}

void oa_log_usage_of(oa_log_usage *u, const oa_history *h, const oa_store *s, char **sources, size_t n_sources)
{
	memset(u, 0, sizeof *u);
	u->have_logs = n_sources > 0;
	u->logs_known = h->any_time;
	u->logs_from = h->first_ns;
	u->logs_to = h->last_ns;
	u->last_ns = oa_xcalloc(s->n_models + 1, sizeof *u->last_ns);
	u->loaded = oa_xcalloc(s->n_models + 1, sizeof *u->loaded);
	for (size_t i = 0; i < s->n_models; i++)
		u->loaded[i] = oa_history_last_load(h, oa_store_row_tag(s, i), &u->last_ns[i]);
	usage_failures(u, h, s);
	u->sources = sources;
	u->n_sources = n_sources;
	u->server_version = h->started_version ? oa_xstrdup(h->started_version) : NULL;
}

void oa_log_usage_free(oa_log_usage *u)
{
	free(u->last_ns);
	free(u->loaded);
	oa_free_names(u->sources, u->n_sources);
	oa_free_names(u->failure, u->n_failure);
	free(u->server_version);
	memset(u, 0, sizeof *u);
}

bool oa_log_usage_last_use(const oa_log_usage *u, const oa_store *s, size_t idx, int64_t *ns)
{
	if (!u || !u->have_logs)
		return false; /* without logs nothing is taken as unused */
	/* A pull (the manifest written) is a use too: a model pulled an hour
	 * ago and not loaded yet is new, not unused. */
	*ns = s->models[idx].st.mtime_ns;
	if (u->loaded[idx] && u->last_ns[idx] > *ns)
		*ns = u->last_ns[idx];
	return true;
}

bool oa_log_usage_unused(const oa_log_usage *u, const oa_store *s, size_t idx, int64_t cutoff_ns)
{
	int64_t last;
	return oa_log_usage_last_use(u, s, idx, &last) && last < cutoff_ns;
}

/* The engine a load ran on, as the store names what its files select. */
static enum oa_runner store_runner(enum oa_log_runner r)
{
	return r == OA_LR_MLX ? OA_RUNNER_MLX : r == OA_LR_UNKNOWN ? OA_RUNNER_NONE : OA_RUNNER_LLAMACPP;
}

static void model_findings(oa_store *s, size_t idx, const oa_history *h)
{
	const oa_model *m = &s->models[idx];
	const oa_load *latest = NULL, *own = NULL;
	for (size_t i = 0; i < h->n && !(latest && own); i++)
		for (size_t k = 0; k < h->v[i].n_models; k++)
			if (h->v[i].models[k] == idx) {
				if (!latest)
					latest = &h->v[i];
				/* A blob several tags share cannot say which one ran. */
				if (!own && h->v[i].n_models == 1 && h->v[i].runner != OA_LR_UNKNOWN)
					own = &h->v[i];
			}
	char when[48];
	if (latest && latest->result == OA_LOAD_FAILED) {
		utc_time(latest->time_ns, when, sizeof when);
		oa_findings_add(&s->findings, OA_FINDING_LOAD_FAILED, m->display, NULL, NULL,
		                "the latest load in the logs (%s, %s, %s:%lu) failed: %s",
		                latest->has_time ? when : "time unknown", oa_log_runner_name(latest->runner),
		                latest->source, latest->line, latest->reason ? latest->reason : "?");
	}
	if (own && m->manifest_ok && (m->runner == OA_RUNNER_LLAMACPP || m->runner == OA_RUNNER_MLX) &&
	    store_runner(own->runner) != m->runner) {
		utc_time(own->time_ns, when, sizeof when);
		oa_findings_add(&s->findings, OA_FINDING_RUNNER_CHANGED, m->display, NULL, NULL,
		                "the logs show it last ran on %s (%s); its files select %s on %s now: "
		                "pulled again as another child, or logged on another platform",
		                oa_log_runner_name(own->runner), own->has_time ? when : "time unknown",
		                oa_runner_name(m->runner), s->platform ? s->platform : oa_platform_default());
	}
}

void oa_history_findings(const oa_history *h, oa_store *s)
{
	for (size_t i = 0; h->n && i < s->n_models; i++)
		if (!s->models[i].anchor)
			model_findings(s, i, h);
}
