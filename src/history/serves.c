/* serves.c - whether a log names a store (serves.h), one rule for log
 * files (logsrc.c) and the journal (journal.c). */
#include "serves.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef NAME_MAX
#define NAME_MAX 255 /* POSIX lets a system leave it undefined */
#endif

/* Symlinks followed on one path before ELOOP: the kernel's (MAXSYMLINKS). */
enum { LINKS_MAX = 40 };
/* Candidate roots tried at each mention: a path may hold blanks, so each
 * blank-delimited start (or end) is one. */
enum { CANDIDATES_MAX = 4 };

static const char BLOB_MARK[] = "/blobs/sha256-";
static const char ENV_MARK[] = "OLLAMA_MODELS:";

/* In place: no "//", no "." component, no trailing "/" (but "/" itself). */
static void normalise(char *p)
{
	char *w = p;
	for (const char *r = p; *r;) {
		if (*r == '/' && w > p && w[-1] == '/') {
			r++;
		} else if (*r == '.' && (r == p || r[-1] == '/') && (r[1] == '/' || !r[1])) {
			r += r[1] ? 2 : 1;
		} else {
			*w++ = *r++;
		}
	}
	while (w > p + 1 && w[-1] == '/')
		w--;
	*w = '\0';
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

static void add_text(oa_store_names *sn, const char *text)
{
	if (!text || sn->n_texts == OA_STORE_NAMES_TEXTS)
		return;
	char *t = oa_xstrdup(text);
	normalise(t);
	for (size_t i = 0; i < sn->n_texts; i++)
		if (strcmp(sn->texts[i], t) == 0) {
			free(t);
			return;
		}
	sn->texts[sn->n_texts++] = t;
}

void oa_store_names_init(oa_store_names *sn, const char *store_root, const char *machine_root)
{
	memset(sn, 0, sizeof *sn);
	struct stat st;
	if (stat(store_root, &st) == 0 && S_ISDIR(st.st_mode)) {
		sn->known = true;
		sn->dev = st.st_dev;
		sn->ino = st.st_ino;
	}
	char *real = realpath(store_root, NULL);
	add_text(sn, store_root);
	add_text(sn, real);
	if (machine_root) {
		char *real_machine = realpath(machine_root, NULL);
		add_text(sn, under_root(store_root, machine_root, real_machine));
		add_text(sn, real ? under_root(real, machine_root, real_machine) : NULL);
		free(real_machine);
		sn->machine_root = oa_xstrdup(machine_root);
	}
	free(real);
}

void oa_store_names_free(oa_store_names *sn)
{
	for (size_t i = 0; i < sn->n_texts; i++)
		free(sn->texts[i]);
	for (size_t i = 0; i < sn->n_memo; i++)
		free(sn->memo[i].path);
	free(sn->machine_root);
	memset(sn, 0, sizeof *sn);
}

static bool same_dir(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* *cur becomes the directory its entry name leads to; a symlink's target
 * is put before *rest instead, and an absolute one starts again from
 * rootfd. 0, or -1 with errno. */
static int step(int rootfd, int *cur, const char *name, char **rest, int *links)
{
	struct stat ls;
	if (fstatat(*cur, name, &ls, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	int next;
	if (S_ISLNK(ls.st_mode)) {
		if (++*links > LINKS_MAX)
			return errno = ELOOP, -1;
		char target[PATH_MAX];
		ssize_t n = readlinkat(*cur, name, target, sizeof target - 1);
		if (n <= 0)
			return n == 0 ? (errno = ENOENT, -1) : -1;
		target[n] = '\0';
		char *joined = oa_xasprintf("%s/%s", target, *rest);
		free(*rest);
		*rest = joined;
		if (target[0] != '/')
			return 0;
		next = dup(rootfd);
	} else if (S_ISDIR(ls.st_mode)) {
		next = openat(*cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	} else {
		return errno = ENOTDIR, -1;
	}
	if (next < 0)
		return -1;
	close(*cur);
	*cur = next;
	return 0;
}

/* ".." of *cur, which stays where it is at root (the machine's "/"). */
static int step_up(const struct stat *root, int *cur)
{
	struct stat here;
	if (fstat(*cur, &here) < 0)
		return -1;
	if (same_dir(&here, root))
		return 0;
	int up = openat(*cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return -1;
	close(*cur);
	*cur = up;
	return 0;
}

/* Take the first component of *rest into name; 0 when none is left, -1
 * (ENAMETOOLONG) for one longer than NAME_MAX. */
static int take_component(char *rest, char name[NAME_MAX + 1])
{
	char *p = rest + strspn(rest, "/");
	size_t n = strcspn(p, "/");
	if (n > NAME_MAX)
		return errno = ENAMETOOLONG, -1;
	memcpy(name, p, n);
	name[n] = '\0';
	memmove(rest, p + n, strlen(p + n) + 1);
	return n > 0;
}

int oa_dir_stat_in_root(const char *root, const char *path, struct stat *st)
{
	int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -1;
	struct stat top;
	int cur = fstat(rootfd, &top) == 0 ? dup(rootfd) : -1;
	char *rest = oa_xstrdup(path);
	char name[NAME_MAX + 1];
	int links = 0, rc = cur < 0 ? -1 : 0, more;
	while (rc == 0 && (more = take_component(rest, name)) != 0) {
		if (more < 0)
			rc = -1;
		else if (strcmp(name, "..") == 0)
			rc = step_up(&top, &cur);
		else if (strcmp(name, ".") != 0)
			rc = step(rootfd, &cur, name, &rest, &links);
	}
	if (rc == 0)
		rc = fstat(cur, st);
	int e = errno;
	free(rest);
	if (cur >= 0)
		close(cur);
	close(rootfd);
	errno = e;
	return rc;
}

/* Does the path text[0, n) name the store: the same directory, or, where
 * it names none, the same text? */
static bool names_store(oa_store_names *sn, const char *text, size_t n)
{
	if (!n || n >= PATH_MAX || memchr(text, '\0', n))
		return false;
	for (size_t i = 0; i < sn->n_memo; i++)
		if (strlen(sn->memo[i].path) == n && memcmp(sn->memo[i].path, text, n) == 0)
			return sn->memo[i].yes;
	char *path = oa_xstrndup(text, n);
	struct stat st;
	bool yes = false, resolved = false;
	if (path[0] == '/' && sn->known) {
		resolved = (sn->machine_root ? oa_dir_stat_in_root(sn->machine_root, path, &st)
		                             : stat(path, &st)) == 0 && S_ISDIR(st.st_mode);
		yes = resolved && st.st_dev == sn->dev && st.st_ino == sn->ino;
	}
	if (!resolved) {
		char *norm = oa_xstrdup(path);
		normalise(norm);
		for (size_t i = 0; i < sn->n_texts && !yes; i++)
			yes = strcmp(norm, sn->texts[i]) == 0;
		free(norm);
	}
	struct oa_store_names_memo *m = &sn->memo[sn->next_memo];
	sn->next_memo = (sn->next_memo + 1) % OA_STORE_NAMES_MEMO;
	if (sn->n_memo < OA_STORE_NAMES_MEMO)
		sn->n_memo++;
	free(m->path);
	m->path = path;
	m->yes = yes;
	return yes;
}

/* What may come just before a path: the line's start, a blank, a quote,
 * "=" (model=/...), "(" or ",", "[" or ":" (a Go map's value). */
static bool starts_path(const char *text, size_t i)
{
	return i == 0 || (text[i - 1] && strchr(" \t\"'=(,[:", text[i - 1]) != NULL);
}

/* The root before a blob path ending at text[end]: each "/" that may
 * start a path, nearest first. */
static bool root_before(oa_store_names *sn, const char *text, size_t end)
{
	size_t tried = 0;
	for (size_t i = end; i-- > 0 && end - i < PATH_MAX && tried < CANDIDATES_MAX;) {
		if (text[i] == '\n')
			break;
		if (text[i] == '/' && starts_path(text, i)) {
			tried++;
			if (names_store(sn, text + i, end - i))
				return true;
		}
	}
	return false;
}

/* The root after OLLAMA_MODELS: in a Go map (map[K:V K:V]): up to each
 * blank or "]", nearest first. */
static bool root_after(oa_store_names *sn, const char *text, size_t n)
{
	size_t tried = 0;
	for (size_t i = 0; i < n && i < PATH_MAX && tried < CANDIDATES_MAX; i++) {
		if (text[i] == '\n' || text[i] == '"')
			break;
		if (text[i] == ' ' || text[i] == ']') {
			tried++;
			if (names_store(sn, text, i))
				return true;
		}
	}
	return false;
}

/* The next occurrence of mark in text[from, len), or len. */
static size_t find(const char *text, size_t len, size_t from, const char *mark, size_t m)
{
	for (size_t i = from; i + m <= len; i++)
		if (text[i] == mark[0] && memcmp(text + i, mark, m) == 0)
			return i;
	return len;
}

bool oa_store_named_in(oa_store_names *sn, const char *text, size_t len)
{
	size_t bm = sizeof BLOB_MARK - 1, em = sizeof ENV_MARK - 1;
	for (size_t i = find(text, len, 0, BLOB_MARK, bm); i < len; i = find(text, len, i + 1, BLOB_MARK, bm))
		if (root_before(sn, text, i))
			return true;
	for (size_t i = find(text, len, 0, ENV_MARK, em); i < len; i = find(text, len, i + 1, ENV_MARK, em))
		if (root_after(sn, text + i + em, len - i - em))
			return true;
	return false;
}
