/* prometheus.c - store metrics for node_exporter's textfile collector; see prometheus.h. */
#include "ollama_audit/prometheus.h"
#include "ollama_audit/du.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/reclaim.h"
#include "base/platform.h"
#include "ollama_audit/prune.h"
#include "base/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The metrics, in output order. HELP strings are fixed: never put a store,
 * host or count in them (node_exporter drops a metric whose HELP differs
 * between files). */
static const struct family {
	const char *name;
	const char *help;
} families[] = {
	{ "ollama_store_info", "Ollama model store on this host (always 1); source says how it was found." },
	{ "ollama_store_models", "Models (manifests) in the store, by format." },
	{ "ollama_store_blobs", "Entries under blobs/, by state (referenced, orphaned, partial, temp, foreign)." },
	{ "ollama_store_blobs_bytes", "Allocated bytes of the entries under blobs/, by state; each inode counted once per store." },
	{ "ollama_store_blobs_apparent_bytes", "Apparent bytes (st_size) of the entries under blobs/, by state; each inode counted once per store." },
	{ "ollama_store_findings", "Audit findings, by code and severity." },
	{ "ollama_store_findings_by_severity", "Audit findings, by severity; 0 when there are none." },
	{ "ollama_store_reclaimable_bytes", "Allocated bytes prune would free now (orphans, partials, temps older than 1 h)." },
	{ "ollama_store_model_info", "Model metadata (always 1)." },
	{ "ollama_store_model_size_bytes", "Model size as ollama list shows it (sum of the manifest's layer sizes)." },
	{ "ollama_store_model_unique_bytes", "Allocated bytes only this model uses (freed if it alone were removed)." },
	{ "ollama_store_last_audit_timestamp_seconds", "Unix time the last audit of the store finished." },
	{ "ollama_store_audit_duration_seconds", "Seconds the last audit of the store took." },
	{ "ollama_store_audit_success", "1 if the last audit read the whole store, 0 if it could not open it or parts were unreadable." },
	{ "ollama_store_verified_bytes", "Bytes whose sha256 the last verify computed." },
	{ "ollama_store_quarantine_bytes", "Allocated bytes a quarantine of the store holds (prune/rm --quarantine; restore --empty frees them)." },
	{ "ollama_store_quarantine_entries", "Entries a quarantine of the store holds." },
	{ "ollama_store_duplicate_bytes", "Allocated bytes that blobs duplicated across the stores of this host cost (one copy each kept)." },
};
#define N_FAMILIES (sizeof families / sizeof families[0])

typedef struct sample {
	char *labels; /* "{a=\"b\",...}" or "" */
	double value;
} sample;

#define STORE_PREFIX "ollama_store_"

struct oa_prom {
	sample *s[N_FAMILIES];
	size_t n[N_FAMILIES];
	char prefix[32]; /* replaces STORE_PREFIX in every name on output */
};

oa_prom *oa_prom_new(void)
{
	return oa_prom_new_job(NULL);
}

oa_prom *oa_prom_new_job(const char *job)
{
	oa_prom *p = oa_xcalloc(1, sizeof(oa_prom));
	if (job && strlen(job) < sizeof p->prefix - 9)
		snprintf(p->prefix, sizeof p->prefix, "ollama_%s_", job);
	else
		snprintf(p->prefix, sizeof p->prefix, "%s", STORE_PREFIX);
	return p;
}

void oa_prom_free(oa_prom *p)
{
	if (!p)
		return;
	for (size_t f = 0; f < N_FAMILIES; f++) {
		for (size_t i = 0; i < p->n[f]; i++)
			free(p->s[f][i].labels);
		free(p->s[f]);
	}
	free(p);
}

static bool valid_utf8(const unsigned char *p)
{
	size_t n = strlen((const char *)p);
	for (size_t i = 0; i < n;) {
		size_t len = oa_utf8_seq(p + i, n - i);
		if (!len)
			return false;
		i += len;
	}
	return true;
}

/* Label values: escape \, " and newline. Bytes that are not valid UTF-8
 * (a path can hold any) make the whole value go through oa_escape first
 * (\xNN), so the file is always valid UTF-8. */
