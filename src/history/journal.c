/* journal.c - ollama.service's entries in the systemd journal, through
 * libsystemd's sd-journal (journal.h). An optional dependency: without it
 * the tool says so and reads log files only. */
#include "ollama_audit/journal.h"
#include "serves.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef OA_HAVE_SYSTEMD
#include <systemd/sd-journal.h>

bool oa_logs_have_journal(void)
{
	return true;
}

/* Does some entry (of the unit matched) name the store, as logsrc.c asks
 * of a log file? The journal holds every store the unit ever served; the
 * journal of a machine mounted at root names its paths without root. */
static bool journal_serves(sd_journal *j, const char *root, const char *store_root)
{
	char *needles[OA_STORE_NEEDLES_MAX];
	size_t n = oa_store_log_needles(store_root, root, needles);
	bool yes = false;
	SD_JOURNAL_FOREACH(j) {
		const void *data;
		size_t len;
		if (sd_journal_get_data(j, "MESSAGE", &data, &len) < 0 || len < 8)
			continue;
		for (size_t i = 0; i < n && !yes; i++)
			yes = oa_has_bytes((const char *)data + 8, len - 8, needles[i], strlen(needles[i]));
		if (yes)
			break;
	}
	for (size_t i = 0; i < n; i++)
		free(needles[i]);
	return yes;
}

long oa_logs_read_journal(oa_history *h, const char *root, const char *unit, const char *store_root, char *err,
                          size_t errlen)
{
	sd_journal *j = NULL;
	/* Another machine's disk: its var/log/journal and run/log/journal.
	 * This machine: the system journal, not other machines' copies. */
	int rc = root ? sd_journal_open_directory(&j, root, SD_JOURNAL_OS_ROOT)
	              : sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
	if (rc < 0) {
		oa_seterr(err, errlen, "the journal%s%s cannot be opened: %s", root ? " of " : "",
		          root ? root : "", strerror(-rc));
		return -1;
	}
	char *match = oa_xasprintf("_SYSTEMD_UNIT=%s", unit);
	rc = sd_journal_add_match(j, match, 0);
	free(match);
	if (rc < 0) {
		oa_seterr(err, errlen, "the journal: %s", strerror(-rc));
		sd_journal_close(j);
		return -1;
	}
	if (store_root && !journal_serves(j, root, store_root)) {
		sd_journal_close(j);
		return 0;
	}
	oa_history_begin(h, root ? "journal (--root)" : "journal");
	long n = 0;
	SD_JOURNAL_FOREACH(j) {
		const void *data;
		size_t len;
		uint64_t usec;
		if (sd_journal_get_data(j, "MESSAGE", &data, &len) < 0 || len < 8)
			continue;
		/* Lines without a time of their own take the journal's. */
		int64_t fallback = sd_journal_get_realtime_usec(j, &usec) >= 0 && usec < INT64_MAX / 1000 ?
		                   (int64_t)usec * 1000 : -1;
		oa_history_line(h, (const char *)data + 8, len - 8, (unsigned long)++n, fallback);
	}
	oa_history_end(h);
	sd_journal_close(j);
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
