/* discover.c - every Ollama store on the machine; see discover.h. */
#include "ollama_audit/discover.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/store.h"
#include "base/platform.h"
#include "base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers --------------------------------------------------------- */

static const char *sysroot(void)
{
	const char *r = getenv("OLLAMA_AUDIT_SYSROOT");
	return r && *r ? r : NULL;
}

/* Does a path have a ".." component? */
static bool has_dotdot(const char *p)
{
	for (const char *c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
			return true;
	return false;
}

/* A system path (absolute) under the sysroot, or as is without one. With a
 * sysroot, a relative path or one with a ".." component could name a file
 * outside it: NULL (the callers note and skip it). */
static char *sys_path(const char *abs)
{
	const char *r = sysroot();
	if (!r)
		return oa_xstrdup(abs);
	if (abs[0] != '/' || has_dotdot(abs))
		return NULL;
	size_t n = strlen(r);
	while (n > 1 && r[n - 1] == '/')
		n--;
	return oa_xasprintf("%.*s%s", (int)n, r, abs);
}

/* Is a path (that exists, or whose deepest existing ancestor does) inside
 * the sysroot once symlinks are resolved? Always true without a sysroot. */
static bool inside_sysroot(const char *path)
{
	const char *r = sysroot();
	if (!r)
		return true;
	char *root = realpath(r, NULL);
	if (!root)
		return false;
	char *p = oa_xstrdup(path), *real = NULL;
	for (;;) {
		real = realpath(p, NULL);
		if (real)
			break;
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
	}
	size_t n = strlen(root);
	bool in = real && (strcmp(root, "/") == 0 ||
	                   (strncmp(real, root, n) == 0 && (real[n] == '/' || real[n] == '\0')));
	free(real);
	free(p);
	free(root);
	return in;
}

/* System files (passwd, unit files, environment files) are small: a
 * regular file of at most 1 MiB, lines of at most 64 KiB. */
#define SYS_FILE_MAX (1u << 20)
#define SYS_LINE_MAX (64u << 10)

/* Read a system file; NULL with errno (EINVAL: not a regular file, EFBIG:
 * too large). Never blocks on a FIFO, never reads a device. */
static char *read_sys_file(const char *path, size_t *len)
{
	uint8_t *buf;
	if (oa_read_file_at(AT_FDCWD, path, SYS_FILE_MAX, &buf, len) < 0)
		return NULL;
	return (char *)buf;
}

static const char *read_error(int e)
{
	return e == EINVAL ? "not a regular file" : e == EFBIG ? "larger than 1 MiB" : strerror(e);
}

/* The next line of a file read whole (the newline and a CR before it
 * dropped, NUL-terminated in place); NULL at the end. A line longer than
 * SYS_LINE_MAX is returned empty (*too_long set). */
static char *next_line(char **cur, char *end, size_t *len, bool *too_long)
{
	char *p = *cur;
	if (p >= end)
		return NULL;
	char *nl = memchr(p, '\n', (size_t)(end - p));
	char *e = nl ? nl : end;
	*cur = nl ? nl + 1 : end;
	*e = '\0';
	size_t n = strlen(p); /* (a NUL byte ends the line) */
	if (n && p[n - 1] == '\r')
		p[--n] = '\0';
	*too_long = n > SYS_LINE_MAX;
	if (*too_long) {
		p[0] = '\0';
		n = 0;
	}
	*len = n;
	return p;
}

const char *oa_cand_state_name(oa_cand_state s)
{
	switch (s) {
	case OA_CAND_STORE: return "store";
	case OA_CAND_MISSING: return "missing";
	case OA_CAND_NOT_STORE: return "not-a-store";
	case OA_CAND_DENIED: return "permission-denied";
	case OA_CAND_UNKNOWN: return "unknown";
	}
	return "unknown";
}

static const char *const source_names[] = {
	[OA_SOURCE_OTHER] = "discovered",
	[OA_SOURCE_STORE_OPTION] = "--store",
	[OA_SOURCE_OLLAMA_MODELS] = "OLLAMA_MODELS",
	[OA_SOURCE_SYSTEMD] = "systemd",
	[OA_SOURCE_ENVIRONMENT_FILE] = "environment-file",
	[OA_SOURCE_HOME] = "home",
	[OA_SOURCE_DEFAULT] = "default",
};

const char *oa_store_source_name(oa_store_source s)
{
	return (size_t)s < sizeof source_names / sizeof source_names[0] ? source_names[s] : source_names[0];
}

oa_store_source oa_store_source_of(const char *name)
{
	for (size_t i = 1; name && i < sizeof source_names / sizeof source_names[0]; i++)
		if (strcmp(name, source_names[i]) == 0)
			return (oa_store_source)i;
	return OA_SOURCE_OTHER;
}

bool oa_candidate_named(const oa_candidate *k)
{
	for (size_t i = 0; i < k->n_found; i++)
		if (oa_store_source_of(k->found[i].source) == OA_SOURCE_STORE_OPTION)
			return true;
	return false;
}

bool oa_candidate_configured(const oa_candidate *k)
{
	for (size_t i = 0; i < k->n_found; i++) {
		oa_store_source src = oa_store_source_of(k->found[i].source);
		if (src != OA_SOURCE_HOME && src != OA_SOURCE_DEFAULT)
			return true;
	}
	return false;
}

int oa_open_candidate(oa_store *s, const char *path, oa_store_source source, const oa_candidate *k,
                      const oa_open_options *o, char *err, size_t errlen)
{
	if (oa_store_open(s, path, oa_store_source_name(source), err, errlen) < 0)
		return -1;
	if (k) {
		s->found = k->found;
		s->n_found = k->n_found;
	}
	if (o) {
		oa_store_set_header_mode(s, o->header_mode);
		s->platform = o->platform;
		s->jobs = o->jobs;
		s->no_tag_facts = o->no_tag_facts;
		s->peer_index = o->peers;
	}
	return 0;
}

/* ---- accounts ------------------------------------------------------------- */

typedef struct account {
	char *name;
	uid_t uid;
	char *home;
} account;

/* The password database as read once by a caller (never kept between
 * calls: a library that audits two machines' roots must not mix them). */
typedef struct accounts {
	account *v;
	size_t n;
	bool from_file; /* the sysroot's or OLLAMA_AUDIT_PASSWD's file, not getpwent() */
} accounts;

static void accounts_add(accounts *a, const char *name, uid_t uid, const char *home)
{
	a->v = oa_xreallocarray(a->v, a->n + 1, sizeof *a->v);
	a->v[a->n].name = oa_xstrdup(name);
	a->v[a->n].uid = uid;
	a->v[a->n].home = oa_xstrdup(home ? home : "");
	a->n++;
}

static void accounts_free(accounts *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].name);
		free(a->v[i].home);
	}
	free(a->v);
	memset(a, 0, sizeof *a);
}

