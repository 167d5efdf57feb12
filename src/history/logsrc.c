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

/* A line longer than this is looked at up to there (history.c cuts its
 * lines at the same length). */
#define LINE_CUT (1u << 20)

/* Does some line of the log at path name the store (serves.h)? A file that
 * is not regular is not read (a FIFO is never waited on). */
static bool mentions(const char *path, oa_store_names *sn)
{
	int fd = oa_openat_ro(AT_FDCWD, path, O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	oa_buf line;
	oa_buf_init(&line);
	char chunk[65536];
	bool found = false;
	ssize_t got;
	while (!found && (got = oa_read_some(fd, chunk, sizeof chunk)) > 0) {
		for (const char *p = chunk, *end = chunk + got; p < end && !found;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t k = (size_t)((nl ? nl : end) - p), room = LINE_CUT - line.len;
			oa_buf_add(&line, p, k < room ? k : room);
			if (!nl)
				break;
			found = oa_store_named_in(sn, line.data, line.len);
			line.len = 0;
			p = nl + 1;
		}
	}
	if (!found && line.len)
		found = oa_store_named_in(sn, line.data, line.len); /* a last line without newline */
	oa_buf_free(&line);
	close(fd);
	return found;
}

bool oa_log_serves_store(const char *log_path, const char *store_root)
{
	oa_store_names sn;
	oa_store_names_init(&sn, store_root, NULL);
	bool yes = mentions(log_path, &sn);
	oa_store_names_free(&sn);
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
	oa_store_names sn;
	oa_store_names_init(&sn, store_root, NULL);
	for (size_t i = 0; i < 2; i++) {
		if (dirs[i] && !seen_dir(dirs[i], seen, n_seen, &seen[n_seen])) {
			n_seen++;
			size_t before = *n;
			logs_in_dir(dirs[i], &out, n);
			/* The owner's logs are of whatever store that server served: a
			 * backup copy, a disk or a test fixture of the same owner is
			 * not it. Keep only the files that show this store. */
			for (size_t k = before; i == 1 && k < *n;) {
				if (mentions(out[k], &sn)) {
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
	oa_store_names_free(&sn);
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
