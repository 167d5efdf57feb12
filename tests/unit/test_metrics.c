/* test_metrics.c - one store's metrics, computed once (metrics.h), are the
 * numbers du's views show and the Prometheus text writes; and the metric
 * list of prometheus.h: HELP and TYPE from it, an unknown name refused. */
#include "teststore.h"

#include "ollama_audit/du_report.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/metrics.h"
#include "ollama_audit/prometheus.h"
#include "ollama_audit/scan.h"
#include "views/du_text.h"
#include "base/util.h"

#include <jansson.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_tmp[] = "/tmp/oa-unit-metrics-XXXXXX";

static json_int_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* Two models sharing their config, an orphan, a partial download and a
 * file Ollama does not write. */
static char *make_store(void)
{
	char *root = oa_xasprintf("%s/store", g_tmp);
	char *blobs = oa_xasprintf("%s/blobs", root);
	mkdirs(blobs);
	oa_digest_hex cfg, wa, wb, orphan, partial;
	add_blob(root, "{}", cfg);
	add_blob(root, "weights", wa);
	add_blob(root, "other weights", wb);
	add_blob(root, "an orphan", orphan);
	add_model(root, "a", cfg, wa);
	add_model(root, "b", cfg, wb);
	oa_sha256_hex("never finished", 14, partial);
	char *path = oa_xasprintf("%s/sha256-%s-partial", blobs, partial);
	write_file(path, "half of it");
	free(path);
	path = oa_xasprintf("%s/notes.txt", blobs);
	write_file(path, "mine");
	free(path);
	free(blobs);
	return root;
}

static char *drawn(void (*draw)(FILE *, const oa_store *, const oa_store_metrics *), const oa_store *s,
                   const oa_store_metrics *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	draw(f, s, m);
	fclose(f);
	return text;
}

static void du_table(FILE *f, const oa_store *s, const oa_store_metrics *m)
{
	oa_text_style st = { .header = true, .units = OA_UNITS_BYTES };
	oa_du_text_store(&st, f, s, &m->du, NULL, 0, true);
}

static void prom_text(FILE *f, const oa_store *s, const oa_store_metrics *m)
{
	oa_prom *p = oa_prom_new();
	oa_prom_store info = { .user = "u", .source = "--store", .success = true, .metrics = m };
	oa_prom_add_store(p, s, &info);
	oa_prom_write(p, f);
	oa_prom_free(p);
}

/* text holds the line "<name>{store=...,user="u"<more>} <value>". */
static bool has_sample(const char *text, const oa_store *s, const char *name, const char *more, uint64_t value)
{
	char *line = oa_xasprintf("\n%s{store=\"%s\",user=\"u\"%s} %llu\n", name, s->root, more,
	                          (unsigned long long)value);
	bool yes = strstr(text, line) != NULL;
	free(line);
	return yes;
}

static void test_metrics_are_du(void)
{
	char *root = make_store();
	oa_store s;
	char err[256];
	CHECK(oa_store_open(&s, root, "--store", err, sizeof err) == 0);
	oa_store_set_header_mode(&s, OA_HEADERS_NONE);
	oa_store_scan(&s);
	double now = (double)time(NULL) + 7200; /* the junk is past prune's grace period */
	oa_store_metrics m;
	oa_store_metrics_compute(&s, now, &m);

	/* by state: every entry, and the bytes of the one walk */
	CHECK_U64(m.blobs[OA_BLOB_STATE_REFERENCED], 3);
	CHECK_U64(m.blobs[OA_BLOB_STATE_ORPHANED], 1);
	CHECK_U64(m.blobs[OA_BLOB_STATE_PARTIAL], 1);
	CHECK_U64(m.blobs[OA_BLOB_STATE_TEMP], 0);
	CHECK_U64(m.blobs[OA_BLOB_STATE_FOREIGN], 1);
	uint64_t bytes = 0, apparent = 0;
	for (int k = 0; k < OA_BLOB_STATE_COUNT; k++) {
		bytes += m.blobs_bytes[k];
		apparent += m.blobs_apparent[k];
	}
	CHECK_U64(bytes, m.usage.allocated);
	CHECK_U64(apparent, m.usage.apparent);
	CHECK(m.usage.allocated > 0);

	/* the same numbers as du computing on its own */
	oa_du_store d;
	oa_du_store_compute(&s, now, &d);
	CHECK_U64(m.du.du.n_rows, 2);
	CHECK_U64(m.du.du.n_rows, d.du.n_rows);
	CHECK_U64(m.du.du.referenced, d.du.referenced);
	CHECK_U64(m.du.du.blobs_total, d.du.blobs_total);
	CHECK_U64(m.du.du.blobs_total, m.usage.allocated);
	CHECK_U64(m.du.du.blobs_total_apparent, m.usage.apparent);
	CHECK_U64(m.du.reclaimable, d.reclaimable);
	CHECK_U64(m.du.reclaimable_entries, 2); /* the orphan and the partial */
	CHECK(m.du.reclaimable > 0);
	for (size_t i = 0; i < d.du.n_rows && i < m.du.du.n_rows; i++)
		CHECK_U64(m.du.du.rows[i].unique, d.du.rows[i].unique);
	oa_du_store_free(&d);

	/* du's json view shows them */
	json_t *o = oa_du_view_store(&s, &m.du, NULL);
	json_t *t = json_object_get(o, "totals");
	CHECK_U64(num(t, "referenced_bytes"), m.du.du.referenced);
	CHECK_U64(num(t, "reclaimable_bytes"), m.du.reclaimable);
	CHECK_U64(num(t, "blobs_bytes"), m.usage.allocated);
	CHECK_U64(num(t, "blobs_apparent_bytes"), m.usage.apparent);
	json_decref(o);

	/* and du's table */
	char *text = drawn(du_table, &s, &m);
	char *want = oa_xasprintf("\nblobs/ total   %10llu on disk (%llu apparent)\n",
	                          (unsigned long long)m.usage.allocated, (unsigned long long)m.usage.apparent);
	CHECK(strstr(text, want) != NULL);
	free(want);
	want = oa_xasprintf("\nreclaimable    %10llu (", (unsigned long long)m.du.reclaimable);
	CHECK(strstr(text, want) != NULL);
	free(want);
	free(text);

	/* and the Prometheus text */
	text = drawn(prom_text, &s, &m);
	CHECK(has_sample(text, &s, "ollama_store_reclaimable_bytes", "", m.du.reclaimable));
	CHECK(has_sample(text, &s, "ollama_store_blobs_bytes", ",state=\"referenced\"",
	                 m.blobs_bytes[OA_BLOB_STATE_REFERENCED]));
	CHECK(has_sample(text, &s, "ollama_store_blobs", ",state=\"foreign\"", 1));
	CHECK(has_sample(text, &s, "ollama_store_model_unique_bytes", ",model=\"a:latest\"",
	                 m.du.du.rows[0].models[0] == 0 ? m.du.du.rows[0].unique : m.du.du.rows[1].unique));
	CHECK(strstr(text, "ollama_store_quarantine") == NULL);
	free(text);

	/* a quarantine of this store (du --quarantine) joins its metrics */
	oa_quarantine_held q = { (uint64_t)s.root_st.st_dev, (uint64_t)s.root_st.st_ino, 3, 12288 };
	CHECK(oa_store_metrics_quarantine(&m, &s, "/q", &q));
	text = drawn(prom_text, &s, &m);
	CHECK(has_sample(text, &s, "ollama_store_quarantine_bytes", ",quarantine=\"/q\"", 12288));
	free(text);
	q.store_ino++;
	m.du.quarantine = NULL;
	CHECK(!oa_store_metrics_quarantine(&m, &s, "/q", &q));
	CHECK(m.du.quarantine == NULL);

	oa_store_metrics_free(&m);
	oa_store_close(&s);
	free(root);
}

