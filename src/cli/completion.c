/* completion.c - the completion scripts of bash, zsh and fish, written from
 * the command table (commands.c) and the options' table (options.c), so a
 * command, option, format or argument added there is completed without
 * another edit. Model names are completed from `ollama-audit [--store
 * DIR]... list -q`, the operation IDs of `restore DIR --op` from `restore
 * DIR -q`, both run by the script at completion time: offline, on what the
 * command line names. */
#include "completion.h"
#include "commands.h"
#include "options.h"
#include "usage.h"

#include <stdbool.h>
#include <string.h>

/* What the value of an option is, beyond "some text": a directory, a file,
 * one of a few words (the words the option's parser accepts), or an
 * operation of the quarantine restore names. */
static const struct {
	const char *option;
	char kind; /* 'd' directory, 'f' file, 'w' one of words, 'o' an operation ID */
	const char *words;
} option_values[] = {
	{ "store", 'd', NULL },      { "quarantine", 'd', NULL }, { "root", 'd', NULL },
	{ "output", 'f', NULL },     { "plan", 'f', NULL },       { "cache", 'f', NULL },
	{ "log", 'f', NULL },        { "units", 'w', "si iec bytes" },
	{ "fail-on", 'w', "error warning" }, { "color", 'w', "auto always never" },
	{ "sort", 'w', "name size unique modified last-used unservable" },
	{ "child", 'w', "ggml llamacpp mlx" }, { "op", 'o', NULL },
};

/* for each word of a space-separated list: w its start, n its length. */
#define EACH_WORD(list, w, n) \
	for (const char *w = (list); *w; w += strspn(w, " ")) \
		for (size_t n = strcspn(w, " "), once_ = 1; once_; once_ = 0, w += n)

/* What a command's arguments are, from its synopsis: 'd' a directory (DIR),
 * 'm' a model of the store (MODEL, PREFIX), '-' nothing to offer; the last
 * one repeats. restore's MODEL is one DIR holds, gone from the store: the
 * store's names would be the wrong ones, so none is offered. */
static void argument_kinds(const command *k, char *kinds, size_t len)
{
	size_t n = 0;
	const char *syn = k->synopsis + strcspn(k->synopsis, " ");
	EACH_WORD(syn, w, wn)
	{
		size_t skip = strspn(w, "[");
		size_t name = strcspn(w + skip, "]. ");
		char kind = '-';
		if (name == 3 && strncmp(w + skip, "DIR", 3) == 0)
			kind = 'd';
		else if ((name == 5 && strncmp(w + skip, "MODEL", 5) == 0) ||
		         (name == 6 && strncmp(w + skip, "PREFIX", 6) == 0))
			kind = strcmp(k->name, "restore") == 0 ? '-' : 'm';
		if (wn && n + 1 < len)
			kinds[n++] = kind;
	}
	kinds[n] = '\0';
}

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
				dup |= strcspn(names[i], " ") == n && strncmp(names[i], w, n) == 0;
			if (!dup && n && count < 16) {
				fprintf(out, "%s%.*s", count ? " " : "", (int)n, w);
				names[count++] = w;
			}
		}
}

/* The "case $cmd" arms of bash and zsh: opts, formats and the kinds of
 * the arguments (argument_kinds) per command. */
static void per_command_cases(FILE *out)
{
	for (const command *k = cli_commands; k->name; k++) {
		char kinds[16];
		argument_kinds(k, kinds, sizeof kinds);
		fprintf(out, "\t%s)\n\t\topts=\"", k->name);
		option_list(out, k->options, false);
		fprintf(out, "\"\n\t\tformats=\"%s\"\n\t\targs=%s\n\t\t;;\n", k->formats, kinds);
	}
	fputs("\thelp)\n\t\topts=\"\"\n\t\tformats=\"\"\n\t\targs=\n\t\t;;\n", out);
	fputs("\t\"\")\n\t\topts=\"", out);
	option_list(out, cli_commands[0].options, true);
	fputs("\"\n\t\tformats=\"", out);
	all_formats(out);
	fputs("\"\n\t\targs=\n\t\t;;\n\t*)\n\t\treturn\n\t\t;;\n\tesac\n", out);
}

/* How a shell offers words: before, the words, after; directories, files,
 * the operation IDs of the quarantine the line names. */
