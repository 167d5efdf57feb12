/* commands.h - the command table: each command's name, the function that
 * runs it, the options it takes, the formats it produces and its help, in
 * one entry (commands.c). Included by main.c, never by a command:
 * commands.c depends on every cmd_*.c. */
#ifndef OA_CLI_COMMANDS_H
#define OA_CLI_COMMANDS_H

#include "cli.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct command {
	const char *name;
	int (*run)(cli *c);
	const char *synopsis; /* the name and arguments, in the general usage */
	const char *summary;  /* its line there */
	const char *options;  /* long option names, space-separated */
	const char *formats;  /* --format values, space-separated, table first */
	const char *help;     /* `ollama-audit NAME --help` */
	/* one renderer per format, for the commands that build one view and
	 * let cli_render() pick; the others choose by c->format themselves */
	cli_renderer render[OUT_FORMATS];
} command;

/* The widest line of any help: `ollama-audit --help`, `help COMMAND` (each
 * command's .help text is written to it; tests/cli/test_help.py checks). */
#define CLI_HELP_WIDTH 80

/* Every command, ended by an entry whose name is NULL. */
extern const command cli_commands[];

const command *cli_find_command(const char *name);
/* Whether the space-separated list holds the word. */
bool cli_word_in(const char *list, const char *word);
/* "Options it takes: --store, --format, ..." from the table, so a command's
 * --help names every option it accepts and no other. */
void cli_print_command_options(FILE *out, const command *cmd);
/* The command closest to a mistyped one, or NULL when none is close. */
const char *cli_suggest_command(const char *typed);
/* The general usage: `ollama-audit --help`, or on stderr without a command. */
void cli_print_usage(FILE *out);

#endif
