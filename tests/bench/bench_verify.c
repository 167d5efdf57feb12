/* bench_verify.c - a tiny driver for tests/bench/bench_verify.sh (not a ctest).
 *
 *   bench_verify gen DIR COUNT SIZE SEED
 *       create COUNT blobs of SIZE bytes (pseudo-random) as DIR/blobs/sha256-<hex>
 *   bench_verify run [--jobs N] [--buf BYTES] [--mode sha256|quick]
 *                    [--cache FILE] [--changed-only] DIR
 *       verify every DIR/blobs/sha256-* and print one line of key=value figures
 *       (engine seconds, MB/s, statuses, peak RSS from getrusage).
 */
#include "base/platform.h"
#include "ollama_audit/verify.h"
#include "ollama_audit/verify_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int gen(const char *dir, long count, long size, unsigned long long seed)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/blobs", dir);
	mkdir(dir, 0755);
	mkdir(path, 0755);
	unsigned char *buf = malloc((size_t)size + 1);
	if (!buf)
		return 1;
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (long k = 0; k < count; k++) {
		for (long i = 0; i < size; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (unsigned char)(x >> 24);
		}
		unsigned char md[32];
		unsigned int mdlen = 0;
		if (EVP_Digest(buf, (size_t)size, md, &mdlen, EVP_sha256(), NULL) != 1)
			return 1;
		char hex[65];
		for (int i = 0; i < 32; i++)
			sprintf(hex + 2 * i, "%02x", md[i]);
		snprintf(path, sizeof path, "%s/blobs/sha256-%s", dir, hex);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, (size_t)size) != (ssize_t)size || close(fd) != 0) {
			perror(path);
			return 1;
		}
	}
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run(int argc, char **argv)
{
	oa_verify_opts o;
	oa_verify_opts_init(&o);
	const char *cache_path = NULL, *dir = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
			o.jobs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--buf") && i + 1 < argc)
			o.buffer_size = (size_t)strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			o.mode = !strcmp(argv[++i], "quick") ? OA_VERIFY_QUICK : OA_VERIFY_SHA256;
		else if (!strcmp(argv[i], "--cache") && i + 1 < argc)
			cache_path = argv[++i];
		else if (!strcmp(argv[i], "--changed-only"))
			o.changed_only = true;
		else
			dir = argv[i];
	}
	if (!dir) {
		fprintf(stderr, "bench_verify run: no directory\n");
		return 2;
	}
	char bdir[4096];
	snprintf(bdir, sizeof bdir, "%s/blobs", dir);
	DIR *d = opendir(bdir);
	if (!d) {
		perror(bdir);
		return 2;
	}
	size_t n = 0, cap = 1024;
	char **names = malloc(cap * sizeof *names);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "sha256-", 7) || strlen(de->d_name) != 71)
			continue;
		if (n == cap)
			names = realloc(names, (cap *= 2) * sizeof *names);
		size_t len = strlen(bdir) + 73;
		names[n] = malloc(len);
		snprintf(names[n], len, "%s/%s", bdir, de->d_name);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_str);
	oa_verify_job *jobs = calloc(n ? n : 1, sizeof *jobs);
	oa_verify_result *res = calloc(n ? n : 1, sizeof *res);
	for (size_t i = 0; i < n; i++) {
		jobs[i].path = names[i];
		memcpy(jobs[i].expected_hex, strrchr(names[i], '-') + 1, 65);
		jobs[i].expected_size = OA_VERIFY_SIZE_UNKNOWN;
	}
	char err[512];
	oa_verify_cache *c = NULL;
	if (cache_path) {
		c = oa_verify_cache_open(cache_path, err, sizeof err);
		if (!c) {
			fprintf(stderr, "cache: %s\n", err);
			return 2;
		}
		o.cache = c;
	}
	oa_verify_totals t;
	int rc = oa_verify_run(jobs, n, &o, res, &t, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "verify: %s\n", err);
		return 2;
	}
	if (c && oa_verify_cache_dirty(c) && oa_verify_cache_save(c, err, sizeof err) != 0)
		fprintf(stderr, "cache: %s\n", err);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	size_t bad = 0;
	for (int s = 0; s < OA_VERIFY_STATUS_COUNT; s++)
		if (oa_verify_status_is_failure((oa_verify_status)s))
			bad += t.count[s];
	printf("blobs=%zu threads=%d bytes=%llu seconds=%.4f MBps=%.1f ok=%zu skipped=%zu bad=%zu "
	       "maxrss_kb=%ld\n",
	       n, t.threads, (unsigned long long)t.bytes_hashed, t.seconds,
	       t.seconds > 0 ? (double)t.bytes_hashed / 1e6 / t.seconds : 0.0, t.count[OA_VERIFY_OK],
	       t.count[OA_VERIFY_SKIPPED_UNCHANGED], bad, ru.ru_maxrss);
	oa_verify_cache_close(c);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(jobs);
	free(res);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "gen"))
		return gen(argv[2], atol(argv[3]), atol(argv[4]), strtoull(argv[5], NULL, 10));
	if (argc >= 3 && !strcmp(argv[1], "run"))
		return run(argc - 2, argv + 2);
	fprintf(stderr, "usage: bench_verify gen DIR COUNT SIZE SEED | run [opts] DIR\n");
	return 2;
}
