/* test_verify.c - the verify engine and its cache, on blobs in a temp dir. */
#include "ollama_audit/verify.h"
#include "ollama_audit/verify_cache.h"
#include "ollama_audit/platform.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

static char g_root[512];
static int g_dirno;

/* ---- helpers ---------------------------------------------------------- */

static void hexify(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
		fprintf(stderr, "EVP_Digest failed\n");
		exit(2);
	}
	hexify(md, 32, out);
}

static void xxh128_hex(const void *data, size_t len, char out[33])
{
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
	hexify(c.digest, 16, out);
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 24);
	}
}

/* A fresh store directory <root>/sN with blobs/. */
static void new_store(char *dir, size_t len)
{
	snprintf(dir, len, "%s/s%d", g_root, g_dirno++);
	char b[600];
	snprintf(b, sizeof b, "%s/blobs", dir);
	if (mkdir(dir, 0755) != 0 || mkdir(b, 0755) != 0) {
		perror(b);
		exit(2);
	}
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) != 0) {
		perror(path);
		exit(2);
	}
}

/* A blob named by the sha256 of `good`, holding `actual` (NULL = good). */
struct blob {
	char path[700];
	char hex[65];
	char xxh[33];
	size_t size;
};

static void make_blob(const char *store, const void *good, size_t glen, const void *actual,
                      size_t alen, struct blob *b)
{
	sha256_hex(good, glen, b->hex);
	xxh128_hex(good, glen, b->xxh);
	b->size = glen;
	snprintf(b->path, sizeof b->path, "%s/blobs/sha256-%s", store, b->hex);
	if (actual)
		write_file(b->path, actual, alen);
	else
		write_file(b->path, good, glen);
}

static void make_random_blob(const char *store, size_t len, uint64_t seed, struct blob *b)
{
	unsigned char *p = malloc(len ? len : 1);
	fill(p, len, seed);
	make_blob(store, p, len, NULL, 0, b);
	free(p);
}

static oa_verify_job job_for(const struct blob *b, bool with_size)
{
	oa_verify_job j;
	memset(&j, 0, sizeof j);
	j.path = b->path;
	memcpy(j.expected_hex, b->hex, 65);
	j.expected_size = with_size ? b->size : OA_VERIFY_SIZE_UNKNOWN;
	return j;
}

static void flip_byte(const char *path, off_t at)
{
	int fd = open(path, O_RDWR);
	unsigned char c;
	if (fd < 0 || pread(fd, &c, 1, at) != 1) {
		perror(path);
		exit(2);
	}
	c ^= 0x20;
	if (pwrite(fd, &c, 1, at) != 1 || close(fd) != 0) {
		perror(path);
		exit(2);
	}
}

static void set_mtime(const char *path, time_t sec, long nsec)
{
	struct timespec ts[2] = { { sec, nsec }, { sec, nsec } };
	if (utimensat(AT_FDCWD, path, ts, 0) != 0) {
		perror(path);
		exit(2);
	}
}

static int run(const oa_verify_job *jobs, size_t n, const oa_verify_opts *o, oa_verify_result *res,
               oa_verify_totals *t)
{
	char err[256];
	int rc = oa_verify_run(jobs, n, o, res, t, err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "oa_verify_run: %s\n", err);
	return rc;
}

static void base_opts(oa_verify_opts *o)
{
	oa_verify_opts_init(o);
	o->racy_window = 0; /* files in tests are seconds old */
}

/* ---- tests ------------------------------------------------------------ */

