/* logsrc.c - the server log files beside a store (logsrc.h). */
#include "ollama_audit/logsrc.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rotation number of server-N.log, 0 for server.log, -1 for others. */
static long rotation(const char *name)
{
	if (strcmp(name, "server.log") == 0)
		return 0;
	if (!oa_str_has_prefix(name, "server-") || !oa_str_has_suffix(name, ".log"))
		return -1;
	size_t n = strlen(name) - 11;
	if (n == 0 || n > 6)
		return -1;
	char digits[8];
	memcpy(digits, name + 7, n);
	digits[n] = '\0';
	return oa_all_digits(digits) ? strtol(digits, NULL, 10) : -1;
}

static int by_age(const void *a, const void *b)
{
	long x = rotation(*(char *const *)a), y = rotation(*(char *const *)b);
	return (x < y) - (x > y); /* the highest number is the oldest: first */
}

char **oa_logs_beside_store(const char *store_root, size_t *n)
{
	*n = 0;
	/* The models directory's parent, by name: ~/.ollama for ~/.ollama/models. */
	const char *slash = strrchr(store_root, '/');
	size_t plen = slash ? (size_t)(slash - store_root) : 0;
	char *dir = slash ? oa_xasprintf("%.*s/logs", (int)plen, store_root) : oa_xstrdup("../logs");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		free(dir);
		return NULL;
	}
	size_t cnt;
	char **names = oa_list_dir(fd, &cnt, NULL);
	close(fd);
	const char **logs = oa_xcalloc(cnt ? cnt : 1, sizeof *logs);
	size_t k = 0;
	for (size_t i = 0; names && i < cnt; i++)
		if (rotation(names[i]) >= 0)
			logs[k++] = names[i];
	qsort(logs, k, sizeof *logs, by_age);
	char **out = k ? oa_xcalloc(k, sizeof *out) : NULL;
	for (size_t i = 0; i < k; i++)
		out[i] = oa_path_join(dir, logs[i]);
	free(logs);
	oa_free_names(names, cnt);
	free(dir);
	*n = k;
	return out;
}

int oa_logs_read_file(oa_history *h, const char *path, char *err, size_t errlen)
{
	int fd = oa_open_ro(path);
	if (fd < 0) {
		oa_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = oa_history_read_fd(h, fd, path);
	if (rc < 0)
		oa_seterr(err, errlen, "%s: %s", path, strerror(errno));
	close(fd);
	return rc;
}
