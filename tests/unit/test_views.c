/* test_views.c - the library's command views: a program linking the
 * library gets the documents the CLI prints (du over fixtures/demo-store). */
#include "teststore.h"

#include "ollama_audit/du_report.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/scan.h"
#include "base/util.h"

#include <jansson.h>
#include <time.h>

static json_t *row_named(json_t *store, const char *name)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(store, "models"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0)
			return r;
	return NULL;
}

static json_int_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static void test_du_view(void)
{
	oa_store s;
	demo_store_scan(&s, OA_HEADERS_NONE);
	oa_du_store d;
	oa_du_store_compute(&s, (double)time(NULL), &d);

	/* Apparent sizes are the files' own, whatever the file system's blocks. */
	json_t *o = oa_du_view_store(&s, &d, NULL);
	json_t *r = row_named(o, "demo-vision:latest");
	CHECK(r != NULL);
	CHECK_U64(num(r, "unique_apparent_bytes"), 41996);
	CHECK_U64(num(r, "apparent_bytes"), 42245);
	CHECK_U64(num(r, "blob_files"), 5);
	CHECK(json_object_get(r, "last_used") == NULL); /* no logs given: no field */
	json_t *t = json_object_get(o, "totals");
	CHECK_U64(num(t, "referenced_apparent_bytes"), 153255);
	CHECK_U64(num(t, "referenced_bytes"), d.du.referenced);
	CHECK_U64(num(json_object_get(json_object_get(t, "junk"), "orphans"), "count"), 1);
	json_decref(o);

	/* With logs: the newest load of the row's tags, or null. */
	bool *loaded = calloc(s.n_models + 1, sizeof *loaded);
	int64_t *last = calloc(s.n_models + 1, sizeof *last);
	oa_last_used lu = { true, loaded, last, NULL, 0 };
	o = oa_du_view_store(&s, &d, &lu);
	r = row_named(o, "demo-vision:latest");
	CHECK(r && json_is_null(json_object_get(r, "last_used")));
	json_decref(o);
	for (size_t i = 0; i < s.n_models; i++)
		if (strcmp(s.models[i].display, "demo-vision:latest") == 0) {
			loaded[i] = true;
			last[i] = INT64_C(1700000000) * 1000000000;
		}
	o = oa_du_view_store(&s, &d, &lu);
	r = row_named(o, "demo-vision:latest");
	CHECK(r && json_is_string(json_object_get(r, "last_used")));
	CHECK(r && strncmp(json_string_value(json_object_get(r, "last_used")), "2023-11-14T22:13:20", 19) == 0);
	json_decref(o);
	free(loaded);
	free(last);

	/* The combined total is the sum of the typed results. */
	oa_du_total total;
	memset(&total, 0, sizeof total);
	oa_du_total_add(&total, &d);
	oa_du_total_add(&total, &d);
	json_t *tv = oa_du_view_total(&total);
	CHECK_U64(num(tv, "stores"), 2);
	CHECK_U64(num(tv, "model_rows"), 2 * d.du.n_rows);
	CHECK_U64(num(tv, "referenced_apparent_bytes"), 2 * 153255);
	json_decref(tv);

	oa_du_store_free(&d);
	oa_store_close(&s);
}

int main(void)
{
	test_du_view();
	TEST_MAIN_END();
}
