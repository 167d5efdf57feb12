/* completion.c - the completion scripts of bash, zsh and fish, written from
 * the command table (commands.c) and the options' table (options.c), so a
 * command, option or format added there is completed without another edit.
 * Model names are completed from `ollama-audit [--store DIR]... list -q`,
 * run by the script at completion time: offline, on the stores the command
 * line names. */
#include "completion.h"
#include "commands.h"
#include "options.h"
#include "usage.h"

#include <stdbool.h>
#include <string.h>

/* What the value of an option is, beyond "some text": a directory, a file,
 * or one of a few words (the words the option's parser accepts). */
static const struct {
	const char *option;
	char kind; /* 'd' directory, 'f' file, 'w' one of words */
	const char *words;
} option_values[] = {
	{ "store", 'd', NULL },      { "quarantine", 'd', NULL }, { "root", 'd', NULL },
	{ "output", 'f', NULL },     { "plan", 'f', NULL },       { "cache", 'f', NULL },
	{ "log", 'f', NULL },        { "units", 'w', "si iec bytes" },
	{ "fail-on", 'w', "error warning" }, { "color", 'w', "auto always never" },
	{ "sort", 'w', "name size unique modified last-used unservable" },
	{ "child", 'w', "ggml llamacpp mlx" },
};

/* for each word of a space-separated list: w its start, n its length. */
#define EACH_WORD(list, w, n) \
	for (const char *w = (list); *w; w += strspn(w, " ")) \
		for (size_t n = strcspn(w, " "), once_ = 1; once_; once_ = 0, w += n)

/* The word w (n bytes) as a string in word[64]; false when it is longer. */
static bool as_word(char word[64], const char *w, size_t n)
{
	if (n >= 64)
		return false;
	memcpy(word, w, n);
	word[n] = '\0';
	return true;
}

/* Whether a command before upto takes the option: each is listed once. */
static bool seen_before(const command *upto, const char *w, size_t n)
{
	char word[64];
	if (!as_word(word, w, n))
		return false;
	for (const command *k = cli_commands; k != upto; k++)
		if (cli_word_in(k->options, word))
			return true;
	return false;
}

static bool takes_value(const char *w, size_t n)
{
	char word[64];
	return as_word(word, w, n) && cli_option_takes_value(word);
}

/* The options every command that reads a store takes: what is offered
 * before the command (`version` reads none and takes none of them). */
static bool common_option(const char *w, size_t n)
{
	char word[64];
	if (!as_word(word, w, n))
		return false;
	for (const command *k = cli_commands; k->name; k++)
		if (cli_word_in(k->options, "store") && !cli_word_in(k->options, word))
			return false;
	return true;
}

/* Each option (of any command, once) that takes a value of the kind ('d',
 * 'f', 'w' as in option_values; '-' none of those; '*' any), as prefix +
 * name, with sep between them. */
static void value_options(FILE *out, const char *prefix, const char *sep, char kind)
{
	bool first = true;
	for (const command *k = cli_commands; k->name; k++)
		EACH_WORD(k->options, w, n)
		{
			if (!n || !takes_value(w, n) || seen_before(k, w, n))
				continue;
			char this_kind = 0;
			for (size_t i = 0; i < sizeof option_values / sizeof *option_values; i++)
				if (strlen(option_values[i].option) == n && strncmp(option_values[i].option, w, n) == 0)
					this_kind = option_values[i].kind;
			if (kind != '*' && this_kind != kind && !(kind == '-' && this_kind == 0))
				continue;
			fprintf(out, "%s%s%.*s", first ? "" : sep, prefix, (int)n, w);
			first = false;
		}
	if (first) /* no option of that kind: a pattern nothing matches */
		fprintf(out, "%s--", prefix);
}

/* A list of options as --a --b, the common ones only when common. */
static void option_list(FILE *out, const char *options, bool common_only)
{
	bool first = true;
	EACH_WORD(options, w, n)
	{
		if (!n || (common_only && !common_option(w, n)))
			continue;
		fprintf(out, "%s--%.*s", first ? "" : " ", (int)n, w);
		first = false;
	}
}

static void command_names(FILE *out)
{
	for (const command *k = cli_commands; k->name; k++)
		fprintf(out, "%s ", k->name);
	fputs("help", out);
}