typedef struct reply {
	const char *before, *after, *dirs, *files, *ops;
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
	value_options(out, "--", "|", 'o');
	fprintf(out, ")\n\t\t%s\n\t\treturn\n\t\t;;\n\t", r->ops);
	value_options(out, "--", "|", 'd');
	fprintf(out, ")\n\t\t%s\n\t\treturn\n\t\t;;\n\t", r->dirs);
	value_options(out, "--", "|", 'f');
	fprintf(out, ")\n\t\t%s\n\t\treturn\n\t\t;;\n\t", r->files);
	value_options(out, "--", "|", '-');
	fputs(")\n\t\treturn # a value nothing can guess (a number, a duration, ...)\n\t\t;;\n\tesac\n", out);
}

/* The loops that find the command, the first word that is neither an
 * option nor an option's value, then count the arguments after it before
 * the cursor (pos) and keep the first (arg: restore's DIR). */
static void find_command(FILE *out, const char *word_i, const char *first)
{
	fprintf(out, "\tfor ((i = %s; i < cword; i++)); do\n\t\tcase %s in\n\t\t", first, word_i);
	value_options(out, "--", "|", '*');
	fprintf(out, ")\n\t\t\t((i++))\n\t\t\t;;\n\t\t-*) ;;\n\t\t*)\n\t\t\tcmd=%s\n\t\t\tbreak\n"
	             "\t\t\t;;\n\t\tesac\n\tdone\n", word_i);
	fprintf(out, "\tfor ((i++; i < cword; i++)); do\n\t\tcase %s in\n\t\t", word_i);
	value_options(out, "--", "|", '*');
	fprintf(out, ")\n\t\t\t((i++))\n\t\t\t;;\n\t\t-*) ;;\n\t\t*)\n\t\t\t((pos++ == 0)) && arg=%s\n"
	             "\t\t\t;;\n\t\tesac\n\tdone\n", word_i);
}

/* The functions the bash script's _ollama_audit calls. */
static void bash_helpers(FILE *out)
{
	fputs("_ollama_audit_models()\n{\n"
	      "\tlocal -a stores=()\n\tlocal i\n"
	      "\tfor ((i = 1; i < cword; i++)); do\n"
	      "\t\tcase ${words[i]} in\n"
	      "\t\t--store) stores+=(--store \"${words[i+1]}\") ;;\n"
	      "\t\t--store=*) stores+=(\"${words[i]}\") ;;\n"
	      "\t\tesac\n\tdone\n"
	      "\tcommand \"${words[0]}\" \"${stores[@]}\" list -q 2>/dev/null\n}\n\n"
	      "_ollama_audit_ops()\n{\n"
	      "\tlocal dir=$1\n"
	      "\t[[ $dir == \"~/\"* ]] && dir=$HOME/${dir#\"~/\"}\n"
	      "\t[[ -n $dir ]] && command \"${words[0]}\" restore \"$dir\" -q 2>/dev/null\n}\n\n"
	      "# The words up to the cursor, as _get_comp_words_by_ref -n : gives them when\n"
	      "# bash-completion is not loaded: bash splits a tag at its ':' (COMP_WORDBREAKS);\n"
	      "# here the line is split at blanks only.\n"
	      "_ollama_audit_split()\n{\n"
	      "\tlocal line=${COMP_LINE:0:COMP_POINT}\n"
	      "\tread -ra words <<<\"$line\"\n"
	      "\t[[ -z $line || $line == *[[:blank:]] ]] && words+=(\"\")\n"
	      "\tcword=$((${#words[@]} - 1))\n"
	      "\tcur=${words[cword]}\n"
	      "\tprev=${words[cword-1]}\n}\n\n"
	      "# What readline replaces is the text after the last ':' of a tag: the\n"
	      "# candidates lose what comes before it (__ltrim_colon_completions).\n"
	      "_ollama_audit_ltrim()\n{\n"
	      "\tif declare -F __ltrim_colon_completions >/dev/null; then\n"
	      "\t\t__ltrim_colon_completions \"$cur\"\n"
	      "\telif [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then\n"
	      "\t\tlocal colon=${cur%\"${cur##*:}\"} i=${#COMPREPLY[@]}\n"
	      "\t\twhile ((i-- > 0)); do\n"
	      "\t\t\tCOMPREPLY[i]=${COMPREPLY[i]#\"$colon\"}\n"
	      "\t\tdone\n"
	      "\tfi\n}\n\n",
	      out);
}