static void add_label_value(oa_buf *b, const char *v)
{
	char *e = valid_utf8((const unsigned char *)v) ? NULL : oa_escape(v, strlen(v));
	for (const char *q = e ? e : v; *q; q++) {
		if (*q == '\\')
			oa_buf_adds(b, "\\\\");
		else if (*q == '"')
			oa_buf_adds(b, "\\\"");
		else if (*q == '\n')
			oa_buf_adds(b, "\\n");
		else
			oa_buf_addc(b, *q);
	}
	free(e);
}

static void vadd(oa_prom *p, const char *metric, double value, va_list ap)
{
	size_t f = 0;
	while (f < N_FAMILIES && strcmp(families[f].name, metric) != 0)
		f++;
	if (f == N_FAMILIES)
		return;
	oa_buf b;
	oa_buf_init(&b);
	const char *k;
	bool first = true;
	while ((k = va_arg(ap, const char *))) {
		const char *v = va_arg(ap, const char *);
		oa_buf_addc(&b, first ? '{' : ',');
		first = false;
		oa_buf_adds(&b, k);
		oa_buf_adds(&b, "=\"");
		add_label_value(&b, v ? v : "");
		oa_buf_addc(&b, '"');
	}
	if (!first)
		oa_buf_addc(&b, '}');
	char *labels = oa_buf_take(&b);
	for (size_t i = 0; i < p->n[f]; i++)
		if (strcmp(p->s[f][i].labels, labels) == 0) {
			free(labels); /* one series once */
			return;
		}
	p->s[f] = oa_xreallocarray(p->s[f], p->n[f] + 1, sizeof *p->s[f]);
	p->s[f][p->n[f]++] = (sample){ labels, value };
}

void oa_prom_add(oa_prom *p, const char *metric, double value, ...)
{
	va_list ap;
	va_start(ap, value);
	vadd(p, metric, value, ap);
	va_end(ap);
}

static void write_value(FILE *out, double v)
{
	if (isnan(v))
		fputs("NaN", out);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", out);
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.6f", v);
}

void oa_prom_write(const oa_prom *p, FILE *out)
{
	for (size_t f = 0; f < N_FAMILIES; f++) {
		if (!p->n[f])
			continue;
		const char *rest = families[f].name + strlen(STORE_PREFIX);
		fprintf(out, "# HELP %s%s %s\n# TYPE %s%s gauge\n", p->prefix, rest, families[f].help, p->prefix,
		        rest);
		for (size_t i = 0; i < p->n[f]; i++) {
			fprintf(out, "%s%s%s ", p->prefix, rest, p->s[f][i].labels);
			write_value(out, p->s[f][i].value);
			fputc('\n', out);
		}
	}
}

/* ---- a store ---------------------------------------------------------------- */

enum { ST_REFERENCED, ST_ORPHANED, ST_PARTIAL, ST_TEMP, ST_FOREIGN, ST_COUNT };
static const char *state_names[ST_COUNT] = { "referenced", "orphaned", "partial", "temp", "foreign" };

static int blob_state(const oa_blob *b)
{
	switch (b->cls) {
	case OA_BLOB_VALID: return b->refs ? ST_REFERENCED : ST_ORPHANED;
	case OA_BLOB_PARTIAL:
	case OA_BLOB_PARTIAL_PART: return ST_PARTIAL;
	case OA_BLOB_TMP:
	case OA_BLOB_CREATE_TEMP:
	case OA_BLOB_QUANT_TEMP:
	case OA_BLOB_TEMP_DIR: return ST_TEMP;
	default: return ST_FOREIGN; /* foreign files, other directories, legacy sha256: names */
	}
}

const char *oa_prom_blob_state(const oa_blob *b)
{
	return state_names[blob_state(b)];
}

/* The state of each top-level entry the walker found in blobs/ (both lists
 * are in strcmp order); a name the scan did not see is foreign. */
static int *top_states(const oa_store *s, const oa_usage *u)
{
	int *v = oa_xcalloc(u->n_tops ? u->n_tops : 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < u->n_tops; i++) {
		while (k < s->n_blobs && strcmp(s->blobs[k].name, u->tops[i]) < 0)
			k++;
		v[i] = k < s->n_blobs && strcmp(s->blobs[k].name, u->tops[i]) == 0 ? blob_state(&s->blobs[k])
		                                                                    : ST_FOREIGN;
	}
	return v;
}