/* Every format any command produces, once. */
static void all_formats(FILE *out)
{
	const char *names[16];
	size_t count = 0;
	for (const command *k = cli_commands; k->name; k++)
		EACH_WORD(k->formats, w, n)
		{
			bool dup = false;
			for (size_t i = 0; i < count; i++)
				dup |= strlen(names[i]) == n && strncmp(names[i], w, n) == 0;
			if (!dup && n && count < 16) {
				fprintf(out, "%s%.*s", count ? " " : "", (int)n, w);
				names[count++] = w;
			}
		}
}

/* Whether the command's arguments are models (show MODEL, check [MODEL...],
 * list [PREFIX]): from its synopsis. */
static bool takes_models(const command *k)
{
	return strstr(k->synopsis, "MODEL") || strstr(k->synopsis, "PREFIX");
}

/* The "case $cmd" arms of bash and zsh: opts, formats and models per command. */
static void per_command_cases(FILE *out)
{
	for (const command *k = cli_commands; k->name; k++) {
		fprintf(out, "\t%s)\n\t\topts=\"", k->name);
		option_list(out, k->options, false);
		fprintf(out, "\"\n\t\tformats=\"%s\"\n\t\tmodels=%s\n\t\t;;\n", k->formats,
		        takes_models(k) ? "1" : "");
	}
	fputs("\thelp)\n\t\topts=\"\"\n\t\tformats=\"\"\n\t\tmodels=\n\t\t;;\n", out);
	fputs("\t\"\")\n\t\topts=\"", out);
	option_list(out, cli_commands[0].options, true);
	fputs("\"\n\t\tformats=\"", out);
	all_formats(out);
	fputs("\"\n\t\tmodels=\n\t\t;;\n\t*)\n\t\treturn\n\t\t;;\n\tesac\n", out);
}

/* How a shell offers words: before, the words, after. */
typedef struct reply {
	const char *before, *after, *dirs, *files;
} reply;

/* The "case $prev" arms: an option's value, offered as r says. */
static void value_cases(FILE *out, const reply *r)
{
	fprintf(out, "\tcase $prev in\n\t--format)\n\t\t%s$formats%s\n\t\treturn\n\t\t;;\n", r->before,
	        r->after);
	for (size_t i = 0; i < sizeof option_values / sizeof *option_values; i++)
		if (option_values[i].kind == 'w')
			fprintf(out, "\t--%s)\n\t\t%s%s%s\n\t\treturn\n\t\t;;\n", option_values[i].option,
			        r->before, option_values[i].words, r->after);
	fputc('\t', out);
	value_options(out, "--", "|", 'd');
	fprintf(out, ")\n\t\t%s\n\t\treturn\n\t\t;;\n\t", r->dirs);
	value_options(out, "--", "|", 'f');
	fprintf(out, ")\n\t\t%s\n\t\treturn\n\t\t;;\n\t", r->files);
	value_options(out, "--", "|", '-');
	fputs(")\n\t\treturn # a value nothing can guess (a number, a duration, ...)\n\t\t;;\n\tesac\n", out);
}

/* The loop that finds the command: the first word that is neither an
 * option nor an option's value. */
static void find_command(FILE *out, const char *word_i, const char *first)
{
	fprintf(out, "\tfor ((i = %s; i < cword; i++)); do\n\t\tcase %s in\n\t\t", first, word_i);
	value_options(out, "--", "|", '*');
	fprintf(out, ")\n\t\t\t((i++))\n\t\t\t;;\n\t\t-*) ;;\n\t\t*)\n\t\t\tcmd=%s\n\t\t\tbreak\n"
	             "\t\t\t;;\n\t\tesac\n\tdone\n", word_i);
}