/* The passwd file to read instead of getpwent(), or NULL. */
static char *passwd_file(void)
{
	const char *p = getenv("OLLAMA_AUDIT_PASSWD");
	if (p && *p)
		return oa_xstrdup(p);
	if (sysroot())
		return sys_path("/etc/passwd"); /* (never NULL: no "..") */
	return NULL;
}

/* name:password:uid:gid:gecos:home:shell */
static void parse_passwd_line(accounts *a, char *line)
{
	char *f[7];
	int n = 0;
	char *p = line;
	while (n < 7) {
		f[n++] = p;
		char *c = strchr(p, ':');
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	if (n < 6 || !*f[0] || f[0][0] == '#' || f[0][0] == '+' || f[0][0] == '-')
		return;
	char *end;
	errno = 0;
	unsigned long uid = strtoul(f[2], &end, 10);
	if (errno || *end || end == f[2])
		return;
	accounts_add(a, f[0], (uid_t)uid, f[5]);
}

/* The password database, from the passwd file when one is set, else the
 * system's (with a passwd file only, *note says why it could not be read:
 * free it). */
static void accounts_load(accounts *a, char **note)
{
	memset(a, 0, sizeof *a);
	*note = NULL;
	char *file = passwd_file();
	if (!file) {
		setpwent();
		struct passwd *pw;
		while ((pw = getpwent()))
			accounts_add(a, pw->pw_name, pw->pw_uid, pw->pw_dir);
		endpwent();
		return;
	}
	a->from_file = true;
	size_t len;
	char *text = read_sys_file(file, &len);
	if (!text) {
		*note = oa_xasprintf("cannot read %s: %s", file, read_error(errno));
		free(file);
		return;
	}
	char *cur = text, *line;
	size_t n;
	bool too_long;
	while ((line = next_line(&cur, text + len, &n, &too_long)))
		parse_passwd_line(a, line);
	free(text);
	free(file);
}

/* The account of a uid (its name and home, copies): the passwd file when
 * one is set (sysroot, tests), else the system's (getpwuid). */
static bool lookup_uid(uid_t uid, char **name, char **home)
{
	char *file = passwd_file();
	if (!file) {
		struct passwd *pw = getpwuid(uid);
		if (!pw)
			return false;
		*name = oa_xstrdup(pw->pw_name);
		*home = oa_xstrdup(pw->pw_dir ? pw->pw_dir : "");
		return true;
	}
	free(file);
	accounts a;
	char *note;
	accounts_load(&a, &note);
	free(note);
	bool found = false;
	for (size_t i = 0; i < a.n && !found; i++)
		if (a.v[i].uid == uid) {
			*name = oa_xstrdup(a.v[i].name);
			*home = oa_xstrdup(a.v[i].home);
			found = true;
		}
	accounts_free(&a);
	return found;
}

void oa_user_name(uid_t uid, char *buf, size_t len)
{
	char *name, *home;
	if (lookup_uid(uid, &name, &home)) {
		snprintf(buf, len, "%s", name);
		free(name);
		free(home);
	} else {
		snprintf(buf, len, "%lu", (unsigned long)uid);
	}
}

char *oa_user_home(uid_t uid)
{
	char *name, *home, *out = NULL;
	if (!lookup_uid(uid, &name, &home))
		return NULL;
	if (home[0] == '/' && strcmp(home, "/nonexistent") != 0)
		out = sys_path(home);
	free(name);
	free(home);
	return out;
}

/* ---- parsing systemd and environment files ---------------------------------- */

static int unescape(const char **pp, char *out)
{
	/* *pp points after a backslash; returns the byte, advances. -1 at the
	 * end of the string, -2 for \x00 (systemd refuses a NUL: the word and
	 * the rest of the line are ignored). */
	const char *p = *pp;
	char c = *p;
	if (!c)
		return -1;
	p++;
	switch (c) {
	case 'n': *out = '\n'; break;
	case 't': *out = '\t'; break;
	case 'r': *out = '\r'; break;
	case 'a': *out = '\a'; break;
	case 'b': *out = '\b'; break;
	case 'f': *out = '\f'; break;
	case 'v': *out = '\v'; break;
	case 's': *out = ' '; break;
	case 'x':
		if (isxdigit((unsigned char)p[0]) && isxdigit((unsigned char)p[1])) {
			char hx[3] = { p[0], p[1], 0 };
			*out = (char)strtol(hx, NULL, 16);
			if (!*out)
				return -2;
			p += 2;
			break;
		}
		*out = 'x';
		break;
	default: *out = c; break;
	}
	*pp = p;
	return 0;
}

static void emit_assignment(const char *word, oa_env_fn fn, void *ctx)
{
	const char *eq = strchr(word, '=');
	if (!eq || eq == word)
		return;
	char *name = oa_xstrndup(word, (size_t)(eq - word));
	fn(ctx, name, eq + 1);
	free(name);
}

void oa_systemd_env_parse(const char *value, oa_env_fn fn, void *ctx)
{
	/* systemd's extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE|EXTRACT_RELAX):
	 * words split on blanks; quotes anywhere in a word group blanks and are removed. */
	const char *p = value;
	oa_buf w;
	oa_buf_init(&w);
	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		w.len = 0;
		if (w.data)
			w.data[0] = '\0';
		char quote = 0;
		while (*p) {
			char c = *p;
			if (quote && c == quote) {
				quote = 0;
				p++;
			} else if (!quote && isspace((unsigned char)c)) {
				break;
			} else if (!quote && (c == '"' || c == '\'')) {
				quote = c;
				p++;
			} else if (c == '\\' && quote != '\'') {
				/* escapes work outside quotes and inside double quotes */
				p++;
				char o;
				int u = unescape(&p, &o);
				if (u == -2)
					goto refused;
				if (u < 0)
					break;
				oa_buf_addc(&w, o);
			} else {
				oa_buf_addc(&w, c);
				p++;
			}
		}
		emit_assignment(w.data ? w.data : "", fn, ctx);
	}
refused:
	oa_buf_free(&w);
}

