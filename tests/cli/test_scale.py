#!/usr/bin/env python3
"""`check` on a store of 300 tiny models sharing blobs completes (and is clean).
The time is printed, not asserted: the speed claim belongs to a benchmark."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
N = 300

with t.guard("check on %d models" % N):
    s = t.many_models_store("scale", N)
    t0 = time.time()
    r = t.audit(s.root, "check", "--format", "json", timeout=120)
    wall = time.time() - t0
    t.exit_code(r, 0, "check of %d models" % N)
    sm = t.summary_of(r.json())
    t.eq(sm.get("models"), N, "check counted every model")
    t.eq((sm.get("errors"), sm.get("warnings")), (0, 0), "the generated store is clean")
    print("check on %d models, %d blob files: %.3f s wall (process), %.3f s scan (reported)"
          % (N, sm.get("blob_files", 0), wall, sm.get("seconds", 0)))
    t0 = time.time()
    r = t.audit(s.root, "list", "--format", "tags")
    print("list --format tags on %d models: %.3f s wall" % (N, time.time() - t0))
    t.exit_code(r, 0, "list of %d models" % N)
    t.eq(len(r.json().get("models", [])), N, "tags lists every model")

t.done()