static void test_statuses(size_t bufsize, int jobs)
{
	char store[600];
	new_store(store, sizeof store);
	enum { N = 12 };
	struct blob b[N];
	oa_verify_job j[N];
	size_t big = 5u << 20;
	unsigned char *data = malloc(big), *bad = malloc(big);
	fill(data, big, 42);

	make_blob(store, "", 0, NULL, 0, &b[0]);                            /* empty */
	make_blob(store, data, big, NULL, 0, &b[1]);                        /* 5 MiB */
	make_random_blob(store, 1000, 7, &b[2]);                            /* small */
	memcpy(bad, data, 300000);
	bad[123456] ^= 1;
	make_blob(store, data, 300000, bad, 300000, &b[3]);                 /* flipped byte */
	memset(bad, 0, 300000);
	make_blob(store, data + 1, 300000, bad, 300000, &b[4]);             /* zeroed, right size */
	make_blob(store, data + 2, 300000, data + 2, 150000, &b[5]);        /* truncated, size known */
	make_blob(store, data + 3, 300000, data + 3, 150000, &b[6]);        /* truncated, size unknown */
	make_blob(store, data + 4, 1000, NULL, 0, &b[7]);
	unlink(b[7].path);                                                  /* missing */
	make_blob(store, data + 5, 1000, NULL, 0, &b[8]);
	unlink(b[8].path);
	mkdir(b[8].path, 0755);                                             /* a directory: unreadable */
	make_blob(store, data + 6, 1000, NULL, 0, &b[9]);
	chmod(b[9].path, 0);                                                /* unreadable unless root */
	make_blob(store, data + 7, big - 7, NULL, 0, &b[10]);               /* large, unknown size */
	make_blob(store, data + 8, 4096, NULL, 0, &b[11]);                  /* uppercase expected hex */

	for (int i = 0; i < N; i++)
		j[i] = job_for(&b[i], i != 6 && i != 10);
	for (int k = 0; k < 64; k++)
		if (j[11].expected_hex[k] >= 'a')
			j[11].expected_hex[k] = (char)(j[11].expected_hex[k] - 'a' + 'A');

	oa_verify_opts o;
	base_opts(&o);
	o.buffer_size = bufsize;
	o.jobs = jobs;
	oa_verify_result r[N];
	oa_verify_totals t;
	CHECK(run(j, N, &o, r, &t) == 0);

	CHECK(r[0].status == OA_VERIFY_OK);
	CHECK_STR(r[0].sha256_hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CHECK_STR(r[0].xxh128_hex, b[0].xxh);
	CHECK_U64(r[0].bytes_hashed, 0);
	CHECK(r[1].status == OA_VERIFY_OK);
	CHECK_STR(r[1].sha256_hex, b[1].hex);
	CHECK_STR(r[1].xxh128_hex, b[1].xxh);
	CHECK_U64(r[1].bytes_hashed, big);
	CHECK(r[1].stat_valid);
	CHECK_U64(r[1].st.size, big);
	CHECK(r[1].st.ino != 0 && r[1].st.mtime_ns > 0 && r[1].st.ctime_ns > 0);
	CHECK(r[2].status == OA_VERIFY_OK);
	CHECK(r[3].status == OA_VERIFY_DIGEST_MISMATCH);
	CHECK(strlen(r[3].sha256_hex) == 64 && strcmp(r[3].sha256_hex, b[3].hex) != 0);
	CHECK(r[4].status == OA_VERIFY_DIGEST_MISMATCH);
	CHECK(r[5].status == OA_VERIFY_SIZE_MISMATCH);
	CHECK_U64(r[5].bytes_hashed, 0);
	CHECK_U64(r[5].st.size, 150000);
	CHECK(r[6].status == OA_VERIFY_DIGEST_MISMATCH);
	CHECK_U64(r[6].bytes_hashed, 150000);
	CHECK(r[7].status == OA_VERIFY_MISSING);
	CHECK(r[7].err == ENOENT);
	CHECK(r[8].status == OA_VERIFY_UNREADABLE);
	CHECK(r[8].err == EISDIR);
	if (geteuid() != 0) {
		CHECK(r[9].status == OA_VERIFY_UNREADABLE);
		CHECK(r[9].err == EACCES);
	} else {
		CHECK(r[9].status == OA_VERIFY_OK); /* root reads mode 000 files */
	}
	CHECK(r[10].status == OA_VERIFY_OK);
	CHECK(r[11].status == OA_VERIFY_OK);
	CHECK(oa_verify_status_is_failure(r[3].status) && !oa_verify_status_is_failure(r[0].status));

	CHECK_U64(t.jobs, N);
	CHECK_U64(t.count[OA_VERIFY_OK], geteuid() == 0 ? 6 : 5);
	CHECK_U64(t.count[OA_VERIFY_DIGEST_MISMATCH], 3);
	CHECK_U64(t.count[OA_VERIFY_SIZE_MISMATCH], 1);
	CHECK_U64(t.count[OA_VERIFY_MISSING], 1);
	CHECK_U64(t.count[OA_VERIFY_UNREADABLE], geteuid() == 0 ? 1 : 2);
	CHECK_U64(t.count[OA_VERIFY_NOT_DONE], 0);
	uint64_t hashed = 0;
	for (int i = 0; i < N; i++)
		hashed += r[i].bytes_hashed;
	CHECK_U64(t.bytes_hashed, hashed);
	CHECK(!t.interrupted && !t.timed_out);
	CHECK(t.threads >= 1);

	/* A malformed expected digest is an ERROR, not a crash. */
	oa_verify_job bj = j[2];
	strcpy(bj.expected_hex, "xyz");
	CHECK(run(&bj, 1, &o, r, &t) == 0);
	CHECK(r[0].status == OA_VERIFY_ERROR && r[0].err == EINVAL);

	chmod(b[9].path, 0644);
	free(data);
	free(bad);
}

static void test_jobs_equivalent(void)
{
	char store[600];
	new_store(store, sizeof store);
	enum { N = 300 };
	struct blob *b = calloc(N, sizeof *b);
	oa_verify_job *j = calloc(N, sizeof *j);
	oa_verify_result *r1 = calloc(N, sizeof *r1), *r4 = calloc(N, sizeof *r4);
	for (int i = 0; i < N; i++) {
		make_random_blob(store, (size_t)(i * 37) % 5000, (uint64_t)i + 1000, &b[i]);
		j[i] = job_for(&b[i], i % 2);
	}
	flip_byte(b[17].path, 3);
	unlink(b[33].path);
	oa_verify_opts o;
	base_opts(&o);
	oa_verify_totals t1, t4;
	o.jobs = 1;
	CHECK(run(j, N, &o, r1, &t1) == 0);
	o.jobs = 4;
	CHECK(run(j, N, &o, r4, &t4) == 0);
	CHECK(t1.threads == 1 && t4.threads == 4);
	int same = 1;
	for (int i = 0; i < N; i++)
		if (r1[i].status != r4[i].status || strcmp(r1[i].sha256_hex, r4[i].sha256_hex) ||
		    strcmp(r1[i].xxh128_hex, r4[i].xxh128_hex) || r1[i].bytes_hashed != r4[i].bytes_hashed)
			same = 0;
	CHECK(same);
	CHECK(r4[17].status == OA_VERIFY_DIGEST_MISMATCH);
	CHECK(r4[33].status == OA_VERIFY_MISSING);
	CHECK_U64(t4.count[OA_VERIFY_OK], N - 2);
	CHECK_U64(t1.bytes_hashed, t4.bytes_hashed);
	free(b);
	free(j);
	free(r1);
	free(r4);
}

static bool entry_equal(const oa_verify_cache_entry *a, const oa_verify_cache_entry *b)
{
	return a->st.dev == b->st.dev && a->st.ino == b->st.ino && a->st.size == b->st.size &&
	       a->st.mtime_ns == b->st.mtime_ns && a->st.ctime_ns == b->st.ctime_ns &&
	       strcmp(a->xxh128, b->xxh128) == 0 && a->verified_at == b->verified_at;
}

static void test_cache_roundtrip(void)
{
	char store[600], cpath[700], err[512];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/cachedir/deeper/verify-cache.json", store);
	enum { N = 20 };
	struct blob b[N];
	oa_verify_job j[N];
	oa_verify_result r[N];
	for (int i = 0; i < N; i++) {
		make_random_blob(store, 100 + (size_t)i * 1000, (uint64_t)i + 77, &b[i]);
		j[i] = job_for(&b[i], true);
	}
	flip_byte(b[4].path, 50);

	oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK(c != NULL);
	CHECK_STR(err, ""); /* a missing file is an empty cache, no warning */
	CHECK_U64(oa_verify_cache_count(c), 0);
	CHECK(!oa_verify_cache_dirty(c));
	oa_verify_opts o;
	base_opts(&o);
	o.cache = c;
	CHECK(run(j, N, &o, r, NULL) == 0);
	CHECK_U64(oa_verify_cache_count(c), N - 1); /* the mismatch is not cached */
	CHECK(oa_verify_cache_dirty(c));
	CHECK(r[0].cache_updated && !r[4].cache_updated);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == 0);
	CHECK(!oa_verify_cache_dirty(c));

	struct stat sb;
	CHECK(stat(cpath, &sb) == 0 && (sb.st_mode & 0777) == 0600);
	char dir[700];
	snprintf(dir, sizeof dir, "%s/cachedir/deeper", store);
	CHECK(stat(dir, &sb) == 0 && (sb.st_mode & 0777) == 0700);

	oa_verify_cache *c2 = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK(c2 != NULL);
	CHECK_STR(err, "");
	CHECK_U64(oa_verify_cache_count(c2), N - 1);
	int equal = 1;
	for (int i = 0; i < N; i++) {
		oa_verify_cache_entry e1, e2;
		bool h1 = oa_verify_cache_lookup(c, b[i].hex, &e1);
		bool h2 = oa_verify_cache_lookup(c2, b[i].hex, &e2);
		if (h1 != h2 || (h1 && !entry_equal(&e1, &e2)))
			equal = 0;
		if (h1 && (strcmp(e1.xxh128, b[i].xxh) || e1.st.size != b[i].size ||
		           e1.st.ino != r[i].st.ino || e1.st.mtime_ns != r[i].st.mtime_ns))
			equal = 0;
	}
	CHECK(equal);
	oa_verify_cache_entry e;
	CHECK(!oa_verify_cache_lookup(c2, b[4].hex, &e));

	/* update / remove / validation */
	CHECK(oa_verify_cache_lookup(c2, b[0].hex, &e));
	e.st.dev = UINT64_MAX - 5; /* above INT64_MAX: stored as int64, read back exactly */
	e.st.ino = (1ull << 63) + 12345;
	CHECK(oa_verify_cache_update(c2, b[0].hex, &e) == 0);
	CHECK(oa_verify_cache_update(c2, "ABC", &e) == -1);
	oa_verify_cache_entry bad = e;
	strcpy(bad.xxh128, "zz");
	CHECK(oa_verify_cache_update(c2, b[1].hex, &bad) == -1);
	oa_verify_cache_remove(c2, b[2].hex);
	oa_verify_cache_remove(c2, b[2].hex);
	CHECK(oa_verify_cache_save(c2, err, sizeof err) == 0);
	oa_verify_cache *c3 = oa_verify_cache_open(cpath, err, sizeof err);
	oa_verify_cache_entry e3;
	CHECK(oa_verify_cache_lookup(c3, b[0].hex, &e3) && entry_equal(&e, &e3));
	CHECK(!oa_verify_cache_lookup(c3, b[2].hex, &e3));
	CHECK_U64(oa_verify_cache_count(c3), N - 2);
	CHECK_STR(oa_verify_cache_path(c3), cpath);
	/* No stray temp file left behind. */
	char tmp[800];
	const char *base = strrchr(cpath, '/');
	snprintf(tmp, sizeof tmp, "%.*s/.%s.%ld.tmp", (int)(base - cpath), cpath, base + 1, (long)getpid());
	CHECK(access(tmp, F_OK) != 0);
	/* Something planted at the temp name is not written through. */
	char victim[800];
	snprintf(victim, sizeof victim, "%s/victim", store);
	write_file(victim, "keep", 4);
	CHECK(symlink(victim, tmp) == 0);
	CHECK(oa_verify_cache_save(c3, err, sizeof err) == 0);
	CHECK(stat(victim, &sb) == 0 && sb.st_size == 4);
	CHECK(lstat(cpath, &sb) == 0 && S_ISREG(sb.st_mode));
	CHECK(access(tmp, F_OK) != 0);
	oa_verify_cache_close(c);
	oa_verify_cache_close(c2);
	oa_verify_cache_close(c3);
}

