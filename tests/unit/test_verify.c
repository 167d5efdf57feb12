/* test_verify.c - the verify engine and its cache, on blobs in a temp dir. */
#include "ollama_audit/verify.h"
#include "ollama_audit/verify_cache.h"
#include "base/platform.h"
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
	CHECK_U64(oa_verify_cache_count(c), N); /* the mismatch is cached as a failure */
	CHECK(oa_verify_cache_dirty(c));
	CHECK(r[0].cache_updated && r[4].cache_updated);
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
	CHECK_U64(oa_verify_cache_count(c2), N);
	int equal = 1;
	for (int i = 0; i < N; i++) {
		oa_verify_cache_entry e1, e2;
		bool h1 = oa_verify_cache_lookup(c, b[i].hex, &e1);
		bool h2 = oa_verify_cache_lookup(c2, b[i].hex, &e2);
		if (h1 != h2 || (h1 && !entry_equal(&e1, &e2)))
			equal = 0;
		if (h1 && i != 4 && (strcmp(e1.xxh128, b[i].xxh) || e1.st.size != b[i].size ||
		           e1.st.ino != r[i].st.ino || e1.st.mtime_ns != r[i].st.mtime_ns))
			equal = 0;
	}
	CHECK(equal);
	oa_verify_cache_entry e;
	CHECK(oa_verify_cache_lookup(c2, b[4].hex, &e) && strcmp(e.failed, "digest-mismatch") == 0);
	CHECK(oa_verify_cache_lookup(c2, b[0].hex, &e) && e.failed[0] == '\0');
	oa_verify_cache_entry badcode = e;
	strcpy(badcode.failed, "rot");
	CHECK(oa_verify_cache_update(c2, b[1].hex, &badcode) == -1);

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
	/* Another dev/ino is another file claiming b[0]: a second entry. */
	CHECK(oa_verify_cache_lookup_file(c3, b[0].hex, e.st.dev, e.st.ino, &e3) && entry_equal(&e, &e3));
	CHECK(oa_verify_cache_lookup_file(c3, b[0].hex, r[0].st.dev, r[0].st.ino, &e3));
	CHECK(!oa_verify_cache_lookup(c3, b[2].hex, &e3));
	CHECK_U64(oa_verify_cache_count(c3), N);
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
	enum { N = 40000 }; /* a file of many of the streaming parse's 256 KiB windows */
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
	/* A second file claiming the digest (another ino), verified later: a
	 * second entry, the one lookup gives; the first stays. */
	size_t copies = 0;
	for (int i = 1; i < N; i += 7) {
		e.st.ino = (uint64_t)i + 1000000;
		e.verified_at = i + 0.5;
		if (oa_verify_cache_update(c, hex[i], &e) != 0)
			upd_fail++;
		copies += present[i];
		present[i] = true;
	}
	CHECK(upd_fail == 0);
	size_t want = copies;
	for (int i = 0; i < N; i++)
		want += present[i];
	CHECK_U64(oa_verify_cache_count(c), want);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == 0);
	struct stat cst;
	CHECK(stat(cpath, &cst) == 0 && cst.st_size > (2 << 20)); /* read a window at a time (issue 21) */
	oa_verify_cache *c2 = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK_STR(err, "");
	CHECK_U64(oa_verify_cache_count(c2), want);
	int good = 1;
	for (int i = 0; i < N; i++) {
		oa_verify_cache_entry a, b;
		bool ha = oa_verify_cache_lookup(c, hex[i], &a), hb = oa_verify_cache_lookup(c2, hex[i], &b);
		uint64_t ino = (i % 7 == 1) ? (uint64_t)i + 1000000 : (uint64_t)i;
		double at = (i % 7 == 1) ? i + 0.5 : i;
		if (ha != present[i] || hb != present[i] ||
		    (ha && (a.st.ino != ino || !entry_equal(&a, &b) || a.verified_at != at)))
			good = 0;
		if (i % 7 == 1 && i % 3 != 0 && !oa_verify_cache_lookup_file(c2, hex[i], 0, (uint64_t)i, &b))
			good = 0; /* the first file's entry survived the second's */
	}
	CHECK(good);
	oa_verify_cache_close(c);
	oa_verify_cache_close(c2);
	free(hex);
	free(present);
}

