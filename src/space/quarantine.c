/* quarantine.c - the quarantine directory an apply moves into (quarantine.h). */
#include "space/quarantine.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/outfile.h"
#include "base/jsonutil.h"
#include "base/platform.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A quarantine's DIR, DIR/files and DIR/index.json must be ours and writable
 * by us alone: anyone else who can write there could swap the index or the
 * files, and make a restore (often run as root) link their files into a
 * store. 0, or -1 with err. */
int quarantine_check_private(int fd, const char *dir, const char *what, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot stat %s%s: %s", dir, what, strerror(errno));
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "quarantine %s%s is owned by uid %lu, not by this user (uid %lu): "
		         "another user could swap what it holds; use a directory of your own (it is created "
		         "0700 if missing)", dir, what, (unsigned long)st.st_uid, (unsigned long)geteuid());
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "quarantine %s%s is writable by its group or others (mode %04o): "
		         "another user could swap what it holds; chmod go-w it, or use a new directory", dir,
		         what, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

static int read_all_fd(int fd, size_t max, uint8_t **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = oa_xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				free(buf);
				errno = EFBIG;
				return -1;
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = oa_xrealloc(buf, cap + 1);
		}
		ssize_t r = oa_read_some(fd, buf + n, cap - n);
		if (r < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* Read DIR/<name>, a regular file (a FIFO planted there is never waited
 * on), which must be private unless only counted (!owned). 0; 1 when it
 * does not exist; -1 with err. */
static int read_index_file(int qfd, const char *dir, const char *name, bool owned, uint8_t **bytes,
                           size_t *len, char *err, size_t errlen)
{
	int fd = openat(qfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return 1;
	struct stat st;
	const char *why = fd < 0 || fstat(fd, &st) < 0 ? strerror(errno)
	                  : !S_ISREG(st.st_mode) ? "not a regular file" : NULL;
	if (why) {
		snprintf(err, errlen, "cannot read %s/%s: %s", dir, name, why);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char what[80];
	snprintf(what, sizeof what, "/%s", name);
	if (owned && quarantine_check_private(fd, dir, what, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	int rc = read_all_fd(fd, 1u << 30, bytes, len);
	int e = errno;
	close(fd);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read %s/%s: %s", dir, name, strerror(e));
		return -1;
	}
	return 0;
}

/* journal-<digits>.ndjson: a name the index may send us to. */
static bool journal_name_ok(const char *name)
{
	if (!name || !oa_str_has_prefix(name, "journal-") || !oa_str_has_suffix(name, ".ndjson"))
		return false;
	size_t n = strlen(name) - strlen("journal-") - strlen(".ndjson");
	if (n == 0 || n > 18)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)name[strlen("journal-") + i]))
			return false;
	return true;
}

/* The entry with this id: entries are appended with rising ids. */
static json_t *entry_by_id(json_t *entries, json_int_t id)
{
	size_t lo = 0, hi = json_array_size(entries);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		json_int_t m = json_integer_value(json_object_get(json_array_get(entries, mid), "id"));
		if (m == id)
			return json_array_get(entries, mid);
		if (m < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static json_int_t last_id(json_t *entries)
{
	size_t n = json_array_size(entries);
	return n ? json_integer_value(json_object_get(json_array_get(entries, n - 1), "id")) : 0;
}

/* The operation with this id in index's "operations", or NULL. */
static json_t *op_by_id(json_t *index, const char *id)
{
	size_t i;
	json_t *op;
	json_array_foreach(json_object_get(index, "operations"), i, op) {
		const char *have = json_string_value(json_object_get(op, "id"));
		if (have && id && strcmp(have, id) == 0)
			return op;
	}
	return NULL;
}

/* A journal line {"operation": {...}}: an apply began. */
static bool journal_operation(json_t *index, json_t *op)
{
	const char *id = json_string_value(json_object_get(op, "id"));
	if (!json_is_object(op) || !id)
		return false;
	json_t *ops = json_object_get(index, "operations");
	if (!json_is_array(ops)) {
		ops = json_array();
		json_object_set_new(index, "operations", ops);
	}
	if (!op_by_id(index, id))
		json_array_append(ops, op);
	return true;
}

/* One journal line: an operation, a new entry (it has a "path"), or {"id",
 * "state"}, a later state of one. false when it is neither. */
static bool journal_apply(json_t *index, json_t *line)
{
	json_t *entries = json_object_get(index, "entries");
	if (json_object_get(line, "operation"))
		return journal_operation(index, json_object_get(line, "operation"));
	json_t *id = json_object_get(line, "id");
	const char *state = json_string_value(json_object_get(line, "state"));
	if (!json_is_integer(id) || !state)
		return false;
	if (json_object_get(line, "path")) {
		if (json_integer_value(id) > last_id(entries))
			json_array_append(entries, line);
		return true;
	}
	json_t *x = entry_by_id(entries, json_integer_value(id));
	if (x)
		json_object_set(x, "state", json_object_get(line, "state"));
	return true;
}

/* Replay the journal the index names onto its entries. The bytes up to the
 * last complete line go to *good (an apply killed mid-line leaves a tail,
 * ignored here, cut off by the next apply). 0, or -1 with err. */
static int journal_replay(int qfd, const char *dir, json_t *index, bool owned, size_t *good, char *err,
                          size_t errlen)
{
	*good = 0;
	const char *name = json_string_value(json_object_get(index, "journal"));
	if (!name)
		return 0;
	if (!journal_name_ok(name)) {
		snprintf(err, errlen, "%s/index.json names a journal that is not one (%s)", dir, name);
		return -1;
	}
	uint8_t *bytes;
	size_t len;
	int rc = read_index_file(qfd, dir, name, owned, &bytes, &len, err, errlen);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	size_t line = 0;
	for (char *p = (char *)bytes, *nl; (nl = memchr(p, '\n', len - (size_t)(p - (char *)bytes))); p = nl + 1) {
		line++;
		json_t *x = json_loadb(p, (size_t)(nl - p), 0, NULL);
		bool ok = json_is_object(x) && journal_apply(index, x);
		json_decref(x);
		if (!ok) {
			snprintf(err, errlen, "%s/%s: line %zu is not a quarantine journal line", dir, name, line);
			free(bytes);
			return -1;
		}
		*good = (size_t)(nl + 1 - (char *)bytes);
	}
	free(bytes);
	return 0;
}

static bool schema_known(const char *schema)
{
	return schema && (strcmp(schema, OA_QUARANTINE_SCHEMA) == 0 || strcmp(schema, OA_QUARANTINE_SCHEMA_3) == 0 ||
	                  strcmp(schema, OA_QUARANTINE_SCHEMA_2) == 0 || strcmp(schema, OA_QUARANTINE_SCHEMA_1) == 0);
}

/* An index older than /4 has no operations: what it holds becomes one
 * operation, "legacy", of the time index.json was last written, with the
 * commands and the models its entries name. */
static void legacy_operation(int qfd, json_t *index)
{
	json_t *ops = json_object_get(index, "operations");
	if (!json_is_array(ops)) {
		ops = json_array();
		json_object_set_new(index, "operations", ops);
	}
	json_t *entries = json_object_get(index, "entries"), *x, *models = json_array();
	size_t i, n = 0;
	uint64_t bytes = 0, b;
	char command[16] = "";
	json_array_foreach(entries, i, x) {
		if (json_object_get(x, "op"))
			continue;
		json_object_set_new(x, "op", json_string(OA_QUARANTINE_LEGACY_OP));
		n++;
		if (oa_json_get_u64(x, "disk_bytes", &b))
			bytes += b;
		const char *cmd = json_string_value(json_object_get(x, "command"));
		if (cmd && strcmp(command, cmd) != 0)
			snprintf(command, sizeof command, "%s", *command ? "prune+rm" : cmd);
		const char *model = json_string_value(json_object_get(x, "model"));
		bool seen = false;
		for (size_t k = 0; model && k < json_array_size(models); k++)
			seen |= strcmp(json_string_value(json_array_get(models, k)), model) == 0;
		if (model && !seen && cmd && strcmp(cmd, "rm") == 0)
			json_array_append_new(models, json_string(model));
	}
	if (!n || op_by_id(index, OA_QUARANTINE_LEGACY_OP)) {
		json_decref(models);
		return;
	}
	struct stat st;
	time_t when = fstatat(qfd, "index.json", &st, 0) == 0 ? st.st_mtime : 0;
	char ts[40];
	oa_iso8601(when, 0, ts, sizeof ts);
	json_t *op = json_pack("{s:s,s:s,s:I,s:s,s:o,s:I,s:I}", "id", OA_QUARANTINE_LEGACY_OP, "time", ts,
	                       "unix_time", (json_int_t)when, "command", *command ? command : "prune", "models",
	                       models, "planned_entries", (json_int_t)n, "planned_bytes", (json_int_t)bytes);
	json_array_insert_new(ops, 0, op);
}

static json_t *load_index(int qfd, const char *dir, bool owned, size_t *journal_good, char *err,
                          size_t errlen, bool *exists)
{
	uint8_t *bytes;
	size_t len;
	*exists = false;
	int rc = read_index_file(qfd, dir, "index.json", owned, &bytes, &len, err, errlen);
	if (rc > 0)
		return NULL;
	*exists = true;
	if (rc < 0)
		return NULL;
	json_error_t jerr;
	json_t *o = json_loadb((const char *)bytes, len, 0, &jerr);
	free(bytes);
	if (!schema_known(o ? json_string_value(json_object_get(o, "schema")) : NULL) ||
	    !json_is_array(json_object_get(o, "entries"))) {
		snprintf(err, errlen, "index.json is not a quarantine index (%s)",
		         o ? "wrong schema" : jerr.text);
		json_decref(o);
		return NULL;
	}
	if (journal_replay(qfd, dir, o, owned, journal_good, err, errlen) < 0) {
		json_decref(o);
		return NULL;
	}
	legacy_operation(qfd, o);
	return o;
}

json_t *quarantine_load_index(int qfd, const char *dir, char *err, size_t errlen, bool *exists)
{
	size_t good;
	return load_index(qfd, dir, true, &good, err, errlen, exists);
}

json_t *quarantine_peek_index(const char *dir, int *files_fd, char *err, size_t errlen)
{
	*files_fd = -1;
	int qfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (qfd < 0) {
		snprintf(err, errlen, "cannot open quarantine %s: %s", dir, strerror(errno));
		return NULL;
	}
	size_t good;
	bool exists;
	json_t *o = load_index(qfd, dir, false, &good, err, errlen, &exists);
	if (o)
		*files_fd = openat(qfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(qfd);
	if (!o && !exists)
		snprintf(err, errlen, "cannot read %s/index.json: %s", dir, strerror(ENOENT));
	return o;
}

/* Every run that takes the lock, as its messages name them. */
#define OA_LOCK_WRITERS "prune, rm, dedupe, import or repair --apply or a restore"

int apply_lock(int fd, const char *what, bool no_lock, char *err, size_t errlen)
{
	/* Testing aid (tests/cli/test_restore.py): a shorter wait. */
	const char *env = getenv("OA_TEST_LOCK_WAIT_MS");
	unsigned ms = env && *env ? (unsigned)strtoul(env, NULL, 10) : OA_LOCK_WAIT_MS;
	if (oa_lock_wait(fd, ms) == 0)
		return 0;
	if (errno == EWOULDBLOCK) {
		snprintf(err, errlen, "%s is busy: another " OA_LOCK_WRITERS " is writing it (waited %.0f s); run again "
		         "when it is done", what, ms / 1000.0);
		return -1;
	}
	if (no_lock)
		return 1;
	snprintf(err, errlen, "cannot lock %s: %s (flock), so another " OA_LOCK_WRITERS " could write it at the same "
	         "time; if you are sure nothing else does, pass --no-lock", what, strerror(errno));
	return -1;
}

static bool inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Where `dir` is (or would be, once created): realpath of it, or of its
 * parent plus its last component. false with errno when neither resolves. */
static bool resolve_dir(const char *dir, char out[PATH_MAX])
{
	if (realpath(dir, out))
		return true;
	if (errno != ENOENT)
		return false;
	char *copy = oa_xstrdup(dir);
	size_t len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	char *slash = strrchr(copy, '/');
	const char *base = slash ? slash + 1 : copy;
	const char *parent = slash ? (slash == copy ? "/" : copy) : ".";
	if (slash && slash != copy)
		*slash = '\0';
	bool ok = false;
	char rp[PATH_MAX];
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		errno = EINVAL;
	} else if (realpath(parent, rp)) {
		ok = (size_t)snprintf(out, PATH_MAX, "%s%s%s", rp, strcmp(rp, "/") == 0 ? "" : "/", base) <
		     PATH_MAX;
		if (!ok)
			errno = ENAMETOOLONG;
	}
	free(copy);
	return ok;
}

/* Refuse a quarantine anywhere inside the store: its root, or what root/blobs,
 * root/manifests or root/manifests-v2 resolve to. Nothing is created before. */
static int quarantine_check(const oa_store *s, const char *dir, char rq[PATH_MAX], char *err,
                            size_t errlen)
{
	if (!resolve_dir(dir, rq)) {
		snprintf(err, errlen, "cannot resolve quarantine directory %s: %s", dir, strerror(errno));
		return -1;
	}
	char rroot[PATH_MAX];
	if (!realpath(s->root, rroot)) {
		snprintf(err, errlen, "cannot resolve the store %s: %s", s->root, strerror(errno));
		return -1;
	}
	if (inside(rq, rroot)) {
		snprintf(err, errlen, "quarantine directory %s (%s) is inside the store %s: choose a directory "
		         "outside it on the same filesystem (e.g. next to the store)", dir, rq, s->root);
		return -1;
	}
	static const char *const subs[] = { "blobs", "manifests", "manifests-v2" };
	for (size_t i = 0; i < 3; i++) {
		char *sub = oa_path_join(s->root, subs[i]);
		char rs[PATH_MAX];
		bool bad = realpath(sub, rs) && inside(rq, rs);
		free(sub);
		if (bad) {
			snprintf(err, errlen, "quarantine directory %s (%s) is inside the store's %s/ (%s)", dir, rq,
			         subs[i], rs);
			return -1;
		}
	}
	/* a bind mount of a directory deep in the store, compared by inode */
	char *probe = oa_path_join(dir, "x");
	bool deep = oa_outfile_inside(probe, s->root);
	free(probe);
	if (deep) {
		snprintf(err, errlen, "quarantine directory %s (%s) is a directory of the store %s", dir, rq, s->root);
		return -1;
	}
	return 0;
}

/* Create (when missing) and open the quarantine directory; it must be
 * private and the very directory quarantine_check resolved (rq). *created:
 * this call made it; qst: its fstat. */
static int open_quarantine_dir(quarantine *q, const char *dir, const char *rq, bool *created, struct stat *qst,
                               char *err, size_t errlen)
{
	*created = mkdir(dir, 0700) == 0;
	if (!*created && errno != EEXIST) {
		snprintf(err, errlen, "cannot create quarantine directory %s: %s", dir, strerror(errno));
		return -1;
	}
	q->fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (q->fd < 0) {
		snprintf(err, errlen, "cannot open quarantine directory %s: %s", dir, strerror(errno));
		return -1;
	}
	struct stat rst;
	if (fstat(q->fd, qst) < 0) {
		snprintf(err, errlen, "cannot stat quarantine directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if (quarantine_check_private(q->fd, dir, "", err, errlen) < 0)
		return -1;
	if (stat(rq, &rst) < 0 || rst.st_dev != qst->st_dev || rst.st_ino != qst->st_ino) {
		snprintf(err, errlen, "quarantine directory %s changed while it was opened", dir);
		return -1;
	}
	return 0;
}

/* Moving into the quarantine (qst: its fstat) is a rename: it must be on
 * the store's filesystem (its root, blobs/ and manifests/). */
static int check_same_filesystem(const oa_store *s, const struct stat *qst, const char *dir, char *err,
                                 size_t errlen)
{
	struct stat bst;
	bool same = qst->st_dev == s->root_st.st_dev;
	if (s->blobs_fd >= 0 && fstat(s->blobs_fd, &bst) == 0 && bst.st_dev != qst->st_dev)
		same = false;
	if (s->manifests_fd >= 0 && fstat(s->manifests_fd, &bst) == 0 && bst.st_dev != qst->st_dev)
		same = false;
	if (!same) {
		snprintf(err, errlen,
		         "quarantine directory %s is on a different filesystem from the store %s: moving "
		         "would mean copying; choose a directory on the same filesystem (e.g. next to the store)",
		         dir, s->root);
		return -1;
	}
	return 0;
}

/* Load the index (and replay its journal), which must be this store's, or
 * start a new one naming the store by `root`. *exists: an index was there. */
static int load_or_start_index(quarantine *q, const oa_store *s, const char *dir, const char *root, bool *exists,
                               size_t *good, char *err, size_t errlen)
{
	q->index = load_index(q->fd, dir, true, good, err, errlen, exists);
	if (!q->index && *exists)
		return -1;
	if (q->index) {
		uint64_t dev = 0, ino = 0;
		if (!oa_json_get_u64(q->index, "store_dev", &dev) || !oa_json_get_u64(q->index, "store_ino", &ino) ||
		    dev != (uint64_t)s->root_st.st_dev || ino != (uint64_t)s->root_st.st_ino) {
			const char *other = json_string_value(json_object_get(q->index, "store"));
			snprintf(err, errlen, "quarantine %s holds files of another store (%s)", dir, other ? other : "?");
			return -1;
		}
	} else {
		q->index = json_object();
		json_object_set_new(q->index, "schema", json_string(OA_QUARANTINE_SCHEMA));
		json_object_set_new(q->index, "store", json_string(root));
		json_object_set_new(q->index, "store_dev", json_integer((json_int_t)s->root_st.st_dev));
		json_object_set_new(q->index, "store_ino", json_integer((json_int_t)s->root_st.st_ino));
		json_object_set_new(q->index, "entries", json_array());
		json_object_set_new(q->index, "operations", json_array());
	}
	q->entries = json_object_get(q->index, "entries");
	q->operations = json_object_get(q->index, "operations");
	q->next_id = (size_t)(last_id(q->entries) > 0 ? last_id(q->entries) : 0) + 1;
	return 0;
}

/* DIR/files, where the moved files go: created when missing, private. */
static int open_files_dir(quarantine *q, const char *dir, char *err, size_t errlen)
{
	if (mkdirat(q->fd, "files", 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s/files: %s", dir, strerror(errno));
		return -1;
	}
	q->files_fd = openat(q->fd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (q->files_fd < 0) {
		snprintf(err, errlen, "cannot open %s/files: %s", dir, strerror(errno));
		return -1;
	}
	return quarantine_check_private(q->files_fd, dir, "/files", err, errlen);
}

/* Open the journal for appending, cut after its last good line (`good`
 * bytes). A new quarantine, an older index (quarantine/1, /2: no journal)
 * or one that names its store by a relative path is written once, in this
 * version's words (restore reads them all); then entries are only appended
 * to the journal. */
static int open_journal(quarantine *q, const char *dir, const char *root, bool exists, size_t good, char *err,
                        size_t errlen)
{
	const char *had = json_string_value(json_object_get(q->index, "store"));
	if (!exists || strcmp(json_string_value(json_object_get(q->index, "schema")), OA_QUARANTINE_SCHEMA) != 0 ||
	    !json_object_get(q->index, "journal") || !had || strcmp(had, root) != 0) {
		json_object_set_new(q->index, "store", json_string(root));
		if (quarantine_compact(q->fd, dir, q->index, err, errlen) < 0)
			return -1;
		good = 0;
	}
	const char *journal = json_string_value(json_object_get(q->index, "journal"));
	q->journal_fd = openat(q->fd, journal, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat jst;
	if (q->journal_fd < 0 || fstat(q->journal_fd, &jst) < 0 ||
	    ((size_t)jst.st_size > good && ftruncate(q->journal_fd, (off_t)good) < 0)) {
		snprintf(err, errlen, "cannot open %s/%s: %s", dir, journal, strerror(errno));
		return -1;
	}
	return quarantine_check_private(q->journal_fd, dir, "/journal", err, errlen);
}

/* A refused quarantine leaves nothing behind: what this open created is
 * removed again (rmdir: only while still empty). */
static void quarantine_undo_open(quarantine *q, const char *dir, bool created)
{
	if (q->journal_fd >= 0)
		close(q->journal_fd);
	if (q->files_fd >= 0)
		close(q->files_fd);
	if (created && q->fd >= 0) {
		unlinkat(q->fd, "files", AT_REMOVEDIR);
		const char *j = q->index ? json_string_value(json_object_get(q->index, "journal")) : NULL;
		if (j && json_array_size(q->entries) == 0) {
			unlinkat(q->fd, j, 0);
			unlinkat(q->fd, "index.json", 0);
		}
	}
	if (q->fd >= 0)
		close(q->fd);
	if (created)
		rmdir(dir);
	json_decref(q->index);
	q->index = NULL;
	q->fd = q->files_fd = q->journal_fd = -1;
}

int quarantine_open(const oa_store *s, const char *dir, bool no_lock, quarantine *q, char *err, size_t errlen)
{
	memset(q, 0, sizeof *q);
	q->fd = q->files_fd = q->journal_fd = -1;
	q->dir = dir;
	char rq[PATH_MAX];
	if (quarantine_check(s, dir, rq, err, errlen) < 0)
		return -1;
	bool created = false, exists = false;
	size_t good = 0;
	struct stat qst;
	if (open_quarantine_dir(q, dir, rq, &created, &qst, err, errlen) < 0 ||
	    check_same_filesystem(s, &qst, dir, err, errlen) < 0)
		goto fail;
	/* One apply or restore at a time: the others wait, then see its entries. */
	int locked = apply_lock(q->fd, dir, no_lock, err, errlen);
	if (locked < 0)
		goto fail;
	q->unlocked = locked > 0;
	char rroot[PATH_MAX];
	const char *root = realpath(s->root, rroot) ? rroot : s->root;
	if (load_or_start_index(q, s, dir, root, &exists, &good, err, errlen) < 0 ||
	    open_files_dir(q, dir, err, errlen) < 0 || open_journal(q, dir, root, exists, good, err, errlen) < 0)
		goto fail;
	oa_buf_init(&q->pending);
	return 0;
fail:
	quarantine_undo_open(q, dir, created);
	return -1;
}

void quarantine_close(quarantine *q)
{
	if (q->journal_fd >= 0)
		close(q->journal_fd);
	if (q->files_fd >= 0)
		close(q->files_fd);
	if (q->fd >= 0)
		close(q->fd); /* releases the lock */
	json_decref(q->index);
	oa_buf_free(&q->pending);
	memset(q, 0, sizeof *q);
	q->fd = q->files_fd = q->journal_fd = -1;
}

int quarantine_compact(int qfd, const char *dir, json_t *index, char *err, size_t errlen)
{
	const char *old = json_string_value(json_object_get(index, "journal"));
	unsigned long long gen = old ? strtoull(old + strlen("journal-"), NULL, 10) : 0;
	char *was = old ? oa_xstrdup(old) : NULL;
	char ts[40];
	oa_iso8601((time_t)oa_wall_now(), 0, ts, sizeof ts);
	json_object_set_new(index, "schema", json_string(OA_QUARANTINE_SCHEMA));
	json_object_set_new(index, "updated", json_string(ts));
	json_object_set_new(index, "journal", json_sprintf("journal-%llu.ndjson", gen + 1));
	int rc = oa_json_write_at(qfd, "index.json", index, err, errlen);
	if (rc < 0) {
		size_t n = strlen(err);
		snprintf(err + n, errlen - n, " (writing %s/index.json)", dir);
	} else if (was) {
		unlinkat(qfd, was, 0); /* merged into index.json; a stale one is never read again */
	}
	free(was);
	return rc;
}

/* The file name inside DIR/files/: id, then the path with '/' as '%'. */
static char *stored_name(size_t id, const char *path)
{
	oa_buf b;
	oa_buf_init(&b);
	oa_buf_printf(&b, "%06zu-", id);
	for (const char *p = path; *p && b.len < 200; p++)
		oa_buf_addc(&b, *p == '/' ? '%' : *p);
	return oa_buf_take(&b);
}

int quarantine_commit(quarantine *q, char *err, size_t errlen)
{
	if (quarantine_flush(q, err, errlen) < 0)
		return -1;
	return quarantine_compact(q->fd, q->dir, q->index, err, errlen);
}

/* Queue a journal line (compact JSON, one line). */
static void journal_line(quarantine *q, json_t *x)
{
	char *line = json_dumps(x, JSON_COMPACT | JSON_PRESERVE_ORDER);
	oa_buf_adds(&q->pending, line);
	oa_buf_addc(&q->pending, '\n');
	free(line);
}

void quarantine_begin_op(quarantine *q, const char *command, const char *child, json_t *models, size_t entries,
                         uint64_t bytes)
{
	time_t now = (time_t)oa_wall_now();
	struct tm tm;
	gmtime_r(&now, &tm);
	char stamp[24], ts[40];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	oa_iso8601(now, 0, ts, sizeof ts);
	/* the counter makes it unique: two applies within one second, a clock
	 * set back */
	snprintf(q->op, sizeof q->op, "%s-%zu", stamp, json_array_size(q->operations) + 1);
	json_t *op = json_pack("{s:s,s:s,s:I,s:s,s:o,s:I,s:I}", "id", q->op, "time", ts, "unix_time",
	                       (json_int_t)now, "command", command, "models", models ? models : json_array(),
	                       "planned_entries", (json_int_t)entries, "planned_bytes", (json_int_t)bytes);
	if (child) /* rm --child: the runner whose child it removed from the list */
		json_object_set_new(op, "child", json_string(child));
	json_array_append(q->operations, op);
	json_t *line = json_pack("{s:o}", "operation", op);
	journal_line(q, line);
	json_decref(line);
}

const char *quarantine_stored_name(json_t *x)
{
	const char *stored = json_string_value(json_object_get(x, "stored"));
	if (!stored || !oa_str_has_prefix(stored, "files/"))
		return NULL;
	const char *name = stored + strlen("files/");
	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return NULL;
	return name;
}

bool quarantine_entry_held(int files_fd, json_t *x)
{
	const char *state = json_string_value(json_object_get(x, "state"));
	if (!state)
		return false;
	if (strcmp(state, "moved") == 0)
		return true;
	if (strcmp(state, "planned") && strcmp(state, "failed"))
		return false;
	const char *name = quarantine_stored_name(x);
	struct stat st;
	return files_fd >= 0 && name && fstatat(files_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

const char *quarantine_entry_op(json_t *x)
{
	const char *op = json_string_value(json_object_get(x, "op"));
	return op ? op : OA_QUARANTINE_LEGACY_OP;
}

void quarantine_held(int files_fd, json_t *entries, size_t *n, uint64_t *bytes)
{
	*n = 0;
	*bytes = 0;
	size_t i;
	json_t *x;
	json_array_foreach(entries, i, x) {
		uint64_t b = 0;
		if (!quarantine_entry_held(files_fd, x))
			continue;
		(*n)++;
		if (oa_json_get_u64(x, "disk_bytes", &b))
			*bytes += b;
	}
}

json_t *quarantine_add(quarantine *q, json_t *x, const char *path, const char *command)
{
	size_t id = q->next_id++;
	char *stored = stored_name(id, path);
	json_object_set_new(x, "id", json_integer((json_int_t)id));
	json_object_set_new(x, "stored", json_sprintf("files/%s", stored));
	json_object_set_new(x, "state", json_string("planned"));
	json_object_set_new(x, "command", json_string(command));
	json_object_set_new(x, "op", json_string(q->op));
	free(stored);
	json_array_append_new(q->entries, x);
	journal_line(q, x);
	return x;
}

void quarantine_set_state(quarantine *q, json_t *x, const char *state)
{
	json_object_set_new(x, "state", json_string(state));
	json_t *line = json_pack("{s:O,s:s}", "id", json_object_get(x, "id"), "state", state);
	journal_line(q, line);
	json_decref(line);
}

int quarantine_flush(quarantine *q, char *err, size_t errlen)
{
	if (oa_write_all(q->journal_fd, q->pending.data, q->pending.len) < 0) {
		snprintf(err, errlen, "cannot append to the quarantine journal: %s", strerror(errno));
		return -1;
	}
	q->pending.len = 0;
	if (fdatasync(q->journal_fd) < 0) {
		snprintf(err, errlen, "cannot sync the quarantine journal: %s", strerror(errno));
		return -1;
	}
	return 0;
}
