/* logsrc.c - the server log files of a store (logsrc.h). */
#include "ollama_audit/logsrc.h"
#include "ollama_audit/discover.h"
#include "serves.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Append dir's server*.log files, oldest first, to *out. */
static void logs_in_dir(const char *dir, char ***out, size_t *n)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t cnt;
	char **names = oa_list_dir(fd, &cnt, NULL);
	close(fd);
	const char **logs = oa_xcalloc(cnt ? cnt : 1, sizeof *logs);
	size_t k = 0;
	for (size_t i = 0; names && i < cnt; i++)
		if (rotation(names[i]) >= 0)
			logs[k++] = names[i];
	qsort(logs, k, sizeof *logs, by_age);
	if (k)
		*out = oa_xreallocarray(*out, *n + k, sizeof **out);
	for (size_t i = 0; i < k; i++)
		(*out)[(*n)++] = oa_path_join(dir, logs[i]);
	free(logs);
	oa_free_names(names, cnt);
}

/* The same directory as one already looked at (by device and inode)? */
static bool seen_dir(const char *dir, struct stat *seen, size_t n_seen, struct stat *st)
{
	if (stat(dir, st) < 0 || !S_ISDIR(st->st_mode))
		return true; /* nothing to read there */
	for (size_t i = 0; i < n_seen; i++)
		if (seen[i].st_dev == st->st_dev && seen[i].st_ino == st->st_ino)
			return true;
	return false;
}

/* Does the log at path mention the store's blobs (<root>/blobs/sha256-,
 * how a load names its model) or name the store as OLLAMA_MODELS (the
 * server config line)? Read in chunks, the needles found across a chunk's
 * end; a file that is not regular is not read (a FIFO is never waited on). */
static bool mentions(const char *path, char *const *needles, size_t n_needles)
{
	int fd = oa_openat_ro(AT_FDCWD, path, O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	size_t keep = 0;
	for (size_t i = 0; i < n_needles; i++)
		if (strlen(needles[i]) > keep)
			keep = strlen(needles[i]);
	size_t cap = 65536 + keep, have = 0;
	char *buf = oa_xmalloc(cap);
	bool found = false;
	for (;;) {
		ssize_t got = read(fd, buf + have, cap - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
		for (size_t i = 0; i < n_needles && !found; i++)
			found = oa_has_bytes(buf, have, needles[i], strlen(needles[i]));
		if (found)
			break;
		/* keep the tail a needle may start in */
		size_t tail = have < keep ? have : keep;
		memmove(buf, buf + have - tail, tail);
		have = tail;
	}
	free(buf);
	close(fd);
	return found;
}

bool oa_log_serves_store(const char *log_path, const char *store_root)
{
	char *needles[OA_STORE_NEEDLES_MAX];
	size_t n = oa_store_log_needles(store_root, NULL, needles);
	bool yes = mentions(log_path, needles, n);
	for (size_t i = 0; i < n; i++)
		free(needles[i]);
	return yes;
}

char **oa_logs_of_store(const char *store_root, size_t *n)
{
	*n = 0;
	char *dirs[2] = { NULL, NULL };
	/* The models directory's parent, by name: ~/.ollama for ~/.ollama/models. */
	const char *slash = strrchr(store_root, '/');
	size_t plen = slash ? (size_t)(slash - store_root) : 0;
	dirs[0] = slash ? oa_xasprintf("%.*s/logs", (int)plen, store_root) : oa_xstrdup("../logs");
	/* The owner's ~/.ollama/logs: the app and `ollama serve` log there
	 * wherever OLLAMA_MODELS puts the models. */
	struct stat st;
	if (stat(store_root, &st) == 0) {
		char *home = oa_user_home(st.st_uid);
		if (home)
			dirs[1] = oa_path_join(home, ".ollama/logs");
		free(home);
	}
	char **out = NULL;
	struct stat seen[2];
	size_t n_seen = 0;
	for (size_t i = 0; i < 2; i++) {
		if (dirs[i] && !seen_dir(dirs[i], seen, n_seen, &seen[n_seen])) {
			n_seen++;
			size_t before = *n;
			logs_in_dir(dirs[i], &out, n);
			/* The owner's logs are of whatever store that server served: a
			 * backup copy, a disk or a test fixture of the same owner is
			 * not it. Keep only the files that show this store. */
			for (size_t k = before; i == 1 && k < *n;) {
				if (oa_log_serves_store(out[k], store_root)) {
					k++;
					continue;
				}
				free(out[k]);
				memmove(&out[k], &out[k + 1], (*n - k - 1) * sizeof *out);
				(*n)--;
			}
		}
		free(dirs[i]);
	}
	if (!*n) {
		free(out);
		out = NULL;
	}
	return out;
}

int oa_logs_read_file(oa_history *h, const char *path, bool regular_only, char *err, size_t errlen)
{
	int fd = oa_openat_ro(AT_FDCWD, path, regular_only ? O_NONBLOCK : 0);
	if (fd < 0) {
		oa_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (regular_only && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		oa_seterr(err, errlen, "%s: not a regular file; not read", path);
		close(fd);
		return -1;
	}
	int rc = oa_history_read_fd(h, fd, path);
	if (rc < 0)
		oa_seterr(err, errlen, "%s: %s", path, strerror(errno));
	close(fd);
	return rc;
}

void oa_log_sources_add(oa_log_sources *l, const char *name)
{
	l->names = oa_xreallocarray(l->names, l->n + 1, sizeof *l->names);
	l->names[l->n++] = oa_xstrdup(name);
}

void oa_log_sources_problem(oa_log_sources *l, const char *what)
{
	l->problems = oa_xreallocarray(l->problems, l->n_problems + 1, sizeof *l->problems);
	l->problems[l->n_problems++] = oa_xstrdup(what);
}

void oa_log_sources_free(oa_log_sources *l)
{
	oa_free_names(l->names, l->n);
	oa_free_names(l->problems, l->n_problems);
	memset(l, 0, sizeof *l);
}

bool oa_logs_read_store_files(oa_history *h, const char *store_root, oa_log_sources *used)
{
	char err[512];
	bool ok = true;
	size_t n = 0;
	char **files = oa_logs_of_store(store_root, &n);
	for (size_t i = 0; i < n; i++) {
		if (oa_logs_read_file(h, files[i], true, err, sizeof err) < 0) {
			oa_log_sources_problem(used, err);
			ok = false;
		} else {
			oa_log_sources_add(used, files[i]);
		}
	}
	oa_free_names(files, n);
	return ok;
}