/* tmpl with K the digest 0...0, k the same without its first digit, E entry. */
static void fill_doc(char *doc, size_t cap, const char *tmpl, const char *entry)
{
	size_t n = 0;
	for (const char *t = tmpl; *t && n + 100 + strlen(entry) < cap; t++) {
		if (*t == 'K' || *t == 'k') {
			size_t w = *t == 'K' ? 64 : 63;
			memset(doc + n, '0', w);
			n += w;
		} else if (*t == 'E') {
			memcpy(doc + n, entry, strlen(entry));
			n += strlen(entry);
		} else {
			doc[n++] = *t;
		}
	}
	doc[n] = '\0';
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

	/* The entry-at-a-time parse (verify_cache.c stream_load) gives the same
	 * table as the whole-tree one: a file cut short, a digest twice or bytes
	 * after the document are corrupt (nothing loaded, not half of it); keys
	 * in another order or with escapes still load. */
	const char *one = "{\"dev\":1,\"ino\":2,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,"
	                  "\"xxh128\":\"0123456789abcdef0123456789abcdef\",\"verified_at\":6}";
	const char *shapes[][2] = {
		{ "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{\"K\":[E],\"K1\":[", "0" },
		{ "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{\"K\":[E],\"K\":[]}}", "0" },
		{ "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{\"K\":[E]}} x", "0" },
		{ "{\"entries\":{\"K\":[E]},\"schema\":\"ollama-audit.verify-cache/3\"}", "1" },
		{ "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{\"\\u0030k\":[E]}}", "1" },
		{ " {\n\"schema\" : \"ollama-audit.verify-cache/3\" ,\n \"entries\" : { \"K\" : [E] } }\n", "1" },
	};
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
		fill_doc(doc, sizeof doc, shapes[i][0], one);
		write_file(cpath, doc, strlen(doc));
		c = oa_verify_cache_open(cpath, err, sizeof err);
		CHECK(c != NULL);
		bool loads = shapes[i][1][0] == '1';
		CHECK(loads == (err[0] == '\0'));
		CHECK_U64(oa_verify_cache_count(c), loads ? 1 : 0);
		CHECK(!loads || oa_verify_cache_lookup(c, zero, &e));
		oa_verify_cache_close(c);
	}

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

/* /3: a list of files under a digest. A malformed list or entry is
 * dropped alone; copies beyond OA_VERIFY_CACHE_MAX_COPIES replace the one
 * verified longest ago; remove_file forgets one file, not the others. */
static void test_cache_copies(void)
{
	char store[600], cpath[700], err[512];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/vc.json", store);
	const char *x32 = "0123456789abcdef0123456789abcdef";
	char doc[2048];
	snprintf(doc, sizeof doc,
	         "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{"
	         "\"%064d\":[{\"dev\":1,\"ino\":2,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"%s\",\"verified_at\":6},"
	         "{\"dev\":1,\"ino\":9,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"%s\",\"verified_at\":7,"
	         "\"failed\":\"digest-mismatch\"},{\"dev\":1}],"
	         "\"%063d1\":{\"dev\":1,\"ino\":2,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"%s\",\"verified_at\":6}"
	         "}}", 0, x32, x32, 0, x32);
	write_file(cpath, doc, strlen(doc));
	oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK(c != NULL);
	CHECK(strstr(err, "dropped 2 invalid entries") != NULL);
	CHECK_U64(oa_verify_cache_count(c), 2);
	char zero[65];
	memset(zero, '0', 64);
	zero[64] = 0;
	oa_verify_cache_entry e;
	CHECK(oa_verify_cache_lookup(c, zero, &e) && e.st.ino == 2); /* the good one first */
	CHECK(oa_verify_cache_lookup_file(c, zero, 1, 9, &e) && strcmp(e.failed, "digest-mismatch") == 0);
	oa_verify_cache_remove_file(c, zero, 1, 9);
	CHECK(!oa_verify_cache_lookup_file(c, zero, 1, 9, &e));
	CHECK(oa_verify_cache_lookup_file(c, zero, 1, 2, &e));
	for (int k = 0; k < OA_VERIFY_CACHE_MAX_COPIES; k++) {
		e.st.ino = 100 + (uint64_t)k;
		e.verified_at = 100 + k;
		CHECK(oa_verify_cache_update(c, zero, &e) == 0);
	}
	CHECK_U64(oa_verify_cache_count(c), OA_VERIFY_CACHE_MAX_COPIES);
	CHECK(!oa_verify_cache_lookup_file(c, zero, 1, 2, &e)); /* verified longest ago: gone */
	CHECK(oa_verify_cache_lookup(c, zero, &e) && e.st.ino == 100 + OA_VERIFY_CACHE_MAX_COPIES - 1);
	oa_verify_cache_remove_file(c, zero, 1, 105);
	CHECK_U64(oa_verify_cache_count(c), OA_VERIFY_CACHE_MAX_COPIES - 1);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == 0);
	oa_verify_cache *c2 = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK_STR(err, "");
	CHECK_U64(oa_verify_cache_count(c2), OA_VERIFY_CACHE_MAX_COPIES - 1);
	CHECK(oa_verify_cache_lookup_file(c2, zero, 1, 104, &e) && e.verified_at == 104);
	for (int k = 0; k < OA_VERIFY_CACHE_MAX_COPIES; k++)
		oa_verify_cache_remove_file(c2, zero, 1, 100 + (uint64_t)k);
	CHECK_U64(oa_verify_cache_count(c2), 0);
	CHECK(!oa_verify_cache_lookup(c2, zero, &e));
	oa_verify_cache_close(c);
	oa_verify_cache_close(c2);
}