static void bash_script(FILE *out)
{
	fputs("# bash completion for ollama-audit, written by `ollama-audit completion bash`\n"
	      "# from its command table. Model names come from `ollama-audit list -q` on the\n"
	      "# stores the command line names with --store (else the default store), offline.\n"
	      "_ollama_audit_models()\n{\n"
	      "\tlocal -a stores=()\n\tlocal i\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tcase ${COMP_WORDS[i]} in\n"
	      "\t\t--store) stores+=(--store \"${COMP_WORDS[i+1]}\") ;;\n"
	      "\t\t--store=*) stores+=(\"${COMP_WORDS[i]}\") ;;\n"
	      "\t\tesac\n\tdone\n"
	      "\t\"${COMP_WORDS[0]}\" \"${stores[@]}\" list -q 2>/dev/null\n}\n\n"
	      "_ollama_audit()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal cword=$COMP_CWORD cmd= i opts formats models\n"
	      "\tCOMPREPLY=()\n",
	      out);
	find_command(out, "${COMP_WORDS[i]}", "1");
	fputs("\tcase $cmd in\n", out);
	per_command_cases(out);
	static const reply bash = { "COMPREPLY=($(compgen -W \"", "\" -- \"$cur\"))",
		                    "COMPREPLY=($(compgen -d -- \"$cur\"))", "COMPREPLY=($(compgen -f -- \"$cur\"))" };
	value_cases(out, &bash);
	fputs("\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\telif [[ -z $cmd || $cmd == help ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"",
	      out);
	command_names(out);
	fputs("\" -- \"$cur\"))\n"
	      "\telif [[ -n $models ]]; then\n"
	      "\t\tlocal IFS=$'\\n'\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$(_ollama_audit_models)\" -- \"$cur\"))\n"
	      "\t\t# names hold ':', one of bash's word breaks\n"
	      "\t\tdeclare -F __ltrim_colon_completions >/dev/null && __ltrim_colon_completions \"$cur\"\n"
	      "\tfi\n}\n"
	      "complete -F _ollama_audit ollama-audit\n",
	      out);
}

static void zsh_script(FILE *out)
{
	fputs("#compdef ollama-audit\n"
	      "# zsh completion for ollama-audit, written by `ollama-audit completion zsh`\n"
	      "# from its command table. Model names come from `ollama-audit list -q` on the\n"
	      "# stores the command line names with --store (else the default store), offline.\n"
	      "_ollama_audit_models() {\n"
	      "\tlocal -a stores\n\tlocal i\n"
	      "\tfor ((i = 2; i < CURRENT; i++)); do\n"
	      "\t\tcase ${words[i]} in\n"
	      "\t\t--store) stores+=(--store \"${words[i+1]}\") ;;\n"
	      "\t\t--store=*) stores+=(\"${words[i]}\") ;;\n"
	      "\t\tesac\n\tdone\n"
	      "\t\"${words[1]}\" \"${stores[@]}\" list -q 2>/dev/null\n}\n\n"
	      "_ollama_audit() {\n"
	      "\tlocal cur=${words[CURRENT]} prev=${words[CURRENT-1]}\n"
	      "\tlocal cword=$CURRENT cmd= i opts formats models\n",
	      out);
	find_command(out, "${words[i]}", "2");
	fputs("\tcase $cmd in\n", out);
	per_command_cases(out);
	static const reply zsh = { "compadd -- ${=:-", "}", "_files -/", "_files" };
	value_cases(out, &zsh);
	fputs("\tif [[ $cur == -* ]]; then\n"
	      "\t\tcompadd -- ${=opts}\n"
	      "\telif [[ -z $cmd || $cmd == help ]]; then\n"
	      "\t\tcompadd -- ",
	      out);
	command_names(out);
	fputs("\n\telif [[ -n $models ]]; then\n"
	      "\t\tcompadd -- ${(f)\"$(_ollama_audit_models)\"}\n"
	      "\tfi\n}\n\n"
	      "if [[ $funcstack[1] == _ollama-audit ]]; then\n"
	      "\t_ollama_audit \"$@\"\nelse\n\tcompdef _ollama_audit ollama-audit\nfi\n",
	      out);
}

/* One fish `complete` line per option of a command (or of every command
 * before one is given: cond is the condition). */
static void fish_options(FILE *out, const char *cond, const char *options, const char *formats,
                         bool common_only)
{
	EACH_WORD(options, w, n)
	{
		if (!n || (common_only && !common_option(w, n)))
			continue;
		fprintf(out, "complete -c ollama-audit -n '%s' -l %.*s", cond, (int)n, w);
		if (n == 6 && strncmp(w, "format", 6) == 0) {
			fprintf(out, " -x -a '%s'\n", formats);
			continue;
		}
		char kind = 0;
		const char *words = NULL;
		for (size_t i = 0; i < sizeof option_values / sizeof *option_values; i++)
			if (strlen(option_values[i].option) == n && strncmp(option_values[i].option, w, n) == 0) {
				kind = option_values[i].kind;
				words = option_values[i].words;
			}
		if (kind == 'd')
			fputs(" -x -a '(__fish_complete_directories)'", out);
		else if (kind == 'f')
			fputs(" -r -F", out);
		else if (kind == 'w')
			fprintf(out, " -x -a '%s'", words);
		else if (takes_value(w, n))
			fputs(" -x", out);
		fputc('\n', out);
	}
}