/* The in-memory table: many inserts, deletes (backward shift) and updates
 * against a plain array, then a save / reopen. */
static void test_cache_table(void)
{
	char store[600], cpath[700], err[256];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/vc.json", store);
	enum { N = 5000 };
	char (*hex)[65] = calloc(N, sizeof *hex);
	bool *present = calloc(N, sizeof *present);
	oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
	oa_verify_cache_entry e;
	int upd_fail = 0;
	memset(&e, 0, sizeof e);
	strcpy(e.xxh128, "00112233445566778899aabbccddeeff");
	for (int i = 0; i < N; i++) {
		char s[32];
		snprintf(s, sizeof s, "k%d", i);
		sha256_hex(s, strlen(s), hex[i]);
		e.st.ino = (uint64_t)i;
		e.verified_at = i;
		if (oa_verify_cache_update(c, hex[i], &e) != 0)
			upd_fail++;
		present[i] = true;
	}
	for (int i = 0; i < N; i += 3) {
		oa_verify_cache_remove(c, hex[i]);
		present[i] = false;
	}
	for (int i = 1; i < N; i += 7) {
		e.st.ino = (uint64_t)i + 1000000;
		e.verified_at = i;
		if (oa_verify_cache_update(c, hex[i], &e) != 0)
			upd_fail++;
		present[i] = true;
	}
	CHECK(upd_fail == 0);
	size_t want = 0;
	for (int i = 0; i < N; i++)
		want += present[i];
	CHECK_U64(oa_verify_cache_count(c), want);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == 0);
	oa_verify_cache *c2 = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK_STR(err, "");
	CHECK_U64(oa_verify_cache_count(c2), want);
	int good = 1;
	for (int i = 0; i < N; i++) {
		oa_verify_cache_entry a, b;
		bool ha = oa_verify_cache_lookup(c, hex[i], &a), hb = oa_verify_cache_lookup(c2, hex[i], &b);
		uint64_t ino = (i % 7 == 1) ? (uint64_t)i + 1000000 : (uint64_t)i;
		if (ha != present[i] || hb != present[i] ||
		    (ha && (a.st.ino != ino || !entry_equal(&a, &b) || a.verified_at != i)))
			good = 0;
	}
	CHECK(good);
	oa_verify_cache_close(c);
	oa_verify_cache_close(c2);
	free(hex);
	free(present);
}

