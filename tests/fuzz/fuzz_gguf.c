/* fuzz_gguf.c - libFuzzer target for the GGUF header reader: both modes, then free.
 * Seed corpus: tests/fuzz/corpus/gguf/ (written by OA_GGUF_WRITE_CORPUS=<dir> test_gguf). */
#include "ollama_audit/gguf.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oa_gguf_info in;
	for (int mode = 0; mode < 2; mode++) {
		oa_gguf_read_mem(data, size, mode ? OA_GGUF_FULL : OA_GGUF_QUICK, &in);
		/* Invariants: ok iff no errors; every stored diag has a one-line message. */
		if (in.ok != (in.n_errors == 0))
			__builtin_trap();
		for (size_t i = 0; i < in.n_diags; i++)
			if (!in.diags[i].message || strchr(in.diags[i].message, '\n'))
				__builtin_trap();
		if (in.header_bytes_read > size)
			__builtin_trap();
		oa_gguf_info_free(&in);
	}
	return 0;
}
