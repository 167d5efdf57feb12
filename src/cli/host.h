/* host.h - the host name ndjson records and metrics carry. */
#ifndef OA_CLI_HOST_H
#define OA_CLI_HOST_H

/* The host name (gethostname), for ndjson records and metrics. */
const char *cli_host(void);

#endif
