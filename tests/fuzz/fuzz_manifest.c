/* fuzz_manifest.c - libFuzzer target for the manifest parser: whatever the
 * bytes, a clear result and no undefined behaviour. (Configs and names have
 * their own targets: fuzz_config.c, fuzz_name.c.) */
#include "ollama_audit/manifest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	oa_manifest m;
	if (oa_manifest_parse(data, size, &m, err, sizeof err) == 0) {
		/* Invariants: a valid digest is exactly 64 lowercase hex. */
		for (size_t i = 0; i < m.n_layers; i++)
			if (m.layers[i].digest_valid && strlen(m.layers[i].hex) != 64)
				abort();
	} else if (!err[0]) {
		abort(); /* every failure says why */
	}
	if (oa_manifest_hashed_length(data, size) > size)
		abort();
	oa_manifest_free(&m);
	return 0;
}
