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
	fprintf(stderr, "%s [y/N] ", cli_safe(question));
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
