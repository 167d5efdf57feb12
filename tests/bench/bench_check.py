#!/usr/bin/env python3
"""bench_check.py - how long `check` (the structure pass) and `list` take on a
store of many models. The issue asks for "well under a second on a store of
hundreds of models"; this prints the figure, it asserts nothing.

    python3 tests/bench/bench_check.py BUILD_DIR [N_MODELS]
"""
import os, shutil, subprocess, sys, tempfile, time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
import oastore as oa  # noqa: E402


def build(root, n):
    s = oa.Store(root)
    # A few shared base weights, as real stores share them between tags.
    bases = [oa.tiny_llama_gguf(name="base%d" % i, n_layers=2) for i in range(8)]
    tmpl = s.layer("template", b"{{ .Prompt }}")
    lic = s.layer("license", b"MIT")
    for i in range(n):
        g = bases[i % len(bases)]
        model = s.layer("model", g)
        sysl = s.layer("system", ("model %d" % i).encode())
        cfg = oa.gguf_config(s, g, [model])
        s.add_manifest("bench/model%d:tag%d" % (i, i % 3), cfg, [model, tmpl, lic, sysl])


def best_of(cmd, reps=5):
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.perf_counter() - t0
        if r.returncode not in (0, 1):
            sys.exit("%s exited %d" % (cmd, r.returncode))
        best = dt if best is None else min(best, dt)
    return best


def main():
    build_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    binary = os.path.join(build_dir, "ollama-audit")
    tmp = tempfile.mkdtemp(prefix="oa-bench-check.")
    try:
        build(tmp, n)
        blobs = len(os.listdir(os.path.join(tmp, "blobs")))
        for cmd in ("list", "check"):
            t = best_of([binary, "--store", tmp, cmd])
            print("%-6s %4d models, %5d blob files: %7.1f ms (best of 5, warm cache)" %
                  (cmd, n, blobs, t * 1000))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