/* Every family's HELP and TYPE come from OA_PROM_METRICS. */
static void test_metric_list(void)
{
	static const struct { const char *name, *type, *help; } list[] = {
#define ROW_(id, name, type, help) { name, type, help },
		OA_PROM_METRICS(ROW_)
#undef ROW_
	};
	CHECK_U64(sizeof list / sizeof list[0], OA_PROM_NMETRICS);
	oa_prom *p = oa_prom_new();
	for (size_t i = 0; i < OA_PROM_NMETRICS; i++)
		CHECK(oa_prom_add(p, list[i].name, 1, "store", "/s", (const char *)NULL) == 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	oa_prom_write(p, f);
	fclose(f);
	oa_prom_free(p);
	for (size_t i = 0; i < OA_PROM_NMETRICS; i++) {
		char *want = oa_xasprintf("# HELP %s %s\n# TYPE %s %s\n%s{store=\"/s\"} 1\n", list[i].name, list[i].help,
		                          list[i].name, list[i].type, list[i].name);
		CHECK(strstr(text, want) != NULL);
		free(want);
	}
	free(text);
}

/* An unknown name is refused, never dropped silently: -1 and nothing
 * written, or (a debug build) an abort. */
static void test_unknown_metric(void)
{
	fflush(NULL);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		oa_prom *p = oa_prom_new();
		int rc = oa_prom_add(p, "ollama_store_no_such_metric", 1, (const char *)NULL);
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		oa_prom_write(p, f);
		fclose(f);
		_exit(rc == -1 && len == 0 ? 0 : 1);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
#ifdef NDEBUG
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#else
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
#endif
}

/* One series once, however many a family holds: a second sample with the
 * same labels is dropped (the first value stays), across the growth of
 * the family's index; different labels each stay. */
static void test_series_once(void)
{
	oa_prom *p = oa_prom_new();
	enum { N = 1000 };
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < N; i++) {
			char model[32];
			snprintf(model, sizeof model, "m%d:latest", i);
			CHECK(oa_prom_add(p, "ollama_store_model_size_bytes", round ? 7.0 : (double)i, "model", model,
			                  (const char *)NULL) == 0);
		}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	oa_prom_write(p, f);
	fclose(f);
	size_t samples = 0;
	for (const char *q = text; (q = strstr(q, "\nollama_store_model_size_bytes{")); q++)
		samples++;
	CHECK_U64(samples, N);
	CHECK(strstr(text, "ollama_store_model_size_bytes{model=\"m999:latest\"} 999\n") != NULL);
	CHECK(strstr(text, "{model=\"m0:latest\"} 0\n") != NULL); /* the first value stayed */
	free(text);
	oa_prom_free(p);
}

int main(void)
{
	if (!test_tmp_begin(g_tmp))
		return 1;
	test_metrics_are_du();
	test_metric_list();
	test_unknown_metric();
	test_series_once();
	test_tmp_end(g_tmp);
	TEST_MAIN_END();
}
