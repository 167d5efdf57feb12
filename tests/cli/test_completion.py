#!/usr/bin/env python3
"""Shell completion: `ollama-audit completion bash|zsh|fish` prints a script
made from the command table, and each shell, driven the way it completes,
offers the commands, each command's options (those its --help lists, no
other), the formats it produces, the values of --units, model names read
offline from the stores the command line names with --store (a tag after its
':' too), directories for restore's DIR and the operation IDs of that DIR
after --op.

bash runs the completion function itself, with COMP_WORDS split as bash
splits them (a ':' is a word of its own) and COMP_LINE/COMP_POINT, with and
without bash-completion loaded; fish answers `complete -C`; zsh runs the
function with compadd and _files replaced by stubs that print their
arguments, so its candidates are filtered by prefix here. Then a person's
keys: interactive bash (with and without bash-completion) and zsh (compinit)
on a terminal get `demo-llama:1<TAB>` and run the line they completed.
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
    shell = shell.split("+")[0]
    r = t.run("completion", shell)
    t.exit_code(r, 0, "completion %s" % shell)
    path = os.path.join(t.tempdir("completion"), "ollama-audit." + shell)
    with open(path, "w") as f:
        f.write(r.out)
    return path


def sh_words(words):
    return " ".join("'%s'" % w.replace("'", "'\\''") for w in words)


BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
WORDBREAKS = " \t\n\"'@><=;|&(:"


def bash_split(line):
    """COMP_WORDS as bash gives them for a line: split at blanks, and each
    run of COMP_WORDBREAKS characters (':' and '=' here) a word of its own;
    an empty last word when the line ends in a blank."""
    words = re.findall(r"[:=]+|[^\s:=]+", line)
    if not line or line[-1].isspace():
        words.append("")
    return words


def complete_bash(path, words, with_bash_completion=False):
    """What readline would put in place of the text after the last break:
    COMPREPLY, with the part of the current word before its last ':' added
    back (bash replaces only what follows it)."""
    line = " ".join(words)
    comp = bash_split(line)
    code = ("%ssource %s; COMP_WORDBREAKS=%s; COMP_LINE=%s; COMP_POINT=%d; COMP_WORDS=(%s); COMP_CWORD=%d; "
            '_ollama_audit; printf "%%s\\n" "${COMPREPLY[@]}"'
            % ("source %s; " % BASH_COMPLETION if with_bash_completion else "", sh_words([path]),
               sh_words([WORDBREAKS]), sh_words([line]), len(line.encode()), sh_words(comp), len(comp) - 1))
    got = shell_out(["bash", "--norc", "--noprofile", "-c", code])
    cur = words[-1]
    before = cur[:cur.rindex(":") + 1] if ":" in cur else ""
    return [before + w for w in got]


def complete_bash_completion(path, words):
    return complete_bash(path, words, with_bash_completion=True)


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
    return sorted(re.findall(r"^  ([a-z][a-z-]*)", block, re.M) + ["help"])


def help_options(cmd):
    r = t.run(cmd, "--help")
    return sorted(set(re.findall(r"(--[a-z-]+)", r.out.split("Options it takes:", 1)[1])))


def installed(shell):
    """Whether the shell (and bash-completion for bash+bash-completion) is there."""
    name = shell.split("+")[0]
    if not shutil.which(name):
        t.skip("%s is not installed (Debian package %s)" % (name, name))
        return False
    if shell.endswith("+bash-completion") and not os.path.exists(BASH_COMPLETION):
        t.skip("bash-completion is not installed (Debian package bash-completion)")
        return False
    return True


def check_shell(shell, complete):
    if not installed(shell):
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
    if shell.startswith("bash"):
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


def dirs_only(shell, got, want, what):
    if shell == "zsh":
        t.eq(got, ["<files -/>"], "zsh: %s completes directories (_files -/)" % what)
    else:
        t.eq([g.rstrip("/") for g in got], want, "%s: %s completes directories only" % (shell, what))


def check_store_dirs(shell, complete):
    """--store and restore's DIR offer directories."""
    if not installed(shell):
        return
    parent = t.tempdir("dirs")
    os.makedirs(os.path.join(parent, "models-a"))
    open(os.path.join(parent, "models-file"), "w").close()
    path = script(shell)
    prefix = os.path.join(parent, "models")
    dirs_only(shell, complete(path, ["ollama-audit", "--store", prefix]), [prefix + "-a"], "--store")
    dirs_only(shell, complete(path, ["ollama-audit", "restore", prefix]), [prefix + "-a"], "restore's DIR")
    dirs_only(shell, complete(path, ["ollama-audit", "--store", t.DEMO_STORE, "restore", prefix]), [prefix + "-a"],
              "restore's DIR after --store (not the store's models)")


