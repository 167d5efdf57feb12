/* fuzz_logline.c - libFuzzer target for the server log reader: any bytes,
 * as one line and as a stream of lines folded into loads, give a bounded
 * result and no undefined behaviour. */
#include "ollama_audit/history.h"
#include "ollama_audit/logline.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const oa_log_line *l)
{
	/* Every text field is terminated within its buffer. */
	if (!memchr(l->model, '\0', sizeof l->model) || !memchr(l->reason, '\0', sizeof l->reason) ||
	    !memchr(l->version, '\0', sizeof l->version) || l->digest[64] != '\0')
		abort();
	if (*l->digest && strlen(l->digest) != 64)
		abort();
	if (l->kind == OA_LOG_FAILED && !*l->reason)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oa_log_line l;
	char why[160];
	int rc = oa_log_parse_line((const char *)data, size, &l, why, sizeof why);
	check_line(&l);
	if (rc < 0 && !*why)
		abort();
	oa_history h;
	oa_history_init(&h);
	oa_history_begin(&h, "fuzz");
	const char *p = (const char *)data, *end = p + size;
	unsigned long n = 1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t k = (size_t)((nl ? nl : end) - p);
		oa_history_line(&h, p, k, n++, -1);
		p += k + 1;
	}
	oa_history_end(&h);
	oa_history_match(&h, NULL);
	for (size_t i = 0; i < h.n; i++)
		if (!h.v[i].logged || !h.v[i].source || (h.v[i].result == OA_LOAD_FAILED && !h.v[i].reason))
			abort();
	for (size_t i = 1; i < h.n; i++) /* newest first */
		if (h.v[i].has_time && (!h.v[i - 1].has_time || h.v[i - 1].time_ns < h.v[i].time_ns))
			abort();
	oa_history_free(&h);
	return 0;
}
