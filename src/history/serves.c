/* serves.c - the texts that show a log served a store (serves.h), one rule
 * for log files (logsrc.c) and the journal (journal.c). */
#include "serves.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Is needle (len n) in hay (len h)? memmem is not POSIX. */
bool oa_has_bytes(const char *hay, size_t h, const char *needle, size_t n)
{
	for (size_t i = 0; n && i + n <= h; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0)
			return true;
	return false;
}

/* path without the machine root it lies under (root or its real path), or NULL. */
static const char *under_root(const char *path, const char *root, const char *real_root)
{
	const char *roots[2] = { root, real_root };
	for (size_t i = 0; i < 2; i++) {
		size_t n = roots[i] ? strlen(roots[i]) : 0;
		while (n > 1 && roots[i][n - 1] == '/')
			n--;
		if (n > 1 && strncmp(path, roots[i], n) == 0 && path[n] == '/')
			return path + n;
	}
	return NULL;
}

size_t oa_store_log_needles(const char *store_root, const char *machine_root, char *needles[OA_STORE_NEEDLES_MAX])
{
	char *real = realpath(store_root, NULL);
	char *real_machine = machine_root ? realpath(machine_root, NULL) : NULL;
	const char *roots[4] = { store_root, real, NULL, NULL };
	for (size_t i = 0; machine_root && i < 2; i++)
		roots[2 + i] = roots[i] ? under_root(roots[i], machine_root, real_machine) : NULL;
	size_t n = 0;
	for (size_t i = 0; i < 4; i++) {
		bool again = !roots[i];
		for (size_t k = 0; k < i && !again; k++)
			again = roots[k] && strcmp(roots[k], roots[i]) == 0;
		if (again)
			continue;
		needles[n++] = oa_xasprintf("%s/blobs/sha256-", roots[i]);
		needles[n++] = oa_xasprintf("OLLAMA_MODELS:%s ", roots[i]);
		needles[n++] = oa_xasprintf("OLLAMA_MODELS:%s]", roots[i]);
	}
	free(real);
	free(real_machine);
	return n;
}
