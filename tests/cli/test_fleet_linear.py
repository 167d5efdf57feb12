#!/usr/bin/env python3
"""The audit of many stores (--all-users, `stores`, several --store): each
store is read a fixed number of times, whatever the number of stores
(docs/multi-store.md, "Many stores"). Before, every store's reference set
looked at every other store again (to find the ones sharing its blob files)
and every copy of a duplicated blob was compared with every other copy, so
the audit of N stores cost N^2.

- A fake machine (OLLAMA_AUDIT_SYSROOT with its own etc/passwd) of 3, then 6
  accounts, each with the same small store: strace counts the opens and
  ioctls naming the first account's store, and the count must not grow with
  the number of accounts (timing is never asserted).
- The stores named with --store are looked at for every store of the set,
  by every command: `stores` reports the same reclaimable bytes as `du`.
"""
import os
import shutil
import subprocess
import time

import clitest as t
import oastore as oa

COMMANDS = (["stores"], ["du", "--all-users"], ["du", "--all-users", "--duplicates"], ["check", "--all-users"],
            ["report", "--all-users"], ["prune", "--all-users"], ["dedupe", "--all-users"], ["list", "--all-users"])


def machine(n):
    """n accounts u0..u(n-1), each with a store of three models that share a
    weights blob, the same in every store (a duplicate across all of them)."""
    root = t.tempdir("fleet%d" % n)
    os.makedirs(os.path.join(root, "etc"))
    with open(os.path.join(root, "etc", "passwd"), "w") as f:
        for a in range(n):
            f.write("u%d:x:%d:%d::/home/u%d:/bin/sh\n" % (a, os.getuid(), os.getgid(), a))
    gguf = oa.tiny_llama_gguf(name="fleet weights", n_layers=2)
    for a in range(n):
        s = oa.Store(os.path.join(root, "home", "u%d" % a, ".ollama", "models"))
        weights = s.layer("model", gguf)
        for i in range(3):
            params = s.layer("params", ('{"seed":%d}' % i).encode())
            s.add_manifest("m%d:latest" % i, oa.gguf_config(s, gguf, [weights, params]), [weights, params])
    return root


def calls_on_first_store(sysroot, args):
    """How many open and ioctl calls (strace -f, each with the paths of its
    descriptors) name account u0's store."""
    out = os.path.join(t.tempdir("strace"), "trace")
    home = t.tempdir("fleet-home")
    e = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", OLLAMA_AUDIT_SYSROOT=sysroot, HOME=home,
             XDG_CACHE_HOME=os.path.join(home, "cache"), NO_COLOR="1", OA_TEST_REFLINK="no")
    for k in ("OLLAMA_MODELS", "OLLAMA_AUDIT_PASSWD"):
        e.pop(k, None)
    subprocess.run(["strace", "-f", "-qq", "-y", "-e", "trace=open,openat,ioctl", "-o", out, t.BIN] + args, env=e,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    mark = os.path.join(sysroot, "home", "u0") + "/"
    with open(out, errors="replace") as f:
        return sum(1 for line in f if mark in line)


t.section("each store is read a fixed number of times, whatever the number of stores")
if not shutil.which("strace") or subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"]).returncode != 0:
    t.skip("strace unavailable (or ptrace not allowed here): the count of reads per store")
else:
    small, large = machine(3), machine(6)
    for args in COMMANDS:
        with t.guard(" ".join(args)):
            few, many = calls_on_first_store(small, args), calls_on_first_store(large, args)
            t.ok(few > 0, "%s: strace saw the first store being read" % " ".join(args))
            t.eq(many, few, "%s: opens and ioctls on the first store with 6 accounts as with 3" % " ".join(args))


t.section("the stores named with --store are looked at for every store of the set")
if True:
    base = t.tempdir("named")
    a = oa.Store(os.path.join(base, "a"))
    t.add_gguf_model(a, "alpha:latest", seed="a")
    kept = a.add_blob("an orphan of a that b's tag links to\n")
    junk = a.add_blob("an orphan of a nobody links to\n")
    old = time.time() - 3 * 86400  # past prune's grace period
    for digest in (kept, junk):
        os.utime(a.blob_path(digest), (old, old))
    b = oa.Store(os.path.join(base, "b"))
    tag = b.manifest_path("links-a:latest")
    os.makedirs(os.path.dirname(tag))
    os.symlink(a.blob_path(kept), tag)
    env = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")}  # discovery finds neither
    both = ["--store", a.root, "--store", b.root]

    def reclaimable(out, root):
        for line in out.splitlines():
            if line.endswith("reclaimable_bytes") or "reclaimable_bytes{" not in line:
                continue
            if 'store="%s"' % root in line:
                return int(float(line.split()[-1]))
        return None

    du = t.run(*both, "du", "--format", "prometheus", env=env)
    stores = t.run(*both, "stores", "--format", "prometheus", env=env)
    t.ok(reclaimable(du.out, a.root) is not None, "du reports a's reclaimable bytes", du.describe())
    t.eq(reclaimable(stores.out, a.root), reclaimable(du.out, a.root),
         "stores reports what du does: the orphan b's tag links to is not reclaimable", stores.describe())
    r = t.run(*both, "prune", "--format", "json", env=env)
    planned = [e["path"] for p in r.json().get("stores", []) for e in p.get("entries", [])]
    t.ok("blobs/" + junk.replace(":", "-") in planned, "prune's plan for a holds its orphan", planned)
    t.ok("blobs/" + kept.replace(":", "-") not in planned,
         "and leaves out the blob b's tag links to", planned)

t.done()
