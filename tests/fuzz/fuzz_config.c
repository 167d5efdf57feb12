/* fuzz_config.c - libFuzzer target for the model config parser (the JSON
 * blob a manifest's config layer points at): whatever the bytes, a clear
 * result and no undefined behaviour. */
#include "ollama_audit/config.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	oa_config c;
	err[0] = '\0';
	if (oa_config_parse(data, size, &c, err, sizeof err) != 0 && !err[0])
		abort(); /* every failure says why */
	oa_config_free(&c);
	return 0;
}