void oa_envfile_line_parse(const char *line, oa_env_fn fn, void *ctx)
{
	const char *p = line;
	while (*p && isspace((unsigned char)*p))
		p++;
	if (!*p || *p == '#' || *p == ';')
		return;
	if (strncmp(p, "export", 6) == 0 && isspace((unsigned char)p[6])) {
		p += 6;
		while (*p && isspace((unsigned char)*p))
			p++;
	}
	const char *eq = strchr(p, '=');
	if (!eq || eq == p)
		return;
	const char *ne = eq;
	while (ne > p && isspace((unsigned char)ne[-1]))
		ne--;
	for (const char *q = p; q < ne; q++)
		if (!(isalnum((unsigned char)*q) || *q == '_' || *q == '.'))
			return;
	char *name = oa_xstrndup(p, (size_t)(ne - p));
	const char *v = eq + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	oa_buf val;
	oa_buf_init(&val);
	if (*v == '"' || *v == '\'') {
		char quote = *v++;
		while (*v && *v != quote) {
			if (*v == '\\' && quote == '"' && v[1]) {
				v++;
				if (*v == '\n')
					v++;
				else
					oa_buf_addc(&val, *v++);
				continue;
			}
			oa_buf_addc(&val, *v++);
		}
	} else {
		const char *e = v;
		while (*e && !(*e == '#' && e > v && isspace((unsigned char)e[-1])) && *e != '\n' &&
		       *e != '\r')
			e++;
		while (e > v && isspace((unsigned char)e[-1]))
			e--;
		for (const char *q = v; q < e; q++) {
			if (*q == '\\' && q + 1 < e)
				q++;
			oa_buf_addc(&val, *q);
		}
	}
	fn(ctx, name, val.data ? val.data : "");
	oa_buf_free(&val);
	free(name);
}

