/* test_audit_totals.c - the library's views of typed results: what check/verify
 * print as totals over several stores, and a store's "summary" object,
 * exactly as a program reading the ndjson or json sees them. */
#include "testutil.h"
#include "ollama_audit/audit_totals.h"

#include <jansson.h>

static char *dump(json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(v);
	return s;
}

/* Two stores of alice, one of bob that could not be read: per user in the
 * order first seen, then everything; bytes_hashed only once a store was
 * verified. */
static void test_totals(void)
{
	oa_audit_totals t;
	oa_audit_totals_init(&t);
	oa_audit_summary a1 = { .verify = true, .models = 2, .errors = 1, .warnings = 3, .bytes_hashed = 1000 };
	oa_audit_summary a2 = { .verify = true, .models = 1, .warnings = 1, .bytes_hashed = 24 };
	oa_audit_totals_add(&t, "alice", &a1);
	oa_audit_totals_add(&t, "bob", NULL);
	oa_audit_totals_add(&t, "alice", &a2);
	CHECK_U64(t.n_users, 2);
	CHECK(t.verify);
	char *s = dump(oa_audit_total_record(&t, &t.users[0], "h1"));
	CHECK_STR(s, "{\"type\":\"user_total\",\"host\":\"h1\",\"stores\":2,\"unreadable_stores\":0,"
	             "\"models\":3,\"errors\":1,\"warnings\":4,\"user\":\"alice\",\"bytes_hashed\":1024}");
	free(s);
	s = dump(oa_audit_total_record(&t, &t.users[1], "h1"));
	CHECK_STR(s, "{\"type\":\"user_total\",\"host\":\"h1\",\"stores\":1,\"unreadable_stores\":1,"
	             "\"models\":0,\"errors\":0,\"warnings\":0,\"user\":\"bob\",\"bytes_hashed\":0}");
	free(s);
	s = dump(oa_audit_total_record(&t, &t.all, "h1"));
	CHECK_STR(s, "{\"type\":\"total\",\"host\":\"h1\",\"stores\":3,\"unreadable_stores\":1,"
	             "\"models\":3,\"errors\":1,\"warnings\":4,\"bytes_hashed\":1024}");
	free(s);
	oa_audit_totals_free(&t);

	/* check alone: no bytes_hashed, an unknown owner is "" */
	oa_audit_totals_init(&t);
	oa_audit_summary c = { .models = 5, .infos = 2 };
	oa_audit_totals_add(&t, NULL, &c);
	s = dump(oa_audit_total_record(&t, &t.users[0], "h"));
	CHECK_STR(s, "{\"type\":\"user_total\",\"host\":\"h\",\"stores\":1,\"unreadable_stores\":0,"
	             "\"models\":5,\"errors\":0,\"warnings\":0,\"user\":\"\"}");
	free(s);
	oa_audit_totals_free(&t);
}

static void test_summary(void)
{
	oa_audit_summary c = { .models = 1, .blob_files = 4, .seconds = 0.5, .prune_blocked = true,
	                       .errors = 2, .infos = 1 };
	char *s = dump(oa_audit_summary_json(&c));
	CHECK_STR(s, "{\"models\":1,\"blob_files\":4,\"seconds\":0.5,\"prune_blocked\":true,"
	             "\"errors\":2,\"warnings\":0,\"infos\":1}");
	free(s);
	oa_audit_summary v = { .verify = true, .models = 1, .blobs = 3, .bytes_hashed = 9, .not_done = 1,
	                       .seconds = 2, .interrupted = true, .warnings = 1 };
	s = dump(oa_audit_summary_json(&v));
	CHECK_STR(s, "{\"models\":1,\"blobs\":3,\"bytes_hashed\":9,\"skipped_unchanged\":0,\"not_done\":1,"
	             "\"seconds\":2.0,\"interrupted\":true,\"timed_out\":false,\"errors\":0,\"warnings\":1,"
	             "\"infos\":0}");
	free(s);
}

int main(void)
{
	test_totals();
	test_summary();
	TEST_MAIN_END();
}
