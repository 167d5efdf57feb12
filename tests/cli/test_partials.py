#!/usr/bin/env python3
"""An interrupted download with many part files (sha256-<hex>-partial-N):
prune's dry run lists the parts in the order of N (-partial-2 before
-partial-10), each once, with the download's progress on its data file."""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

with t.guard("many part files: natural order, one progress line per download"):
    s, _ = t.clean_store("parts")
    hexes = ["ab" * 32, "cd" * 32]
    n = 3000
    for h in hexes:
        with open(os.path.join(s.blobs, "sha256-%s-partial" % h), "wb") as f:
            f.write(b"x" * 100)
        for i in range(n):
            with open(os.path.join(s.blobs, "sha256-%s-partial-%d" % (h, i)), "w") as f:
                json.dump({"N": i, "Offset": i * 10, "Size": 10, "Completed": 5}, f)
    r = t.audit(s.root, "prune", "--min-age", "0", "-v", timeout=300)
    t.exit_code(r, 0, "prune -v dry run")
    for h in hexes:
        parts = [int(m) for m in re.findall(r"sha256-%s-partial-(\d+)\s*$" % h, r.out, re.M)]
        t.eq(len(parts), n, "every part file of %s.. listed once" % h[:4])
        t.eq(parts, sorted(parts), "parts of %s.. in the order of N" % h[:4], parts[:12])
    t.eq(r.out.count("in %d part files" % n), len(hexes), "one progress line per download", r.out[:600])
    r = t.audit(s.root, "prune", "--min-age", "0", timeout=300)
    t.exit_code(r, 0, "prune dry run")
    rows = [ln for ln in r.out.splitlines() if ln.startswith("partials ")]
    t.eq(len(rows), len(hexes), "by default an interrupted download is one row", r.out[:600])
    for h in hexes:
        row = [ln for ln in rows if "sha256:%s" % h[:12] in ln]
        t.ok(len(row) == 1 and row[0].split()[1] == str(n + 1) and "in %d part files" % n in row[0],
             "its row counts its %d files (data and parts) and says its progress" % (n + 1), row)
    t.not_contains(r.out, "-partial-", "no part file listed without -v")
    r = t.audit(s.root, "prune", "--min-age", "0", "--format", "json", timeout=300)
    paths = [e["path"] for st in r.json().get("stores", []) for e in st.get("entries", [])]
    nums = [int(p.rsplit("-", 1)[1]) for p in paths if re.search(r"-partial-\d+$", p) and hexes[0] in p]
    t.eq(nums, list(range(n)), "json: the parts in the order of N")

t.done()
