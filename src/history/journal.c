/* journal.c - ollama.service's entries in the systemd journal, through
 * libsystemd's sd-journal (journal.h). An optional dependency: built
 * without its headers, or where libsystemd.so.0 cannot be loaded, the tool
 * says so and reads log files only. */
#include "ollama_audit/journal.h"
#include "serves.h"
#include "base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OA_HAVE_SYSTEMD
#include <dlfcn.h>
#include <pthread.h>
#include <systemd/sd-journal.h>

/* libsystemd is loaded the first time the journal is read, not linked:
 * linked, every command mapped and relocated it and the six libraries it
 * needs at each start (1.1 MiB of RSS, issue 21) for the one that reads
 * the journal. The header gives the calls' types; the soname, their ABI. */
#define SD_SONAME "libsystemd.so.0"

static struct {
	int (*open)(sd_journal **, int);
	int (*open_directory)(sd_journal **, const char *, int);
	int (*add_match)(sd_journal *, const void *, size_t);
	int (*seek_head)(sd_journal *);
	int (*next)(sd_journal *);
	int (*get_data)(sd_journal *, const char *, const void **, size_t *);
	int (*get_realtime_usec)(sd_journal *, uint64_t *);
	void (*close)(sd_journal *);
} sd;
static bool sd_ok;
static char sd_why[256];
static pthread_once_t sd_once = PTHREAD_ONCE_INIT;

/* dlsym's object pointer into a function pointer, as POSIX allows. */
static bool sym(void *lib, const char *name, void *fn, size_t size)
{
	void *p = dlsym(lib, name);
	if (!p) {
		snprintf(sd_why, sizeof sd_why, "%s has no %s", SD_SONAME, name);
		return false;
	}
	memcpy(fn, &p, size);
	return true;
}

static void sd_load(void)
{
	void *lib = dlopen(SD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		snprintf(sd_why, sizeof sd_why, "%s", e ? e : SD_SONAME " cannot be loaded");
		return;
	}
	sd_ok = sym(lib, "sd_journal_open", &sd.open, sizeof sd.open) &&
	        sym(lib, "sd_journal_open_directory", &sd.open_directory, sizeof sd.open_directory) &&
	        sym(lib, "sd_journal_add_match", &sd.add_match, sizeof sd.add_match) &&
	        sym(lib, "sd_journal_seek_head", &sd.seek_head, sizeof sd.seek_head) &&
	        sym(lib, "sd_journal_next", &sd.next, sizeof sd.next) &&
	        sym(lib, "sd_journal_get_data", &sd.get_data, sizeof sd.get_data) &&
	        sym(lib, "sd_journal_get_realtime_usec", &sd.get_realtime_usec, sizeof sd.get_realtime_usec) &&
	        sym(lib, "sd_journal_close", &sd.close, sizeof sd.close);
	if (!sd_ok)
		dlclose(lib); /* loaded for the life of the process otherwise */
}

bool oa_logs_have_journal(void)
{
	pthread_once(&sd_once, sd_load);
	return sd_ok;
}

/* Each entry of j in turn, from the first (SD_JOURNAL_FOREACH, through
 * the loaded calls). */
#define EACH_ENTRY(j) if (sd.seek_head(j) < 0) {} else while (sd.next(j) > 0)

/* Does some entry (of the unit matched) name the store, as logsrc.c asks
 * of a log file (serves.h)? The journal holds every store the unit ever
 * served; the journal of a machine mounted at root names its paths as that
 * machine sees them: resolved inside root. */
static bool journal_serves(sd_journal *j, const char *root, const char *store_root)
{
	oa_store_names sn;
	oa_store_names_init(&sn, store_root, root);
	bool yes = false;
	EACH_ENTRY(j) {
		const void *data;
		size_t len;
		if (sd.get_data(j, "MESSAGE", &data, &len) < 0 || len < 8)
			continue;
		if ((yes = oa_store_named_in(&sn, (const char *)data + 8, len - 8)))
			break;
	}
	oa_store_names_free(&sn);
	return yes;
}

long oa_logs_read_journal(oa_history *h, const char *root, const char *unit, const char *store_root, char *err,
                          size_t errlen)
{
	if (!oa_logs_have_journal()) {
		oa_seterr(err, errlen, "the journal cannot be read: %s (export it with `journalctl -u ollama > FILE` "
		          "and pass --log FILE)", sd_why);
		return -1;
	}
	sd_journal *j = NULL;
	/* Another machine's disk: its var/log/journal and run/log/journal.
	 * This machine: the system journal, not other machines' copies. */
	int rc = root ? sd.open_directory(&j, root, SD_JOURNAL_OS_ROOT)
	              : sd.open(&j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
	if (rc < 0) {
		oa_seterr(err, errlen, "the journal%s%s cannot be opened: %s", root ? " of " : "",
		          root ? root : "", strerror(-rc));
		return -1;
	}
	char *match = oa_xasprintf("_SYSTEMD_UNIT=%s", unit);
	rc = sd.add_match(j, match, 0);
	free(match);
	if (rc < 0) {
		oa_seterr(err, errlen, "the journal: %s", strerror(-rc));
		sd.close(j);
		return -1;
	}
	if (store_root && !journal_serves(j, root, store_root)) {
		sd.close(j);
		return 0;
	}
	oa_history_begin(h, root ? "journal (--root)" : "journal");
	long n = 0;
	EACH_ENTRY(j) {
		const void *data;
		size_t len;
		uint64_t usec;
		if (sd.get_data(j, "MESSAGE", &data, &len) < 0 || len < 8)
			continue;
		/* Lines without a time of their own take the journal's. */
		int64_t fallback = sd.get_realtime_usec(j, &usec) >= 0 && usec < INT64_MAX / 1000 ?
		                   (int64_t)usec * 1000 : -1;
		oa_history_line(h, (const char *)data + 8, len - 8, (unsigned long)++n, fallback);
	}
	oa_history_end(h);
	sd.close(j);
	return n;
}

#else

bool oa_logs_have_journal(void)
{
	return false;
}

long oa_logs_read_journal(oa_history *h, const char *root, const char *unit, const char *store_root, char *err,
                          size_t errlen)
{
	(void)h;
	(void)root;
	(void)unit;
	(void)store_root;
	oa_seterr(err, errlen, "built without libsystemd: the journal cannot be read "
	                       "(install libsystemd-dev and rebuild, or export it with "
	                       "`journalctl -u ollama > FILE` and pass --log FILE)");
	return -1;
}

#endif
