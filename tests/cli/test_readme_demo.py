#!/usr/bin/env python3
"""The README's demo output is what `make run` prints on a fresh clone (git
keeps no file times: tools/run-demo.sh gives the demo tags their ages), and
the top-level help and the man page name every command that writes."""

import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
SRC = t.SOURCE_DIR


def readme_block(cmd):
    text = open(os.path.join(SRC, "README.md"), encoding="utf-8").read()
    m = re.search(r"^\$ %s\n(.*?)\n\n" % re.escape(cmd), text, re.M | re.S)
    return m.group(1).splitlines() if m else []


with t.guard("make run on a fresh clone prints the README's demo table"):
    # A copy of the tree's script and demo store, so the test never touches
    # the times of the fixtures other tests read.
    root = t.tempdir("clone")
    os.makedirs(os.path.join(root, "tools"))
    shutil.copy(os.path.join(SRC, "tools", "run-demo.sh"), os.path.join(root, "tools"))
    shutil.copytree(t.DEMO_STORE, os.path.join(root, "fixtures", "demo-store"), symlinks=True)
    for d, dirs, files in os.walk(os.path.join(root, "fixtures")):
        for n in dirs + files:  # a fresh clone: every file has the checkout's time
            os.utime(os.path.join(d, n), None, follow_symlinks=False)
    env = dict(os.environ, HOME=t.tempdir("home"), NO_COLOR="1")
    env.pop("OLLAMA_MODELS", None)
    p = subprocess.run(["sh", os.path.join(root, "tools", "run-demo.sh"), t.BIN], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t.eq(p.returncode, 0, "run-demo.sh exits 0", p.stderr)
    want = readme_block("ollama-audit --store fixtures/demo-store list")
    t.ok(len(want) == 8, "the README has the demo table", want)
    t.eq(p.stdout.decode().splitlines(), want, "the README's rows, order and ages")

with t.guard("the help and the man page name every command that writes"):
    h = t.run("--help").out
    t.ok("nothing written" not in h, "the tagline does not say nothing is written", h[:300])
    for w in ("prune --apply", "rm --apply", "dedupe --apply", "restore"):
        t.contains(h.split("Commands:")[0], w, "the tagline names %s" % w)
    man = open(os.path.join(SRC, "docs", "ollama-audit.1"), encoding="utf-8").read()
    desc = man.split(".SH DESCRIPTION", 1)[1].split(".SH", 1)[0]
    plain = re.sub(r"\\-", "-", re.sub(r"^\.\w+ ?", "", desc, flags=re.M)).replace('"', "")
    t.contains(" ".join(plain.split()), "dedupe --apply", "the man page's list of what changes a store")
    readme = open(os.path.join(SRC, "README.md"), encoding="utf-8").read()
    intro = " ".join(readme.split("## Quick start")[0].split())
    t.contains(intro, "`dedupe --apply`", "the README intro names dedupe --apply")

t.done()
