/* verify_cache.c - see verify_cache.h. */
#include "ollama_audit/verify_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

struct oa_verify_cache {
	pthread_mutex_t mu;
	char *path;
	json_t *entries; /* object: hex -> validated entry object */
	unsigned long gen, saved_gen; /* dirty = gen != saved_gen */
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool is_lower_hex(const char *s, size_t n)
{
	if (!s)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
	}
	return s[n] == '\0';
}

int oa_verify_cache_default_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	int n;
	/* The XDG spec: a relative XDG_CACHE_HOME is invalid and must be ignored. */
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/ollama-audit/verify-cache.json", xdg);
	else {
		const char *home = getenv("HOME");
		if (!home || !home[0])
			return -1;
		n = snprintf(buf, len, "%s/.cache/ollama-audit/verify-cache.json", home);
	}
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* json integer <-> uint64 / int64, lossless through int64. */
static json_t *ju64(uint64_t v) { return json_integer((json_int_t)(int64_t)v); }

static json_t *entry_to_json(const oa_verify_cache_entry *e)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	int rc = 0;
	rc |= json_object_set_new(o, "dev", ju64(e->st.dev));
	rc |= json_object_set_new(o, "ino", ju64(e->st.ino));
	rc |= json_object_set_new(o, "size", ju64(e->st.size));
	rc |= json_object_set_new(o, "mtime_ns", json_integer((json_int_t)e->st.mtime_ns));
	rc |= json_object_set_new(o, "ctime_ns", json_integer((json_int_t)e->st.ctime_ns));
	rc |= json_object_set_new(o, "xxh128", json_string(e->xxh128));
	rc |= json_object_set_new(o, "verified_at", json_real(e->verified_at));
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static bool get_int(json_t *o, const char *key, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		return false;
	*out = (int64_t)json_integer_value(v);
	return true;
}

/* Parse a stored entry; false when any field is missing or malformed. */
static bool entry_from_json(json_t *o, oa_verify_cache_entry *e)
{
	int64_t dev, ino, size;
	if (!json_is_object(o))
		return false;
	if (!get_int(o, "dev", &dev) || !get_int(o, "ino", &ino) || !get_int(o, "size", &size) ||
	    !get_int(o, "mtime_ns", &e->st.mtime_ns) || !get_int(o, "ctime_ns", &e->st.ctime_ns))
		return false;
	if (size < 0)
		return false;
	e->st.dev = (uint64_t)dev;
	e->st.ino = (uint64_t)ino;
	e->st.size = (uint64_t)size;
	const char *x = json_string_value(json_object_get(o, "xxh128"));
	if (!x || strlen(x) != 32 || !is_lower_hex(x, 32))
		return false;
	memcpy(e->xxh128, x, 33);
	json_t *va = json_object_get(o, "verified_at");
	if (!json_is_number(va))
		return false;
	e->verified_at = json_number_value(va);
	return e->verified_at >= 0;
}

/* Load path into c->entries; returns a warning (static string or formatted
 * into err) via err, never fails hard. */
static void load(oa_verify_cache *c, char *err, size_t errlen)
{
	int fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			seterr(err, errlen, "verify cache %s: %s; starting with an empty cache",
			       c->path, strerror(errno));
		return;
	}
	json_error_t jerr;
	json_t *root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &jerr);
	close(fd);
	if (!root) {
		seterr(err, errlen, "verify cache %s is corrupt (line %d: %s); starting with an empty cache",
		       c->path, jerr.line, jerr.text);
		return;
	}
	const char *schema = json_string_value(json_object_get(root, "schema"));
	json_t *entries = json_object_get(root, "entries");
	if (!json_is_object(root) || !schema || strcmp(schema, OA_VERIFY_CACHE_SCHEMA) != 0 ||
	    !json_is_object(entries)) {
		seterr(err, errlen, "verify cache %s: unknown schema or layout; starting with an empty cache",
		       c->path);
		json_decref(root);
		return;
	}
	size_t bad = 0;
	const char *key;
	json_t *val;
	json_object_foreach(entries, key, val) {
		oa_verify_cache_entry e;
		json_t *clean;
		if (strlen(key) != 64 || !is_lower_hex(key, 64) || !entry_from_json(val, &e) ||
		    !(clean = entry_to_json(&e))) {
			bad++;
			continue;
		}
		if (json_object_set_new(c->entries, key, clean) != 0)
			bad++;
	}
	if (bad) {
		seterr(err, errlen, "verify cache %s: dropped %zu invalid entr%s", c->path, bad,
		       bad == 1 ? "y" : "ies");
		c->gen++;
	}
	json_decref(root);
}