/* ---- candidates ------------------------------------------------------------- */

static void note(oa_discovery *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(oa_discovery *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = oa_xvasprintf(fmt, ap);
	va_end(ap);
	d->notes = oa_xreallocarray(d->notes, d->n_notes + 1, sizeof *d->notes);
	d->notes[d->n_notes++] = s;
}

static bool is_dir(const char *path, int *err)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		if (err)
			*err = errno;
		return false;
	}
	if (err)
		*err = 0;
	return S_ISDIR(st.st_mode);
}

static bool holds_store(const char *dir, int *err)
{
	int e1 = 0, e2 = 0;
	char *m = oa_path_join(dir, "manifests"), *b = oa_path_join(dir, "blobs");
	bool yes = is_dir(m, &e1) || is_dir(b, &e2);
	free(m);
	free(b);
	*err = yes ? 0 : (e1 == EACCES || e2 == EACCES) ? EACCES : 0;
	return yes;
}

/* Look at a path and fill state, root, dev/ino and owner. */
static void evaluate(oa_candidate *c)
{
	struct stat st;
	if (stat(c->path, &st) < 0) {
		c->err = errno;
		c->state = (errno == ENOENT || errno == ENOTDIR) ? OA_CAND_MISSING : OA_CAND_UNKNOWN;
		if (errno == ELOOP || errno == ENAMETOOLONG)
			c->state = OA_CAND_MISSING;
		if (c->state == OA_CAND_UNKNOWN) {
			/* whose directory stops us: the deepest ancestor we can stat */
			char *a = oa_xstrdup(c->path);
			for (;;) {
				char *slash = strrchr(a, '/');
				if (!slash || slash == a)
					break;
				*slash = '\0';
				struct stat ast;
				if (stat(a, &ast) == 0) {
					c->uid = ast.st_uid;
					c->have_uid = true;
					break;
				}
			}
			free(a);
		}
		return;
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->uid = st.st_uid;
	c->have_id = c->have_uid = true;
	if (!S_ISDIR(st.st_mode)) {
		c->state = OA_CAND_NOT_STORE;
		c->err = ENOTDIR;
		return;
	}
	int err;
	if (holds_store(c->path, &err)) {
		c->root = oa_xstrdup(c->path);
	} else if (err == EACCES) {
		/* cannot look inside: a store or not, we may not read it */
		c->state = OA_CAND_DENIED;
		c->err = EACCES;
		c->root = oa_xstrdup(c->path);
		return;
	} else {
		char *models = oa_path_join(c->path, "models");
		int e2;
		if (is_dir(models, &e2) && holds_store(models, &err)) {
			c->root = models;
		} else {
			free(models);
			c->state = OA_CAND_NOT_STORE;
			return;
		}
	}
	/* name a store by its real path; the paths that reached it are kept apart */
	char *real = realpath(c->root, NULL);
	if (real) {
		free(c->root);
		c->root = real;
	}
	if (stat(c->root, &st) == 0) {
		c->dev = st.st_dev;
		c->ino = st.st_ino;
		c->uid = st.st_uid;
	}
	int fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		c->err = errno;
		c->state = errno == EACCES || errno == EPERM ? OA_CAND_DENIED : OA_CAND_UNKNOWN;
		return;
	}
	close(fd);
	c->state = OA_CAND_STORE;
}