def quarantine():
    """A quarantine with two operations: rm of two models, then prune."""
    s = t.copy_demo_store("quarantine")
    q = os.path.join(t.tempdir("q"), "held")
    os.makedirs(q)
    r = t.audit(s.root, "rm", "demo-llama:1b", "demo-embed:latest", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm --quarantine")
    r = t.audit(s.root, "prune", "--what", "all", "--min-age", "0", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "prune --quarantine")
    ids = t.run("restore", q, "-q").out.split()
    t.eq(len(ids), 2, "restore DIR -q: an ID per operation", ids)
    return q, ids


def check_ops(shell, complete, q, ids):
    """restore DIR --op offers DIR's operation IDs; restore DIR MODEL offers
    no model of the store (the one to put back is in DIR, not there)."""
    if not installed(shell):
        return
    path = script(shell)
    t.eq(sorted(complete(path, ["ollama-audit", "restore", q, "--op", ""])), sorted(ids),
         "%s: restore DIR --op offers DIR's operation IDs" % shell)
    t.eq(sorted(complete(path, ["ollama-audit", "restore", q, "--op", ids[0][:9]])), sorted(ids),
         "%s: --op completes a started ID" % shell)
    t.eq(complete(path, ["ollama-audit", "restore", q, "--op", "zz"]), [], "%s: --op: no ID is like zz" % shell)
    t.eq(complete(path, ["ollama-audit", "restore", "--op", ""]), [],
         "%s: --op before DIR: no DIR on the line yet, nothing offered" % shell)
    t.eq(complete(path, ["ollama-audit", "--store", t.DEMO_STORE, "restore", q, "demo-"]), [],
         "%s: restore DIR MODEL offers none of the store's models" % shell)


def check_tags(shell, complete):
    """A tag completes after its ':' (bash splits a word there)."""
    if not installed(shell):
        return
    path = script(shell)
    for typed, want in (("demo-llama:1", ["demo-llama:1b"]), ("demo-llama:", ["demo-llama:1b"]),
                        ("hf.co/bartowski/tiny-GGUF:Q", ["hf.co/bartowski/tiny-GGUF:Q4_K_M"]),
                        ("alice/tiny-coder:", ["alice/tiny-coder:q4"])):
        t.eq(complete(path, ["ollama-audit", "--store", t.DEMO_STORE, "show", typed]), want,
             "%s: show %s<TAB> completes the tag" % (shell, typed))


SHELLS = (("bash", complete_bash), ("bash+bash-completion", complete_bash_completion), ("zsh", complete_zsh),
          ("fish", complete_fish))

with t.guard("script"):
    r = t.run("completion", "tcsh")
    t.exit_code(r, 16, "an unknown shell is a usage error")
    t.not_contains(t.run("--help").out, "completion", "the completion command is hidden from --help")
    r = t.run("completion", "bash")
    formats = re.search(r'^\t""\)\n\t\topts="[^"]*"\n\t\tformats="([^"]*)"', r.out, re.M)
    t.ok(formats is not None and len(formats.group(1).split()) == len(set(formats.group(1).split())),
         "before a command, each format is offered once", formats and formats.group(1))

with t.guard("restore DIR -q: the operation IDs"):
    q, ids = quarantine()
    r = t.run("restore", q, "-q", "--last")
    t.exit_code(r, 16, "-q with a selector is a usage error")
    t.eq(r.err.count("Try '"), 1, "one Try line", r.err)
    t.exit_code(t.run("restore", q, "-q", "--format", "json"), 16, "-q takes no --format")

for shell, fn in SHELLS:
    with t.guard(shell):
        check_shell(shell, fn)
        check_store_dirs(shell, fn)
        check_tags(shell, fn)
        check_ops(shell, fn, q, ids)


def type_keys(argv, setup, line, env):
    """Start the shell on a terminal, run setup, type line and TAB, then
    Enter: the output of `ollama-audit`, a function that prints its
    arguments after RAN:, is the completed line (None when nothing ran)."""
    import pty
    import select
    import time
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(HOME)
        os.execvpe(argv[0], argv, env)
    out = b""

    def wait_for(token, seconds=60):
        nonlocal out
        deadline = time.monotonic() + seconds
        while token not in out and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.5)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return False
                if not chunk:
                    return False
                out += chunk
        return token in out

    try:
        os.write(fd, (setup + "; echo SET''UP\n").encode())
        if not wait_for(b"SETUP"):
            return None, out.decode(errors="replace")
        out = b""
        os.write(fd, line.encode() + b"\t")
        time.sleep(0.2)  # a person's pause; the Enter is read after the completion whatever the pause
        os.write(fd, b"\n")
        got = wait_for(b"RAN:") and wait_for(b"\n", 30)
        text = out.decode(errors="replace")
        ran = text.split("RAN:", 1)[1].splitlines()[0].strip() if got else None
        return ran, text
    finally:
        os.write(fd, b"exit\n")
        try:
            os.close(fd)
        except OSError:
            pass
        os.waitpid(pid, 0)


with t.guard("a person at a terminal: demo-llama:1<TAB> completes the tag in bash and zsh"):
    typed = "ollama-audit --store %s show demo-llama:1" % t.DEMO_STORE
    want = "--store %s show demo-llama:1b" % t.DEMO_STORE
    env = dict(ENV, PS1="$ ", INPUTRC="/dev/null", TERM="dumb")
    if installed("bash"):
        path = script("bash")
        for bc in ((False, True) if os.path.exists(BASH_COMPLETION) else (False,)):
            setup = ("%ssource %s; ollama-audit() { printf 'RAN:%%s\\n' \"$*\"; }"
                     % ("source %s; " % BASH_COMPLETION if bc else "", path))
            ran, text = type_keys(["bash", "--norc", "--noprofile", "-i"], setup, typed, env)
            t.eq(ran, want, "bash%s: demo-llama:1<TAB> then Enter runs demo-llama:1b"
                 % (" with bash-completion" if bc else ""), text[-1500:])
    if installed("zsh"):
        fdir = t.tempdir("zfunc")
        with open(os.path.join(fdir, "_ollama-audit"), "w") as f:
            f.write(t.run("completion", "zsh").out)
        setup = ("PS1='$ '; fpath=(%s $fpath); autoload -U compinit; compinit -u -D; "
                 "ollama-audit() { print -r -- \"RAN:$*\" }" % fdir)
        ran, text = type_keys(["zsh", "-f", "-i"], setup, typed, env)
        t.eq(ran, want, "zsh (compinit): demo-llama:1<TAB> then Enter runs demo-llama:1b", text[-1500:])

t.done()
