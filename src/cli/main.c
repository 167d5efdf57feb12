/* main.c - ollama-audit: the phases of a run. Defaults from the
 * environment, the options (options.c), the command they name and its
 * checks (commands.c), then the command itself. The work is done by the
 * library; each cmd_*.c only chooses what to print. */
#include "cli_machine.h"
#include "cli_multi.h"
#include "cli_audit.h"
#include "commands.h"
#include "completion.h"
#include "options.h"
#include "usage.h"
#include "ollama_audit/oom.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The library calls this when memory runs out: the tool's answer is the
 * operational-error status, as for any error it cannot get past. */
static void out_of_memory(size_t bytes)
{
	(void)bytes;
	fputs("ollama-audit: out of memory\n", stderr);
	exit(OA_EXIT_OPERATIONAL);
}

/* Defaults before any option: OLLAMA_AUDIT_UNITS picks the units. */
static void environment_defaults(cli *c)
{
	const char *units_env = getenv("OLLAMA_AUDIT_UNITS");
	if (!units_env || !*units_env)
		return;
	if (strcmp(units_env, "iec") == 0)
		c->units = OA_UNITS_IEC;
	else if (strcmp(units_env, "bytes") == 0)
		c->units = OA_UNITS_BYTES;
}

/* Colour and progress, once the format is known: on a terminal by default,
 * never colour with NO_COLOR or TERM=dumb, no progress with machine output
 * unless --progress. */
static void terminal_defaults(cli *c, const cli_request *r)
{
	const char *no_color = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	if (strcmp(r->color, "always") == 0)
		c->color = true;
	else if (strcmp(r->color, "auto") == 0)
		c->color = isatty(STDOUT_FILENO) && !(no_color && *no_color) &&
		           !(term && strcmp(term, "dumb") == 0);
	c->progress = r->progress >= 0 ? r->progress : isatty(STDERR_FILENO);
	if (c->format != OUT_TABLE)
		c->progress = r->progress == 1;
}

static int unknown_command(const char *name)
{
	const char *near = cli_suggest_command(name);
	if (near)
		return cli_usage_error("unknown command '%s'; did you mean %s?", name, near);
	return cli_usage_error("unknown command '%s'", name);
}

/* The command's help, `help [COMMAND]` or the general usage: exit 0; `help`
 * of a command there is not is a usage error, as running it would be. */
static int print_help(const cli *c, const command *cmd)
{
	const char *name = strcmp(c->cmd, "help") == 0 && c->n_args ? c->args[0] : c->cmd;
	const command *about = cmd ? cmd : cli_find_command(name);
	if (about) {
		fputs(about->help, stdout);
		cli_print_command_options(stdout, about);
	} else if (strcmp(name, "completion") == 0) {
		fputs(cli_completion_help, stdout);
	} else if (strcmp(name, "help") == 0) {
		cli_print_usage(stdout);
	} else {
		return unknown_command(name);
	}
	return 0;
}

/* -q (list, du; restore DIR) prints names (IDs) only: it refuses any --format but table. */
static bool quiet_ok(const cli *c)
{
	if (c->quiet && c->format_set && c->format != OUT_TABLE) {
		cli_err("%s -q prints names only, one per line: it takes no --format", c->cmd);
		return false;
	}
	return true;
}

/* Without --format a command writes the first format it lists: a table,
 * except report's page. */
static void default_format(cli *c, const command *cmd)
{
	if (!c->format_set && strncmp(cmd->formats, "html", 4) == 0) {
		c->format = OUT_HTML;
		c->format_name = "html";
	}
}

/* Whether the command takes every option given and the format asked for;
 * a usage error (exit status) when not, 0 when it does. */
static int check_command_line(const cli *c, const cli_request *r, const command *cmd)
{
	for (size_t i = 0; i < r->n_given; i++)
		if (!cli_word_in(cmd->options, r->given[i])) {
			cli_err("--%s is not an option of %s", r->given[i], c->cmd);
			return OA_EXIT_USAGE;
		}
	if (!cli_word_in(cmd->formats, c->format_name))
		return cli_refuse_format(c, c->cmd, cmd->formats);
	if (!quiet_ok(c))
		return OA_EXIT_USAGE;
	return 0;
}

/* The command, between --output's redirection and the held-back machine
 * output; a write error on stdout is an operational error. */
static int run_command(cli *c, const command *cmd)
{
	c->render = cmd->render;
	int rc = cli_output_begin(c);
	if (!rc) {
		cli_machine_begin(c);
		rc = cmd->run(c);
		cli_machine_end(c, rc);
	}
	rc = cli_output_end(c, rc);
	cli_audit_release(c);
	if (rc & OA_EXIT_USAGE)
		cli_usage_hint();
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_err("write error on standard output");
		rc |= OA_EXIT_OPERATIONAL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	cli c = { .format = OUT_TABLE, .format_name = "table", .units = OA_UNITS_SI, .fail_on = OA_SEV_ERROR,
	          .min_age = -1, .unused_for = -1, .older_than = -1 };
	cli_request r = { .color = "auto", .progress = -1 };
	oa_set_oom_handler(out_of_memory);
	environment_defaults(&c);
	const char *named = cli_scan_command(argc, argv);
	if (named && cli_find_command(named))
		cli_usage_hint_for(named);
	int rc = cli_parse_options(&c, &r, argc, argv);
	if (rc != CLI_GO_ON)
		return rc;
	terminal_defaults(&c, &r);
	/* getopt_long moved every non-option to the end, in order. */
	if (optind >= argc) {
		cli_print_usage(r.help ? stdout : stderr);
		return r.help ? 0 : OA_EXIT_USAGE;
	}
	c.cmd = argv[optind];
	c.args = argv + optind + 1;
	c.n_args = (size_t)(argc - optind - 1);
	/* Hidden: the shells' completion scripts (installed by make install). */
	if (strcmp(c.cmd, "completion") == 0 && !r.help)
		return cli_completion(stdout, c.n_args == 1 ? c.args[0] : NULL);
	const command *cmd = cli_find_command(c.cmd);
	if (!cmd && strcmp(c.cmd, "help") != 0)
		return unknown_command(c.cmd);
	if (r.help || !cmd)
		return print_help(&c, cmd);
	default_format(&c, cmd);
	rc = check_command_line(&c, &r, cmd);
	if (rc)
		cli_usage_hint(); /* the one style: the error, then "Try '...'" */
	return rc ? rc : run_command(&c, cmd);
}