static void add_found(oa_candidate *c, const char *source, const char *detail, const char *given)
{
	for (size_t i = 0; i < c->n_found; i++)
		if (strcmp(c->found[i].source, source) == 0 && strcmp(c->found[i].detail, detail) == 0)
			return;
	c->found = oa_xreallocarray(c->found, c->n_found + 1, sizeof *c->found);
	c->found[c->n_found].source = oa_xstrdup(source);
	c->found[c->n_found].detail = oa_xstrdup(detail);
	c->found[c->n_found].path = oa_xstrdup(given);
	c->n_found++;
}

static void add_path(oa_candidate *c, const char *path)
{
	for (size_t i = 0; i < c->n_paths; i++)
		if (strcmp(c->paths[i], path) == 0)
			return;
	c->paths = oa_xreallocarray(c->paths, c->n_paths + 1, sizeof *c->paths);
	c->paths[c->n_paths++] = oa_xstrdup(path);
}

static void candidate_free(oa_candidate *c)
{
	free(c->path);
	free(c->root);
	free(c->user);
	for (size_t i = 0; i < c->n_found; i++) {
		free(c->found[i].source);
		free(c->found[i].detail);
		free(c->found[i].path);
	}
	free(c->found);
	for (size_t i = 0; i < c->n_paths; i++)
		free(c->paths[i]);
	free(c->paths);
	for (size_t i = 0; i < c->n_blobs_shared; i++)
		free(c->blobs_shared[i]);
	free(c->blobs_shared);
}

/* Add a candidate: `given` is the path as the source states it, `path` the
 * one we look at (sysroot applied). */
