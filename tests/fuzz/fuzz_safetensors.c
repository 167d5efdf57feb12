/* fuzz_safetensors.c - libFuzzer target: the input is a safetensors blob
 * (oa_st_read_mem, then model totals) and also a config.json
 * (oa_hf_config_parse). Nothing may crash, leak or read out of bounds, and
 * the results must be self-consistent. */
#include "ollama_audit/safetensors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oa_st_blob b;
	int rc = oa_st_read_mem(data, size, "model.layers.0.mlp.experts", &b);
	if (rc == OA_ST_OK && !b.ok)
		abort();
	if (rc == OA_ST_INVALID && (b.ok || !b.n_errors))
		abort();
	size_t main = 0;
	for (size_t i = 0; i < b.n_tensors; i++) {
		const oa_st_tensor *t = &b.tensors[i];
		if (!t->name)
			abort();
		if (!t->is_companion)
			main++;
		if (t->offsets_ok && t->begin > t->end)
			abort();
		if (b.ok && t->offsets_ok && t->end > b.data_bytes)
			abort();
	}
	if (main != b.n_main)
		abort();
	for (size_t i = 0; i < b.n_diags; i++)
		for (const char *p = b.diags[i].message; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				abort();

	oa_st_model m;
	oa_st_model_init(&m);
	oa_st_model_add(&m, &b);
	oa_st_model_finish(&m, "bfloat16");
	if (!m.quant_level)
		abort();
	oa_st_model_free(&m);
	oa_st_blob_free(&b);

	/* The same bytes as a blob with no layer name (old data-key layout path). */
	oa_st_read_mem(data, size, NULL, &b);
	oa_st_blob_free(&b);

	oa_hf_config c;
	oa_hf_config_parse(data, size, &c);
	if (c.ok == (c.error != NULL))
		abort();
	oa_hf_config_free(&c);
	/* And skipping the 8-byte prefix, so header-shaped JSON reaches the
	 * config parser too. */
	if (size > 8) {
		oa_hf_config_parse(data + 8, size - 8, &c);
		oa_hf_config_free(&c);
	}
	return 0;
}
