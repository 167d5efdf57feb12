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


def du_s(path, *opts):
    out = subprocess.run(["du", "-B1", "-s"] + list(opts) + [path], stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    return int(out.split()[0])


def tree_usage(top):
    """(allocated, apparent) of top and everything under it, lstat, each inode once."""
    seen, al, ap = set(), 0, 0
    for d, dirs, fs in os.walk(top):
        for p in [d] + [os.path.join(d, f) for f in fs] + \
                [os.path.join(d, x) for x in dirs if os.path.islink(os.path.join(d, x))]:
            st_ = os.lstat(p)
            if (st_.st_dev, st_.st_ino) not in seen:
                seen.add((st_.st_dev, st_.st_ino))
                al += st_.st_blocks * 512
                ap += st_.st_size
    return al, ap


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
    # blobs/ and everything under it, each inode once: du -B1 -s and a Python count
    hand, hand_app = tree_usage(s.blobs)
    t.eq(tot["blobs_bytes"], hand, "blobs/ total = hand count (blobs/ itself and every entry, inodes once)")
    du_total = du_s(s.blobs)
    t.eq(tot["blobs_bytes"], du_total, "blobs/ total = du -B1 -s blobs")
    t.eq(tot["blobs_apparent_bytes"], du_s(s.blobs, "--apparent-size"),
         "blobs/ apparent total = du -B1 -s --apparent-size blobs")
    t.eq(tot["blobs_apparent_bytes"], hand_app, "blobs/ apparent total = hand count")
    print("measured: du -B1 total %d, ollama-audit blobs_bytes %d, referenced %d" %
          (du_total, tot["blobs_bytes"], tot["referenced_bytes"]))
    j = tot["junk"]
    t.eq(j["orphans"]["count"], 1, "one orphan")
    t.eq(j["orphans"]["disk_bytes"], alloc(s.blob_path(orphan)), "orphan bytes")
    t.eq(j["partials"]["count"], 4, "partial data + 3 part files")
    t.eq(j["partials"]["disk_bytes"], sum(alloc(p) for p in parts), "partial bytes")
    t.eq(j["temps"]["count"], 2, "create temp + quantize temp")
    t.eq(j["foreign"]["count"], 2, "notes.txt + the hard link")
    t.eq(j["empty_dirs"]["count"], 2, "gone/ and gone/x/")
    junk_blobs = sum(j[k]["disk_bytes"] for k in ("orphans", "manifest_blobs", "partials", "temps", "legacy", "foreign"))
    # the hard link shares the orphan's inode: du counts it once, the junk list per name;
    # blobs/ itself is neither referenced nor junk
    t.eq(tot["referenced_bytes"] + junk_blobs - alloc(s.blob_path(orphan)) + alloc(s.blobs), tot["blobs_bytes"],
         "referenced + junk (the hard-linked inode once) + blobs/ itself = blobs/ total")
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


with t.guard("one walker: du's blobs/ total counts temp directories and their contents (item 8)"):
    s = t.new_store("du-walk")
    t.add_gguf_model(s, "alpha:latest", seed="a")
    os.makedirs(os.path.join(s.blobs, "split-gguf-123"))
    s.write_raw("blobs/split-gguf-123/x", oa.det_bytes(100000, "x"))
    s.write_raw("blobs/foo.gguf", b"foreign")
    outside = os.path.join(t.tempdir("du-walk-out"), "big.bin")
    with open(outside, "wb") as f:
        f.write(oa.det_bytes(200000, "outside"))
    os.symlink(outside, os.path.join(s.blobs, "link-out"))       # foreign symlink: counts as itself
    s.age_all(7200)
    s.age("blobs/split-gguf-123", 7200)
    r = t.audit(s.root, "du", "--format", "json")
    t.exit_code(r, 0, "du")
    tot = r.json()["stores"][0]["totals"]
    want = du_s(s.blobs)
    print("measured: du -B1 -s blobs %d, ollama-audit blobs_bytes %d" % (want, tot["blobs_bytes"]))
    t.eq(tot["blobs_bytes"], want, "blobs/ total = du -B1 -s blobs (directories and temp dir contents)")
    t.eq(tot["blobs_apparent_bytes"], du_s(s.blobs, "--apparent-size"),
         "blobs/ apparent = du -B1 -s --apparent-size blobs (a symlink as itself)")
    d = os.path.join(s.blobs, "split-gguf-123")
    t.eq(tot["junk"]["temps"]["disk_bytes"], du_s(d), "junk temps = du -B1 -s of the temp dir")

with t.guard("du: a symlinked blob is unique as the link, never its target (item 8)"):
    s = t.new_store("du-symlink")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    w = s.blob_path(a["layers"][0]["digest"])
    outside = os.path.join(t.tempdir("du-symlink-out"), "weights.gguf")
    os.rename(w, outside)
    os.symlink(outside, w)
    r = t.audit(s.root, "du", "--format", "json")
    t.exit_code(r, 0, "du")
    row = [x for x in r.json()["stores"][0]["models"] if "alpha:latest" in x["names"]][0]
    own = [s.blob_path(x["digest"]) for x in a["layers"][1:] + [a["config"]]]
    want = sum(alloc(p) for p in own) + alloc(w)           # the link's own blocks (0 for a fast symlink)
    t.eq(row["unique_bytes"], want, "UNIQUE counts the link, not the %d bytes of its target outside"
         % alloc(outside))
    t.eq(row["unique_apparent_bytes"], sum(os.lstat(p).st_size for p in own + [w]),
         "unique apparent: the link's own size")
    r = t.audit(s.root, "rm", "alpha:latest", "--format", "json")
    t.eq(sum(e["planned_bytes"] for e in r.json()["stores"][0]["entries"] if e["category"] == "model-blob"),
         row["unique_bytes"], "UNIQUE = what rm frees in blobs/")

t.done()