static void add_candidate(oa_discovery *d, const char *source, const char *detail,
                          const char *given, const char *path)
{
	oa_candidate c;
	memset(&c, 0, sizeof c);
	c.path = oa_xstrdup(path);
	evaluate(&c);
	for (size_t i = 0; i < d->n; i++) {
		oa_candidate *o = &d->v[i];
		bool same = (c.have_id && o->have_id && c.dev == o->dev && c.ino == o->ino &&
		             (c.root != NULL) == (o->root != NULL)) ||
		            strcmp(o->path, c.path) == 0;
		if (same) {
			add_found(o, source, detail, given);
			add_path(o, c.path);
			candidate_free(&c);
			return;
		}
	}
	char name[64];
	oa_user_name(c.uid, name, sizeof name);
	c.user = c.have_uid ? oa_xstrdup(name) : NULL;
	add_found(&c, source, detail, given);
	add_path(&c, c.path);
	OA_ALLOC_GROW(d->v, d->n + 1, d->cap);
	d->v[d->n++] = c;
}

/* A candidate a system source names (an absolute path as that system sees
 * it): looked at under the sysroot, and never outside it. */
static void add_sys_candidate(oa_discovery *d, const char *source, const char *detail,
                              const char *given, const char *abs)
{
	char *p = sys_path(abs);
	if (!p) {
		note(d, "%s (%s): %s: a relative path or one with \"..\" under OLLAMA_AUDIT_SYSROOT: skipped",
		     source, detail, given);
		return;
	}
	if (!inside_sysroot(p)) {
		note(d, "%s (%s): %s leads outside OLLAMA_AUDIT_SYSROOT (a symlink): skipped", source, detail,
		     given);
		free(p);
		return;
	}
	add_candidate(d, source, detail, given, p);
	free(p);
}

/* OLLAMA_MODELS from a system file: trimmed as the server trims it; a
 * relative value resolves against the service's working directory, "/". */
static void add_models_value(oa_discovery *d, const char *source, const char *detail,
                             const char *value)
{
	char *v = oa_env_trim(value);
	if (!v)
		return;
	char *abs = v[0] == '/' ? oa_xstrdup(v) : oa_path_join("/", v);
	add_sys_candidate(d, source, detail, v, abs);
	free(abs);
	free(v);
}

typedef struct env_ctx {
	oa_discovery *d;
	const char *source;
	char *detail;
} env_ctx;

static void on_env(void *ctx, const char *name, const char *value)
{
	env_ctx *e = ctx;
	if (strcmp(name, "OLLAMA_MODELS") == 0)
		add_models_value(e->d, e->source, e->detail, value);
}

/* Read a system file named by an absolute path: its text, or NULL (noted
 * unless it is simply missing and may be). */
static char *open_sys_file(oa_discovery *d, const char *abs, bool must_exist, const char *from,
                           size_t *len)
{
	char *p = sys_path(abs);
	if (!p) {
		note(d, "cannot read %s%s%s: a relative path or one with \"..\" under OLLAMA_AUDIT_SYSROOT", abs,
		     from ? " (named by " : "", from ? from : "");
		return NULL;
	}
	char *text = read_sys_file(p, len);
	int e = errno;
	free(p);
	if (!text && (must_exist || e != ENOENT))
		note(d, "cannot read %s%s%s%s: %s", abs, from ? " (named by " : "", from ? from : "",
		     from ? ")" : "", read_error(e));
	return text;
}

static void read_env_file(oa_discovery *d, const char *abs, bool must_exist, const char *from)
{
	size_t len;
	char *text = open_sys_file(d, abs, must_exist, from, &len);
	if (!text)
		return;
	char *cur = text, *line;
	size_t n;
	bool too_long;
	unsigned lineno = 0;
	while ((line = next_line(&cur, text + len, &n, &too_long))) {
		lineno++;
		if (too_long) {
			note(d, "%s:%u: a line longer than 64 KiB: ignored", abs, lineno);
			continue;
		}
		env_ctx e = { d, "environment-file", oa_xasprintf("%s:%u", abs, lineno) };
		oa_envfile_line_parse(line, on_env, &e);
		free(e.detail);
	}
	free(text);
}

