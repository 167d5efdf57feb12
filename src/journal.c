/* journal.c - ollama.service's entries in the systemd journal, through
 * libsystemd's sd-journal (logsrc.h). An optional dependency: without it
 * the tool says so and reads log files only. */
#include "ollama_audit/logsrc.h"
#include "ollama_audit/util.h"

bool oa_logs_have_journal(void)
{
	return false;
}

long oa_logs_read_journal(oa_history *h, const char *root, const char *unit, char *err, size_t errlen)
{
	(void)h;
	(void)root;
	(void)unit;
	oa_seterr(err, errlen, "built without libsystemd: the journal cannot be read "
	                       "(install libsystemd-dev and rebuild, or export it with "
	                       "`journalctl -u ollama > FILE` and pass --log FILE)");
	return -1;
}
