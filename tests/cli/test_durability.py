#!/usr/bin/env python3
"""What keeps a removal safe across a crash and across mounts
(docs/disk-space.md, "Crash safety"):

- the directory sync that makes "the tag is gone" last before any of its
  blobs goes: when it fails, the removal stops there (rm, rm --quarantine),
  exit 8, and each entry after it is skipped saying why; restore, which puts
  manifests back first, stops the same way and a run again finishes. The
  failing fsync is the LD_PRELOAD shim's (tests/faultinject/faultinject.c);
  without it those sections are skipped.
- no tree removal crosses a mount point: prune's temp trees and restore
  --empty's quarantined directories keep a file system mounted in them (a
  tmpfs, and a bind mount of the same file system, which only the mount id
  tells apart). Mounting needs root: elsewhere those sections are skipped.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
SHIM = os.environ.get("OA_FAULTINJECT") or ""
HAVE_SHIM = bool(SHIM) and os.path.exists(SHIM)
OLD = time.time() - 3 * 86400


def store(tag):
    s = t.new_store(tag)
    a = t.add_gguf_model(s, "alpha:latest", seed="a", mtime=OLD)
    b = t.add_gguf_model(s, "beta:latest", seed="b", mtime=OLD)
    s.age_all(7200)
    return s, a, b


def blobs_of(s, m):
    return [s.blob_path(x["digest"]) for x in [m["config"]] + m["layers"]]


def only_beta(s, a, b):
    """beta's blobs that alpha does not use."""
    return sorted(set(blobs_of(s, b)) - set(blobs_of(s, a)))


def fault_at_dir(args, leaf_dir, tries=12):
    """Run args with the N-th fsync failing (EIO), for N = 1, 2, ... until
    the one that failed was the sync of a directory ending in leaf_dir:
    (result, N), or (None, None) when no fsync of that directory was seen."""
    for n in range(1, tries + 1):
        log = os.path.join(t.tempdir("fsynclog"), "log")
        env = {"LD_PRELOAD": SHIM, "OA_FAULT": "fsync:%d:EIO" % n, "OA_FAULT_LOG": log,
               "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:verify_asan_link_order=0"}
        fired = None
        r = args(env)
        for ln in open(log).read().splitlines() if os.path.exists(log) else []:
            p = ln.split(" ", 4)
            if p[0] == "fault":
                fired = p[4] if len(p) > 4 else ""
        if fired is None:
            return None, None  # fewer fsyncs than n: the directory was never synced
        if fired.rstrip("/").endswith(leaf_dir):
            return r, n
        args.reset()
    return None, None


class Fresh:
    """A fresh store (and quarantine) for each try of fault_at_dir."""

    def __init__(self, tag, run):
        self.tag, self.run = tag, run
        self.reset()

    def reset(self):
        self.s, self.a, self.b = store(self.tag)
        self.q = os.path.join(t.tempdir(self.tag + "q"), "q")

    def __call__(self, env):
        return self.run(self, env)


def synced_stop(r, what, verb):
    t.exit_code(r, 8, what)
    t.contains(r.out + r.err, "but syncing its directory failed (Input/output error): nothing after it is",
               "%s says the sync failed and it stops" % what)
    t.not_contains(r.out, "%s blobs/" % verb, "%s removes no blob after it" % what)


if not HAVE_SHIM:
    t.skip("directory sync failures: no fault-injection shim here (OA_FAULTINJECT: Linux with glibc only)")
else:
    with t.guard("rm --apply: the tag's directory sync fails, so no blob of it goes"):
        x = Fresh("rmsync", lambda f, env: t.audit(f.s.root, "rm", "beta", "--apply", "--yes", env=env))
        r, n = fault_at_dir(x, "library/beta")
        if t.ok(r, "rm syncs the tag's directory before its blobs go"):
            synced_stop(r, "rm --apply", "removed")
            t.ok(not os.path.exists(x.b["path"]), "the tag itself is gone (it went before the sync)")
            t.eq([p for p in only_beta(x.s, x.a, x.b) if not os.path.exists(p)], [], "every blob of beta stays")
            t.contains(r.out, "skipped blobs/", "each blob after it is skipped")
            t.contains(r.out, "syncing the directory of manifests/registry.ollama.ai/library/beta/latest failed",
                       "saying why")

    with t.guard("rm --apply --quarantine: the same, and restore puts the tag back"):
        x = Fresh("rmqsync", lambda f, env: t.audit(f.s.root, "rm", "beta", "--apply", "--yes", "--quarantine",
                                                     f.q, env=env))
        r, n = fault_at_dir(x, "library/beta")
        if t.ok(r, "rm --quarantine syncs the tag's directory before its blobs move"):
            synced_stop(r, "rm --apply --quarantine", "moved")
            t.eq([p for p in only_beta(x.s, x.a, x.b) if not os.path.exists(p)], [], "every blob of beta stays")
            r = t.run("restore", x.q, "--all")
            t.exit_code(r, 0, "restore --all")
            t.contains(r.out, "missing 0", "the quarantine accounts for the tag it holds")
            t.ok(os.path.exists(x.b["path"]), "beta's tag is back")

    with t.guard("restore: the manifest's directory sync fails, so no blob goes back before it lasts"):
        def restore_run(f, env):
            r = t.audit(f.s.root, "rm", "beta", "--apply", "--yes", "--quarantine", f.q)
            t.exit_code(r, 0, "rm into the quarantine (the fixture)")
            return t.run("restore", f.q, "--all", env=env)
        x = Fresh("restsync", restore_run)
        r, n = fault_at_dir(x, "library/beta")
        if t.ok(r, "restore syncs the manifest's directory before the blobs go back"):
            t.exit_code(r, 8, "restore")
            t.contains(r.out, "put back, but syncing its directory failed (Input/output error): nothing after "
                       "it is restored", "says the sync failed and it stops")
            t.eq([p for p in only_beta(x.s, x.a, x.b) if os.path.exists(p)], [], "no blob of beta is back yet")
            r = t.run("restore", x.q, "--all")
            t.exit_code(r, 0, "restore again")
            t.contains(r.out, "missing 0", "nothing missing")
            t.eq([p for p in [x.b["path"]] + blobs_of(x.s, x.b) if not os.path.exists(p)], [], "beta is whole")


