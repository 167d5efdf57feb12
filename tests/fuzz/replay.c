/* replay.c - a deterministic driver for the fuzz targets, for compilers
 * without libFuzzer (gcc) and for `make test`: every file of the seed corpus,
 * then, for each, a fixed set of truncations and byte flips. A random
 * campaign is `make fuzz` (clang); this run gives the same answer every time,
 * under ASan+UBSan.
 *
 * Usage: oa_replay TARGET DIR|FILE...   Exit 0, or the sanitizer's abort.
 * One program replays every target (tests/CMakeLists.txt): fuzz_<t>.c's
 * LLVMFuzzerTestOneInput is renamed oa_fuzz_<t>, and oa_replay_targets.h,
 * generated, declares each and lists them in OA_REPLAY_TARGETS. Built
 * without it, this drives the one LLVMFuzzerTestOneInput it is linked with
 * (replay DIR|FILE...). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef OA_REPLAY_MULTI
#include "oa_replay_targets.h"
static int (*target)(const uint8_t *data, size_t size);
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static int (*const target)(const uint8_t *data, size_t size) = LLVMFuzzerTestOneInput;
#endif

/* Truncation points and flipped bytes per seed: enough to walk through every
 * length field of a small header, few enough to keep the run under a second. */
#define CUTS 48
#define FLIPS 48

static unsigned long runs;

/* A fresh heap copy of exactly n bytes, so that ASan sees a read past the end. */
static void run_copy(const uint8_t *src, size_t n)
{
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf) {
		perror("replay");
		exit(2);
	}
	if (n)
		memcpy(buf, src, n);
	target(buf, n);
	free(buf);
	runs++;
}

static void run_variants(const uint8_t *data, size_t size)
{
	run_copy(data, size);
	for (size_t i = 1; i <= CUTS && size > 1; i++)
		run_copy(data, size * i / (CUTS + 1));
	if (!size)
		return;
	uint8_t *mut = malloc(size);
	if (!mut) {
		perror("replay");
		exit(2);
	}
	for (size_t i = 0; i < FLIPS; i++) {
		size_t at = (size_t)((uint64_t)size * i / FLIPS);
		static const uint8_t values[] = {0x00, 0xff, 0x7f, 0x80};
		memcpy(mut, data, size);
		mut[at] = values[i % 4] == mut[at] ? (uint8_t)~mut[at] : values[i % 4];
		run_copy(mut, size);
	}
	free(mut);
}

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	uint8_t *data = NULL;
	size_t size = 0, cap = 0;
	for (;;) {
		if (size == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *p = realloc(data, cap);
			if (!p) {
				perror("replay");
				exit(2);
			}
			data = p;
		}
		size_t n = fread(data + size, 1, cap - size, f);
		size += n;
		if (n == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (!bad)
		run_variants(data, size);
	free(data);
	return bad ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		perror(dir);
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **p = realloc(names, cap * sizeof *p);
			if (!p) {
				perror("replay");
				exit(2);
			}
			names = p;
		}
		size_t len = strlen(dir) + strlen(e->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n]) {
			perror("replay");
			exit(2);
		}
		snprintf(names[n++], len, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode) && replay_file(names[i]) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
#ifdef OA_REPLAY_MULTI
	static const struct {
		const char *name;
		int (*run)(const uint8_t *data, size_t size);
	} targets[] = {
#define OA_REPLAY_TARGET(t) {#t, oa_fuzz_##t},
		OA_REPLAY_TARGETS
#undef OA_REPLAY_TARGET
	};
	for (size_t i = 0; argc > 1 && i < sizeof targets / sizeof targets[0]; i++)
		if (strcmp(argv[1], targets[i].name) == 0)
			target = targets[i].run;
	if (!target) {
		fprintf(stderr, "usage: oa_replay TARGET DIR|FILE...\n");
		return 2;
	}
	argv++;
	argc--;
#endif
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			rc = 1;
		} else if (S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i])) {
			rc = 1;
		}
	}
	printf("%lu inputs replayed\n", runs);
	return rc;
}