/* The failures alone (issue 21: what check's cached findings ask of the
 * cache): a good entry is not in the table, a failed one is, as the full
 * open has it; saving and updating refuse, so the file keeps every entry;
 * a digest written twice is a corrupt file for it too, in either order. */
static void test_cache_failed_only(void)
{
	char store[600], cpath[700], err[512];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/vc.json", store);
	const char *x32 = "0123456789abcdef0123456789abcdef";
#define ONE_ENTRY "{\"dev\":1,\"ino\":%d,\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"%s\",\"verified_at\":6%s}"
	char good[256], bad[256], doc[2048];
	snprintf(good, sizeof good, ONE_ENTRY, 2, x32, "");
	snprintf(bad, sizeof bad, ONE_ENTRY, 9, x32, ",\"failed\":\"fingerprint-mismatch\"");
	snprintf(doc, sizeof doc,
	         "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{\n\"%064d\":[%s,%s],\n\"%063d1\":[%s]}}\n",
	         0, good, bad, 0, good);
	write_file(cpath, doc, strlen(doc));
	oa_verify_cache *c = oa_verify_cache_open_failed(cpath, err, sizeof err);
	CHECK(c != NULL);
	CHECK_STR(err, "");
	CHECK_U64(oa_verify_cache_count(c), 1);
	char zero[65], one_hex[65];
	snprintf(zero, sizeof zero, "%064d", 0);
	snprintf(one_hex, sizeof one_hex, "%063d1", 0);
	oa_verify_cache_entry e;
	CHECK(!oa_verify_cache_lookup_file(c, zero, 1, 2, &e));
	CHECK(!oa_verify_cache_lookup(c, one_hex, &e));
	CHECK(oa_verify_cache_lookup_file(c, zero, 1, 9, &e) && strcmp(e.failed, "fingerprint-mismatch") == 0 &&
	      strcmp(e.xxh128, x32) == 0 && e.verified_at == 6);
	oa_file_stamp now = { .dev = 1, .ino = 9, .size = 3, .mtime_ns = 4, .ctime_ns = 5 };
	CHECK(oa_verify_cache_judge(c, zero, &now, NULL) == OA_VSTATE_FAILED);
	e.failed[0] = '\0';
	CHECK(oa_verify_cache_update(c, zero, &e) == -1);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == -1 && err[0] != '\0');
	oa_verify_cache_close(c);
	char back[2048];
	FILE *f = fopen(cpath, "r");
	size_t n = f ? fread(back, 1, sizeof back - 1, f) : 0;
	if (f)
		fclose(f);
	back[n] = '\0';
	CHECK_STR(back, doc); /* untouched */
	/* The same digest twice, after and before another one: corrupt, empty. */
	for (int order = 0; order < 2; order++) {
		snprintf(doc, sizeof doc,
		         order ? "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{\"%064d\":[%s],"
		                 "\"%063d1\":[%s],\"%064d\":[%s]}}"
		               : "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{\"%064d\":[%s],"
		                 "\"%063d1\":[%s],\"%063d1\":[%s]}}",
		         0, good, 0, good, 0, bad);
		write_file(cpath, doc, strlen(doc));
		c = oa_verify_cache_open_failed(cpath, err, sizeof err);
		CHECK(c != NULL && strstr(err, "is corrupt") != NULL);
		if (c)
			CHECK_U64(oa_verify_cache_count(c), 0);
		oa_verify_cache_close(c);
	}
