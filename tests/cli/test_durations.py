#!/usr/bin/env python3
"""Every duration option (--min-age of prune and rm, --max-duration of
verify) takes one strict grammar: digits, an optional fraction, an optional
unit s, m, h or d. No blanks, signs, hex, exponents, nan/inf; at most 10^12 s.
Anything else is a usage error (exit 16) that says what is accepted."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

BAD = ["0x10", "1e3", "0x1p4", " 5", "5 ", "+5", "-5", "5.", ".5", "nan", "inf", "5ms",
       "1h30m", "", "99999999999999999999", "1000000000001"]

with t.guard("grammar"):
    s, info = t.clean_store("dur")
    before = t.snapshot(s.root)
    for v in ["0", "3600", "30s", "90m", "1h", "2d", "1.5h"]:
        for args in (["prune", "--min-age", v], ["rm", "tiny", "--min-age", v]):
            r = t.audit(s.root, *args)
            t.exit_code(r, 0, "%s accepts %r" % (args[0], v))
    for v in BAD:
        for args in (["prune", "--min-age", v], ["rm", "tiny", "--min-age", v],
                     ["verify", "--max-duration", v]):
            r = t.audit(s.root, *args)
            t.exit_code(r, 16, "%s %s %r is refused" % (args[0], args[-2], v))
            t.contains(r.err, "30s, 90m, 1h, 2d", "%s %r: the error shows the grammar" % (args[-2], v))
    r = t.audit(s.root, "verify", "--max-duration", "0")
    t.exit_code(r, 16, "--max-duration 0 is no budget at all")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "dry runs and refusals leave the store alone")

t.done()
