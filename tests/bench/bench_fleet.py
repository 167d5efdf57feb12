#!/usr/bin/env python3
"""bench_fleet.py - the commands that audit every store on a machine, on a
fake machine of many accounts, against `list --all-users` on the same machine,
and how each grows when the accounts double.

The machine: OLLAMA_AUDIT_SYSROOT (the suite's fake passwd and homes, as in
tests/cli/multistore.py) with A accounts (OA_BENCH_ACCOUNTS, default 25), each
with a store of M models (OA_BENCH_ACCOUNT_MODELS, default 200) at
<home>/.ollama/models: a config and a params blob per model, one of 20 GGUF
weight blobs that every account has (the same bytes: duplicates across
stores) and a template blob; each home belongs to its account when this
runs as root. Then A more accounts are added and everything is
measured again: the audit of the stores should grow with the stores, as list
does (linear is x2). It prints figures; it asserts nothing.

    python3 tests/bench/bench_fleet.py BUILD_DIR
    OA_BENCH_FLEET=/tmp/fleet python3 tests/bench/bench_fleet.py BUILD_DIR   # keep the machine
"""
import os, shutil, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import oastore as oa  # noqa: E402
from bench_scale import best_of  # noqa: E402

N_WEIGHTS = 20
UID0 = 24000

COMMANDS = (["list", "--all-users"], ["stores"], ["du", "--all-users"], ["check", "--all-users"],
            ["report", "--all-users"])


def weights():
    """The weight blobs every account has: (bytes, parameter count text)."""
    out = []
    for i in range(N_WEIGHTS):
        g = oa.tiny_llama_gguf(name="fleet%d" % i, n_layers=2)
        out.append((g, oa.human_number(oa.read_gguf(g)["param_count"])))
    return out


def build_store(root, account, n_models, ws):
    s = oa.Store(root)
    layers = [(s.layer("model", g), p) for g, p in ws]
    tmpl = s.layer("template", b"{{ .System }} {{ .Prompt }}")
    for i in range(n_models):
        w, ptype = layers[i % N_WEIGHTS]
        params = s.layer("params", ('{"seed":%d,"user":%d}' % (i, account)).encode())
        cfg = s.config(oa.config_v2(
            rootfs={"type": "layers", "diff_ids": [w["digest"], tmpl["digest"], params["digest"]]},
            model_format="gguf", model_family="llama", model_families=["llama"],
            model_type=ptype, file_type="Q4_K_M", architecture="amd64", os="linux"))
        s.add_manifest("fleet/model%d:latest" % i, cfg, [w, tmpl, params])


def chown_tree(path, uid):
    """Give the account its home, as on a real machine (only root can)."""
    if os.geteuid() != 0:
        return
    for d, dirs, files in os.walk(path):
        os.lchown(d, uid, UID0)
        for n in dirs + files:
            os.lchown(os.path.join(d, n), uid, UID0)


def grow(sysroot, have, want, n_models, ws):
    """Accounts have..want-1, each with a store, named in etc/passwd."""
    with open(os.path.join(sysroot, "etc", "passwd"), "a") as f:
        for a in range(have, want):
            f.write("user%d:x:%d:%d::/home/user%d:/bin/sh\n" % (a, UID0 + a, UID0, a))
            home = os.path.join(sysroot, "home", "user%d" % a)
            build_store(os.path.join(home, ".ollama", "models"), a, n_models, ws)
            chown_tree(home, UID0 + a)


def measure(binary, reps):
    """Each command's best wall and CPU seconds, printed with its ratio to
    list's; a dict of what -> (wall s, CPU s, peak RSS MiB)."""
    out = {}
    base = None
    print("%-22s %8s %8s %8s %8s" % ("", "wall s", "x list", "CPU s", "x list"))
    for cmd in COMMANDS:
        t = best_of([binary] + cmd, reps)
        out[" ".join(cmd)] = t
        base = base or t
        print("%-22s %8.2f %7.2fx %8.2f %7.2fx" % (" ".join(cmd), t[0], t[0] / base[0], t[1], t[1] / base[1]))
    return out


def main():
    build_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "build")
    binary = os.path.abspath(os.path.join(build_dir, "ollama-audit"))
    accounts = int(os.environ.get("OA_BENCH_ACCOUNTS", "25"))
    n_models = int(os.environ.get("OA_BENCH_ACCOUNT_MODELS", "200"))
    reps = int(os.environ.get("OA_BENCH_REPS", "3"))
    keep = os.environ.get("OA_BENCH_FLEET")  # build the machine there, and keep it
    tmp = keep or tempfile.mkdtemp(prefix="oa-bench-fleet.")
    if keep and os.path.exists(os.path.join(keep, "root")):
        sys.exit("%s already holds a machine" % keep)
    sysroot = os.path.join(tmp, "root")
    os.makedirs(os.path.join(sysroot, "etc"))
    home = os.path.join(tmp, "home")  # this user's $HOME: no store
    os.makedirs(home)
    for k in ("OLLAMA_MODELS", "OLLAMA_AUDIT_PASSWD"):
        os.environ.pop(k, None)
    os.environ.update({"OLLAMA_AUDIT_SYSROOT": sysroot, "HOME": home,
                       "XDG_CACHE_HOME": os.path.join(tmp, "cache")})
    try:
        ws = weights()
        results = []
        for n_acc in (accounts, 2 * accounts):
            t0 = time.perf_counter()
            grow(sysroot, accounts if results else 0, n_acc, n_models, ws)
            print("== %d accounts of %d models (built in %.0f s), best of %d" %
                  (n_acc, n_models, time.perf_counter() - t0, reps))
            results.append(measure(binary, reps))
        print("== growth %d -> %d accounts (linear: x2)" % (accounts, 2 * accounts))
        print("%-22s %8s %8s %7s %8s %8s %7s" % ("", "wall s", "wall s", "x", "CPU s", "CPU s", "x"))
        for what, a in results[0].items():
            b = results[1][what]
            print("%-22s %8.2f %8.2f %6.2fx %8.2f %8.2f %6.2fx" % (what, a[0], b[0], b[0] / a[0], a[1], b[1],
                                                                  b[1] / a[1]))
    finally:
        if not keep:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