oa_verify_cache *oa_verify_cache_open(const char *path, char *err, size_t errlen)
{
	char def[4096];
	seterr(err, errlen, "%s", "");
	if (!path) {
		if (oa_verify_cache_default_path(def, sizeof def) != 0) {
			seterr(err, errlen, "no verify cache path: neither XDG_CACHE_HOME nor HOME is set");
			return NULL;
		}
		path = def;
	}
	if (!path[0]) {
		seterr(err, errlen, "empty verify cache path");
		return NULL;
	}
	oa_verify_cache *c = calloc(1, sizeof *c);
	if (!c || !(c->path = strdup(path)) || !(c->entries = json_object())) {
		if (c) {
			free(c->path);
			free(c);
		}
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		json_decref(c->entries);
		free(c->path);
		free(c);
		seterr(err, errlen, "pthread_mutex_init failed");
		return NULL;
	}
	load(c, err, errlen);
	return c;
}

const char *oa_verify_cache_path(const oa_verify_cache *c)
{
	return c->path;
}

bool oa_verify_cache_lookup(oa_verify_cache *c, const char *hex, oa_verify_cache_entry *out)
{
	if (!c || !hex)
		return false;
	pthread_mutex_lock(&c->mu);
	json_t *o = json_object_get(c->entries, hex);
	bool ok = o && entry_from_json(o, out);
	pthread_mutex_unlock(&c->mu);
	return ok;
}

int oa_verify_cache_update(oa_verify_cache *c, const char *hex, const oa_verify_cache_entry *e)
{
	if (!c || !hex || strlen(hex) != 64 || !is_lower_hex(hex, 64) || strlen(e->xxh128) != 32 ||
	    !is_lower_hex(e->xxh128, 32))
		return -1;
	json_t *o = entry_to_json(e);
	if (!o)
		return -1;
	pthread_mutex_lock(&c->mu);
	int rc = json_object_set_new(c->entries, hex, o);
	if (rc == 0)
		c->gen++;
	pthread_mutex_unlock(&c->mu);
	return rc == 0 ? 0 : -1;
}

void oa_verify_cache_remove(oa_verify_cache *c, const char *hex)
{
	if (!c || !hex)
		return;
	pthread_mutex_lock(&c->mu);
	if (json_object_del(c->entries, hex) == 0)
		c->gen++;
	pthread_mutex_unlock(&c->mu);
}

size_t oa_verify_cache_count(oa_verify_cache *c)
{
	pthread_mutex_lock(&c->mu);
	size_t n = json_object_size(c->entries);
	pthread_mutex_unlock(&c->mu);
	return n;
}

bool oa_verify_cache_dirty(oa_verify_cache *c)
{
	pthread_mutex_lock(&c->mu);
	bool d = c->gen != c->saved_gen;
	pthread_mutex_unlock(&c->mu);
	return d;
}

/* mkdir -p with mode 0700 for the directories we create. */
static int mkdir_p(const char *dir)
{
	char tmp[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof tmp)
		return errno = ENAMETOOLONG, -1;
	memcpy(tmp, dir, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
		return -1;
	struct stat st;
	if (stat(tmp, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return errno = ENOTDIR, -1;
	return 0;
}

int oa_verify_cache_save(oa_verify_cache *c, char *err, size_t errlen)
{
	char dir[4096], tmp[4200];
	seterr(err, errlen, "%s", "");
	size_t plen = strlen(c->path);
	if (plen >= sizeof dir) {
		seterr(err, errlen, "verify cache path too long");
		return -1;
	}
	memcpy(dir, c->path, plen + 1);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	if (mkdir_p(dir) != 0) {
		seterr(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", c->path, (long)getpid());

	pthread_mutex_lock(&c->mu);
	json_t *root = json_pack("{s:s, s:O}", "schema", OA_VERIFY_CACHE_SCHEMA, "entries", c->entries);
	pthread_mutex_unlock(&c->mu);
	if (!root) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		seterr(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		json_decref(root);
		return -1;
	}
	/* Serialise under the lock: workers may still be updating entries. */
	pthread_mutex_lock(&c->mu);
	int rc = json_dumpfd(root, fd, JSON_COMPACT | JSON_SORT_KEYS);
	unsigned long gen = c->gen;
	pthread_mutex_unlock(&c->mu);
	json_decref(root);
	int saved_errno = errno;
	if (rc == 0 && write(fd, "\n", 1) != 1) {
		rc = -1;
		saved_errno = errno;
	}
	if (rc == 0 && fsync(fd) != 0) {
		rc = -1;
		saved_errno = errno;
	}
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		saved_errno = errno;
	}
	if (rc == 0 && rename(tmp, c->path) != 0) {
		rc = -1;
		saved_errno = errno;
	}
	if (rc != 0) {
		unlink(tmp);
		seterr(err, errlen, "cannot write %s: %s", c->path, strerror(saved_errno));
		return -1;
	}
	/* Make the rename durable; failure here is not worth reporting. */
	int dfd = open(dir, O_RDONLY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	pthread_mutex_lock(&c->mu);
	c->saved_gen = gen;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

void oa_verify_cache_close(oa_verify_cache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	json_decref(c->entries);
	free(c->path);
	free(c);
}