# ---------------------------------------------------------------- mount points
def mount(*args):
    p = subprocess.run(["mount"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode == 0, p.stderr.decode(errors="replace").strip()


def umount(path):
    subprocess.run(["umount", "-l", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def mounted_on(target, how):
    """Mount something holding keep.txt on target: a tmpfs, or a bind mount
    of a directory on the same file system. (ok, why, the kept file)."""
    if how == "tmpfs":
        ok, why = mount("-t", "tmpfs", "-o", "size=1m", "oa-test", target)
    else:
        src = t.tempdir("bindsrc")
        ok, why = mount("--bind", src, target)
    keep = os.path.join(target, "keep.txt")
    if ok:
        with open(keep, "w") as f:
            f.write("not the store's\n")
    return ok, why, keep


MOUNTS = ("tmpfs", "bind")

if not t.IS_ROOT:
    t.skip("mount points: not root, cannot mount")
else:
    for how in MOUNTS:
        with t.guard("prune --apply: a %s mounted in a temp tree stays" % how):
            s, a, b = store("mnt" + how)
            tree = os.path.join(s.root, "ollama-safetensors123")
            os.makedirs(os.path.join(tree, "sub", "mnt"))
            open(os.path.join(tree, "sub", "junk"), "w").write("junk\n")
            ok, why, keep = mounted_on(os.path.join(tree, "sub", "mnt"), how)
            if not ok:
                t.skip("%s mount failed here: %s" % (how, why))
                continue
            try:
                r = t.audit(s.root, "prune", "--apply", "--yes", "--min-age", "0")
                t.ok(os.path.exists(keep), "what is mounted there is kept (%s)" % how, r.describe())
                t.exit_code(r, 8, "prune says it could not remove the whole tree")
                t.contains(r.out, "no removal crosses a mount point", "and why")
                t.ok(not os.path.exists(os.path.join(tree, "sub", "junk")), "the rest of the tree goes")
            finally:
                umount(os.path.join(tree, "sub", "mnt"))

        with t.guard("restore --empty --apply: a %s mounted in a quarantined tree stays" % how):
            s, a, b = store("qmnt" + how)
            tree = os.path.join(s.root, "ollama-safetensors77")
            os.makedirs(os.path.join(tree, "mnt"))
            open(os.path.join(tree, "junk"), "w").write("junk\n")
            q = os.path.join(t.tempdir("qmnt"), "q")
            r = t.audit(s.root, "prune", "--apply", "--yes", "--min-age", "0", "--quarantine", q)
            t.exit_code(r, 0, "prune --quarantine (the fixture)")
            moved = [os.path.join(q, "files", n) for n in os.listdir(os.path.join(q, "files"))
                     if os.path.isdir(os.path.join(q, "files", n, "mnt"))]
            if not t.ok(moved, "the temp tree is in the quarantine"):
                continue
            ok, why, keep = mounted_on(os.path.join(moved[0], "mnt"), how)
            if not ok:
                t.skip("%s mount failed here: %s" % (how, why))
                continue
            try:
                r = t.run("restore", q, "--empty", "--apply", "--yes")
                t.ok(os.path.exists(keep), "what is mounted there is kept (%s)" % how, r.describe())
                t.exit_code(r, 8, "restore --empty says it could not delete the whole tree")
                t.contains(r.out, "no removal crosses a mount point", "and why")
                t.ok(not os.path.exists(os.path.join(moved[0], "junk")), "the rest of the tree goes")
            finally:
                umount(os.path.join(moved[0], "mnt"))

t.done()