static void test_cache_corrupt(void)
{
	char store[600], cpath[700], err[512];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/vc.json", store);
	const char *bad[] = {
		"{not json",
		"",
		"[1,2,3]",
		"{\"schema\":\"something-else/9\",\"entries\":{}}",
		"{\"schema\":\"ollama-audit.verify-cache/1\",\"entries\":[]}",
		"{\"schema\":\"ollama-audit.verify-cache/1\",\"entries\":{},\"entries\":{}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		write_file(cpath, bad[i], strlen(bad[i]));
		oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
		CHECK(c != NULL);
		CHECK(err[0] != '\0');
		if (c)
			CHECK_U64(oa_verify_cache_count(c), 0);
		oa_verify_cache_close(c);
	}
	/* One good entry, four bad ones: the good one survives, with a warning. */
	const char *x32 = "0123456789abcdef0123456789abcdef";
	char doc[2048];
	snprintf(doc, sizeof doc,
	         "{\"schema\":\"ollama-audit.verify-cache/1\",\"entries\":{"
	         "\"%064d\":{\"dev\":1,\"ino\":2,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"%s\",\"verified_at\":6},"
	         "\"%063d1\":{\"dev\":1,\"ino\":2,\"size\":-3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"%s\",\"verified_at\":6},"
	         "\"%063d2\":{\"dev\":\"1\",\"ino\":2,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"%s\",\"verified_at\":6},"
	         "\"%063d3\":{\"dev\":1,\"ino\":2,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"XYZ\",\"verified_at\":6},"
	         "\"NOTHEX\":{\"dev\":1,\"ino\":2,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"%s\",\"verified_at\":6}"
	         "}}",
	         0, x32, 0, x32, 0, x32, 0, x32);
	write_file(cpath, doc, strlen(doc));
	oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK(c != NULL);
	CHECK(strstr(err, "dropped 4 invalid entries") != NULL);
	CHECK_U64(oa_verify_cache_count(c), 1);
	oa_verify_cache_entry e;
	char zero[65];
	memset(zero, '0', 64);
	zero[64] = 0;
	CHECK(oa_verify_cache_lookup(c, zero, &e));
	CHECK(e.st.dev == 1 && e.st.ino == 2 && e.st.size == 3 && e.st.mtime_ns == 4 &&
	      e.st.ctime_ns == 5 && e.verified_at == 6.0);
	CHECK_STR(e.xxh128, x32);
	CHECK(oa_verify_cache_dirty(c)); /* saving would clean the file */
	oa_verify_cache_close(c);

	/* An unreadable path (a directory) is a warning too. */
	c = oa_verify_cache_open(store, err, sizeof err);
	CHECK(c != NULL && err[0] != '\0');
	oa_verify_cache_close(c);
	/* Saving where the directory cannot be made fails cleanly. */
	char blocked[800];
	snprintf(blocked, sizeof blocked, "%s/vc.json/sub/cache.json", store);
	c = oa_verify_cache_open(blocked, err, sizeof err);
	CHECK(c != NULL);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == -1 && err[0] != '\0');
	oa_verify_cache_close(c);
	CHECK(oa_verify_cache_open("", err, sizeof err) == NULL);
}

static void test_default_path(void)
{
	char buf[1024], err[256];
	const char *oldx = getenv("XDG_CACHE_HOME"), *oldh = getenv("HOME");
	char *sx = oldx ? strdup(oldx) : NULL, *sh = oldh ? strdup(oldh) : NULL;
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	CHECK(oa_verify_cache_default_path(buf, sizeof buf) == 0);
	CHECK_STR(buf, "/x/cache/ollama-audit/verify-cache.json");
	setenv("XDG_CACHE_HOME", "relative", 1); /* ignored per the XDG spec */
	setenv("HOME", "/home/u", 1);
	CHECK(oa_verify_cache_default_path(buf, sizeof buf) == 0);
	CHECK_STR(buf, "/home/u/.cache/ollama-audit/verify-cache.json");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	CHECK(oa_verify_cache_default_path(buf, sizeof buf) == -1);
	CHECK(oa_verify_cache_open(NULL, err, sizeof err) == NULL && err[0] != '\0');
	/* The default path opens (missing file = empty cache), but we do not save it. */
	char home[700];
	snprintf(home, sizeof home, "%s/home", g_root);
	setenv("HOME", home, 1);
	oa_verify_cache *c = oa_verify_cache_open(NULL, err, sizeof err);
	CHECK(c != NULL);
	if (c) {
		snprintf(buf, sizeof buf, "%s/.cache/ollama-audit/verify-cache.json", home);
		CHECK_STR(oa_verify_cache_path(c), buf);
	}
	oa_verify_cache_close(c);
	CHECK(oa_verify_cache_default_path(buf, 10) == -1);
	if (sx)
		setenv("XDG_CACHE_HOME", sx, 1);
	else
		unsetenv("XDG_CACHE_HOME");
	if (sh)
		setenv("HOME", sh, 1);
	else
		unsetenv("HOME");
	free(sx);
	free(sh);
}

