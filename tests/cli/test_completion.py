#!/usr/bin/env python3
"""Shell completion: `ollama-audit completion bash|zsh|fish` prints a script
made from the command table, and each shell, driven the way it completes,
offers the commands, each command's options (those its --help lists, no
other), the formats it produces, the values of --units, and model names read
offline from the stores the command line names with --store.

bash runs the completion function itself (COMP_WORDS/COMP_CWORD, then
COMPREPLY); fish answers `complete -C`; zsh runs the function with compadd
and _files replaced by stubs that print their arguments (zsh's completion
system needs a terminal), so its candidates are filtered by prefix here.
A shell that is not installed is skipped, with the reason.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

DEMO_MODELS = ["alice/tiny-coder:q4", "demo-embed:latest", "demo-llama:1b", "demo-vision:latest",
               "gpt-oss:120b-cloud", "hf.co/bartowski/tiny-GGUF:Q4_K_M", "tiny-mlx:int4"]

# The program as a user types it: `ollama-audit` found in PATH.
BIN_DIR = t.tempdir("bin")
os.symlink(t.BIN, os.path.join(BIN_DIR, "ollama-audit"))
HOME = t.tempdir("home")  # no store there: model names come from --store only
ENV = dict(os.environ, PATH=BIN_DIR + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"), HOME=HOME,
           XDG_CONFIG_HOME=HOME, XDG_DATA_HOME=HOME, NO_COLOR="1")
ENV.pop("OLLAMA_MODELS", None)


def script(shell):
    r = t.run("completion", shell)
    t.exit_code(r, 0, "completion %s" % shell)
    path = os.path.join(t.tempdir("completion"), "ollama-audit." + shell)
    with open(path, "w") as f:
        f.write(r.out)
    return path


def sh_words(words):
    return " ".join("'%s'" % w.replace("'", "'\\''") for w in words)


def complete_bash(path, words):
    code = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _ollama_audit; printf "%%s\\n" "${COMPREPLY[@]}"'
            % (sh_words([path]), sh_words(words), len(words) - 1))
    return shell_out(["bash", "--norc", "--noprofile", "-c", code])


def complete_zsh(path, words):
    stubs = ('compdef() { :; }; '
             'compadd() { while [[ $# -gt 0 && $1 != -- ]]; do shift; done; shift; print -rl -- "$@"; }; '
             '_files() { print -r -- "<files $*>"; }; ')
    code = (stubs + 'source %s; words=(%s); CURRENT=%d; _ollama_audit'
            % (sh_words([path]), sh_words(words), len(words)))
    got = shell_out(["zsh", "-f", "-c", code])
    return [w for w in got if w.startswith(words[-1]) or w.startswith("<files")]


def complete_fish(path, words):
    line = " ".join(words)
    code = "source %s; complete -C %s" % (sh_words([path]), sh_words([line]))
    return [w.split("\t")[0] for w in shell_out(["fish", "--no-config", "-c", code])]


def shell_out(argv):
    p = subprocess.run(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, cwd=HOME)
    if p.returncode != 0 or p.stderr:
        t.fail("%s exited %d" % (argv[0], p.returncode), p.stderr.decode(errors="replace")[-2000:])
    return [w for w in p.stdout.decode().splitlines() if w]


def help_commands():
    r = t.run("--help")
    block = r.out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return sorted([line.split()[0] for line in block.splitlines()] + ["help"])


def help_options(cmd):
    r = t.run(cmd, "--help")
    return sorted(set(re.findall(r"(--[a-z-]+)", r.out.split("Options it takes:", 1)[1])))


def check_shell(shell, complete):
    if not shutil.which(shell):
        t.skip("%s is not installed (Debian package %s)" % (shell, shell))
        return
    path = script(shell)
    c = lambda *words: sorted(complete(path, list(words)))  # noqa: E731
    t.eq(c("ollama-audit", ""), help_commands(), "%s: the commands offered are those of --help" % shell)
    t.eq(c("ollama-audit", "li"), ["list"], "%s: li completes to list" % shell)
    for cmd in ("list", "verify", "prune", "restore"):
        t.eq(c("ollama-audit", cmd, "--"), help_options(cmd),
             "%s: %s's options are those its --help lists" % (shell, cmd))
    t.eq(c("ollama-audit", "show", "--t"), ["--tensors"], "%s: show --t" % shell)
    t.eq(c("ollama-audit", "list", "--format", ""), ["csv", "json", "ndjson", "table", "tags"],
         "%s: list's formats" % shell)
    t.eq(c("ollama-audit", "du", "--format", "p"), ["prometheus"], "%s: du --format p" % shell)
    t.eq(c("ollama-audit", "show", "--format", ""), ["csv", "json", "ndjson", "table"],
         "%s: show produces no tags or prometheus" % shell)
    t.eq(c("ollama-audit", "list", "--units", ""), ["bytes", "iec", "si"], "%s: --units" % shell)
    if shell == "bash":
        for opt in ("units", "fail-on", "color", "sort"):
            for value in c("ollama-audit", "list", "--" + opt, ""):
                r = t.run("--store", t.DEMO_STORE, "list", "--" + opt, value)
                t.ne(r.code, 16, "list --%s %s, as completed, is accepted" % (opt, value), r.err)
    t.eq(c("ollama-audit", "--store", t.DEMO_STORE, "show", ""), DEMO_MODELS,
         "%s: show completes the models of the --store given before the command" % shell)
    t.eq(c("ollama-audit", "check", "--store", t.DEMO_STORE, "demo-l"), ["demo-llama:1b"],
         "%s: check completes a model of the --store given after the command" % shell)
    t.eq(c("ollama-audit", "--store", t.DEMO_STORE, "du", ""), [],
         "%s: du takes no model" % shell)
    empty = t.new_store("empty").root
    os.makedirs(os.path.join(empty, "manifests"), exist_ok=True)
    t.eq(c("ollama-audit", "--store", empty, "show", ""), [],
         "%s: no model offered from an empty store (never the caller's own)" % shell)


def check_store_dirs(shell, complete):
    """--store offers directories."""
    if not shutil.which(shell):
        return
    parent = t.tempdir("dirs")
    os.makedirs(os.path.join(parent, "models-a"))
    open(os.path.join(parent, "models-file"), "w").close()
    got = complete(script(shell), ["ollama-audit", "--store", os.path.join(parent, "models")])
    if shell == "zsh":
        t.eq(got, ["<files -/>"], "zsh: --store completes directories (_files -/)")
    else:
        got = [g.rstrip("/") for g in got]
        t.eq(got, [os.path.join(parent, "models-a")], "%s: --store completes directories only" % shell)


with t.guard("script"):
    r = t.run("completion", "tcsh")
    t.exit_code(r, 16, "an unknown shell is a usage error")
    t.not_contains(t.run("--help").out, "completion", "the completion command is hidden from --help")

for shell, fn in (("bash", complete_bash), ("zsh", complete_zsh), ("fish", complete_fish)):
    with t.guard(shell):
        check_shell(shell, fn)
        check_store_dirs(shell, fn)

t.done()
