/* fuzz_plan.c - libFuzzer target for the plan reader (`prune/rm --apply
 * --plan FILE`): a plan file is input, so whatever its bytes, it is read or
 * refused with a reason; a plan that is read writes back to a file that
 * reads again with the same entries. oa_plan_read takes a path, so each
 * input goes through a private temp file. */
#include "ollama_audit/prune.h"
#include "ollama_audit/plan_file.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

/* The private temp dir goes when the fuzzer exits. */
static void cleanup(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/in.json", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/out.json", dir);
	unlink(p);
	rmdir(dir);
}

static void put_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort(); /* the fuzzer's own temp dir must work */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		/* tmpfs where there is one: the save's fsync costs nothing there. */
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(dir, sizeof dir, "%s/oa-fuzz-plan-XXXXXX", base);
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
	}
	char in[128], out[128], err[512];
	snprintf(in, sizeof in, "%s/in.json", dir);
	snprintf(out, sizeof out, "%s/out.json", dir);
	put_file(in, data, size);
	oa_plan p;
	err[0] = '\0';
	if (oa_plan_read(in, &p, err, sizeof err) != 0) {
		if (!err[0])
			abort(); /* every refusal says why */
		oa_plan_free(&p);
		return 0;
	}
	/* Round trip: what we accepted, we write and read back unchanged. */
	oa_plan q;
	if (oa_plan_write(&p, out, err, sizeof err) != 0 || oa_plan_read(out, &q, err, sizeof err) != 0)
		abort();
	/* The file names the store by its real path when it exists here (a
	 * plan read elsewhere must still find it): "/tmp/x/" comes back "/tmp/x". */
	char real[PATH_MAX];
	const char *store = realpath(p.store, real) ? real : p.store;
	if (q.todo.n != p.todo.n || strcmp(q.command, p.command) != 0 || strcmp(q.store, store) != 0)
		abort();
	for (size_t i = 0; i < p.todo.n; i++)
		if (strcmp(p.todo.v[i].path, q.todo.v[i].path) != 0)
			abort();
	oa_plan_free(&q);
	oa_plan_free(&p);
	return 0;
}
