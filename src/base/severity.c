/* severity.c - names of the one severity scale. */
#include "ollama_audit/severity.h"

#include <string.h>

const char *oa_severity_name(oa_severity s)
{
	switch (s) {
	case OA_SEV_ERROR:
		return "error";
	case OA_SEV_WARNING:
		return "warning";
	default:
		return "info";
	}
}

int oa_severity_parse(const char *s)
{
	if (strcmp(s, "error") == 0)
		return OA_SEV_ERROR;
	if (strcmp(s, "warning") == 0)
		return OA_SEV_WARNING;
	if (strcmp(s, "info") == 0)
		return OA_SEV_INFO;
	return -1;
}
