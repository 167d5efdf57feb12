#!/usr/bin/env python3
"""Combined totals over several stores (issue 6: "one section per store, plus
combined totals") for list and du, in the table, json and ndjson."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

a, ainfo = t.clean_store("tot-a", name="alpha:latest")
t.add_gguf_model(a, "beta:latest", seed="b")
b, binfo = t.clean_store("tot-b", name="gamma:latest")
args = ["--store", a.root, "--store", b.root]

with t.guard("list: combined totals"):
    r = t.run(*args, "list", "--format", "json")
    t.exit_code(r, 0)
    doc = r.json()
    per = [s["models"] for s in doc["stores"]]
    models = [m for ms in per for m in ms]
    tot = doc["total"]
    t.eq(tot["stores"], 2, "two stores")
    t.eq(tot["models"], 3, "three models")
    t.eq(tot["size"], sum(m["size"] for m in models), "SIZE is the sum of the models' SIZE")
    # alpha and beta share the template and params blobs; disk counts each file once
    want = 0
    for s in (a, b):
        seen = set()
        for name in os.listdir(s.blobs):
            st = os.lstat(os.path.join(s.blobs, name))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                want += st.st_blocks * 512
    t.eq(tot["disk_bytes"], want, "disk bytes: every referenced blob file once")
    t.ok(tot["disk_bytes"] < sum(m["disk_bytes"] for m in models), "less than the per-model sum (shared blobs)")
    r = t.run(*args, "list")
    t.contains(r.out, "# all 2 stores: 3 models", "the table ends with the totals line")
    r = t.run(*args, "list", "--format", "ndjson")
    last = r.ndjson()[-1]
    t.eq((last["type"], last["models"]), ("total", 3), "ndjson ends with a total record")
    r = t.run(*args, "list", "ALPHA", "--format", "json")
    t.eq(r.json()["total"]["models"], 1, "totals follow the PREFIX filter")

with t.guard("du: combined totals"):
    r = t.run(*args, "du", "--format", "json")
    t.exit_code(r, 0)
    doc = r.json()
    tot = doc["total"]
    t.eq(tot["stores"], 2, "two stores")
    for k in ("referenced_bytes", "blobs_bytes", "reclaimable_bytes"):
        t.eq(tot[k], sum(s["totals"][k] for s in doc["stores"]), "%s is the sum over stores" % k)
    r = t.run(*args, "du")
    t.contains(r.out, "all 2 stores", "the table ends with an all-stores section")
    r = t.run("--store", a.root, "du", "--format", "json")
    t.eq(r.json()["total"]["stores"], 1, "one store: the total is there too")
    t.not_contains(t.run("--store", a.root, "du").out, "all 1 stores", "no all-stores section for one store")

with t.guard("one store reached by two paths is audited once"):
    link = os.path.join(t.tempdir("link"), "alias")
    os.symlink(a.root, link)
    r = t.run("--store", a.root, "--store", link, "list", "--format", "json")
    t.exit_code(r, 0)
    t.eq(len(r.json()["stores"]), 1, "one store section")
    t.eq(r.json()["total"]["models"], 2, "its models once")
    t.contains(r.err, "same store", "stderr says why")
    r = t.run("--store", a.root, "--store", link, "du", "--format", "json")
    t.eq(r.json()["total"]["stores"], 1, "du counts it once")
    r = t.run("--store", a.root, "--store", link, "du", "--duplicates", "--format", "json")
    t.exit_code(r, 0, "du --duplicates of one store named twice is not an error")
    t.eq(r.json()["duplicates"], [], "and finds nothing to share")

t.done()