static void fish_script(FILE *out)
{
	fputs("# fish completion for ollama-audit, written by `ollama-audit completion fish`\n"
	      "# from its command table. Model names come from `ollama-audit list -q` on the\n"
	      "# stores the command line names with --store (else the default store), offline.\n"
	      "function __ollama_audit_command\n"
	      "\tset -l tokens (commandline -opc)\n"
	      "\tset -e tokens[1]\n"
	      "\twhile set -q tokens[1]\n"
	      "\t\tswitch $tokens[1]\n"
	      "\t\t\tcase ",
	      out);
	value_options(out, "--", " ", '*');
	fputs("\n\t\t\t\tset -e tokens[1]\n"
	      "\t\t\tcase '-*'\n"
	      "\t\t\tcase '*'\n"
	      "\t\t\t\techo $tokens[1]\n"
	      "\t\t\t\treturn 0\n"
	      "\t\tend\n"
	      "\t\tset -e tokens[1]\n"
	      "\tend\n"
	      "\treturn 1\nend\n\n"
	      "function __ollama_audit_is\n"
	      "\tset -l cmd (__ollama_audit_command); and test \"$cmd\" = $argv[1]\nend\n\n"
	      "function __ollama_audit_models\n"
	      "\tset -l tokens (commandline -opc)\n"
	      "\tset -l stores\n"
	      "\tfor i in (seq 2 (count $tokens))\n"
	      "\t\tswitch $tokens[$i]\n"
	      "\t\t\tcase --store\n"
	      "\t\t\t\tset -l next (math $i + 1)\n"
	      "\t\t\t\tset -q tokens[$next]; and set -a stores --store $tokens[$next]\n"
	      "\t\t\tcase '--store=*'\n"
	      "\t\t\t\tset -a stores $tokens[$i]\n"
	      "\t\tend\n"
	      "\tend\n"
	      "\t$tokens[1] $stores list -q 2>/dev/null\nend\n\n"
	      "complete -c ollama-audit -f\n",
	      out);
	for (const command *k = cli_commands; k->name; k++) {
		fprintf(out, "complete -c ollama-audit -n 'not __ollama_audit_command' -a %s -d '", k->name);
		for (const char *p = k->summary; *p; p++)
			fprintf(out, "%s%c", *p == '\'' || *p == '\\' ? "\\" : "", *p);
		fputs("'\n", out);
	}
	fputs("complete -c ollama-audit -n 'not __ollama_audit_command' -a help -d 'a command\\'s help'\n", out);
	fputs("complete -c ollama-audit -n '__ollama_audit_is help' -a '", out);
	command_names(out);
	fputs("'\n", out);
	{
		char formats[256] = "";
		FILE *mem = fmemopen(formats, sizeof formats - 1, "w");
		if (mem) {
			all_formats(mem);
			fclose(mem);
		}
		fish_options(out, "not __ollama_audit_command", cli_commands[0].options, formats, true);
	}
	for (const command *k = cli_commands; k->name; k++) {
		char cond[64];
		snprintf(cond, sizeof cond, "__ollama_audit_is %s", k->name);
		fish_options(out, cond, k->options, k->formats, false);
		if (takes_models(k))
			fprintf(out, "complete -c ollama-audit -n '%s' -a '(__ollama_audit_models)'\n", cond);
	}
}

const char cli_completion_help[] =
	"usage: ollama-audit completion bash|zsh|fish\n"
	"\n"
	"Print the shell's completion script: commands, options, formats, model names\n"
	"(from `list -q` on the stores the command line names), directories for\n"
	"restore's DIR, and operation IDs after restore DIR --op. make install and the\n"
	".deb install all three; to try one: source <(ollama-audit completion bash).\n";

int cli_completion(FILE *out, const char *shell)
{
	if (shell && strcmp(shell, "bash") == 0)
		bash_script(out);
	else if (shell && strcmp(shell, "zsh") == 0)
		zsh_script(out);
	else if (shell && strcmp(shell, "fish") == 0)
		fish_script(out);
	else
		return cli_usage_error("completion needs a shell: bash, zsh or fish");
	return 0;
}
