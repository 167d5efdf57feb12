#!/usr/bin/env python3
"""export and import of a 512 MiB model against GNU tar on the same files,
as ratios (the goal: at most 1.5x each), page cache warm.

    bench_carry.py BUILD [MIB]

export hashes every blob as it reads it and fsyncs the bundle before its
rename; import hashes every blob as it copies it and fsyncs each before it
is renamed into place. tar does neither, so the figures are given twice:
against tar as it is, and against tar followed by an fsync of what it wrote
(the same durability). Each is the best of several runs, interleaved, after
one untimed run of each: on a shared machine the best run is the one least
disturbed by the others."""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import oastore as oa  # noqa: E402

RUNS = int(os.environ.get("OA_BENCH_CARRY_RUNS", "5"))


def timed(argv, **kw):
    t0 = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("bench_carry: %s failed: %s" % (" ".join(argv), p.stderr.decode()))
    return dt


def fsync_tree(root):
    if os.path.isfile(root):
        fd = os.open(root, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    for d, _, files in os.walk(root):
        for n in files:
            fd = os.open(os.path.join(d, n), os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    if os.path.exists(path):
        os.remove(path)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    binary = os.path.abspath(os.path.join(build, "ollama-audit"))
    base = tempfile.mkdtemp(prefix="oa-bench-carry-")
    try:
        src = os.path.join(base, "src", "models")
        s = oa.Store(src)
        rng = hashlib.sha256(b"bench")
        weights = b"".join(hashlib.sha256(rng.digest() + i.to_bytes(4, "little")).digest() * 2048
                           for i in range(mib * 16))  # mib MiB, 64 KiB at a time
        layer = s.layer("model", weights)
        del weights
        s.add_manifest("big:latest", s.config({"model_format": "gguf"}), [layer])
        members = ["manifests", "blobs"]
        bundle, plain = os.path.join(base, "b.tar"), os.path.join(base, "p.tar")
        t_exp, t_tc, t_tcs, t_imp, t_tx, t_txs = [], [], [], [], [], []
        for k in range(RUNS + 1):
            fresh(bundle)
            e = timed([binary, "--store", src, "export", "big", "-o", bundle])
            fresh(plain)
            c = timed(["tar", "-cf", plain, "-C", src] + members)
            t0 = time.monotonic()
            fsync_tree(plain)
            cs = c + time.monotonic() - t0
            dst, dst2 = os.path.join(base, "dst"), os.path.join(base, "dst2")
            fresh(dst)
            os.makedirs(dst)
            i = timed([binary, "--store", dst, "import", bundle, "--apply", "--yes"])
            fresh(dst2)
            os.makedirs(dst2)
            x = timed(["tar", "-xf", bundle, "-C", dst2])
            t0 = time.monotonic()
            fsync_tree(dst2)
            xs = x + time.monotonic() - t0
            if k:  # the first round warms the page cache and is not counted
                for v, t in ((t_exp, e), (t_tc, c), (t_tcs, cs), (t_imp, i), (t_tx, x), (t_txs, xs)):
                    v.append(t)
        e, c, cs, i, x, xs = (min(v) for v in (t_exp, t_tc, t_tcs, t_imp, t_tx, t_txs))
        print("a %d MiB model, best of %d runs (load average %.1f):" % (mib, RUNS, os.getloadavg()[0]))
        print("  export %.2f s   tar -cf %.2f s   ratio %.2fx (goal <= 1.5x); tar -cf + fsync %.2f s: %.2fx"
              % (e, c, e / c, cs, e / cs))
        print("  import %.2f s   tar -xf %.2f s   ratio %.2fx (goal <= 1.5x); tar -xf + fsync %.2f s: %.2fx"
              % (i, x, i / x, xs, i / xs))
    finally:
        shutil.rmtree(base, ignore_errors=True)


main()
