#!/usr/bin/env python3
"""Help a person can read in an 80-column terminal: every line of
`ollama-audit --help`, of `help COMMAND` and of `COMMAND --help` is at most
80 columns, for every command the general help lists (so a command added to
the table is checked without an edit here) and the hidden `completion`;
`help UNKNOWN` is a usage error with the closest command; the man page
renders at 80 columns without a groff warning and has EXAMPLES for freeing
space, undoing, and a fleet."""
import os
import re
import shutil
import subprocess
import sys
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
WIDTH = 80
MAN = os.path.join(t.SOURCE_DIR, "docs", "ollama-audit.1")


def dwidth(s):
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
               for ch in s)


def too_wide(text):
    return ["%d: %s" % (dwidth(ln), ln) for ln in text.splitlines() if dwidth(ln) > WIDTH]


def listed_commands(usage):
    """The commands of the general help: the first word of each line of its
    Commands block that starts in column 3 (a wrapped summary is indented
    further)."""
    block = usage.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)\b", block, re.M)]


with t.guard("--help: every line fits 80 columns"):
    r = t.run("--help")
    t.exit_code(r, 0, "--help")
    t.eq(too_wide(r.out), [], "no line of --help is wider than %d columns" % WIDTH)
    commands = listed_commands(r.out)
    t.ok(len(commands) >= 13, "--help lists the commands", commands)
    rows = [ln for ln in r.out.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
            if re.match(r"^  [a-z]", ln)]
    t.eq([ln for ln in rows if "  " not in ln[2:]], [], "every synopsis is followed by two spaces at least")
    starts = {len(ln) - len(ln[2:].split("  ", 1)[1].lstrip()) for ln in rows if "  " in ln[2:]}
    t.eq(len(starts), 1, "every command's summary starts in the same column (no synopsis runs into it)",
         r.out)
    r2 = t.run("help")
    t.exit_code(r2, 0, "help")
    t.eq(r2.out, r.out, "`help` alone prints the same")

with t.guard("help COMMAND and COMMAND --help: every line fits 80 columns, for every command"):
    for cmd in commands + ["completion"]:
        h = t.run("help", cmd)
        t.exit_code(h, 0, "help %s" % cmd)
        t.contains(h.out, "usage: ollama-audit %s" % cmd, "help %s is that command's" % cmd)
        t.eq(too_wide(h.out), [], "help %s: no line wider than %d columns" % (cmd, WIDTH))
        if cmd != "completion":
            d = t.run(cmd, "--help")
            t.exit_code(d, 0, "%s --help" % cmd)
            t.eq(d.out, h.out, "%s --help is help %s" % (cmd, cmd))

with t.guard("help UNKNOWN is a usage error, with the closest command"):
    r = t.run("help", "lst")
    t.exit_code(r, 16, "help lst")
    t.eq(r.out, "", "help lst prints nothing on stdout")
    t.contains(r.err, "unknown command 'lst'; did you mean list?", "help lst: did you mean list?")
    t.contains(r.err, "Try 'ollama-audit --help'.", "help lst: the Try line")
    r = t.run("help", "no-such-command")
    t.exit_code(r, 16, "help no-such-command")
    t.contains(r.err, "unknown command 'no-such-command'", "help no-such-command: says so")
    t.not_contains(r.err, "did you mean", "no suggestion when nothing is close")

with t.guard("the man page: no groff warning at 80 columns, EXAMPLES for the common jobs"):
    text = open(MAN).read()
    examples = text.split("\n.SH EXAMPLES\n", 1)[1].split("\n.SH ", 1)[0]
    for what, pattern in (("freeing space (rm/prune --apply)", r"\b(rm|prune)\b.*\\-\\-apply"),
                          ("undoing (restore)", r"\brestore\b"),
                          ("a fleet (--all-users)", r"\\-\\-all\\-users"),
                          ("the one-liner over list -q", r"list \\-q")):
        t.ok(re.search(pattern, examples) is not None, "EXAMPLES shows %s" % what, examples)
    if not shutil.which("man"):
        t.skip("man is not installed (Debian package man-db): the page is not rendered")
    else:
        p = subprocess.run(["man", "-l", MAN], env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat",
                                                        LC_ALL="C.UTF-8"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        t.eq(p.returncode, 0, "man -l renders the page at 80 columns", p.stderr.decode())
        t.eq(p.stderr.decode(), "", "MANWIDTH=80 man -l: no warning on stderr")
        wide = [ln for ln in p.stdout.decode("utf-8", "replace").splitlines() if dwidth(ln) > 80]
        t.eq(wide, [], "every rendered line fits 80 columns")

t.done()
