/* log_inputs.c - which server logs are read for a store, and standard
 * input read once for every store that needs it. */
#include "history/log_inputs.h"
#include "ollama_audit/journal.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *spool_stdin(void)
{
	FILE *f = tmpfile();
	if (!f)
		return NULL;
	char chunk[65536];
	for (;;) {
		ssize_t got = oa_read_some(STDIN_FILENO, chunk, sizeof chunk);
		if (got <= 0 || fwrite(chunk, 1, (size_t)got, f) != (size_t)got) {
			int e = got < 0 ? errno : EIO;
			if (got == 0 && fflush(f) == 0)
				return f;
			fclose(f);
			errno = e;
			return NULL;
		}
	}
}

static int read_stdin(oa_log_inputs *in, oa_history *h)
{
	if (in->stdin_failed)
		return -1;
	int fd = STDIN_FILENO;
	if (in->stdin_shared) {
		if (!in->stdin_used)
			in->spool = spool_stdin();
		if (!in->spool || lseek(fileno(in->spool), 0, SEEK_SET) < 0)
			fd = -1;
		else
			fd = fileno(in->spool);
	} else if (in->stdin_used) {
		errno = EBADF; /* read already: cannot happen with one store */
		fd = -1;
	}
	in->stdin_used = true;
	if (fd < 0 || oa_history_read_fd(h, fd, "(stdin)") < 0) {
		in->stdin_failed = true;
		return -1;
	}
	return 0;
}

/* "WHAT: WHY" */
static void problem(oa_log_sources *used, const char *what, const char *why)
{
	char *msg = oa_xasprintf("%s: %s", what, why);
	oa_log_sources_problem(used, msg);
	free(msg);
}

bool oa_log_inputs_read(oa_log_inputs *in, const char *store_root, oa_history *h, oa_log_sources *used)
{
	char err[512];
	bool ok = true;
	for (size_t i = 0; i < in->n_logs; i++) {
		if (strcmp(in->logs[i], "-") == 0) {
			if (read_stdin(in, h) < 0) {
				problem(used, "standard input", strerror(errno));
				ok = false;
				continue;
			}
			oa_log_sources_add(used, "(stdin)");
		} else if (oa_logs_read_file(h, in->logs[i], false, err, sizeof err) < 0) {
			oa_log_sources_problem(used, err);
			ok = false;
		} else {
			oa_log_sources_add(used, in->logs[i]);
		}
	}
	/* --log names the sources; --root asks for that system's journal too. */
	if (in->n_logs && !in->root)
		return ok;
	if (!in->n_logs)
		ok &= oa_logs_read_store_files(h, store_root, used);
	/* The tests' fake machine has its own journal, as it has its own /etc.
	 * The machine's journal is read for the stores its service served;
	 * --root names the journal to read. */
	const char *root = in->root ? in->root : in->sysroot && *in->sysroot ? in->sysroot : NULL;
	long got = oa_logs_read_journal(h, root, "ollama.service", in->root ? NULL : store_root, err, sizeof err);
	if (got > 0) {
		oa_log_sources_add(used, in->root ? "journal (--root)" : "journal");
	} else if (in->root) {
		char *what = oa_xasprintf("--root %s", in->root);
		problem(used, what, got < 0 ? err : "no ollama.service entries in its journal");
		free(what);
		ok = false;
	}
	return ok;
}

bool oa_log_inputs_usage(oa_log_inputs *in, oa_store *s, oa_log_usage *u, oa_log_sources *used)
{
	oa_history h;
	oa_history_init(&h);
	bool ok = oa_log_inputs_read(in, s->root, &h, used);
	oa_history_match(&h, s);
	oa_log_usage_of(u, &h, s, used->names, used->n); /* takes the names */
	used->names = NULL;
	used->n = 0;
	oa_history_free(&h);
	return ok;
}

bool oa_log_inputs_findings(oa_log_inputs *in, oa_store *s, oa_log_sources *used)
{
	oa_history h;
	oa_history_init(&h);
	bool ok = oa_log_inputs_read(in, s->root, &h, used);
	oa_history_match(&h, s);
	oa_history_findings(&h, s);
	oa_history_free(&h);
	return ok;
}

struct oa_usage_entry {
	const oa_store *s;
	oa_log_usage u;
};

oa_log_usage *oa_usage_cache_find(const oa_usage_cache *c, const oa_store *s)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->s == s)
			return &c->v[i]->u;
	return NULL;
}

oa_log_usage *oa_usage_cache_add(oa_usage_cache *c, const oa_store *s)
{
	c->v = oa_xreallocarray(c->v, c->n + 1, sizeof *c->v);
	struct oa_usage_entry *e = oa_xcalloc(1, sizeof *e);
	e->s = s;
	c->v[c->n++] = e;
	return &e->u;
}

void oa_usage_cache_free(oa_usage_cache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		oa_log_usage_free(&c->v[i]->u);
		free(c->v[i]);
	}
	free(c->v);
	*c = (oa_usage_cache){ 0 };
}

void oa_log_inputs_close(oa_log_inputs *in)
{
	if (in->spool)
		fclose(in->spool);
	in->spool = NULL;
}
