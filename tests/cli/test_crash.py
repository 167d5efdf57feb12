#!/usr/bin/env python3
"""Crash safety: SIGKILL `prune --apply` and `rm --apply` at random points of
a large, slowed apply (OA_TEST_APPLY_DELAY_US), several times. After each
kill no manifest references a missing blob (`check`), and a quarantine can
still be restored completely."""

import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()
# N orphans at OA_TEST_APPLY_DELAY_US each: an apply of about 0.6 s, which
# kill_after's random point (0-0.3 s after the first blob went) lands inside.
# Fewer entries, each slowed longer, keep that window and cost less to make
# and to check than more, shorter ones.
N = 1000
rng = random.Random(5)


def env():
    e = dict(os.environ)
    e.pop("OLLAMA_MODELS", None)
    e["OA_TEST_APPLY_DELAY_US"] = "600"
    e["ASAN_OPTIONS"] = "detect_leaks=0"
    return e


def kill_after(args, seconds, started=None):
    """SIGKILL the command `seconds` after it starts, or, with `started`, that
    long after started() first holds (polled): on a busy machine a fixed
    delay from exec can land before the apply has begun."""
    # stdout to a file: a pipe nobody reads would block the listing, not the apply
    with open(os.path.join(t.tempdir("out"), "out"), "w+b") as f:
        p = subprocess.Popen([t.BIN] + args, env=env(), stdin=subprocess.DEVNULL,
                             stdout=f, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while started and not started() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(seconds)
        p.send_signal(signal.SIGKILL)
        p.wait()
        f.seek(0)
        return p.returncode, f.read().decode(errors="replace")


def fewer_blobs(s):
    """A predicate: has a file gone from blobs/ since now (the apply began)?"""
    n0 = len(os.listdir(s.blobs))
    return lambda: len(os.listdir(s.blobs)) < n0


def no_missing(s, msg):
    r = t.audit(s.root, "check", "--format", "json")
    codes = t.codes(t.findings_of(r.json()))
    t.not_contains(codes, "missing-blob", msg + ": no manifest references a missing blob")
    t.not_contains(codes, "missing-config", msg + ": no missing config")


def big_store(tag):
    s = t.new_store(tag)
    models = [t.add_gguf_model(s, "m%d:latest" % i, seed=str(i)) for i in range(4)]
    orphans = []
    for i in range(N):
        orphans.append(s.add_blob(b"orphan %d " % i + oa.det_bytes(100, str(i))))
    s.age_all(7200)
    return s, models, orphans


with t.guard("SIGKILL during prune --apply (delete)"):
    s, models, orphans = big_store("crash-del")
    kills = 0
    for round_ in range(4):
        left = sum(os.path.exists(s.blob_path(o)) for o in orphans)
        if left == 0:
            break
        rc, out = kill_after(["--store", s.root, "prune", "--apply", "--yes"], rng.uniform(0.0, 0.3),
                             started=fewer_blobs(s))
        kills += rc == -signal.SIGKILL
        no_missing(s, "after kill %d" % round_)
        now = sum(os.path.exists(s.blob_path(o)) for o in orphans)
        print("kill %d: rc %s, orphans %d -> %d" % (round_, rc, left, now))
    t.ok(kills >= 2, "at least two applies were killed mid-way (%d)" % kills)
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 0, "a final prune finishes the job")
    t.eq(sum(os.path.exists(s.blob_path(o)) for o in orphans), 0, "every orphan gone in the end")
    no_missing(s, "final")

with t.guard("SIGKILL during prune --apply --quarantine; restore brings back everything"):
    s, models, orphans = big_store("crash-q")
    before = t.snapshot(s.root)
    q = os.path.join(t.tempdir("crashq"), "q")
    kills = 0
    for round_ in range(3):
        rc, out = kill_after(["--store", s.root, "prune", "--apply", "--yes", "--quarantine", q],
                             rng.uniform(0.0, 0.3), started=fewer_blobs(s))
        kills += rc == -signal.SIGKILL
        no_missing(s, "after quarantine kill %d" % round_)
        moved = sum(not os.path.exists(s.blob_path(o)) for o in orphans)
        t.ok(moved == 0 or os.path.exists(os.path.join(q, "index.json")),
             "after kill %d: %d files moved and the index that finds them exists" % (round_, moved))
    t.ok(kills >= 2, "at least two quarantine applies were killed mid-way (%d)" % kills)
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore after kills")
    t.eq(sum(os.path.exists(s.blob_path(o)) for o in orphans), N, "all %d orphans restored" % N)
    after = t.snapshot(s.root)
    strip = lambda snap: {k: (v[0], v[1], v[3], v[4]) if v[0] == 0o040000 else v for k, v in snap.items()}
    t.eq(t.diff_snapshots(strip(before), strip(after)), [], "store identical after restore")
    # a kill during restore is safe too
    rc, out = kill_after(["--store", s.root, "prune", "--apply", "--yes", "--quarantine", q], 1.0)
    p = subprocess.Popen([t.BIN, "restore", q, "--all"], env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.05)
    p.kill()
    p.communicate()
    r = t.run("restore", q, "--all")
    t.ok(r.code in (0,), "restore after a killed restore: exit %s\n%s" % (r.code, r.err[-500:]))
    t.eq(sum(os.path.exists(s.blob_path(o)) for o in orphans), N, "all orphans back after a killed restore")

with t.guard("SIGKILL during rm --apply: no manifest ever points at a removed blob"):
    for round_ in range(3):
        s = t.new_store("crash-rm")
        keep = t.add_gguf_model(s, "keep:latest", seed="k")
        # the victim: many layers, sharing the template/params with keep
        gguf = oa.tiny_llama_gguf(name="victim")
        layers = [s.layer("model", gguf)] + [s.layer("license", "license %d" % i) for i in range(300)] + \
            keep["layers"][1:]
        cfg = oa.gguf_config(s, gguf, layers)
        s.add_manifest("victim:latest", cfg, layers)
        s.add_manifest("victim:other", cfg, layers[:1])
        rc, out = kill_after(["--store", s.root, "rm", "victim:latest", "victim:other", "--apply", "--yes"],
                             rng.uniform(0.05, 0.6))
        no_missing(s, "rm kill %d (rc %s)" % (round_, rc))
        for x in keep["layers"] + [keep["config"]]:
            t.ok(os.path.exists(s.blob_path(x["digest"])), "keep's blobs intact")

with t.guard("a reference written while prune --apply runs is seen before the blob goes (M4 cache)"):
    s = t.new_store("race-ref")
    t.add_gguf_model(s, "keep:latest", seed="k")
    orphans = sorted(s.add_blob(b"late ref %d" % i) for i in range(60))
    s.age_all(7200)
    e = env()
    e["OA_TEST_APPLY_DELAY_US"] = "40000"          # 60 entries: ~2.4 s
    p = subprocess.Popen([t.BIN, "--store", s.root, "prune", "--apply", "--yes", "--force"], env=e,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    time.sleep(0.8)
    late = orphans[-5:]
    # an existing manifest file rewritten in place (same size class) and a new file
    s.write_raw("manifests/registry.ollama.ai/library/notes/x", " ".join(late[:3]))
    time.sleep(0.3)
    s.write_raw("manifests/registry.ollama.ai/library/notes/x", " ".join(late))
    out = p.communicate(timeout=120)[0].decode(errors="replace")
    for d in late:
        t.ok(os.path.exists(s.blob_path(d)), "blob referenced during the apply survives", out[-800:])
    t.ok(not os.path.exists(s.blob_path(orphans[0])), "earlier orphans went")

t.done()
