/* host.c - the host name ndjson records and metrics carry. */
#include "host.h"

#include <stdio.h>
#include <unistd.h>

const char *cli_host(void)
{
	static char host[256];
	if (!host[0]) {
		if (gethostname(host, sizeof host - 1) < 0 || !host[0])
			snprintf(host, sizeof host, "localhost");
		host[sizeof host - 1] = '\0';
	}
	return host;
}
