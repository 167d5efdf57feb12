#!/usr/bin/env python3
"""bench_scale.py - list, check, du and prune on a store of many models,
each against a baseline measured in the same run, side by side with peak RSS.

The store: N models (default 10,000; OA_BENCH_MODELS=100000 shows growth),
50 GGUF weight blobs shared between them, one template blob shared by all,
a config and a params blob per model, and N/5 orphan blobs aged 3 days.

Baselines: list, check and du against a bare walk of the same files (read
every manifest and every small blob, lstat every blob): bare_walk.c, the same
work as find+cat+stat without their process start-ups (both are printed);
prune --apply against its own dry run. check of three models and an rm dry
run of a fifth of them are there for what grows with the MODEL arguments
(each was quadratic once). It prints figures; it asserts nothing.

    python3 tests/bench/bench_scale.py BUILD_DIR
    OA_BENCH_MODELS=100000 OA_BENCH_REPS=1 python3 tests/bench/bench_scale.py BUILD_DIR
    OA_BENCH_GROWTH=100000 python3 tests/bench/bench_scale.py BUILD_DIR

OA_BENCH_GROWTH=N (make bench sets 100000) measures a second store of N
models once each after the first, and prints how each command's wall time
and peak RSS grow from one to the other (linear: N / OA_BENCH_MODELS);
its prune --apply stops after OA_BENCH_GROWTH_APPLY_TIMEOUT seconds (600).
"""
import hashlib, os, shutil, subprocess, sys, tempfile, time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
import oastore as oa  # noqa: E402

N_WEIGHTS = 50
THREE_DAYS = 3 * 86400


def write_blob(blobs, data, mtime=None):
    hexd = hashlib.sha256(data).hexdigest()
    p = os.path.join(blobs, "sha256-" + hexd)
    with open(p, "wb") as f:
        f.write(data)
    if mtime is not None:
        os.utime(p, (mtime, mtime))
    return "sha256:" + hexd


def build(root, n):
    """A store of n models; returns (blobs, orphans)."""
    s = oa.Store(root)
    weights = []
    for i in range(N_WEIGHTS):
        g = oa.tiny_llama_gguf(name="base%d" % i, n_layers=2)
        info = oa.read_gguf(g)
        weights.append((s.layer("model", g), oa.human_number(info["param_count"])))
    tmpl = s.layer("template", b"{{ .System }} {{ .Prompt }}")
    for i in range(n):
        w, ptype = weights[i % N_WEIGHTS]
        params = s.layer("params", ('{"seed":%d}' % i).encode())
        cfg = s.config(oa.config_v2(
            rootfs={"type": "layers", "diff_ids": [w["digest"], tmpl["digest"], params["digest"]]},
            model_format="gguf", model_family="llama", model_families=["llama"],
            model_type=ptype, file_type="Q4_K_M", architecture="amd64", os="linux"))
        s.add_manifest("bench/model%d:latest" % i, cfg, [w, tmpl, params])
    blobs = len(os.listdir(s.blobs))
    return blobs, add_orphans(s.blobs, n // 5, 0)


def add_orphans(blobs, n, round_):
    old = time.time() - THREE_DAYS
    for i in range(n):
        write_blob(blobs, ("orphan %d of round %d\n" % (i, round_)).encode() * 4, old)
    return n


# The kernel counts a child's RSS before its exec in its peak: a command
# forked from this Python (about 20 MiB) could never show less. GNU time
# forks it from a small process and reports its own child's peak.
GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def run(cmd, timeout=None):
    """(wall seconds, CPU seconds, peak RSS in MiB, exit status) of one run;
    status None when it was stopped after `timeout` seconds."""
    rss_file = None
    if GNU_TIME:
        fd, rss_file = tempfile.mkstemp(prefix="oa-bench-rss.")
        os.close(fd)
        cmd = [GNU_TIME, "-f", "%M", "-o", rss_file] + cmd
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    status = None
    while True:
        pid, st, ru = os.wait4(p.pid, os.WNOHANG if timeout is not None else 0)
        if pid:
            status = os.waitstatus_to_exitcode(st)
            break
        if time.perf_counter() - t0 > timeout:
            os.killpg(p.pid, 9)
            _, st, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.05)
    rss = ru.ru_maxrss / 1024.0
    if rss_file:
        with open(rss_file) as f:
            lines = f.read().split()
        os.unlink(rss_file)
        rss = int(lines[-1]) / 1024.0 if lines and lines[-1].isdigit() else rss  # time exits as its child
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, rss, status


