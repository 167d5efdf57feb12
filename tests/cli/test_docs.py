#!/usr/bin/env python3
"""The documentation names every finding code and every command the code
has: docs/schema.md's table, the man page's FINDINGS section, and --help."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
SRC = os.environ.get("OA_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

with t.guard("every finding code is documented"):
    codes = re.findall(r'\{ "([a-z-]+)", OA_SEV_', open(os.path.join(SRC, "src", "store", "finding.c")).read())
    t.ok(len(codes) >= 25, "finding.c lists the codes", codes)
    schema = open(os.path.join(SRC, "docs", "schema.md")).read()
    man = open(os.path.join(SRC, "docs", "ollama-audit.1")).read().replace("\\-", "-")
    for c in codes:
        t.contains(schema, "| `%s` |" % c, "docs/schema.md has %s" % c)
        t.ok(re.search(r"\b%s\b" % re.escape(c), man) is not None, "the man page has %s" % c)

with t.guard("every command has --help and a man page entry"):
    r = t.run("--help")
    cmds = re.findall(r"^  ([a-z]+) ", r.out, re.M)
    t.ok(len(cmds) >= 10, "--help lists the commands", cmds)
    man = open(os.path.join(SRC, "docs", "ollama-audit.1")).read()
    for c in cmds:
        r = t.run(c, "--help")
        t.exit_code(r, 0, "%s --help" % c)
        t.contains(r.out, "usage: ollama-audit %s" % c, "%s --help shows its usage" % c)
        t.ok(re.search(r"^\.(TP|B|BR|BI)\b.*\b%s\b" % c, man, re.M) is not None, "the man page has %s" % c)

t.done()