/* Models by format. */
static void add_models(oa_prom *p, oa_store *s, const char *st, const char *us)
{
	enum { NF = OA_FORMAT_MIXED + 1 };
	size_t by_format[NF] = { 0 };
	const char *fmt_names[NF] = { NULL };
	size_t invalid = 0;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (m->anchor || m->sibling) /* a legacy anchor, a list's other child: not a model of its own */
			continue;
		if (!m->manifest_ok) {
			invalid++;
			continue;
		}
		size_t f = (size_t)m->format < NF ? (size_t)m->format : 0;
		by_format[f]++;
	}
	for (size_t f = 0; f < NF; f++)
		fmt_names[f] = oa_format_name((enum oa_format)f);
	for (size_t f = 0; f < NF; f++)
		if (by_format[f] || f == OA_FORMAT_GGUF || f == OA_FORMAT_SAFETENSORS)
			oa_prom_add(p, "ollama_store_models", (double)by_format[f], "store", st, "user", us, "format",
			            fmt_names[f], (const char *)NULL);
	if (invalid)
		oa_prom_add(p, "ollama_store_models", (double)invalid, "store", st, "user", us, "format",
		            "invalid", (const char *)NULL);
}

/* Blobs and bytes by state: every inode once. */
static void add_blobs(oa_prom *p, oa_store *s, const char *st, const char *us)
{
	uint64_t count[ST_COUNT] = { 0 }, alloc[ST_COUNT] = { 0 }, apparent[ST_COUNT] = { 0 };
	for (size_t i = 0; i < s->n_blobs; i++)
		count[blob_state(&s->blobs[i])]++;
	/* Bytes: du's walker (lstat, recursive, directories included, a symlink
	 * as itself), so the states sum to `du -s blobs`. An inode counts under
	 * the first top-level entry (in name order) it lies under; a referenced
	 * one wins; blobs/ itself counts as referenced (the store needs it). */
	oa_usage u;
	oa_usage_blobs(s, &u);
	int *tst = top_states(s, &u);
	for (size_t i = 0; i < u.n;) {
		size_t j = i;
		int state = -1;
		for (; j < u.n && u.v[j].dev == u.v[i].dev && u.v[j].ino == u.v[i].ino; j++) {
			int sj = u.v[j].top == OA_USAGE_ROOT ? ST_REFERENCED : tst[u.v[j].top];
			if (state < 0 || sj == ST_REFERENCED)
				state = sj;
		}
		alloc[state] += u.v[i].allocated;
		apparent[state] += u.v[i].apparent;
		i = j;
	}
	free(tst);
	oa_usage_free(&u);
	for (int k = 0; k < ST_COUNT; k++) {
		oa_prom_add(p, "ollama_store_blobs", (double)count[k], "store", st, "user", us, "state",
		            state_names[k], (const char *)NULL);
		oa_prom_add(p, "ollama_store_blobs_bytes", (double)alloc[k], "store", st, "user", us, "state",
		            state_names[k], (const char *)NULL);
		oa_prom_add(p, "ollama_store_blobs_apparent_bytes", (double)apparent[k], "store", st, "user",
		            us, "state", state_names[k], (const char *)NULL);
	}
}

/* Findings by severity, each present (at 0 when none) so that an alert on
 * "> 0" needs no absent(); then by code and severity. */
static void add_findings(oa_prom *p, oa_store *s, const char *st, const char *us)
{
	for (int sev = OA_SEV_ERROR; sev >= OA_SEV_INFO; sev--)
		oa_prom_add(p, "ollama_store_findings_by_severity",
		            (double)oa_findings_count(&s->findings, (oa_severity)sev), "store", st, "user", us,
		            "severity", oa_severity_name((oa_severity)sev), (const char *)NULL);
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = s->findings.v[j].id == f->id &&
			       s->findings.v[j].severity == f->severity;
		if (seen)
			continue;
		size_t n = 0;
		for (size_t j = i; j < s->findings.n; j++)
			n += s->findings.v[j].id == f->id && s->findings.v[j].severity == f->severity;
		oa_prom_add(p, "ollama_store_findings", (double)n, "store", st, "user", us, "code", f->code,
		            "severity", oa_severity_name(f->severity), (const char *)NULL);
	}
}

