/* fuzz_verify_cache.c - libFuzzer target for the verify cache file
 * (`verify --cache`): a corrupt or hostile cache is dropped or trimmed with
 * a message, never trusted blindly and never a crash; what was loaded saves
 * and loads back with the same entries. The cache is read from a path, so
 * each input goes through a private temp file. */
#include "ollama_audit/verify_cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

/* The private temp dir goes when the fuzzer exits. */
static void cleanup(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/cache.json", dir);
	unlink(p);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		/* tmpfs where there is one: the save's fsync costs nothing there. */
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(dir, sizeof dir, "%s/oa-fuzz-vcache-XXXXXX", base);
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
	}
	char path[128], err[512];
	snprintf(path, sizeof path, "%s/cache.json", dir);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
	if (chmod(path, 0600) != 0) /* a group-writable file (umask 002) is not read at all */
		abort();
	oa_verify_cache *c = oa_verify_cache_open(path, err, sizeof err);
	if (!c)
		abort(); /* a bad file starts an empty cache; it never fails the open */
	/* The failures alone (check's open): never a failure either, and never
	 * more entries than the whole cache holds. */
	oa_verify_cache *fo = oa_verify_cache_open_failed(path, err, sizeof err);
	if (!fo || oa_verify_cache_count(fo) > oa_verify_cache_count(c))
		abort();
	oa_verify_cache_close(fo);
	/* Force a save (a dirty cache) and load it back: same count, no error. */
	oa_verify_cache_entry e;
	memset(&e, 0, sizeof e);
	e.st.size = 1;
	memcpy(e.xxh128, "0123456789abcdef0123456789abcdef", 33);
	static const char hex[] = "00000000000000000000000000000000000000000000000000000000000000ff";
	/* The count after the update, not before plus one: since /3 a file of
	 * its own (dev 0, ino 0 here) adds an entry beside the others claiming
	 * the digest, or replaces the oldest of 16. */
	if (oa_verify_cache_update(c, hex, &e) != 0)
		abort();
	size_t n = oa_verify_cache_count(c);
	if (oa_verify_cache_save(c, err, sizeof err) != 0)
		abort();
	oa_verify_cache_close(c);
	c = oa_verify_cache_open(path, err, sizeof err);
	if (!c || err[0] || oa_verify_cache_count(c) != n)
		abort();
	oa_verify_cache_close(c);
	return 0;
}