static void bash_script(FILE *out)
{
	fputs("# bash completion for ollama-audit, written by `ollama-audit completion bash`\n"
	      "# from its command table. Model names come from `ollama-audit list -q` on the\n"
	      "# stores the command line names with --store (else the default store), offline;\n"
	      "# the operation IDs of restore DIR --op from `ollama-audit restore DIR -q`.\n",
	      out);
	bash_helpers(out);
	fputs("_ollama_audit()\n{\n"
	      "\tlocal cur prev words cword\n"
	      "\tif declare -F _get_comp_words_by_ref >/dev/null; then\n"
	      "\t\t_get_comp_words_by_ref -n : cur prev words cword\n"
	      "\telse\n"
	      "\t\t_ollama_audit_split\n"
	      "\tfi\n"
	      "\tlocal cmd= i opts formats args arg= pos=0\n"
	      "\tCOMPREPLY=()\n",
	      out);
	find_command(out, "${words[i]}", "1");
	fputs("\tcase $cmd in\n", out);
	per_command_cases(out);
	static const reply bash = {
		"COMPREPLY=($(compgen -W \"", "\" -- \"$cur\"))",
		"COMPREPLY=($(compgen -d -- \"$cur\"))\n\t\tcompopt -o filenames 2>/dev/null",
		"COMPREPLY=($(compgen -f -- \"$cur\"))\n\t\tcompopt -o filenames 2>/dev/null",
		"COMPREPLY=($(compgen -W \"$(_ollama_audit_ops \"$arg\")\" -- \"$cur\"))",
	};
	value_cases(out, &bash);
	fputs("\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tif [[ -z $cmd || $cmd == help ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"",
	      out);
	command_names(out);
	fputs("\" -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tlocal kind=${args:pos:1}\n"
	      "\t[[ -z $kind ]] && kind=${args: -1}\n"
	      "\tcase $kind in\n"
	      "\td)\n"
	      "\t\tCOMPREPLY=($(compgen -d -- \"$cur\"))\n"
	      "\t\tcompopt -o filenames 2>/dev/null\n"
	      "\t\t;;\n"
	      "\tm)\n"
	      "\t\tlocal IFS=$'\\n'\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$(_ollama_audit_models)\" -- \"$cur\"))\n"
	      "\t\t_ollama_audit_ltrim\n"
	      "\t\t;;\n"
	      "\tesac\n}\n"
	      "complete -F _ollama_audit ollama-audit\n",
	      out);
}

static void zsh_script(FILE *out)
{
	fputs("#compdef ollama-audit\n"
	      "# zsh completion for ollama-audit, written by `ollama-audit completion zsh`\n"
	      "# from its command table. Model names come from `ollama-audit list -q` on the\n"
	      "# stores the command line names with --store (else the default store), offline;\n"
	      "# the operation IDs of restore DIR --op from `ollama-audit restore DIR -q`.\n"
	      "_ollama_audit_models() {\n"
	      "\tlocal -a stores\n\tlocal i\n"
	      "\tfor ((i = 2; i < CURRENT; i++)); do\n"
	      "\t\tcase ${words[i]} in\n"
	      "\t\t--store) stores+=(--store \"${words[i+1]}\") ;;\n"
	      "\t\t--store=*) stores+=(\"${words[i]}\") ;;\n"
	      "\t\tesac\n\tdone\n"
	      "\tcommand \"${words[1]}\" \"${stores[@]}\" list -q 2>/dev/null\n}\n\n"
	      "_ollama_audit_ops() {\n"
	      "\tlocal dir=$1\n"
	      "\t[[ $dir == '~/'* ]] && dir=$HOME/${dir#\\~/}\n"
	      "\t[[ -n $dir ]] && command \"${words[1]}\" restore \"$dir\" -q 2>/dev/null\n}\n\n"
	      "_ollama_audit() {\n"
	      "\tlocal cur=${words[CURRENT]} prev=${words[CURRENT-1]}\n"
	      "\tlocal cword=$CURRENT cmd= i opts formats args arg= pos=0\n",
	      out);
	find_command(out, "${words[i]}", "2");
	fputs("\tcase $cmd in\n", out);
	per_command_cases(out);
	static const reply zsh = { "compadd -- ${=:-", "}", "_files -/", "_files",
		                   "compadd -- ${(f)\"$(_ollama_audit_ops \"$arg\")\"}" };
	value_cases(out, &zsh);
	fputs("\tif [[ $cur == -* ]]; then\n"
	      "\t\tcompadd -- ${=opts}\n"
	      "\telif [[ -z $cmd || $cmd == help ]]; then\n"
	      "\t\tcompadd -- ",
	      out);
	command_names(out);
	fputs("\n\telse\n"
	      "\t\tlocal kind=${args[pos+1]}\n"
	      "\t\t[[ -z $kind ]] && kind=${args[-1]}\n"
	      "\t\tcase $kind in\n"
	      "\t\td) _files -/ ;;\n"
	      "\t\tm) compadd -- ${(f)\"$(_ollama_audit_models)\"} ;;\n"
	      "\t\tesac\n"
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
		else if (kind == 'o')
			fputs(" -x -a '(__ollama_audit_ops)'", out);
		else if (kind == 'f')
			fputs(" -r -F", out);
		else if (kind == 'w')
			fprintf(out, " -x -a '%s'", words);
		else if (takes_value(w, n))
			fputs(" -x", out);
		fputc('\n', out);
	}
}