static void test_changed_only(void)
{
	char store[600], cpath[700], err[256];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/vc.json", store);
	enum { N = 6 };
	struct blob b[N];
	oa_verify_job j[N];
	oa_verify_result r[N];
	oa_verify_totals t;
	for (int i = 0; i < N; i++) {
		make_random_blob(store, 20000 + (size_t)i, (uint64_t)i + 500, &b[i]);
		j[i] = job_for(&b[i], true);
	}
	oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
	oa_verify_opts o;
	base_opts(&o);
	o.cache = c;
	o.changed_only = true;
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK_U64(t.count[OA_VERIFY_OK], N);

	/* Nothing changed: everything skipped without reading. */
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK_U64(t.count[OA_VERIFY_SKIPPED_UNCHANGED], N);
	CHECK_U64(t.bytes_hashed, 0);
	CHECK(r[0].stat_valid && r[0].bytes_hashed == 0);

	/* Touch one: re-hashed. Rewrite another with bad content but restore its
	 * mtime (bit rot / sneaky edit): ctime still moves, so it is re-hashed. */
	set_mtime(b[1].path, 1000000000, 5);
	struct stat sb;
	stat(b[2].path, &sb);
	flip_byte(b[2].path, 100);
	set_mtime(b[2].path, sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK(r[1].status == OA_VERIFY_OK && r[1].bytes_hashed == b[1].size);
	CHECK(r[2].status == OA_VERIFY_DIGEST_MISMATCH);
	CHECK_U64(t.count[OA_VERIFY_SKIPPED_UNCHANGED], N - 2);
	/* The mismatch removed its entry: the next run re-reports it. */
	oa_verify_cache_entry e;
	CHECK(!oa_verify_cache_lookup(c, b[2].hex, &e));
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK(r[2].status == OA_VERIFY_DIGEST_MISMATCH);
	CHECK(r[1].status == OA_VERIFY_SKIPPED_UNCHANGED);

	/* Without changed_only, everything is read again. */
	o.changed_only = false;
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK_U64(t.count[OA_VERIFY_SKIPPED_UNCHANGED], 0);

	/* A copy of a cached blob at another inode is "not cached" for changed_only. */
	char other[600];
	new_store(other, sizeof other);
	struct blob copy;
	make_random_blob(other, 20000, 500, &copy); /* same content as b[0] */
	CHECK_STR(copy.hex, b[0].hex);
	oa_verify_job cj = job_for(&copy, true);
	o.changed_only = true;
	CHECK(run(&cj, 1, &o, r, &t) == 0);
	CHECK(r[0].status == OA_VERIFY_OK && r[0].bytes_hashed == copy.size);

	/* The default racy window: a file whose ctime is not older than the
	 * verification by 2 s is never skipped. */
	struct blob fresh;
	make_random_blob(store, 3000, 999, &fresh);
	oa_verify_job fj = job_for(&fresh, true);
	oa_verify_opts_init(&o);
	o.cache = c;
	o.changed_only = true;
	CHECK(run(&fj, 1, &o, r, &t) == 0 && r[0].status == OA_VERIFY_OK);
	CHECK(run(&fj, 1, &o, r, &t) == 0 && r[0].status == OA_VERIFY_OK);
	o.racy_window = 0;
	CHECK(run(&fj, 1, &o, r, &t) == 0 && r[0].status == OA_VERIFY_SKIPPED_UNCHANGED);
	oa_verify_cache_close(c);
}

static void test_quick(void)
{
	char store[600], cpath[700], err[256];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/vc.json", store);
	enum { N = 5 };
	struct blob b[N];
	oa_verify_job j[N];
	oa_verify_result r[N];
	oa_verify_totals t;
	for (int i = 0; i < N; i++) {
		make_random_blob(store, 200000 + (size_t)i * 3, (uint64_t)i + 900, &b[i]);
		j[i] = job_for(&b[i], i != 0);
	}
	oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
	oa_verify_opts o;
	base_opts(&o);
	o.cache = c;
	o.buffer_size = 64 << 10;
	CHECK(run(j, N - 1, &o, r, &t) == 0); /* the last one stays uncached */

	flip_byte(b[1].path, 199999);
	o.mode = OA_VERIFY_QUICK;
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK(r[0].status == OA_VERIFY_OK && r[0].by_fingerprint);
	CHECK_STR(r[0].sha256_hex, "");
	CHECK_STR(r[0].xxh128_hex, b[0].xxh);
	CHECK_U64(r[0].bytes_hashed, b[0].size);
	CHECK(r[1].status == OA_VERIFY_FINGERPRINT_MISMATCH && r[1].by_fingerprint);
	CHECK(strcmp(r[1].xxh128_hex, b[1].xxh) != 0);
	CHECK(r[2].status == OA_VERIFY_OK && r[3].status == OA_VERIFY_OK);
	CHECK(r[4].status == OA_VERIFY_OK && !r[4].by_fingerprint); /* not cached: full sha256 */
	CHECK_STR(r[4].sha256_hex, b[4].hex);
	CHECK(r[4].cache_updated);
	CHECK_U64(t.count[OA_VERIFY_FINGERPRINT_MISMATCH], 1);

	/* The fingerprint mismatch dropped the entry: now a full sha256 says why. */
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK(r[1].status == OA_VERIFY_DIGEST_MISMATCH && !r[1].by_fingerprint);
	CHECK(r[4].status == OA_VERIFY_OK && r[4].by_fingerprint);

	/* Quick mode without a cache is plain sha256. */
	o.cache = NULL;
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK(r[0].status == OA_VERIFY_OK && !r[0].by_fingerprint);
	oa_verify_cache_close(c);
}

struct stop_after {
	volatile sig_atomic_t *flag;
	int after;
	int seen;
	pthread_mutex_t mu;
};

static void on_result_stop(void *ctx, size_t i, const oa_verify_result *r)
{
	struct stop_after *s = ctx;
	pthread_mutex_lock(&s->mu);
	if (++s->seen >= s->after)
		*s->flag = 1;
	pthread_mutex_unlock(&s->mu);
}

static void test_interrupt_and_deadline(void)
{
	char store[600], cpath[700], err[256];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/vc.json", store);
	enum { N = 10 };
	struct blob b[N];
	oa_verify_job j[N];
	oa_verify_result r[N];
	oa_verify_totals t;
	for (int i = 0; i < N; i++) {
		make_random_blob(store, 10000 + (size_t)i * 100, (uint64_t)i + 3000, &b[i]);
		j[i] = job_for(&b[i], true);
	}
	oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
	volatile sig_atomic_t flag = 0;
	struct stop_after sa = { &flag, 3, 0, PTHREAD_MUTEX_INITIALIZER };
	oa_verify_opts o;
	base_opts(&o);
	o.cache = c;
	o.changed_only = true;
	o.jobs = 1;
	o.interrupt = &flag;
	o.on_result = on_result_stop;
	o.result_ctx = &sa;
	CHECK(run(j, N, &o, r, &t) == 1);
	CHECK(t.interrupted && !t.timed_out);
	CHECK_U64(t.count[OA_VERIFY_OK], 3);
	CHECK_U64(t.count[OA_VERIFY_NOT_DONE], N - 3);
	/* Largest first: the three biggest were done. */
	CHECK(r[9].status == OA_VERIFY_OK && r[8].status == OA_VERIFY_OK && r[7].status == OA_VERIFY_OK);
	/* Already interrupted: nothing starts. */
	CHECK(run(j, N, &o, r, &t) == 1);
	CHECK_U64(t.count[OA_VERIFY_NOT_DONE], N);
	CHECK_U64(t.bytes_hashed, 0);

	/* The next run continues where it stopped. */
	flag = 0;
	o.interrupt = NULL;
	o.on_result = NULL;
	CHECK(run(j, N, &o, r, &t) == 0);
	CHECK_U64(t.count[OA_VERIFY_SKIPPED_UNCHANGED], 3);
	CHECK_U64(t.count[OA_VERIFY_OK], N - 3);

	/* A deadline already past when workers start: NOT_DONE (or, on a very
	 * fast start, OK); a changed_only run completes exactly the rest. */
	struct blob d[N];
	oa_verify_job dj[N];
	for (int i = 0; i < N; i++) {
		make_random_blob(store, 5000 + (size_t)i, (uint64_t)i + 4000, &d[i]);
		dj[i] = job_for(&d[i], true);
	}
	o.max_duration = 1e-9;
	o.jobs = 2;
	int rc = run(dj, N, &o, r, &t);
	size_t ok1 = t.count[OA_VERIFY_OK];
	CHECK(t.count[OA_VERIFY_OK] + t.count[OA_VERIFY_NOT_DONE] == N);
	CHECK(rc == (ok1 == N ? 0 : 1));
	CHECK(ok1 == N || t.timed_out);
	o.max_duration = 0;
	CHECK(run(dj, N, &o, r, &t) == 0);
	CHECK_U64(t.count[OA_VERIFY_SKIPPED_UNCHANGED], ok1);
	CHECK_U64(t.count[OA_VERIFY_OK], N - ok1);

	/* A big blob abandoned mid-way: NOT_DONE, partial bytes, not cached. */
	struct blob big;
	make_random_blob(store, 32u << 20, 5000, &big);
	oa_verify_job bj = job_for(&big, true);
	o.buffer_size = 64 << 10;
	o.max_duration = 0.003;
	CHECK(run(&bj, 1, &o, r, &t) == 1);
	CHECK(r[0].status == OA_VERIFY_NOT_DONE && t.timed_out);
	CHECK(r[0].bytes_hashed < big.size);
	oa_verify_cache_entry e;
	CHECK(!oa_verify_cache_lookup(c, big.hex, &e));
	unlink(big.path);
	oa_verify_cache_close(c);
}

struct prog {
	pthread_t main;
	int calls, wrong_thread, non_monotonic;
	uint64_t last_done, last_total;
	const char *last_label;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total, const char *label)
{
	struct prog *p = ctx;
	p->calls++;
	if (!pthread_equal(pthread_self(), p->main))
		p->wrong_thread++;
	if (done < p->last_done || done > total)
		p->non_monotonic++;
	p->last_done = done;
	p->last_total = total;
	p->last_label = label;
}

static void test_progress(void)
{
	char store[600];
	new_store(store, sizeof store);
	enum { N = 40 };
	struct blob b[N];
	oa_verify_job j[N];
	oa_verify_result r[N];
	oa_verify_totals t;
	uint64_t sum = 0;
	for (int i = 0; i < N; i++) {
		make_random_blob(store, 1u << 20, (uint64_t)i + 6000, &b[i]);
		j[i] = job_for(&b[i], i % 2); /* half with unknown size: planned from stat */
		sum += b[i].size;
	}
	unlink(b[4].path); /* missing, size unknown: planned 0 */
	struct prog p = { pthread_self(), 0, 0, 0, 0, 0, NULL };
	oa_verify_opts o;
	base_opts(&o);
	o.jobs = 2;
	o.progress = on_progress;
	o.progress_ctx = &p;
	o.progress_interval = 0.01;
	double t0 = oa_now();
	CHECK(run(j, N, &o, r, &t) == 0);
	double secs = oa_now() - t0;
	CHECK(p.calls >= 1);
	CHECK(p.calls <= (int)(secs / 0.01) + 2);
	CHECK(p.wrong_thread == 0 && p.non_monotonic == 0);
	CHECK_U64(t.bytes_total, sum - b[4].size);
	CHECK_U64(p.last_total, t.bytes_total);
	CHECK_U64(p.last_done, t.bytes_total);
	CHECK(p.last_label != NULL);
	/* no jobs: nothing to do, no crash */
	CHECK(oa_verify_run(NULL, 0, &o, NULL, &t, NULL, 0) == 0 && t.jobs == 0);
	CHECK(oa_verify_run(j, 1, NULL, r, NULL, NULL, 0) == 0 && r[0].status == OA_VERIFY_OK);
	CHECK_STR(oa_verify_status_name(OA_VERIFY_SKIPPED_UNCHANGED), "skipped-unchanged");
	CHECK_STR(oa_verify_status_name(OA_VERIFY_NOT_DONE), "not-done");
}

/* Page-cache hygiene: a verify drops the pages it brought in, and leaves the
 * pages that were cached before alone. */
static void test_page_cache(void)
{
	char store[600];
	new_store(store, sizeof store);
	struct blob cold, warm;
	make_random_blob(store, 24u << 20, 7000, &cold);
	make_random_blob(store, 24u << 20, 7001, &warm);
	int fc = open(cold.path, O_RDONLY), fw = open(warm.path, O_RDONLY);
	CHECK(fc >= 0 && fw >= 0);
	fsync(fc);
	fsync(fw);
	posix_fadvise(fc, 0, 0, POSIX_FADV_DONTNEED);
	int before = oa_range_cached(fc, 0, cold.size);
	if (before != 0) {
		/* tmpfs and friends keep pages no matter what: nothing to test. */
		fprintf(stderr, "note: page cache test skipped (cannot drop pages here: %d)\n", before);
		close(fc);
		close(fw);
		return;
	}
	char *buf = malloc(1 << 20);
	while (read(fw, buf, 1 << 20) > 0)
		;
	free(buf);
	CHECK(oa_range_cached(fw, 0, warm.size) == 1);
	oa_verify_job j[2] = { job_for(&cold, true), job_for(&warm, true) };
	oa_verify_result r[2];
	oa_verify_opts o;
	base_opts(&o);
	o.jobs = 2;
	CHECK(run(j, 2, &o, r, NULL) == 0);
	CHECK(r[0].status == OA_VERIFY_OK && r[1].status == OA_VERIFY_OK);
	CHECK(oa_range_cached(fc, 0, cold.size) == 0);
	CHECK(oa_range_cached(fw, 0, warm.size) == 1);
	close(fc);
	close(fw);
	unlink(cold.path);
	unlink(warm.path);
}

/* Count resident pages of [off, off+len) page by page. */
static size_t resident_pages(int fd, uint64_t off, size_t len)
{
	unsigned char vec[2048];
	size_t pg = oa_page_size(), total = 0;
	while (len) {
		size_t chunk = len < sizeof vec * pg ? len : sizeof vec * pg;
		long n = oa_range_residency(fd, off, chunk, vec, sizeof vec);
		if (n < 0)
			return (size_t)-1;
		for (long i = 0; i < n; i++)
			total += vec[i];
		off += chunk;
		len -= chunk;
	}
	return total;
}

/* A window only partly cached before the verify: the cached part stays,
 * the rest goes (a window-wide "was it cached?" would drop both). */
static void test_page_cache_partial(void)
{
	char store[600];
	new_store(store, sizeof store);
	struct blob b;
	make_random_blob(store, 24u << 20, 7002, &b);
	int fd = open(b.path, O_RDONLY);
	CHECK(fd >= 0);
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (resident_pages(fd, 0, b.size) != 0) {
		fprintf(stderr, "note: partial page cache test skipped (cannot drop pages here)\n");
		close(fd);
		return;
	}
	/* Someone else uses 3 MiB in the middle of the first window. */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	char *buf = malloc(3u << 20);
	CHECK(pread(fd, buf, 3u << 20, 4u << 20) == (ssize_t)(3u << 20));
	free(buf);
	size_t pg = oa_page_size();
	size_t mid_before = resident_pages(fd, 4u << 20, 3u << 20);
	CHECK(mid_before == (3u << 20) / pg);
	oa_verify_job j = job_for(&b, true);
	oa_verify_result r;
	oa_verify_opts o;
	base_opts(&o);
	o.jobs = 1;
	CHECK(run(&j, 1, &o, &r, NULL) == 0);
	CHECK(r.status == OA_VERIFY_OK);
	CHECK_U64(resident_pages(fd, 4u << 20, 3u << 20), mid_before);  /* theirs: kept */
	CHECK_U64(resident_pages(fd, 0, 4u << 20), 0);                   /* ours: dropped */
	CHECK_U64(resident_pages(fd, 8u << 20, 16u << 20), 0);
	close(fd);
	unlink(b.path);
}

/* A fresh blob of `mib` MiB whose pages are all out of the page cache; fd
 * open read-only, or -1 (and a note) where pages cannot be dropped (tmpfs). */
static int cold_blob(const char *store, size_t mib, uint64_t seed, struct blob *b, const char *what)
{
	make_random_blob(store, mib << 20, seed, b);
	int fd = open(b->path, O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return -1;
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (resident_pages(fd, 0, b->size) != 0) {
		fprintf(stderr, "note: %s skipped (cannot drop pages here)\n", what);
		close(fd);
		unlink(b->path);
		return -1;
	}
	return fd;
}

/* Read [off, off+len) as "someone else" would, without read-ahead around it. */
static void cache_range(int fd, uint64_t off, size_t len)
{
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	char *buf = malloc(len);
	CHECK(buf && pread(fd, buf, len, (off_t)off) == (ssize_t)len);
	free(buf);
	posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
}

/* A cold file verified with the default buffer leaves nothing behind: our
 * own read-ahead (up to 16-32 MiB past the read position here) must not be
 * taken for pages the machine had cached. 64 MiB is the review's case; 160
 * MiB crosses several chunk boundaries after the first look-ahead sample. */
static void test_page_cache_cold(size_t mib)
{
	char store[600];
	new_store(store, sizeof store);
	struct blob b;
	int fd = cold_blob(store, mib, 7100 + mib, &b, "cold page cache test");
	if (fd < 0)
		return;
	oa_verify_job j = job_for(&b, true);
	oa_verify_result r;
	oa_verify_opts o;
	base_opts(&o);
	o.jobs = 1; /* default buffer */
	CHECK(run(&j, 1, &o, &r, NULL) == 0);
	CHECK(r.status == OA_VERIFY_OK);
	CHECK_U64(resident_pages(fd, 0, b.size), 0);
	close(fd);
	unlink(b.path);
}

/* A file the machine has fully cached stays fully cached whatever the read
 * size: one that does not divide the drop grid (3 MiB), and ones as large as
 * a read-ahead window or the whole file (16, 64 MiB). */
static void test_page_cache_warm_bufsizes(void)
{
	char store[600];
	new_store(store, sizeof store);
	struct blob b;
	int fd = cold_blob(store, 64, 7200, &b, "warm page cache test");
	if (fd < 0)
		return;
	cache_range(fd, 0, b.size);
	size_t all = b.size / oa_page_size();
	CHECK_U64(resident_pages(fd, 0, b.size), all);
	static const size_t sizes[] = { 3u << 20, 16u << 20, 64u << 20 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		oa_verify_job j = job_for(&b, true);
		oa_verify_result r;
		oa_verify_opts o;
		base_opts(&o);
		o.jobs = 1;
		o.buffer_size = sizes[k];
		CHECK(run(&j, 1, &o, &r, NULL) == 0);
		CHECK(r.status == OA_VERIFY_OK);
		size_t left = resident_pages(fd, 0, b.size);
		if (left != all)
			fprintf(stderr, "  buffer %zu MiB: %zu of %zu pages resident\n", sizes[k] >> 20,
			        left, all);
		CHECK_U64(left, all);
	}
	close(fd);
	unlink(b.path);
}

/* Pages someone else cached deep into the file (past where our read-ahead
 * reaches by the time the look-ahead samples them) stay, exactly; the rest
 * goes, with a read size that divides nothing. */
static void test_page_cache_partial_far(void)
{
	char store[600];
	new_store(store, sizeof store);
	struct blob b;
	int fd = cold_blob(store, 128, 7300, &b, "partial page cache test (far)");
	if (fd < 0)
		return;
	size_t pg = oa_page_size();
	cache_range(fd, 56u << 20, 3u << 20);  /* chunk 1 */
	cache_range(fd, 100u << 20, 1u << 20); /* chunk 2: sampled after chunk 0 is read */
	CHECK_U64(resident_pages(fd, 0, b.size), (4u << 20) / pg);
	oa_verify_job j = job_for(&b, true);
	oa_verify_result r;
	oa_verify_opts o;
	base_opts(&o);
	o.jobs = 1;
	o.buffer_size = (3u << 20) + (64u << 10); /* 3.0625 MiB */
	CHECK(run(&j, 1, &o, &r, NULL) == 0);
	CHECK(r.status == OA_VERIFY_OK);
	CHECK_U64(resident_pages(fd, 56u << 20, 3u << 20), (3u << 20) / pg);
	CHECK_U64(resident_pages(fd, 100u << 20, 1u << 20), (1u << 20) / pg);
	CHECK_U64(resident_pages(fd, 0, b.size), (4u << 20) / pg);
	close(fd);
	unlink(b.path);
}

struct stop_at {
	volatile sig_atomic_t *flag;
	uint64_t bytes;
};

static void on_progress_stop(void *ctx, uint64_t done, uint64_t total, const char *label)
{
	struct stop_at *s = ctx;
	(void)total;
	(void)label;
	if (done >= s->bytes)
		*s->flag = 1;
}

/* A verify abandoned part-way drops what it read and what its read-ahead
 * brought in past the last read. Read-ahead still in flight when we drop
 * (locked pages) can escape: at most two read-ahead windows (2 × 16 MiB). In
 * practice nothing is left. Whether the stop lands mid-file depends on
 * timing; the bound holds either way. */
static void test_page_cache_abandon(void)
{
	char store[600];
	new_store(store, sizeof store);
	struct blob b;
	int fd = cold_blob(store, 128, 7400, &b, "abandon page cache test");
	if (fd < 0)
		return;
	volatile sig_atomic_t flag = 0;
	struct stop_at sa = { &flag, 24u << 20 };
	oa_verify_job j = job_for(&b, true);
	oa_verify_result r;
	oa_verify_opts o;
	base_opts(&o);
	o.jobs = 1;
	o.interrupt = &flag;
	o.progress = on_progress_stop;
	o.progress_ctx = &sa;
	o.progress_interval = 0.001;
	CHECK(run(&j, 1, &o, &r, NULL) >= 0);
	CHECK(r.status == (r.bytes_hashed < b.size ? OA_VERIFY_NOT_DONE : OA_VERIFY_OK));
	size_t left = resident_pages(fd, 0, b.size);
	if (left)
		fprintf(stderr, "note: abandoned at %llu MiB, %zu pages left resident\n",
		        (unsigned long long)(r.bytes_hashed >> 20), left);
	CHECK(left <= (32u << 20) / oa_page_size());
	close(fd);
	unlink(b.path);
}

static void rm_rf(const char *p)
{
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", p);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(g_root, sizeof g_root, "%s/oa-verify-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(g_root)) {
		perror("mkdtemp");
		return 2;
	}
	test_statuses(64 << 10, 3);
	test_statuses(0, 0);
	test_statuses(4u << 20, 1);
	test_jobs_equivalent();
	test_cache_roundtrip();
	test_cache_table();
	test_cache_corrupt();
	test_default_path();
	test_changed_only();
	test_quick();
	test_interrupt_and_deadline();
	test_progress();
	test_page_cache();
	test_page_cache_partial();
	test_page_cache_cold(64);
	test_page_cache_cold(160);
	test_page_cache_warm_bufsizes();
	test_page_cache_partial_far();
	test_page_cache_abandon();
	rm_rf(g_root);
	TEST_MAIN_END();
}