#undef ONE_ENTRY
}

/* A good entry for file (1, ino) under the all-zero digest. */
static void one_good_entry(char *doc, size_t len)
{
	snprintf(doc, len, "{\"schema\":\"ollama-audit.verify-cache/3\",\"entries\":{\"%064d\":[{\"dev\":1,\"ino\":2,"
	         "\"size\":3,\"mtime_ns\":4,\"ctime_ns\":5,\"xxh128\":\"0123456789abcdef0123456789abcdef\","
	         "\"verified_at\":6}]}}", 0);
}

static unsigned mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
}

/* A cache someone else could have written is not read; saved, it is
 * replaced by a fresh file of ours where only we can write, else left. */
static void test_cache_trust(void)
{
	char store[600], cpath[700], link[700], shared[700], spath[800], doc[512], err[512];
	new_store(store, sizeof store);
	snprintf(cpath, sizeof cpath, "%s/vc.json", store);
	one_good_entry(doc, sizeof doc);
	write_file(cpath, doc, strlen(doc));
	CHECK(chmod(store, 0700) == 0 && chmod(cpath, 0666) == 0);
	oa_verify_cache *c = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK(c != NULL && strstr(err, "writable by others (mode 0666): its entries are ignored") != NULL);
	CHECK_U64(oa_verify_cache_count(c), 0);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == 0 && strstr(err, "written afresh") != NULL);
	CHECK(mode_of(cpath) == 0600);
	oa_verify_cache_close(c);
	c = oa_verify_cache_open(cpath, err, sizeof err); /* ours now */
	CHECK(c != NULL && err[0] == '\0');
	oa_verify_cache_close(c);
	write_file(cpath, doc, strlen(doc));
	CHECK(chmod(cpath, 0620) == 0);
	c = oa_verify_cache_open(cpath, err, sizeof err);
	CHECK(c != NULL && strstr(err, "writable by its group (mode 0620)") != NULL);
	oa_verify_cache_close(c);
	/* a symlink: not read through, and not replaced (outfile.h) */
	CHECK(chmod(cpath, 0600) == 0);
	snprintf(link, sizeof link, "%s/link.json", store);
	CHECK(symlink(cpath, link) == 0);
	c = oa_verify_cache_open(link, err, sizeof err);
	CHECK(c != NULL && strstr(err, "is a symlink: its entries are ignored") != NULL);
	CHECK_U64(oa_verify_cache_count(c), 0);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == -1 && strstr(err, "symlink") != NULL);
	oa_verify_cache_close(c);
	/* a directory others can write: the file is left as it is */
	snprintf(shared, sizeof shared, "%s/shared", store);
	CHECK(mkdir(shared, 0700) == 0 && chmod(shared, 01777) == 0);
	snprintf(spath, sizeof spath, "%s/vc.json", shared);
	write_file(spath, doc, strlen(doc));
	CHECK(chmod(spath, 0666) == 0);
	c = oa_verify_cache_open(spath, err, sizeof err);
	CHECK(c != NULL && oa_verify_cache_count(c) == 0);
	CHECK(oa_verify_cache_save(c, err, sizeof err) == -1 && strstr(err, "not saved") != NULL &&
	      strstr(err, "writable by others") != NULL);
	CHECK(mode_of(spath) == 0666);
	oa_verify_cache_close(c);
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
	/* The mismatch replaced its entry with a failure, never skipped: the
	 * next run re-reports it. */
	oa_verify_cache_entry e;
	CHECK(oa_verify_cache_lookup(c, b[2].hex, &e) && e.failed[0]);
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