/* The fish functions that run the program: the operation IDs of restore's
 * DIR, the models of the stores the line names. */
static void fish_sources(FILE *out)
{
	fputs("function __ollama_audit_ops\n"
	      "\tset -l dir (__ollama_audit_args)[1]\n"
	      "\ttest -n \"$dir\"; or return\n"
	      "\tset dir (string replace -r '^~/' $HOME/ -- $dir)\n"
	      "\tset -l prog (commandline -opc)[1]\n"
	      "\tcommand $prog restore $dir -q 2>/dev/null\nend\n\n"
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
	      "\tcommand $tokens[1] $stores list -q 2>/dev/null\nend\n\n"
	      "complete -c ollama-audit -f\n",
	      out);
}

/* The `complete` lines of a command's arguments, by position: the last
 * kind (argument_kinds) holds for every later one. */
static void fish_arguments(FILE *out, const command *k)
{
	char kinds[16];
	argument_kinds(k, kinds, sizeof kinds);
	for (size_t p = 0; kinds[p]; p++) {
		const char *what = kinds[p] == 'm' ? "(__ollama_audit_models)"
		                   : kinds[p] == 'd' ? "(__fish_complete_directories)" : NULL;
		if (what)
			fprintf(out, "complete -c ollama-audit -n '__ollama_audit_is %s; and __ollama_audit_at %zu%s' -a '%s'\n",
			        k->name, p, kinds[p + 1] ? "" : " +", what);
	}
}

static void fish_script(FILE *out)
{
	fputs("# fish completion for ollama-audit, written by `ollama-audit completion fish`\n"
	      "# from its command table. Model names come from `ollama-audit list -q` on the\n"
	      "# stores the command line names with --store (else the default store), offline;\n"
	      "# the operation IDs of restore DIR --op from `ollama-audit restore DIR -q`.\n"
	      "# The words before the cursor that are neither an option nor its value:\n"
	      "# the command, then its arguments.\n"
	      "function __ollama_audit_words\n"
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
	      "\t\tend\n"
	      "\t\tset -e tokens[1]\n"
	      "\tend\nend\n\n"
	      "function __ollama_audit_command\n"
	      "\tset -l words (__ollama_audit_words)\n"
	      "\tset -q words[1]; and echo $words[1]\nend\n\n"
	      "function __ollama_audit_is\n"
	      "\tset -l cmd (__ollama_audit_command); and test \"$cmd\" = $argv[1]\nend\n\n"
	      "# The arguments after the command, before the cursor.\n"
	      "function __ollama_audit_args\n"
	      "\tset -l words (__ollama_audit_words)\n"
	      "\tset -e words[1]\n"
	      "\tfor w in $words\n\t\techo $w\n\tend\nend\n\n"
	      "# Whether N arguments come before the cursor (N or more: N +).\n"
	      "function __ollama_audit_at\n"
	      "\tset -l n (count (__ollama_audit_args))\n"
	      "\ttest $n -eq $argv[1]; or begin; set -q argv[2]; and test $n -ge $argv[1]; end\nend\n\n",
	      out);
	fish_sources(out);
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
		fish_arguments(out, k);
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
