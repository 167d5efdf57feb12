/* usage.c - what the command line says on stderr: errors, usage errors
 * with a pointer to the right --help, and a format a command refuses. */
#include "usage.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static const char *hint_cmd;

void cli_usage_hint_for(const char *cmd)
{
	hint_cmd = cmd;
}

void cli_usage_hint(void)
{
	/* Once a run: a usage error a command reports itself (cli_usage_error)
	 * comes back to main.c as exit 16, which hints too. */
	static bool hinted;
	if (hinted)
		return;
	hinted = true;
	if (hint_cmd)
		fprintf(stderr, "Try 'ollama-audit %s --help'.\n", hint_cmd);
	else
		fprintf(stderr, "Try 'ollama-audit --help'.\n");
}

static char last_error[512];

const char *cli_last_error(void)
{
	return last_error;
}

__attribute__((format(printf, 1, 0)))
static void say(const char *fmt, va_list ap)
{
	/* Messages name paths and models from a store: escaped like every
	 * other printed text (oa_printable), so none can drive the terminal. */
	char *msg = oa_xvasprintf(fmt, ap);
	char *e = oa_printable(msg);
	snprintf(last_error, sizeof last_error, "%s", e);
	fprintf(stderr, "ollama-audit: %s\n", e);
	free(e);
	free(msg);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	cli_usage_hint();
	return OA_EXIT_USAGE;
}

void cli_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

int cli_refuse_format(const cli *c, const char *what, const char *formats)
{
	oa_buf b;
	oa_buf_init(&b);
	for (const char *p = formats; *p; p++)
		if (*p == ' ')
			oa_buf_adds(&b, ", ");
		else
			oa_buf_addc(&b, *p);
	char *list = oa_buf_take(&b);
	cli_err("%s: --format %s is not a format of %s (it takes: %s)", c->cmd, c->format_name, what, list);
	free(list);
	return OA_EXIT_USAGE;
}
