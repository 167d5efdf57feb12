/* prometheus.c - store metrics for node_exporter's textfile collector; see prometheus.h. */
#include "ollama_audit/prometheus.h"
#include "base/hash_index.h"
#include "base/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static const struct family {
	const char *name, *type, *help;
} families[OA_PROM_NMETRICS] = {
#define OA_PROM_FAMILY_(id, name, type, help) [OA_PROM_##id] = { name, type, help },
	OA_PROM_METRICS(OA_PROM_FAMILY_)
#undef OA_PROM_FAMILY_
};
#define N_FAMILIES ((size_t)OA_PROM_NMETRICS)

typedef struct sample {
	char *labels; /* "{a=\"b\",...}" or "" */
	double value;
} sample;

#define STORE_PREFIX "ollama_store_"

struct oa_prom {
	sample *s[N_FAMILIES];
	size_t n[N_FAMILIES];
	/* Per family, the samples by a hash of their labels, so that "one
	 * series once" costs a probe, not a pass over the family: a model's
	 * series are as many as the store's models. */
	oa_hash_index index[N_FAMILIES];
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
		oa_hash_index_free(&p->index[f]);
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
 * (\xNN), so the file is always valid UTF-8. Otherwise the value is the
 * path as it is, controls and bidi marks included: that is the exposition
 * format's rule, and a scraper, not a terminal, reads this file. */
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

static uint64_t labels_hash(const char *labels)
{
	return XXH3_64bits(labels, strlen(labels));
}

static bool same_labels(const void *ctx, size_t entry, const void *key)
{
	const sample *s = ctx;
	return strcmp(s[entry].labels, key) == 0;
}

static void vadd(oa_prom *p, oa_prom_metric f, double value, va_list ap)
{
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
	uint64_t h = labels_hash(labels);
	if (oa_hash_index_find(&p->index[f], h, same_labels, p->s[f], labels) != OA_HASH_NONE) {
		free(labels); /* one series once */
		return;
	}
	p->s[f] = oa_xreallocarray(p->s[f], p->n[f] + 1, sizeof *p->s[f]);
	p->s[f][p->n[f]] = (sample){ labels, value };
	oa_hash_index_add(&p->index[f], h, p->n[f]++);
}

/* A metric of the list, by its enum: every sample this file adds. */
static void add(oa_prom *p, oa_prom_metric f, double value, ...)
{
	va_list ap;
	va_start(ap, value);
	vadd(p, f, value, ap);
	va_end(ap);
}

int oa_prom_add(oa_prom *p, const char *metric, double value, ...)
{
	size_t f = 0;
	while (f < N_FAMILIES && strcmp(families[f].name, metric) != 0)
		f++;
	if (f == N_FAMILIES) {
#ifndef NDEBUG
		fprintf(stderr, "oa_prom_add: %s is not a metric of OA_PROM_METRICS\n", metric);
		abort();
#endif
		return -1;
	}
	va_list ap;
	va_start(ap, value);
	vadd(p, (oa_prom_metric)f, value, ap);
	va_end(ap);
	return 0;
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
		fprintf(out, "# HELP %s%s %s\n# TYPE %s%s %s\n", p->prefix, rest, families[f].help, p->prefix,
		        rest, families[f].type);
		for (size_t i = 0; i < p->n[f]; i++) {
			fprintf(out, "%s%s%s ", p->prefix, rest, p->s[f][i].labels);
			write_value(out, p->s[f][i].value);
			fputc('\n', out);
		}
	}
}

/* ---- a store ---------------------------------------------------------------- */

const char *oa_prom_blob_state(const oa_blob *b)
{
	return oa_blob_state_name(oa_blob_state_of(b));
}

/* Models by format. */
static void add_models(oa_prom *p, const oa_store *s, const char *st, const char *us)
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
			add(p, OA_PROM_MODELS, (double)by_format[f], "store", st, "user", us, "format", fmt_names[f],
			    (const char *)NULL);
	if (invalid)
		add(p, OA_PROM_MODELS, (double)invalid, "store", st, "user", us, "format", "invalid",
		    (const char *)NULL);
}

/* Blobs and bytes by state (metrics.h: every inode once, so the states
 * sum to `du -s blobs`). */
static void add_blobs(oa_prom *p, const oa_store_metrics *m, const char *st, const char *us)
{
	for (int k = 0; k < OA_BLOB_STATE_COUNT; k++) {
		const char *state = oa_blob_state_name((enum oa_blob_state)k);
		add(p, OA_PROM_BLOBS, (double)m->blobs[k], "store", st, "user", us, "state", state,
		    (const char *)NULL);
		add(p, OA_PROM_BLOBS_BYTES, (double)m->blobs_bytes[k], "store", st, "user", us, "state", state,
		    (const char *)NULL);
		add(p, OA_PROM_BLOBS_APPARENT_BYTES, (double)m->blobs_apparent[k], "store", st, "user", us, "state",
		    state, (const char *)NULL);
	}
}

static bool finding_countable(const oa_finding *f)
{
	return (unsigned)f->id < OA_FINDING_NCODES && (unsigned)f->severity <= OA_SEV_ERROR;
}

/* Findings by severity, each present (at 0 when none) so that an alert on
 * "> 0" needs no absent(); then by code and severity. */
