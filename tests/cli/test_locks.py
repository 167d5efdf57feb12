#!/usr/bin/env python3
"""The write locks (docs/disk-space.md, "Locks"): where flock cannot lock
(NFS without its lock service: ENOLCK; also EINVAL, EOPNOTSUPP, ENOSYS),
prune/rm/dedupe --apply, restore and restore --empty --apply refuse (exit 8,
one line naming the error and --no-lock) for the store's lock and the
quarantine's alike, and never run unlocked without --no-lock; with it they
go on and say so. Two applies into one quarantine on such a filesystem lose
nothing: the second is refused (before, both ran unlocked and the first's
index write dropped the second's entries). Several stores are locked in one
order (device, inode), whatever the command line's.

The failing flock is the LD_PRELOAD shim's (tests/faultinject/faultinject.c,
OA_FAULT=flock:*:ENOLCK); without the shim those sections are skipped."""

import fcntl
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
SHIM = os.environ.get("OA_FAULTINJECT") or ""
HAVE_SHIM = bool(SHIM) and os.path.exists(SHIM)
OLD = time.time() - 3 * 86400  # past prune's --min-age


def shim_env(fault, **extra):
    e = {"LD_PRELOAD": SHIM, "OA_FAULT": fault,
         "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:verify_asan_link_order=0"}
    e.update(extra)
    return e


def store(tag, orphans=0):
    s = t.new_store(tag)
    a = t.add_gguf_model(s, "alpha:latest", seed="a", mtime=OLD)
    b = t.add_gguf_model(s, "beta:latest", seed="b", mtime=OLD)
    for i in range(orphans):
        s.add_blob(("orphan %d " % i).encode() * 40)
    s.age_all(7200)
    return s, a, b


def blobs_of(s, m):
    return [s.blob_path(x["digest"]) for x in [m["config"]] + m["layers"]]


def complete(s, m):
    return os.path.exists(m["path"]) and all(os.path.exists(p) for p in blobs_of(s, m))


def refused_for_locks(r, what, where):
    """exit 8, nothing on the way, and one line that says why and how to go on."""
    t.exit_code(r, 8, what)
    line = [ln for ln in r.err.splitlines() if "cannot lock" in ln]
    if t.ok(line, "%s: says it cannot lock" % what, r.describe()):
        t.contains(line[0], where, "%s: names what it could not lock" % what)
        t.contains(line[0], "No locks available", "%s: says flock's error" % what)
        t.contains(line[0], "--no-lock", "%s: says how to go on" % what)