/* One logical line of a unit file (continuations joined), from line `start`. */
static void unit_line(oa_discovery *d, const char *abs, unsigned start, char *t, bool *in_service)
{
	while (*t && isspace((unsigned char)*t))
		t++;
	if (*t == '[') {
		*in_service = strncmp(t, "[Service]", 9) == 0;
		return;
	}
	if (!*in_service)
		return;
	char *eq = strchr(t, '=');
	if (!eq)
		return;
	char *ke = eq;
	while (ke > t && isspace((unsigned char)ke[-1]))
		ke--;
	size_t kl = (size_t)(ke - t);
	char *v = eq + 1;
	while (*v && isspace((unsigned char)*v))
		v++;
	char *detail = oa_xasprintf("%s:%u", abs, start);
	if (kl == 11 && strncmp(t, "Environment", 11) == 0) {
		env_ctx e = { d, "systemd", detail };
		oa_systemd_env_parse(v, on_env, &e);
	} else if (kl == 15 && strncmp(t, "EnvironmentFile", 15) == 0) {
		bool optional = *v == '-';
		char *f = oa_env_trim(optional ? v + 1 : v);
		if (f && f[0] == '/')
			read_env_file(d, f, !optional, detail);
		free(f);
	}
	free(detail);
}

/* Read a unit file or drop-in: [Service] Environment= and EnvironmentFile=. */
static void read_unit_file(oa_discovery *d, const char *abs)
{
	size_t len;
	char *text = open_sys_file(d, abs, false, NULL, &len);
	if (!text)
		return;
	char *cur = text, *line;
	size_t n;
	bool too_long, in_service = false;
	unsigned lineno = 0, start = 0;
	oa_buf logical;
	oa_buf_init(&logical);
	while ((line = next_line(&cur, text + len, &n, &too_long))) {
		lineno++;
		if (too_long)
			note(d, "%s:%u: a line longer than 64 KiB: ignored", abs, lineno);
		if (logical.len == 0) {
			start = lineno;
			const char *t = line;
			while (*t && isspace((unsigned char)*t))
				t++;
			if (*t == '#' || *t == ';')
				continue;
		}
		/* a trailing backslash continues the line */
		if (n > 0 && line[n - 1] == '\\') {
			if (logical.len + n > SYS_LINE_MAX) {
				note(d, "%s:%u: a line longer than 64 KiB: ignored", abs, start);
				logical.len = 0;
				continue;
			}
			oa_buf_add(&logical, line, n - 1);
			oa_buf_addc(&logical, ' ');
			continue;
		}
		oa_buf_add(&logical, line, n);
		unit_line(d, abs, start, logical.data ? logical.data : (char *)"", &in_service);
		logical.len = 0;
		if (logical.data)
			logical.data[0] = '\0';
	}
	/* as systemd does: a continued line at the end of the file still counts */
	if (logical.len)
		unit_line(d, abs, start, logical.data, &in_service);
	oa_buf_free(&logical);
	free(text);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void read_dropins(oa_discovery *d, const char *absdir)
{
	char *p = sys_path(absdir);
	DIR *dir = opendir(p);
	if (!dir) {
		if (errno != ENOENT)
			note(d, "cannot read %s: %s", absdir, strerror(errno));
		free(p);
		return;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(dir)))
		if (oa_str_has_suffix(e->d_name, ".conf")) {
			names = oa_xreallocarray(names, n + 1, sizeof *names);
			names[n++] = oa_xstrdup(e->d_name);
		}
	closedir(dir);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *f = oa_path_join(absdir, names[i]);
		read_unit_file(d, f);
		free(f);
		free(names[i]);
	}
	free(names);
	free(p);
}

/* Which stores share one blobs/ directory (followed: a symlink, a bind
 * mount): each names the others. */
static void note_shared_blobs(oa_discovery *d)
{
	struct stat *st = oa_xcalloc(d->n ? d->n : 1, sizeof *st);
	bool *have = oa_xcalloc(d->n ? d->n : 1, sizeof *have);
	for (size_t i = 0; i < d->n; i++) {
		char *b = d->v[i].root && d->v[i].state == OA_CAND_STORE ? oa_path_join(d->v[i].root, "blobs") : NULL;
		have[i] = b && stat(b, &st[i]) == 0 && S_ISDIR(st[i].st_mode);
		free(b);
	}
	for (size_t i = 0; i < d->n; i++)
		for (size_t j = 0; have[i] && j < d->n; j++) {
			if (j == i || !have[j] || st[i].st_dev != st[j].st_dev || st[i].st_ino != st[j].st_ino)
				continue;
			oa_candidate *c = &d->v[i];
			c->blobs_shared = oa_xreallocarray(c->blobs_shared, c->n_blobs_shared + 1, sizeof *c->blobs_shared);
			c->blobs_shared[c->n_blobs_shared++] = oa_xstrdup(d->v[j].root);
		}
	free(st);
	free(have);
}