static void add_findings(oa_prom *p, const oa_store *s, const char *st, const char *us)
{
	for (int sev = OA_SEV_ERROR; sev >= OA_SEV_INFO; sev--)
		add(p, OA_PROM_FINDINGS_BY_SEVERITY, (double)oa_findings_count(&s->findings, (oa_severity)sev), "store",
		    st, "user", us, "severity", oa_severity_name((oa_severity)sev), (const char *)NULL);
	/* by (code, severity), in the order each first appears */
	size_t count[OA_FINDING_NCODES][OA_SEV_ERROR + 1] = { { 0 } };
	for (size_t i = 0; i < s->findings.n; i++)
		if (finding_countable(&s->findings.v[i]))
			count[s->findings.v[i].id][s->findings.v[i].severity]++;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!finding_countable(f))
			continue;
		size_t *n = &count[f->id][f->severity];
		if (!*n)
			continue; /* said at its first */
		add(p, OA_PROM_FINDINGS, (double)*n, "store", st, "user", us, "code", f->code, "severity",
		    oa_severity_name(f->severity), (const char *)NULL);
		*n = 0;
	}
}

/* Per model: what it is and its size. */
static void add_model_info(oa_prom *p, const oa_store *s, const char *st, const char *us)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (!m->manifest_ok || m->anchor || m->sibling)
			continue;
		add(p, OA_PROM_MODEL_INFO, 1, "store", st, "user", us, "model", m->display, "format",
		    oa_format_name(m->format), "arch", m->arch ? m->arch : "", "params", m->params ? m->params : "",
		    "quant", m->quant ? m->quant : "", (const char *)NULL);
		add(p, OA_PROM_MODEL_SIZE_BYTES, (double)(m->m.size < 0 ? 0 : m->m.size), "store", st, "user", us,
		    "model", m->display, (const char *)NULL);
	}
}

/* Per model: its newest load, for the models the logs show loaded. */
static void add_last_used(oa_prom *p, const oa_store *s, const oa_last_used *lu, const char *st, const char *us)
{
	if (!lu || !lu->have_logs)
		return;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (!m->manifest_ok || m->anchor || m->sibling || !lu->loaded[i])
			continue;
		add(p, OA_PROM_MODEL_LAST_USED_TIMESTAMP_SECONDS, (double)(lu->last_ns[i] / 1000000000), "store", st,
		    "user", us, "model", m->display, (const char *)NULL);
	}
}

/* Per model: what only it uses (du's rows, every row in du's order). */
static void add_unique(oa_prom *p, const oa_store *s, const oa_du *du, const char *st, const char *us)
{
	for (size_t r = 0; r < du->n_rows; r++)
		for (size_t k = 0; k < du->rows[r].n_models; k++) {
			const oa_model *m = &s->models[du->rows[r].models[k]];
			if (!m->manifest_ok || m->anchor || m->sibling)
				continue;
			add(p, OA_PROM_MODEL_UNIQUE_BYTES, (double)du->rows[r].unique, "store", st, "user", us, "model",
			    m->display, (const char *)NULL);
		}
}

void oa_prom_add_store(oa_prom *p, const oa_store *s, const oa_prom_store *info)
{
	const char *st = s->root, *us = info->user ? info->user : "";
	const oa_store_metrics *m = info->metrics;
	add(p, OA_PROM_INFO, 1, "store", st, "user", us, "source", info->source ? info->source : "",
	    (const char *)NULL);
	add_models(p, s, st, us);
	if (m)
		add_blobs(p, m, st, us);
	if (!info->no_findings)
		add_findings(p, s, st, us);
	if (m && s->root_fd >= 0) /* what prune would free now (the same numbers as du) */
		add(p, OA_PROM_RECLAIMABLE_BYTES, (double)m->du.reclaimable, "store", st, "user", us,
		    (const char *)NULL);
	add_model_info(p, s, st, us);
	if (m)
		add_unique(p, s, &m->du.du, st, us);
	add_last_used(p, s, info->last_used, st, us);
	add(p, OA_PROM_LAST_AUDIT_TIMESTAMP_SECONDS, info->timestamp, "store", st, "user", us, (const char *)NULL);
	add(p, OA_PROM_AUDIT_DURATION_SECONDS, info->duration, "store", st, "user", us, (const char *)NULL);
	add(p, OA_PROM_AUDIT_SUCCESS, info->success ? 1 : 0, "store", st, "user", us, (const char *)NULL);
	if (info->verified)
		add(p, OA_PROM_VERIFIED_BYTES, (double)info->verified_bytes, "store", st, "user", us,
		    (const char *)NULL);
	const oa_du_store *q = m ? &m->du : NULL;
	if (q && q->quarantine) {
		add(p, OA_PROM_QUARANTINE_BYTES, (double)q->quarantine_bytes, "store", st, "user", us, "quarantine",
		    q->quarantine, (const char *)NULL);
		add(p, OA_PROM_QUARANTINE_ENTRIES, (double)q->quarantine_entries, "store", st, "user", us,
		    "quarantine", q->quarantine, (const char *)NULL);
	}
}

void oa_prom_add_failed(oa_prom *p, const char *store, const oa_prom_store *info)
{
	const char *us = info->user ? info->user : "";
	add(p, OA_PROM_INFO, 1, "store", store, "user", us, "source", info->source ? info->source : "",
	    (const char *)NULL);
	add(p, OA_PROM_LAST_AUDIT_TIMESTAMP_SECONDS, info->timestamp, "store", store, "user", us,
	    (const char *)NULL);
	add(p, OA_PROM_AUDIT_DURATION_SECONDS, info->duration, "store", store, "user", us, (const char *)NULL);
	add(p, OA_PROM_AUDIT_SUCCESS, 0, "store", store, "user", us, (const char *)NULL);
}