def quarantined(s, tag):
    """A store with beta removed into a quarantine (locks work here)."""
    q = os.path.join(t.tempdir(tag + "q"), "q")
    r = t.audit(s.root, "rm", "beta", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm into the quarantine (the fixture)")
    return q


if not HAVE_SHIM:
    t.skip("flock failures: no fault-injection shim here (OA_FAULTINJECT: Linux with glibc only)")
else:
    with t.guard("flock fails with ENOLCK: every write refuses, exit 8, and says --no-lock"):
        s, a, b = store("enolck", orphans=3)
        env = shim_env("flock:*:ENOLCK")
        before = sorted(os.listdir(s.blobs))
        r = t.audit(s.root, "prune", "--apply", "--yes", env=env)
        refused_for_locks(r, "prune --apply", s.root)
        t.eq(sorted(os.listdir(s.blobs)), before, "prune removed nothing")
        r = t.audit(s.root, "rm", "beta", "--apply", "--yes", env=env)
        refused_for_locks(r, "rm --apply", s.root)
        t.ok(complete(s, b), "rm removed nothing")
        q = quarantined(s, "enolck")
        r = t.run("restore", q, "--all", env=env)
        refused_for_locks(r, "restore", s.root)
        t.ok(not os.path.exists(b["path"]), "restore put nothing back")
        r = t.run("restore", q, "--empty", "--apply", "--yes", env=env)
        refused_for_locks(r, "restore --empty --apply", q)
        t.ok(os.listdir(os.path.join(q, "files")), "restore --empty deleted nothing")
        r = t.run("restore", q, "--empty", env=env)
        t.exit_code(r, 0, "restore --empty without --apply (a dry run, no lock) still answers")

    with t.guard("EINVAL, EOPNOTSUPP, ENOSYS: refused the same way"):
        s, a, b = store("einval", orphans=1)
        for err, text in (("EINVAL", "Invalid argument"), ("EOPNOTSUPP", "Operation not supported"),
                          ("ENOSYS", "Function not implemented")):
            r = t.audit(s.root, "rm", "beta", "--apply", "--yes", env=shim_env("flock:*:" + err))
            t.exit_code(r, 8, "rm --apply, flock failing with " + err)
            t.contains(r.err, "cannot lock %s: %s" % (s.root, text), "says " + err)
            t.ok(complete(s, b), "nothing removed (%s)" % err)

    with t.guard("only the quarantine's lock fails: refused too"):
        s, a, b = store("qlock")
        q = os.path.join(t.tempdir("qlockq"), "q")
        # the store's lock is the first flock, the quarantine's the second
        r = t.audit(s.root, "rm", "beta", "--apply", "--yes", "--quarantine", q, env=shim_env("flock:2:ENOLCK"))
        refused_for_locks(r, "rm --apply --quarantine", q)
        t.ok(complete(s, b), "nothing moved")
        q = quarantined(s, "qlock2")
        r = t.run("restore", q, "--all", env=shim_env("flock:2:ENOLCK"))
        refused_for_locks(r, "restore (its quarantine's lock)", q)
        t.ok(not os.path.exists(b["path"]), "restore put nothing back")

    with t.guard("--no-lock: goes on where flock cannot lock, and says so"):
        s, a, b = store("nolock", orphans=2)
        env = shim_env("flock:*:ENOLCK")
        q = os.path.join(t.tempdir("nolockq"), "q")
        r = t.audit(s.root, "rm", "beta", "--apply", "--yes", "--no-lock", "--quarantine", q, env=env)
        t.exit_code(r, 0, "rm --apply --no-lock")
        t.ok(not os.path.exists(b["path"]), "beta removed")
        t.contains(r.err, "applied without a lock", "says it went on unlocked")
        r = t.run("restore", q, "--all", "--no-lock", env=env)
        t.exit_code(r, 0, "restore --no-lock")
        t.ok(complete(s, b), "beta back")
        t.contains(r.err, "restored without a lock", "says it went on unlocked")
        r = t.audit(s.root, "prune", "--apply", "--yes", "--no-lock", env=env)
        t.exit_code(r, 0, "prune --apply --no-lock")
        t.contains(r.err, "applied without a lock", "says so")
        t.ok(complete(s, a) and complete(s, b), "and keeps what the models use")
        r = t.audit(s.root, "prune", "--apply", "--yes", "--no-lock", "--min-age", "0")
        t.not_contains(r.err, "without a lock", "where locks work, --no-lock still locks and says nothing")

    with t.guard("--no-lock never passes a lock another run holds"):
        s, a, b = store("held")
        fd = os.open(s.root, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            r = t.audit(s.root, "rm", "beta", "--apply", "--yes", "--no-lock",
                        env={"OA_TEST_LOCK_WAIT_MS": "200"})
        finally:
            os.close(fd)
        t.exit_code(r, 8, "rm --apply --no-lock while another holds the lock")
        t.contains(r.err, "is busy", "says another run writes it")
        t.ok(complete(s, b), "nothing removed")

    with t.guard("prune and rm into one quarantine at once, flock failing: nothing is lost"):
        s, a, b = store("race", orphans=40)
        q = os.path.join(t.tempdir("raceq"), "q")
        pdir = t.tempdir("pause")
        env = shim_env("flock:*:ENOLCK")
        box = {}
        th = threading.Thread(target=lambda: box.setdefault("prune", t.audit(
            s.root, "prune", "--apply", "--yes", "--quarantine", q,
            env=dict(env, OA_TEST_APPLY_PAUSE=pdir))))
        th.start()
        # The prune stops before its first batch of blobs (if it runs at all):
        # the rm runs to its end meanwhile, then the prune goes on.
        paused = False
        while th.is_alive() and not paused:
            paused = "refresh-0" in os.listdir(pdir)
            time.sleep(0.01)
        box["rm"] = t.audit(s.root, "rm", "beta", "--apply", "--yes", "--quarantine", q, env=env)
        while th.is_alive():
            for n in os.listdir(pdir):
                if not n.startswith("."):
                    os.unlink(os.path.join(pdir, n))
            time.sleep(0.01)
        th.join()
        t.exit_code(box["prune"], 8, "the prune is refused")
        t.exit_code(box["rm"], 8, "the rm is refused")
        if os.path.exists(q):
            r = t.run("restore", q, "--all")
            t.contains(r.out, "missing 0", "restore --all: nothing missing")
        t.ok(complete(s, b), "beta is whole: in the store, or restored from the quarantine",
             [p for p in [b["path"]] + blobs_of(s, b) if not os.path.exists(p)])
        t.ok(complete(s, a), "alpha is whole")


# ---------------------------------------------------------------- lock order
def two_copies(tag):
    """Two stores holding copies of one model: dedupe --hardlink links them."""
    s1, s2 = t.new_store(tag + "1"), t.new_store(tag + "2")
    t.add_gguf_model(s1, "alpha:latest", seed="a")
    t.add_gguf_model(s2, "alpha:latest", seed="a")
    return s1, s2


def root_id(path):
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


with t.guard("dedupe --apply locks its stores in one order (device, inode), not the command line's"):
    s1, s2 = two_copies("order")
    first, second = sorted([s1, s2], key=lambda s: root_id(s.root))
    # the store that sorts first is busy: the dedupe naming the other first
    # must wait for it holding nothing (else two runs naming them in
    # opposite orders hold one each and wait for the other)
    fd = os.open(first.root, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    box, held_second = {}, 0
    th = threading.Thread(target=lambda: box.setdefault("r", t.run(
        "--store", second.root, "--store", first.root, "dedupe", "--hardlink", "--apply", "--yes",
        env={"OA_TEST_LOCK_WAIT_MS": "1500", "OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")})))
    th.start()
    while th.is_alive():
        probe = os.open(second.root, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held_second += 1
        finally:
            os.close(probe)  # and the probe's lock goes
        time.sleep(0.01)
    th.join()
    os.close(fd)
    t.exit_code(box["r"], 8, "the dedupe gives up on the busy store")
    t.contains(box["r"].err, "is busy", "says which store is busy")
    t.eq(held_second, 0, "it never held the other store while it waited (probes that found it locked)")

with t.guard("dedupe --apply A B and B A at once: both finish"):
    s1, s2 = two_copies("ab")
    box = {}
    env = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")}
    args = ("dedupe", "--hardlink", "--apply", "--yes")
    ths = [threading.Thread(target=lambda k=k, x=x, y=y: box.setdefault(k, t.run(
        "--store", x.root, "--store", y.root, *args, env=env))) for k, x, y in (("ab", s1, s2), ("ba", s2, s1))]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    for k in ("ab", "ba"):
        t.not_contains(box[k].err, "is busy", "dedupe %s never gives up on a lock" % k)
        t.ok(box[k].code in (0, 8) and not box[k].code & ~8, "dedupe %s: exit %s" % (k, box[k].code),
             box[k].describe())

t.done()