/* ---- page-cache hygiene, through the oa_pagecache_ops seam ---------------
 *
 * What the kernel keeps cached depends on memory pressure and other
 * processes, so these tests do not ask it. A fake page cache stands in for
 * mincore and fadvise(DONTNEED), and models the one thing the verify must
 * not mistake for "the machine had it": its own reads and read-ahead. Each
 * time verify asks or advises, every page below the file offset plus the
 * read-ahead window becomes resident (once: a page we dropped stays dropped).
 * The test then checks the end state page by page: exactly the pages that
 * were resident before are resident after. */

struct fake_file {
	dev_t dev;
	ino_t ino;
	uint64_t size;
	size_t pages;
	unsigned char *had;   /* resident before the verify (the script) */
	unsigned char *in;    /* resident now */
	size_t frontier;      /* pages below it were brought in by our reads */
	size_t theirs_dropped;/* pages the machine had that a DONTNEED covered */
};

struct fake_cache {
	pthread_mutex_t mu;
	size_t pg;
	uint64_t readahead;   /* bytes the kernel may have read past the offset */
	bool no_mincore;      /* residency cannot be told: -1 */
	size_t calls_residency, calls_dontneed;
	int n;
	struct fake_file f[2];
};

static struct fake_file *fake_find(struct fake_cache *fc, int fd)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0)
		return NULL;
	for (int i = 0; i < fc->n; i++)
		if (fc->f[i].dev == sb.st_dev && fc->f[i].ino == sb.st_ino)
			return &fc->f[i];
	return NULL;
}

/* Our reads so far (the fd's offset) and their read-ahead become resident. */
static void fake_catch_up(struct fake_cache *fc, struct fake_file *f, int fd)
{
	off_t pos = lseek(fd, 0, SEEK_CUR);
	if (pos <= 0)
		return;
	uint64_t end = (uint64_t)pos + fc->readahead;
	size_t to = (size_t)((end + fc->pg - 1) / fc->pg);
	if (to > f->pages)
		to = f->pages;
	for (; f->frontier < to; f->frontier++)
		f->in[f->frontier] = 1;
}

static long fake_residency(void *ctx, int fd, uint64_t offset, size_t len, unsigned char *vec,
                           size_t vec_len)
{
	struct fake_cache *fc = ctx;
	long rc = -1;
	pthread_mutex_lock(&fc->mu);
	fc->calls_residency++;
	struct fake_file *f = fake_find(fc, fd);
	size_t pages = (len + fc->pg - 1) / fc->pg;
	if (f && !fc->no_mincore && len && offset % fc->pg == 0 && pages <= vec_len) {
		fake_catch_up(fc, f, fd);
		size_t first = (size_t)(offset / fc->pg);
		for (size_t i = 0; i < pages; i++) /* past the end: not resident, as on Linux */
			vec[i] = first + i < f->pages ? f->in[first + i] : 0;
		rc = (long)pages;
	}
	pthread_mutex_unlock(&fc->mu);
	return rc;
}

/* Linux drops the whole pages inside [offset, offset+len); len 0 = to the
 * end; a partial page at the end of the range stays unless it is the file's
 * last. */
static void fake_dontneed(void *ctx, int fd, off_t offset, off_t len)
{
	struct fake_cache *fc = ctx;
	pthread_mutex_lock(&fc->mu);
	fc->calls_dontneed++;
	struct fake_file *f = fake_find(fc, fd);
	if (f && offset >= 0 && len >= 0) {
		fake_catch_up(fc, f, fd);
		size_t first = (size_t)(((uint64_t)offset + fc->pg - 1) / fc->pg);
		uint64_t last = (uint64_t)offset + (uint64_t)len;
		size_t end = len && last < f->size ? (size_t)(last / fc->pg) : f->pages;
		for (size_t p = first; p < end && p < f->pages; p++) {
			if (f->had[p] && f->in[p])
				f->theirs_dropped++;
			f->in[p] = 0;
		}
	}
	pthread_mutex_unlock(&fc->mu);
}