/* Reclaimable: what prune would free now (same numbers as du). */
static void add_reclaimable(oa_prom *p, oa_store *s, const oa_du_store *du, const char *st, const char *us)
{
	if (s->root_fd < 0)
		return;
	if (du) { /* the reference set and the junk were just walked: not again */
		oa_prom_add(p, "ollama_store_reclaimable_bytes", (double)du->reclaimable, "store", st, "user", us,
		            (const char *)NULL);
		return;
	}
	oa_reclaim r;
	oa_reclaim_plan(s, OA_JUNK_DEFAULT, OA_SERVER_GRACE_SECONDS, oa_wall_now(), &r);
	oa_prom_add(p, "ollama_store_reclaimable_bytes", (double)r.plan.freed, "store", st, "user", us,
	            (const char *)NULL);
	oa_reclaim_free(&r);
}

/* Per model: what it is, its size and what only it uses. */
static void add_per_model(oa_prom *p, oa_store *s, const oa_du_store *given, const char *st, const char *us)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (!m->manifest_ok || m->anchor || m->sibling)
			continue;
		oa_prom_add(p, "ollama_store_model_info", 1, "store", st, "user", us, "model", m->display,
		            "format", oa_format_name(m->format), "arch", m->arch ? m->arch : "",
		            "params", m->params ? m->params : "", "quant", m->quant ? m->quant : "",
		            (const char *)NULL);
		oa_prom_add(p, "ollama_store_model_size_bytes", (double)(m->m.size < 0 ? 0 : m->m.size),
		            "store", st, "user", us, "model", m->display, (const char *)NULL);
	}
	oa_du own;
	if (!given)
		oa_du_compute(s, &own);
	const oa_du *du = given ? &given->du : &own;
	for (size_t r = 0; r < du->n_rows; r++)
		for (size_t k = 0; k < du->rows[r].n_models; k++) {
			const oa_model *m = &s->models[du->rows[r].models[k]];
			if (!m->manifest_ok || m->anchor || m->sibling)
				continue;
			oa_prom_add(p, "ollama_store_model_unique_bytes", (double)du->rows[r].unique, "store", st,
			            "user", us, "model", m->display, (const char *)NULL);
		}
	if (!given)
		oa_du_free(&own);
}

void oa_prom_add_store(oa_prom *p, oa_store *s, const oa_prom_store *info)
{
	const char *st = s->root, *us = info->user ? info->user : "";
	oa_prom_add(p, "ollama_store_info", 1, "store", st, "user", us, "source",
	            info->source ? info->source : "", (const char *)NULL);
	add_models(p, s, st, us);
	add_blobs(p, s, st, us);
	if (!info->no_findings)
		add_findings(p, s, st, us);
	add_reclaimable(p, s, info->du, st, us);
	add_per_model(p, s, info->du, st, us);
	oa_prom_add(p, "ollama_store_last_audit_timestamp_seconds", info->timestamp, "store", st, "user",
	            us, (const char *)NULL);
	oa_prom_add(p, "ollama_store_audit_duration_seconds", info->duration, "store", st, "user", us,
	            (const char *)NULL);
	oa_prom_add(p, "ollama_store_audit_success", info->success ? 1 : 0, "store", st, "user", us,
	            (const char *)NULL);
	if (info->verified)
		oa_prom_add(p, "ollama_store_verified_bytes", (double)info->verified_bytes, "store", st,
		            "user", us, (const char *)NULL);
	if (info->quarantine) {
		oa_prom_add(p, "ollama_store_quarantine_bytes", (double)info->quarantine_bytes, "store", st, "user", us,
		            "quarantine", info->quarantine, (const char *)NULL);
		oa_prom_add(p, "ollama_store_quarantine_entries", (double)info->quarantine_entries, "store", st, "user",
		            us, "quarantine", info->quarantine, (const char *)NULL);
	}
}

void oa_prom_add_failed(oa_prom *p, const char *store, const oa_prom_store *info)
{
	const char *us = info->user ? info->user : "";
	oa_prom_add(p, "ollama_store_info", 1, "store", store, "user", us, "source",
	            info->source ? info->source : "", (const char *)NULL);
	oa_prom_add(p, "ollama_store_last_audit_timestamp_seconds", info->timestamp, "store", store,
	            "user", us, (const char *)NULL);
	oa_prom_add(p, "ollama_store_audit_duration_seconds", info->duration, "store", store, "user", us,
	            (const char *)NULL);
	oa_prom_add(p, "ollama_store_audit_success", 0, "store", store, "user", us, (const char *)NULL);
}
