#!/usr/bin/env python3
"""`ollama-audit du`: per-model unique/shared/allocated/apparent bytes, tags of
one manifest collapsed, hard links counted once, junk by category, and the
store totals checked against `du -B1` and a hand count (docs/disk-space.md)."""

import csv
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()


def alloc(p):
    st = os.lstat(p)
    return st.st_blocks * 512


def build():
    s = t.new_store("du")
    a = t.add_gguf_model(s, "alpha:latest", seed="a", n_layers=6)
    b = t.add_gguf_model(s, "beta:latest", seed="b")
    s.add_manifest("alpha:v1", a["config"], a["layers"])       # same manifest: one row
    orphan = s.add_blob(oa.det_bytes(70000, "orphan"))
    _, parts = s.partial_download(oa.det_bytes(300000, "p"), n_parts=3, completed=0.4)
    s.create_temp("99887766", b"x" * 5000)
    s.write_raw("blobs/Q4_K_M123456", b"q" * 3000)
    s.write_raw("blobs/notes.txt", "hello")
    os.link(s.blob_path(orphan), os.path.join(s.blobs, "hardlink-of-orphan"))  # foreign, same inode
    s.mkdir("manifests/registry.ollama.ai/library/gone/x")
    s.age_all(7200)
    return s, a, b, orphan, parts


with t.guard("du json against a hand count and du -B1"):
    s, a, b, orphan, parts = build()
    before = t.snapshot(s.root)
    r = t.audit(s.root, "du", "--format", "json")
    t.exit_code(r, 0, "du")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "du writes nothing")
    doc = r.json()
    st = doc["stores"][0]
    rows = st["models"]
    t.eq(len(rows), 2, "alpha:latest and alpha:v1 are one row")
    byname = {tuple(x["names"]): x for x in rows}
    t.ok(("alpha:latest", "alpha:v1") in byname or ("alpha:v1", "alpha:latest") in byname,
         "collapsed row names both tags: %r" % list(byname))
    ra = [x for x in rows if "alpha:latest" in x["names"]][0]
    rb = [x for x in rows if "beta:latest" in x["names"]][0]
    # hand count: unique = gguf + config of each; shared = template + params (same bytes)
    blob = lambda d: s.blob_path(d["digest"])
    ua = alloc(blob(a["layers"][0])) + alloc(blob(a["config"]))
    ub = alloc(blob(b["layers"][0])) + alloc(blob(b["config"]))
    shared = alloc(blob(a["layers"][1])) + alloc(blob(a["layers"][2]))
    t.eq(a["layers"][1]["digest"], b["layers"][1]["digest"], "template blob is shared (test premise)")
    t.eq(ra["unique_bytes"], ua, "alpha unique bytes")
    t.eq(rb["unique_bytes"], ub, "beta unique bytes")
    t.eq(ra["shared_bytes"], shared, "alpha shared bytes")
    t.eq(rb["shared_bytes"], shared, "beta shared bytes")
    t.eq(ra["disk_bytes"], ua + shared, "alpha on disk = unique + shared")
    app = sum(os.path.getsize(blob(x)) for x in a["layers"] + [a["config"]])
    t.eq(ra["apparent_bytes"], app, "alpha apparent bytes")
    t.eq(rows[0]["unique_bytes"] >= rows[1]["unique_bytes"], True, "sorted by unique bytes")
    t.eq(rows[0]["names"][0].startswith("alpha"), True, "alpha (6 layers) is the biggest")

    tot = st["totals"]
    t.eq(tot["referenced_bytes"], ua + ub + shared, "referenced = every referenced inode once")
    # every file under blobs/, each inode once: du -B1 and a Python count
    files = []
    for d, dirs, fs in os.walk(s.blobs):
        files += [os.path.join(d, f) for f in fs]
    seen, hand = set(), 0
    for f in files:
        st_ = os.lstat(f)
        if (st_.st_dev, st_.st_ino) not in seen:
            seen.add((st_.st_dev, st_.st_ino))
            hand += st_.st_blocks * 512
    t.eq(tot["blobs_bytes"], hand, "blobs/ total = hand count (inodes once)")
    out = subprocess.run(["du", "-B1", "-c"] + files, stdout=subprocess.PIPE, check=True).stdout.decode()
    du_total = int(out.strip().splitlines()[-1].split()[0])
    t.eq(tot["blobs_bytes"], du_total, "blobs/ total = du -B1 -c of the blob files")
    print("measured: du -B1 total %d, ollama-audit blobs_bytes %d, referenced %d" %
          (du_total, tot["blobs_bytes"], tot["referenced_bytes"]))
    j = tot["junk"]
    t.eq(j["orphans"]["count"], 1, "one orphan")
    t.eq(j["orphans"]["bytes"], alloc(s.blob_path(orphan)), "orphan bytes")
    t.eq(j["partials"]["count"], 4, "partial data + 3 part files")
    t.eq(j["partials"]["bytes"], sum(alloc(p) for p in parts), "partial bytes")
    t.eq(j["temps"]["count"], 2, "create temp + quantize temp")
    t.eq(j["foreign"]["count"], 2, "notes.txt + the hard link")
    t.eq(j["empty-dirs"]["count"], 2, "gone/ and gone/x/")
    junk_blobs = sum(j[k]["bytes"] for k in ("orphans", "manifest-blobs", "partials", "temps", "legacy", "foreign"))
    # the hard link shares the orphan's inode: du counts it once, the junk list per name
    t.eq(tot["referenced_bytes"] + junk_blobs - alloc(s.blob_path(orphan)), tot["blobs_bytes"],
         "referenced + junk (the hard-linked inode once) = blobs/ total")
    # reclaimable: prune's default set, old enough; the orphan's inode has 2 links -> frees nothing
    want = sum(alloc(p) for p in parts) + alloc(os.path.join(s.blobs, "sha256-99887766")) + \
        alloc(os.path.join(s.blobs, "Q4_K_M123456"))
    t.eq(tot["reclaimable_bytes"], want, "reclaimable: a hardlinked orphan frees no space")