static void fake_init(struct fake_cache *fc, uint64_t readahead)
{
	memset(fc, 0, sizeof *fc);
	pthread_mutex_init(&fc->mu, NULL);
	fc->pg = oa_page_size();
	fc->readahead = readahead;
}

/* Track `b`; pages of the [from, to) byte ranges in `cached` (pairs, ending
 * with 0, 0) were resident before. */
static struct fake_file *fake_add(struct fake_cache *fc, const struct blob *b, const uint64_t *cached)
{
	struct stat sb;
	CHECK(stat(b->path, &sb) == 0);
	struct fake_file *f = &fc->f[fc->n++];
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	f->size = b->size;
	f->pages = (b->size + fc->pg - 1) / fc->pg;
	f->had = calloc(f->pages, 1);
	f->in = calloc(f->pages, 1);
	for (; cached && (cached[0] || cached[1]); cached += 2)
		for (uint64_t p = cached[0] / fc->pg; p * fc->pg < cached[1] && p < f->pages; p++)
			f->had[p] = f->in[p] = 1;
	return f;
}

static size_t count_pages(const unsigned char *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += v[i];
	return k;
}

/* Exactly the pages that were resident before are resident now. */
static void fake_check_kept_exactly(const struct fake_file *f, const char *what)
{
	size_t ours_left = 0, theirs_gone = 0;
	for (size_t p = 0; p < f->pages; p++) {
		ours_left += !f->had[p] && f->in[p];
		theirs_gone += f->had[p] && !f->in[p];
	}
	if (ours_left || theirs_gone || f->theirs_dropped)
		fprintf(stderr, "  %s: %zu of our pages left, %zu of theirs gone (%zu DONTNEED)\n",
		        what, ours_left, theirs_gone, f->theirs_dropped);
	CHECK_U64(ours_left, 0);
	CHECK_U64(theirs_gone, 0);
	CHECK_U64(f->theirs_dropped, 0);
}

/* After the verify: what it read (and read ahead) since its last call into
 * the cache is resident too; nothing dropped it. */
static void fake_finish(struct fake_cache *fc, const oa_verify_result *r)
{
	for (int i = 0; i < fc->n; i++) {
		struct fake_file *f = &fc->f[i];
		if (!r[i].bytes_hashed)
			continue;
		uint64_t end = r[i].bytes_hashed + fc->readahead;
		size_t to = (size_t)((end + fc->pg - 1) / fc->pg);
		for (; f->frontier < to && f->frontier < f->pages; f->frontier++)
			f->in[f->frontier] = 1;
	}
}

static void fake_free(struct fake_cache *fc)
{
	oa_pagecache_set_ops(NULL);
	for (int i = 0; i < fc->n; i++) {
		free(fc->f[i].had);
		free(fc->f[i].in);
	}
	pthread_mutex_destroy(&fc->mu);
}

static void fake_install(struct fake_cache *fc, oa_pagecache_ops *ops)
{
	ops->ctx = fc;
	ops->residency = fake_residency;
	ops->dontneed = fake_dontneed;
	oa_pagecache_set_ops(ops);
}

/* Read-ahead the verify must tolerate: two windows of max(16 MiB, buffer)
 * past the offset (see the comment above drop_chunk_size in verify.c). */
static uint64_t readahead_for(size_t bufsize)
{
	uint64_t w = bufsize > (16u << 20) ? bufsize : (16u << 20);
	return 2 * w;
}

static int verify_with_fake(const struct blob *b, size_t bufsize, struct fake_cache *fc,
                            oa_verify_result *r, const oa_verify_opts *extra)
{
	oa_pagecache_ops ops;
	fake_install(fc, &ops);
	oa_verify_job j = job_for(b, true);
	oa_verify_opts o;
	if (extra)
		o = *extra;
	else
		base_opts(&o);
	o.jobs = 1;
	o.buffer_size = bufsize;
	int rc = run(&j, 1, &o, r, NULL);
	oa_pagecache_set_ops(NULL);
	fake_finish(fc, r);
	return rc;
}

#define MIB(x) ((uint64_t)(x) << 20)

