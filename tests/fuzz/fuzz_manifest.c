/* fuzz_manifest.c - libFuzzer target for the manifest, config and name
 * parsers: whatever the bytes, a clear result and no undefined behaviour. */
#include "ollama_audit/config.h"
#include "ollama_audit/manifest.h"
#include "ollama_audit/name.h"

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

	oa_config c;
	oa_config_parse(data, size, &c, err, sizeof err);
	oa_config_free(&c);

	/* Names: the input as a user-typed name, NUL-terminated. */
	if (size < 1024) {
		char s[1024];
		memcpy(s, data, size);
		s[size] = '\0';
		oa_name n;
		if (oa_name_parse(s, &n)) {
			char buf[OA_NAME_DISPLAY_MAX];
			oa_name_display(&n, buf, sizeof buf);
			oa_name again;
			/* What we display must parse back to the same name. */
			if (!oa_name_parse(buf, &again) || !oa_name_equal_fold(&n, &again))
				abort();
		}
	}
	return 0;
}
