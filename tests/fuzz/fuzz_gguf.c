/* fuzz_gguf.c - libFuzzer target for the GGUF header reader: both modes, from
 * memory and from a file (the windowed reader), then free. The two readers
 * must agree on every fact.
 * Seed corpus: tests/fuzz/corpus/gguf/ (written by OA_GGUF_WRITE_CORPUS=<dir> test_gguf). */
#include "ollama_audit/gguf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_invariants(const oa_gguf_info *in, size_t size)
{
	/* ok iff no errors; every stored diag has a one-line message. */
	if (in->ok != (in->n_errors == 0))
		__builtin_trap();
	for (size_t i = 0; i < in->n_diags; i++)
		if (!in->diags[i].message || strchr(in->diags[i].message, '\n'))
			__builtin_trap();
	if (in->header_bytes_read > size)
		__builtin_trap();
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *tmp;
	if (!tmp && !(tmp = tmpfile()))
		__builtin_trap();
	int fd = fileno(tmp);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		__builtin_trap();

	for (int mode = 0; mode < 2; mode++) {
		oa_gguf_info in, infd;
		oa_gguf_mode m = mode ? OA_GGUF_FULL : OA_GGUF_QUICK;
		oa_gguf_read_mem(data, size, m, &in);
		oa_gguf_read_fd(fd, size, m, &infd);
		check_invariants(&in, size);
		check_invariants(&infd, size);
		if (in.ok != infd.ok || in.kv_count != infd.kv_count ||
		    in.tensor_count != infd.tensor_count || in.parameter_count != infd.parameter_count ||
		    !same_str(in.architecture, infd.architecture) || in.n_errors != infd.n_errors)
			__builtin_trap();
		oa_gguf_info_free(&in);
		oa_gguf_info_free(&infd);
	}
	return 0;
}