/* A file nobody had cached: nothing stays, whatever the read size; 100 MiB
 * crosses two chunk edges after the first look-ahead sample, and a size that
 * is not a whole number of pages leaves a partial last page to drop too. */
static void test_page_cache_cold(const struct blob *b)
{
	static const size_t sizes[] = { 0, 64u << 10, 3u << 20, 16u << 20, 64u << 20 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		struct fake_cache fc;
		size_t bs = sizes[k] ? sizes[k] : OA_VERIFY_DEFAULT_BUFFER;
		fake_init(&fc, readahead_for(bs));
		struct fake_file *f = fake_add(&fc, b, NULL);
		oa_verify_result r;
		CHECK(verify_with_fake(b, sizes[k], &fc, &r, NULL) == 0);
		CHECK(r.status == OA_VERIFY_OK);
		CHECK(fc.calls_residency > 0 && fc.calls_dontneed > 0);
		fake_check_kept_exactly(f, "cold");
		fake_free(&fc);
	}
}

/* A file the machine had fully cached stays fully cached: not one DONTNEED
 * touches it, with a read size that does not divide the drop grid (3 MiB) and
 * ones as large as a read-ahead window or most of the file. */
static void test_page_cache_warm(const struct blob *b)
{
	static const size_t sizes[] = { 1u << 20, 3u << 20, 16u << 20, 64u << 20 };
	const uint64_t all[] = { 0, b->size, 0, 0 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		struct fake_cache fc;
		fake_init(&fc, readahead_for(sizes[k]));
		struct fake_file *f = fake_add(&fc, b, all);
		oa_verify_result r;
		CHECK(verify_with_fake(b, sizes[k], &fc, &r, NULL) == 0);
		CHECK(r.status == OA_VERIFY_OK);
		CHECK_U64(count_pages(f->in, f->pages), f->pages);
		fake_check_kept_exactly(f, "warm");
		fake_free(&fc);
	}
}

/* Pages someone else cached, in the first chunk, the second, and deep in the
 * third (sampled only after chunk 0 is read, when our read-ahead is near):
 * theirs stay exactly, ours go, with a read size that divides nothing. A
 * window-wide "was it cached?" would drop or keep both. */
static void test_page_cache_partial(const struct blob *b)
{
	const uint64_t theirs[] = { MIB(4), MIB(7), MIB(56), MIB(59), MIB(97), MIB(98),
	                            MIB(99) + 4096 * 3, MIB(99) + 4096 * 5, 0, 0 };
	static const size_t sizes[] = { (3u << 20) + (64u << 10), 1u << 20 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		struct fake_cache fc;
		fake_init(&fc, readahead_for(sizes[k]));
		struct fake_file *f = fake_add(&fc, b, theirs);
		size_t before = count_pages(f->had, f->pages);
		CHECK(before > 0);
		oa_verify_result r;
		CHECK(verify_with_fake(b, sizes[k], &fc, &r, NULL) == 0);
		CHECK(r.status == OA_VERIFY_OK);
		CHECK_U64(count_pages(f->in, f->pages), before);
		fake_check_kept_exactly(f, "partial");
		fake_free(&fc);
	}
}

/* Where residency cannot be told (no mincore, or it fails), everything read
 * is dropped, the machine's pages included: the documented trade-off. */
