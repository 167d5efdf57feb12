#!/usr/bin/env python3
"""What a person at a shell sees when something is off, and the short forms:
every message on stderr starts with "ollama-audit:" (never the path the
binary was run by), a usage error under a command points to that command's
--help, a mistyped command or model gets the closest one when it is a
likely typo, and `list -q` / `du -q` print names only, one per line."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
DEMO = t.DEMO_STORE
DEMO_NAMES = {"demo-embed:latest", "gpt-oss:120b-cloud", "tiny-mlx:int4", "hf.co/bartowski/tiny-GGUF:Q4_K_M",
              "alice/tiny-coder:q4", "demo-vision:latest", "demo-llama:1b"}


def stderr_lines_prefixed(r, what):
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    t.ok(lines, "%s: says something on stderr" % what, r.describe())
    for ln in lines:
        if ln.startswith("Try 'ollama-audit") or ln.startswith("  "):
            continue  # the pointer to --help and continuation lines
        t.ok(ln.startswith("ollama-audit: "), "%s: %r starts with ollama-audit:" % (what, ln), r.describe())
    t.ok(t.BIN not in r.err and os.path.basename(t.BIN) + ":" not in r.err.replace("ollama-audit:", ""),
         "%s: the binary's path is not in the message" % what, r.err)


with t.guard("every message starts with ollama-audit:, getopt's too"):
    for args, what in ((["list", "--bogus"], "unknown long option"), (["list", "-x"], "unknown short option"),
                       (["list", "--store"], "option without its value"),
                       (["list", "--tensors=1"], "a value for an option that takes none"),
                       (["list", "--format", "nope"], "bad value"), (["lsit"], "unknown command"),
                       (["show", "nosuch:model"], "unknown model"), (["list", "--apply"], "option of another command")):
        r = t.audit(DEMO, *args)
        t.exit_code(r, 16, what)
        t.eq(r.out, "", "%s: nothing on stdout" % what)
        stderr_lines_prefixed(r, what)
    r = t.audit(t.tempdir("bad") + "/x", "list")
    stderr_lines_prefixed(r, "missing store")

with t.guard("a usage error under a command points to that command's --help"):
    for args in (["list", "--bogus"], ["du", "--format", "nope"], ["show"], ["check", "nosuch"],
                 ["verify", "--jobs", "0"], ["history", "--store"], ["--store", DEMO, "rm", "nosuch"]):
        cmd = [a for a in args if a in ("list", "du", "show", "check", "verify", "history", "rm")][0]
        r = t.audit(DEMO, *args)
        t.exit_code(r, 16, " ".join(args))
        t.contains(r.err, "Try 'ollama-audit %s --help'." % cmd, "%s points to %s --help" % (" ".join(args), cmd))
    r = t.audit(DEMO, "--bogus")
    t.contains(r.err, "Try 'ollama-audit --help'.", "no command: the program's --help")

with t.guard("a usage error says Try '... --help' once"):
    q = t.tempdir("try-once")
    for args in (["restore"], ["restore", q, "a", "b"], ["restore", q, "--last", "--op", "1"],
                 ["restore", q, "--older-than", "1d"], ["restore", q, "--apply"], ["restore", q, "--store", q],
                 ["restore", q, "-q", "--last"], ["restore", q, "--last", "--format", "json"],
                 ["restore", q, "--bogus"], ["list", "--bogus"], ["list", "a", "b"], ["du", "x"],
                 ["check", "--format", "tags"], ["help", "nosuch"]):
        r = t.run(*args)
        t.exit_code(r, 16, " ".join(args))
        t.eq(r.err.count("Try 'ollama-audit"), 1, "%s: one Try line" % " ".join(args), r.err)

with t.guard("a mistyped command gets a suggestion, only when close"):
    for typed, want in (("lsit", "list"), ("lst", "list"), ("chek", "check"), ("verfy", "verify"),
                        ("stroes", "stores"), ("histroy", "history"), ("dedup", "dedupe")):
        r = t.audit(DEMO, typed)
        t.exit_code(r, 16, typed)
        t.contains(r.err, "unknown command '%s'; did you mean %s?" % (typed, want), typed)
    for typed in ("frobnicate", "x", "serve"):
        r = t.audit(DEMO, typed)
        t.exit_code(r, 16, typed)
        t.ok("did you mean" not in r.err, "%s: nothing close, no suggestion" % typed, r.err)

with t.guard("a mistyped model gets the closest name of the store"):
    for cmd in (["show"], ["rm"], ["check"], ["verify"], ["history"]):
        for typed, want in (("demo-lama:1b", "demo-llama:1b"), ("demo-llama", "demo-llama:1b"),
                            ("Demo-Llama:1c", "demo-llama:1b"), ("tiny-mlx:in4", "tiny-mlx:int4")):
            r = t.audit(DEMO, *cmd, typed)
            t.exit_code(r, 16, "%s %s" % (cmd[0], typed))
            t.contains(r.err, "did you mean %s?" % want, "%s %s" % (cmd[0], typed))
        r = t.audit(DEMO, *cmd, "qwen3:32b")
        t.exit_code(r, 16, "%s qwen3:32b" % cmd[0])
        t.ok("did you mean" not in r.err, "%s qwen3:32b: nothing close, no suggestion" % cmd[0], r.err)

with t.guard("list -q and du -q print the names, one per line"):
    table = t.audit(DEMO, "list", env={"TZ": "UTC"})
    r = t.audit(DEMO, "list", "-q")
    t.exit_code(r, 0, "list -q")
    names = r.out.splitlines()
    t.eq(set(names), DEMO_NAMES, "list -q: every model, nothing else")
    t.eq(names, [ln.split()[0] for ln in table.out.splitlines()[1:]], "list -q: the table's order")
    r = t.audit(DEMO, "list", "--quiet", "demo")
    t.eq(sorted(r.out.splitlines()), ["demo-embed:latest", "demo-llama:1b", "demo-vision:latest"],
         "list -q PREFIX filters as list does")
    r = t.audit(DEMO, "du", "-q")
    t.exit_code(r, 0, "du -q")
    t.eq(set(r.out.splitlines()), DEMO_NAMES, "du -q: every model")
    du = t.audit(DEMO, "du", "--format", "json").json()
    order = [n for row in du["stores"][0]["models"] for n in row["names"]]
    t.eq(r.out.splitlines(), order, "du -q: du's order (by UNIQUE)")
    for args in (["list", "-q", "--format", "json"], ["du", "-q", "--format", "csv"], ["du", "-q", "--duplicates"]):
        r = t.audit(DEMO, *args)
        t.exit_code(r, 16, " ".join(args))
        t.eq(r.out, "", "%s: nothing on stdout" % " ".join(args))
    for cmd in (["check"], ["show", "demo-llama:1b"], ["stores"], ["verify"]):
        r = t.audit(DEMO, *cmd, "-q")
        t.exit_code(r, 16, "%s -q is refused" % cmd[0])
        t.contains(r.err, "--quiet is not an option of %s" % cmd[0], "%s -q names the command" % cmd[0])

t.done()