void oa_discover(oa_discovery *d, char *const *extra, size_t n_extra)
{
	memset(d, 0, sizeof *d);
	accounts users;
	char *note;
	accounts_load(&users, &note);
	if (note) {
		d->notes = oa_xreallocarray(d->notes, d->n_notes + 1, sizeof *d->notes);
		d->notes[d->n_notes++] = note;
	}

	/* 1. Stores named on the command line. */
	for (size_t i = 0; i < n_extra; i++)
		add_candidate(d, "--store", "command line", extra[i], extra[i]);

	/* 2. $OLLAMA_MODELS of this process, used as given (the server does not absolutise). */
	char *env = oa_env_trim(getenv("OLLAMA_MODELS"));
	if (env) {
		add_candidate(d, "OLLAMA_MODELS", "environment", env, env);
		free(env);
	}

	/* 3. systemd units and drop-ins (the Linux service; distribution packages). */
	static const char *const unit_dirs[] = { "/etc/systemd/system", "/run/systemd/system",
	                                   "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
	                                   "/lib/systemd/system" };
	for (size_t i = 0; i < sizeof unit_dirs / sizeof unit_dirs[0]; i++) {
		char *u = oa_path_join(unit_dirs[i], "ollama.service");
		char *dd = oa_path_join(unit_dirs[i], "ollama.service.d");
		read_unit_file(d, u);
		read_dropins(d, dd);
		free(u);
		free(dd);
	}

	/* 4. /etc/default/ollama-style environment files. */
	static const char *const env_files[] = { "/etc/default/ollama", "/etc/sysconfig/ollama",
	                                   "/etc/conf.d/ollama" };
	for (size_t i = 0; i < sizeof env_files / sizeof env_files[0]; i++)
		read_env_file(d, env_files[i], false, NULL);

	/* 5. The service and distribution defaults. */
	static const struct { const char *path, *why; } defaults[] = {
		{ "/usr/share/ollama/.ollama/models", "Linux service (install.sh user ollama)" },
		{ "/var/lib/ollama", "distribution package" },
		{ "/var/lib/ollama/.ollama/models", "distribution package (user home)" },
		{ "/root/.ollama/models", "root / container image" },
	};
	for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
		add_sys_candidate(d, "default", defaults[i].why, defaults[i].path, defaults[i].path);

	/* 6. Every home directory in the password database. */
	for (size_t i = 0; i < users.n; i++) {
		const char *home = users.v[i].home;
		if (!*home || strcmp(home, "/nonexistent") == 0 || strcmp(home, "/dev/null") == 0)
			continue;
		char *given = oa_path_join(home, ".ollama/models");
		char *detail = oa_xasprintf("user %s", users.v[i].name);
		if (users.from_file)
			add_sys_candidate(d, "home", detail, given, given);
		else
			add_candidate(d, "home", detail, given, given);
		free(detail);
		free(given);
	}

	/* 7. This user's own default ($HOME/.ollama/models). */
	const char *home = getenv("HOME");
	if (home && *home) {
		char *p = oa_path_join(home, ".ollama/models");
		add_candidate(d, "default", "$HOME", p, p);
		free(p);
	}
	accounts_free(&users);
	note_shared_blobs(d);
}

void oa_discovery_free(oa_discovery *d)
{
	for (size_t i = 0; i < d->n; i++)
		candidate_free(&d->v[i]);
	free(d->v);
	for (size_t i = 0; i < d->n_notes; i++)
		free(d->notes[i]);
	free(d->notes);
	memset(d, 0, sizeof *d);
}