static void test_page_cache_unknown(const struct blob *b)
{
	const uint64_t theirs[] = { MIB(4), MIB(7), 0, 0 };
	struct fake_cache fc;
	fake_init(&fc, readahead_for(1u << 20));
	fc.no_mincore = true;
	struct fake_file *f = fake_add(&fc, b, theirs);
	oa_verify_result r;
	CHECK(verify_with_fake(b, 0, &fc, &r, NULL) == 0);
	CHECK(r.status == OA_VERIFY_OK);
	CHECK_U64(count_pages(f->in, f->pages), 0);
	fake_free(&fc);
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
 * brought in past the last read, and keeps the machine's pages. Where the
 * stop lands depends on timing; the end state does not. */
static void test_page_cache_abandon(const struct blob *b)
{
	const uint64_t theirs[] = { MIB(30), MIB(31), MIB(80), MIB(81), 0, 0 };
	struct fake_cache fc;
	fake_init(&fc, readahead_for(1u << 20));
	struct fake_file *f = fake_add(&fc, b, theirs);
	volatile sig_atomic_t flag = 0;
	struct stop_at sa = { &flag, 24u << 20 };
	oa_verify_opts o;
	base_opts(&o);
	o.interrupt = &flag;
	o.progress = on_progress_stop;
	o.progress_ctx = &sa;
	o.progress_interval = 0.001;
	oa_verify_result r;
	CHECK(verify_with_fake(b, 0, &fc, &r, &o) >= 0);
	CHECK(r.status == (r.bytes_hashed < b->size ? OA_VERIFY_NOT_DONE : OA_VERIFY_OK));
	size_t ours_left = 0;
	for (size_t p = 0; p < f->pages; p++) {
		ours_left += !f->had[p] && f->in[p];
		CHECK(!f->had[p] || f->in[p]);
	}
	CHECK_U64(ours_left, 0);
	CHECK_U64(f->theirs_dropped, 0);
	fake_free(&fc);
}

/* Two workers, two files: the advice lands on the right file. */
static void test_page_cache_two_files(const struct blob *cold, const char *store)
{
	struct blob warm;
	make_random_blob(store, 8u << 20, 7001, &warm);
	const uint64_t all[] = { 0, warm.size, 0, 0 };
	struct fake_cache fc;
	fake_init(&fc, readahead_for(1u << 20));
	struct fake_file *fcold = fake_add(&fc, cold, NULL);
	struct fake_file *fwarm = fake_add(&fc, &warm, all);
	oa_pagecache_ops ops;
	fake_install(&fc, &ops);
	oa_verify_job j[2] = { job_for(cold, true), job_for(&warm, true) };
	oa_verify_result r[2];
	oa_verify_opts o;
	base_opts(&o);
	o.jobs = 2;
	CHECK(run(j, 2, &o, r, NULL) == 0);
	oa_pagecache_set_ops(NULL);
	fake_finish(&fc, r);
	CHECK(r[0].status == OA_VERIFY_OK && r[1].status == OA_VERIFY_OK);
	fake_check_kept_exactly(fcold, "two files, cold");
	fake_check_kept_exactly(fwarm, "two files, warm");
	fake_free(&fc);
	unlink(warm.path);
}

/* The real kernel, as a smoke check only: residency is told (one 0/1 byte a
 * page) or honestly unknown, and a verify with real advice succeeds. What
 * stays cached afterwards is the kernel's business and is not asserted. */
static void test_page_cache_kernel_smoke(const struct blob *b)
{
	int fd = open(b->path, O_RDONLY);
	CHECK(fd >= 0);
	unsigned char vec[64];
	size_t pg = oa_page_size();
	long n = oa_range_residency(fd, 0, 64 * pg, vec, sizeof vec);
	CHECK(n == -1 || n == 64);
	for (long i = 0; i < n; i++)
		CHECK(vec[i] <= 1);
	CHECK(oa_range_residency(fd, 1, pg, vec, sizeof vec) == -1); /* unaligned: refused */
	oa_advise_dontneed(fd, 0, 0);
	close(fd);
	oa_verify_job j = job_for(b, true);
	oa_verify_result r;
	oa_verify_opts o;
	base_opts(&o);
	o.jobs = 1;
	CHECK(run(&j, 1, &o, &r, NULL) == 0);
	CHECK(r.status == OA_VERIFY_OK);
}

static void test_page_cache(void)
{
	char store[600];
	new_store(store, sizeof store);
	struct blob b;
	make_random_blob(store, (100u << 20) + 1234, 7000, &b);
	test_page_cache_cold(&b);
	test_page_cache_warm(&b);
	test_page_cache_partial(&b);
	test_page_cache_unknown(&b);
	test_page_cache_abandon(&b);
	test_page_cache_two_files(&b, store);
	test_page_cache_kernel_smoke(&b);
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
	test_cache_copies();
	test_cache_failed_only();
	test_cache_trust();
	test_default_path();
	test_changed_only();
	test_quick();
	test_interrupt_and_deadline();
	test_progress();
	test_page_cache();
	rm_rf(g_root);
	TEST_MAIN_END();
}