def best_of(cmd, reps):
    """The best wall and CPU seconds over reps runs, and the highest peak RSS."""
    runs = [run(cmd) for _ in range(reps)]
    for r in runs:
        if r[3] not in (0, 1):
            sys.exit("%s exited %s" % (" ".join(cmd), r[3]))
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


BARE = ('find "$1/manifests" -type f -exec cat {} + >/dev/null; '
        'find "$1/blobs" -type f -size -64k -exec cat {} + >/dev/null; '
        'find "$1/blobs" -type f -exec stat -c %s {} + >/dev/null')

ROW = "%-30s %8.2f %7.2fx %8.2f %7.2fx %10s"


def row(what, t, base, rss=None):
    print(ROW % (what, t[0], t[0] / base[0], t[1], t[1] / base[1], "%.1f MiB" % rss if rss else "-"))


COMMANDS = (["list"], ["check"], ["verify"], ["du"], ["du", "--format", "prometheus"],
            ["check", "bench/model1", "bench/model2", "bench/model3"])


def prepare(root, n, keep):
    """Build the store of n models at root (or reuse a kept one); (blobs, orphans)."""
    t0 = time.perf_counter()
    if keep and os.path.exists(os.path.join(root, "manifests")):
        n_orphans = add_orphans(os.path.join(root, "blobs"), n // 5, 0)  # the same names again
        n_blobs = len(os.listdir(os.path.join(root, "blobs"))) - n_orphans
    else:
        n_blobs, n_orphans = build(root, n)
    print("store: %d models, %d blobs + %d orphans aged 3 days (built in %.0f s)" %
          (n, n_blobs, n_orphans, time.perf_counter() - t0))
    return n_blobs, n_orphans


def apply_runs(env_store, root, n_blobs, n_orphans, reps, limit, dry):
    """prune --apply reps times (the orphans put back between runs): the best
    figures, or None when a run was stopped after limit seconds."""
    best = None
    for r in range(reps):
        if r:
            add_orphans(os.path.join(root, "blobs"), n_orphans, r)
        t = run(env_store + ["prune", "--min-age", "2d", "--apply", "--yes"], limit)
        if t[3] is None:
            done = n_blobs + n_orphans - len(os.listdir(os.path.join(root, "blobs")))
            add_orphans(os.path.join(root, "blobs"), n_orphans, r)
            row("prune --apply: STOPPED", t, dry, t[2])
            print("  (stopped after %.0f s with %d of %d removed: %.0f s at that rate)" %
                  (t[0], done, n_orphans, t[0] * n_orphans / max(done, 1)))
            return None
        left = len(os.listdir(os.path.join(root, "blobs")))
        if t[3] != 0 or left != n_blobs:
            sys.exit("prune --apply exited %d and left %d blobs (expected %d)" % (t[3], left, n_blobs))
        best = t if best is None else (min(best[0], t[0]), min(best[1], t[1]), max(best[2], t[2]))
    row("prune --apply (%d orphans)" % n_orphans, best, dry, best[2])
    return best


def measure(binary, root, n, reps, keep, walker, limit):
    """Every figure on a store of n models at root, printed as it comes;
    a dict of what -> (wall s, CPU s, peak RSS MiB)."""
    n_blobs, n_orphans = prepare(root, n, keep)
    print("best of %d" % reps)
    env_store = [binary, "--store", root]
    out = {}
    bare = best_of([walker, root], reps)
    out["bare walk"] = bare
    print("%-30s %8s %8s %8s %8s %9s" % ("", "wall s", "ratio", "CPU s", "ratio", "peak RSS"))
    row("bare walk (bare_walk.c)", bare, bare)
    row("find+cat+stat (processes)", best_of(["sh", "-c", BARE, "sh", root], reps), bare)
    for cmd in COMMANDS:
        what = " ".join(cmd) if len(cmd) < 4 else "%s of %d models" % (cmd[0], len(cmd) - 1)
        t = out[what] = best_of(env_store + cmd, reps)
        row(what, t, bare, t[2])
    # rm of a fifth of the models, planned: every MODEL resolved, every
    # directory they may empty looked at, every blob they reach weighed.
    rm = ["rm"] + ["bench/model%d" % i for i in range(0, n, 5)]
    t = out["rm a fifth (dry run)"] = best_of(env_store + rm, reps)
    row("rm %d models (dry run)" % len(rm[1:]), t, bare, t[2])
    dry = out["prune (dry run)"] = best_of(env_store + ["prune", "--min-age", "2d"], reps)
    row("prune (dry run)", dry, dry, dry[2])
    best = apply_runs(env_store, root, n_blobs, n_orphans, reps, limit, dry)
    if best:
        out["prune --apply"] = best
    return out


def growth(n0, small, n1, big):
    """How each figure grows from n0 to n1 models: linear is n1/n0."""
    print("== growth %d -> %d models (x%.0f): linear is x%.0f" % (n0, n1, n1 / n0, n1 / n0))
    print("%-30s %9s %9s %7s %9s %9s %7s" % ("", "wall s", "wall s", "x", "RSS MiB", "RSS MiB", "x"))
    for what, a in small.items():
        b = big.get(what)
        if not b:
            print("%-30s %9.2f %9s" % (what, a[0], "-"))
            continue
        rss = ("%9.0f %9.0f %6.1fx" % (a[2], b[2], b[2] / a[2])) if a[2] and b[2] else ""
        print("%-30s %9.2f %9.2f %6.1fx %s" % (what, a[0], b[0], b[0] / max(a[0], 1e-9), rss))


def main():
    build_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build")
    n = int(os.environ.get("OA_BENCH_MODELS", "10000"))
    reps = int(os.environ.get("OA_BENCH_REPS", "3"))
    big_n = int(os.environ.get("OA_BENCH_GROWTH", "0"))  # a second, larger store: how costs grow
    binary = os.path.abspath(os.path.join(build_dir, "ollama-audit"))
    keep = os.environ.get("OA_BENCH_STORE")  # build the store there once, and keep it
    tmp = tempfile.mkdtemp(prefix="oa-bench-scale.")
    root = keep or os.path.join(tmp, "models")
    limit = float(os.environ.get("OA_BENCH_APPLY_TIMEOUT", "900"))
    # verify's cache of its own, not the user's: check and verify load the
    # whole file, so its size would change their figures from run to run.
    os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
    try:
        walker = os.path.join(tmp, "bare_walk")
        subprocess.run(["cc", "-O2", "-o", walker, os.path.join(os.path.dirname(__file__), "bare_walk.c")],
                       check=True)
        small = measure(binary, root, n, reps, keep, walker, limit)
        if big_n:
            if not keep:
                shutil.rmtree(root)
            big_root = (keep.rstrip("/") + "-%d" % big_n) if keep else os.path.join(tmp, "models-big")
            print("== a store of %d models, once each" % big_n)
            big = measure(binary, big_root, big_n, 1, keep, walker,
                          float(os.environ.get("OA_BENCH_GROWTH_APPLY_TIMEOUT", "600")))
            growth(n, small, big_n, big)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