with t.guard("du table and csv"):
    r = t.audit(s.root, "du", "--units", "bytes")
    t.exit_code(r, 0, "du table")
    head = r.out.splitlines()[1]
    for col in ("NAME", "UNIQUE", "SHARED", "ON DISK", "APPARENT"):
        t.contains(head, col, "table column")
    t.contains(r.out, "alpha:latest, alpha:v1", "collapsed tags in one row")
    t.contains(r.out, "reclaimable", "footer: reclaimable")
    t.contains(r.out, "junk orphans", "footer: junk by category")
    t.contains(r.out, str(ua), "raw bytes with --units bytes")
    r = t.audit(s.root, "du", "--format", "csv")
    t.exit_code(r, 0, "du csv")
    recs = list(csv.DictReader(io.StringIO(r.out)))
    t.eq(len(recs), 2, "two csv rows")
    t.eq(sorted(int(x["unique_bytes"]) for x in recs), sorted([ua, ub]), "csv unique bytes are raw integers")

with t.guard("du: unparseable manifest's blobs are shared, never unique to another model"):
    s = t.new_store("du-bad")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    # a broken manifest that mentions alpha's weights digest
    s.write_raw("manifests/registry.ollama.ai/library/broken/latest",
                '{"layers":[{"digest":"%s"' % a["layers"][0]["digest"])
    r = t.audit(s.root, "du", "--format", "json")
    rows = r.json()["stores"][0]["models"]
    ra = [x for x in rows if "alpha:latest" in x["names"]][0]
    t.eq(ra["shared_bytes"], alloc(s.blob_path(a["layers"][0]["digest"])),
         "weights possibly used by the broken manifest count as shared, not unique to alpha")
    t.eq(ra["unique_bytes"], sum(alloc(s.blob_path(x["digest"])) for x in a["layers"][1:] + [a["config"]]),
         "alpha's other blobs are unique to it")
    t.ok(any(not x["manifest_ok"] for x in rows), "the broken manifest has its own row")

t.done()
