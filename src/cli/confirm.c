/* confirm.c - the one yes/no question of the commands that change files
 * (prune, rm, dedupe); see confirm.h. */
#include "confirm.h"
#include "output.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

bool cli_confirm(const char *question)
{
	/* Only a person at a terminal can answer: piped input is never consent. */
	if (!isatty(STDIN_FILENO))
		return false;
	fprintf(stderr, "%s [y/N] ", oa_text_safe(question));
	fflush(stderr);
	char line[64];
	if (!fgets(line, sizeof line, stdin))
		return false;
	size_t n = strlen(line);
	if (n && line[n - 1] != '\n') {
		/* longer than any answer: drain the rest of the line, then say no */
		int ch;
		while ((ch = getchar()) != EOF && ch != '\n')
			;
		return false;
	}
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
		line[--n] = '\0';
	const char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	return strcasecmp(p, "y") == 0 || strcasecmp(p, "yes") == 0;
}

/* The program's, not the library's: one command runs per process. */
static volatile sig_atomic_t stop_requested;

volatile sig_atomic_t *cli_stop_flag(void)
{
	return &stop_requested;
}

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void cli_signals_catch(cli_signals *s)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &s->old_int);
	sigaction(SIGTERM, &sa, &s->old_term);
	sigaction(SIGHUP, &sa, &s->old_hup);
}

void cli_signals_restore(const cli_signals *s)
{
	sigaction(SIGINT, &s->old_int, NULL);
	sigaction(SIGTERM, &s->old_term, NULL);
	sigaction(SIGHUP, &s->old_hup, NULL);
}
