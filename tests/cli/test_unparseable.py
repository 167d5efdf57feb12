#!/usr/bin/env python3
"""Manifests the tool cannot parse or read (issue 11, defects 8 and 9): what
Go's decoder accepts is parsed (unknown fields are skipped whatever their
value, known fields stay strict), and one unreadable manifest is one
prune blocker, not two."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

with t.guard("one unreadable manifest is counted once"):
    s, info = t.clean_store("blk-once")
    t.add_gguf_model(s, "other:latest", seed="o")
    s.write_raw("blobs/sha256-" + "ab" * 32 + "-partial", b"x" * 100)
    s.age_all(7200)
    os.chmod(info["path"], 0)
    before = t.snapshot(s.root)
    r = t.audit(s.root, "prune", "--apply", "--yes", as_nobody=t.IS_ROOT)
    t.exit_code(r, 8, "prune refuses")
    t.contains(r.err, "refusing to prune: 1 manifest cannot be parsed or read", "counted once")
    rel = t.rel(s, info["path"])
    t.eq(sum(1 for line in r.err.splitlines() if line.startswith("ollama-audit:   " + rel)), 1,
         "the manifest is listed once", r.err)
    r = t.audit(s.root, "prune", "--apply", "--yes", "--force", as_nobody=t.IS_ROOT)
    t.contains(r.err, "1 manifest cannot be parsed or read; going on because of --force",
               "--force: counted once")
    os.chmod(info["path"], 0o644)

t.done()
