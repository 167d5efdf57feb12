/* fuzz_name.c - libFuzzer target for model names as users type them
 * (`show NAME`, `rm NAME`): a name either parses and displays as something
 * that parses back to the same name, or is refused; never undefined
 * behaviour, whatever the bytes. */
#include "ollama_audit/name.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[2048];
	if (size >= sizeof s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	oa_name n;
	if (!oa_name_parse(s, &n))
		return 0;
	char buf[OA_NAME_DISPLAY_MAX];
	oa_name_display(&n, buf, sizeof buf);
	if (strlen(buf) >= sizeof buf)
		abort();
	oa_name again;
	/* What we display must parse back to the same name. */
	if (!oa_name_parse(buf, &again) || !oa_name_equal_fold(&n, &again))
		abort();
	if (!oa_name_equal_fold(&again, &n))
		abort(); /* and equality is symmetric */
	return 0;
}
