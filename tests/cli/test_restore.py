#!/usr/bin/env python3
"""`restore DIR` against everything else that writes a store: a prune
--apply while a restore runs, two applies into one quarantine at once, a
SIGTERM during a restore (then a prune, then a re-run), restore as root
into a store owned by another user, restore from another directory."""

import fcntl
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
OLD = time.time() - 3 * 86400  # well past prune's default --min-age (1h)


def env(**extra):
    e = dict(os.environ)
    e.pop("OLLAMA_MODELS", None)
    e["HOME"] = t.tempdir("home")
    e["ASAN_OPTIONS"] = "detect_leaks=0"
    e.update(extra)
    return e


def start(*args, **extra):
    """The binary in the background, stdout and stderr to files (a pipe
    nobody reads would block it)."""
    d = t.tempdir("bg")
    out, err = open(os.path.join(d, "out"), "w+"), open(os.path.join(d, "err"), "w+")
    p = subprocess.Popen([t.BIN] + [str(a) for a in args], env=env(**extra), cwd="/",
                         stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    p.out, p.err = out, err
    return p


def finish(p, timeout=120):
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        t.fail("timeout: %s" % " ".join(p.args))
    p.out.seek(0)
    p.err.seek(0)
    return t.Result(p.args[1:], p.returncode, p.out.read(), p.err.read())


def wait_for(cond, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            t.fail("never happened: %s" % what)
            return False
        time.sleep(0.01)
    return True


def store(tag):
    s = t.new_store(tag)
    a = t.add_gguf_model(s, "alpha:latest", seed="a", mtime=OLD)
    b = t.add_gguf_model(s, "beta:latest", seed="b", mtime=OLD)
    for d, _, files in os.walk(s.blobs):
        for f in files:
            os.utime(os.path.join(d, f), (OLD, OLD))
    return s, a, b


def blobs_of(s, m):
    return [s.blob_path(x["digest"]) for x in [m["config"]] + m["layers"]]


def complete(s, m):
    return os.path.exists(m["path"]) and all(os.path.exists(p) for p in blobs_of(s, m))


def errors(s):
    r = t.audit(s.root, "check", "--format", "json")
    return [f["code"] for f in t.findings_of(r.json()) if f["severity"] == "error"]


def pauses(pdir):
    return sorted(n for n in os.listdir(pdir) if not n.startswith("."))


def pause_at(p, pdir, n):
    """Let the restore p (OA_TEST_RESTORE_PAUSE=pdir) go on up to the pause
    before its entry n: entries 1..n-1 are done. False if it ended first."""
    def there():
        for name in pauses(pdir):
            if name == "entry-%d" % n:
                return True
            os.unlink(os.path.join(pdir, name))
        return p.poll() is not None
    return wait_for(there, "restore pauses before entry %d" % n) and p.poll() is None


def restore_paused(tag):
    """A store with alpha removed into a quarantine, and a restore of it
    running with OA_TEST_RESTORE_PAUSE: (store, alpha, quarantine, restore,
    pause dir)."""
    s, a, _ = store(tag)
    q = os.path.join(t.tempdir(tag + "q"), "q")
    r = t.audit(s.root, "rm", "alpha", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm into the quarantine")
    pdir = t.tempdir("pause")
    return s, a, q, start("restore", q, "--all", OA_TEST_RESTORE_PAUSE=pdir), pdir


def back_complete(s, a, r, what):
    t.contains(r.out, "missing 0", "%s says nothing is missing" % what)
    t.ok(complete(s, a), "alpha complete after %s" % what, [p for p in blobs_of(s, a) if not os.path.exists(p)])
    t.eq(errors(s), [], "check finds no error after %s" % what)


def release(p, pdir):
    while p.poll() is None:
        for name in pauses(pdir):
            os.unlink(os.path.join(pdir, name))
        time.sleep(0.01)


with t.guard("prune --apply while a restore runs: nothing restored is removed"):
    s, a, q, rs, pdir = restore_paused("race")
    # the restore stops after its first entry; a nightly prune comes now
    if t.ok(pause_at(rs, pdir, 2), "the restore pauses after its first entry"):
        pr = start("--store", s.root, "prune", "--apply", "--yes")
        # let the prune run (or wait on the restore) for a while, then let the restore go on
        try:
            pr.wait(5)
        except subprocess.TimeoutExpired:
            pass
        release(rs, pdir)
        rr, prr = finish(rs), finish(pr)
        t.exit_code(rr, 0, "restore")
        t.ok(prr.code in (0, 1), "the prune ran: exit %s\n%s" % (prr.code, prr.describe()))
        back_complete(s, a, rr, "the restore and the prune")

with t.guard("two applies into one quarantine at once: restore brings back both"):
    s, a, b = store("two")
    q = os.path.join(t.tempdir("twoq"), "q")
    slow = start("--store", s.root, "rm", "alpha", "--apply", "--yes", "--quarantine", q,
                 OA_TEST_APPLY_DELAY_US="700000")
    wait_for(lambda: os.path.getsize(slow.out.name) > 0 or slow.poll() is not None,
                       "the slow rm moves its first entry")
    r = t.audit(s.root, "rm", "beta", "--apply", "--yes", "--quarantine", q, timeout=120)
    t.exit_code(r, 0, "the second rm, while the first runs")
    r1 = finish(slow)
    t.exit_code(r1, 0, "the first rm")
    t.ok(not os.path.exists(a["path"]) and not os.path.exists(b["path"]), "both manifests moved")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore")
    t.contains(r.out, "missing 0", "restore says nothing is missing")
    t.ok(complete(s, a), "alpha back")
    t.ok(complete(s, b), "beta back")
    t.eq(errors(s), [], "check finds no error")

with t.guard("SIGTERM during restore: exit 32, a prune, then a re-run completes it"):
    s, a, q, rs, pdir = restore_paused("term")
    if t.ok(pause_at(rs, pdir, 3), "the restore pauses after its second entry"):
        rs.send_signal(signal.SIGTERM)
        release(rs, pdir)
        rr = finish(rs)
        t.exit_code(rr, 32, "restore stopped by SIGTERM")
        t.contains(rr.out, "interrupted", "the summary says it was interrupted")
        idx = json.load(open(os.path.join(q, "index.json")))
        t.ok(idx.get("entries") is not None, "the index is readable")
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.ok(r.code in (0, 1), "a prune between the two restores: exit %s" % r.code)
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "the re-run")
    back_complete(s, a, r, "the re-run")

with t.guard("a tag a pull makes while restore puts a symlink tag back is never replaced"):
    s = t.new_store("noreplace")
    gguf = t.oa.tiny_llama_gguf(name="delta")
    layers = [s.layer("model", gguf)]
    digest, _ = s.add_manifest_blob(t.oa.gguf_config(s, gguf, layers), layers)
    tag = s.add_v2_tag("delta:latest", digest)  # a relative symlink to the manifest blob
    s.age_all(7200)
    q = os.path.join(t.tempdir("noreplaceq"), "q")
    r = t.audit(s.root, "rm", "delta", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm delta into the quarantine")
    t.ok(not os.path.lexists(tag), "its symlink tag moved")
    pdir = t.tempdir("putpause")
    rs = start("restore", q, "--all", OA_TEST_RESTORE_PAUSE=pdir)

    def at_first_put():
        for name in pauses(pdir):
            if name == "put-1":
                return True
            os.unlink(os.path.join(pdir, name))
        return rs.poll() is not None
    if t.ok(wait_for(at_first_put, "restore pauses before it puts the tag back") and rs.poll() is None,
            "the restore looked, found no tag, and waits before its move"):
        pulled = b'{"schemaVersion":2,"note":"a pull landed here"}'
        with open(tag, "wb") as f:  # what a pull writes in between
            f.write(pulled)
        release(rs, pdir)
        rr = finish(rs)
        t.exit_code(rr, 4, "a conflict")
        t.contains(rr.out, "CONFLICT", "the restore says so")
        t.ok(not os.path.islink(tag) and open(tag, "rb").read() == pulled, "the pulled tag is untouched")
        idx = json.load(open(os.path.join(q, "index.json")))
        kept = [e for e in idx["entries"] if e["path"].startswith("manifests-v2/") and e["type"] == "symlink"]
        t.ok(kept and os.path.islink(os.path.join(q, kept[0]["stored"])), "the quarantined tag is kept", kept)

with t.guard("a store or quarantine held by another writer: a bounded wait, then a clear refusal"):
    s, a, b = store("busy")
    q = os.path.join(t.tempdir("busyq"), "q")
    r = t.audit(s.root, "rm", "beta", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm beta into the quarantine")
    orphan = s.add_blob(b"an old orphan" * 100, mtime=OLD)
    fast = {"OA_TEST_LOCK_WAIT_MS": "200"}
    holder = os.open(s.root, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # what a running apply or restore holds
    twin = t.new_store("busy2")
    t.add_gguf_model(twin, "alpha:latest", seed="a", mtime=OLD)  # the same blobs: dedupe has work
    before = t.snapshot(s.root)
    for what, args in (("prune", ("--store", s.root, "prune", "--apply", "--yes")),
                       ("rm", ("--store", s.root, "rm", "alpha", "--apply", "--yes")),
                       ("dedupe", ("--store", twin.root, "--store", s.root, "dedupe", "--hardlink", "--apply",
                                   "--yes")),
                       ("restore", ("restore", q, "--all"))):
        r = t.run(*args, env=fast)
        t.ok(r.code & 8, "%s: exit 8 while the store is held" % what, r.describe())
        t.contains(r.err, "is busy", "%s says the store is busy" % what)
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing changed in the store")
    os.close(holder)
    holder = os.open(q, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    r = t.audit(s.root, "rm", "alpha", "--apply", "--yes", "--quarantine", q, env=fast)
    t.exit_code(r, 8, "rm into a quarantine another apply holds")
    t.contains(r.err, "is busy", "it says the quarantine is busy")
    t.ok(os.path.exists(a["path"]), "alpha untouched")
    os.close(holder)
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore once nobody holds them")
    t.ok(complete(s, b), "beta back")

with t.guard("restore as root re-creates directories as their parent's owner and mode"):
    if not t.IS_ROOT:
        t.skip("chown to another user needs root; run the suite as root to check it")
    else:
        s, a, b = store("owner")
        c = t.add_gguf_model(s, "hf.co/someone/gamma:q4", seed="c", mtime=OLD)
        for d, dirs, files in os.walk(s.root):
            for n in dirs + files:
                os.lchown(os.path.join(d, n), 4321, 4321)
        os.chown(s.root, 4321, 4321)
        host = os.path.join(s.manifests, "hf.co")
        os.chmod(os.path.join(s.manifests), 0o750)
        q = os.path.join(t.tempdir("ownq"), "q")
        r = t.audit(s.root, "rm", "hf.co/someone/gamma:q4", "--apply", "--yes", "--quarantine", q)
        t.exit_code(r, 0, "rm gamma (its directories go too)")
        t.ok(not os.path.exists(host), "hf.co/ removed")
        r = t.run("restore", q, "--all")
        t.exit_code(r, 0, "restore as root")
        for d in (host, os.path.join(host, "someone"), os.path.dirname(c["path"])):
            st = os.stat(d)
            t.eq((st.st_uid, st.st_gid, st.st_mode & 0o7777), (4321, 4321, 0o750),
                 "%s: owner and mode of manifests/" % os.path.relpath(d, s.root))

with t.guard("restore from another directory than the apply's"):
    s, a, b = store("cwd")
    base = os.path.dirname(s.root)
    r = t.run("--store", "models", "rm", "alpha", "--apply", "--yes", "--quarantine", "q", cwd=base)
    t.exit_code(r, 0, "rm with a relative store and quarantine")
    r = t.run("--store", "models", "rm", "beta", "--plan", "plan.json", cwd=base)
    t.exit_code(r, 0, "a plan with a relative store")
    plan = json.load(open(os.path.join(base, "plan.json")))
    t.ok(os.path.isabs(plan["store"]), "the plan names the store by its absolute path: %s" % plan["store"])
    r = t.run("restore", os.path.join(base, "q"), "--all", cwd="/")
    t.exit_code(r, 0, "restore from /")
    t.ok(complete(s, a), "alpha back")

t.done()
