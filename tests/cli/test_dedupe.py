#!/usr/bin/env python3
"""dedupe: plan (dry run), --hardlink only for one owner, refusal across
owners, apply with sha256 on both sides, digest mismatch, a running server,
and reflinks where the test filesystem supports them (skipped with a note
where it does not: ext4 and tmpfs cannot reflink).

Ownership: the stores are chown()ed to uids 23002 (alice) and 23003 (bob);
the names come from OLLAMA_AUDIT_PASSWD (a testing aid). Without root the
chown is skipped: every store then has one owner, the user running the
tests, and hard links between "alice's" and "bob's" stores are allowed.
"""
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import multistore as ms  # noqa: E402

t.check_binary()
base = t.tempdir("dedupe")
os.chmod(base, 0o755)
passwd = os.path.join(base, "passwd")
with open(passwd, "w") as f:
    f.write("alice:x:%d:%d::/home/alice:/bin/sh\nbob:x:%d:%d::/home/bob:/bin/sh\n"
            % (ms.UIDS["alice"], ms.GID, ms.UIDS["bob"], ms.GID))
ENV = {"OLLAMA_AUDIT_PASSWD": passwd}
# Without root "bob's" stores are the test user's, like alice's: one owner.
CROSS_OWNER = ms.IS_ROOT


def store(name, owner, models=("shared:latest",), where=None):
    root = os.path.join(where or base, name, "models")
    s, infos = ms.make_store(root, list(models))
    ms.chown_tree(os.path.dirname(root), ms.UIDS[owner])
    return s, infos


def run(*args, env=None, **kw):
    return t.run(*args, env=dict(ENV, **(env or {})), input=b"", **kw)


# The plan's shape whatever /tmp is: the reflink probe answers yes.
CAN = {"OA_TEST_REFLINK": "yes"}


def ino(path):
    return os.stat(path).st_ino


def blobs(s):
    return sorted(n for n in os.listdir(s.blobs) if n.startswith("sha256-"))


def no_temps(*stores):
    for s in stores:
        left = [n for n in os.listdir(s.blobs) if n.startswith(".oa-dedupe")]
        t.eq(left, [], "no dedupe temporary left in %s" % s.blobs)


a1, a1info = store("a1", "alice", ("shared:latest", "a1-own:latest"))
a2, _ = store("a2", "alice")
b, _ = store("b", "bob")
shared = [l["digest"] for l in a1info[0]["layers"]] + [a1info[0]["config"]["digest"]]
shared_files = ["sha256-" + d[7:] for d in shared]

with t.guard("dry run: the default plan (reflinks)"):
    snap = {s.root: t.snapshot(s.root) for s in (a1, a2, b)}
    r = run("--store", a1.root, "--store", a2.root, "--store", b.root, "dedupe", "--format", "json", env=CAN)
    t.exit_code(r, 0)
    doc = r.json()
    t.eq(doc.get("schema"), "ollama-audit.dedupe/2", "schema")
    t.eq(doc.get("host"), ms.host(), "host")
    acts = doc.get("actions", [])
    planned = [a for a in acts if a["status"] == "planned"]
    t.eq(len(planned), 2 * len(shared), "every shared blob: a2 and b get a reflink of a1's copy")
    t.ok(all(a["how"] == "reflink" and a["keep"] == a1.root for a in planned), "keep a1's copies", planned)
    t.eq(sorted({a["replace"] for a in planned}), sorted([a2.root, b.root]), "replace a2's and b's")
    t.eq(doc.get("summary", {}).get("applied"), False, "not applied")
    want = sum(os.stat(os.path.join(s.blobs, n)).st_blocks * 512 for s in (a2, b) for n in shared_files)
    t.eq(doc.get("summary", {}).get("planned_bytes"), want, "bytes a dry run says it frees")
    for s in (a1, a2, b):
        t.eq(t.diff_snapshots(snap[s.root], t.snapshot(s.root)), [], "dry run changes nothing in %s" % s.root)
    r = run("--store", a1.root, "--store", a2.root, "--store", b.root, "dedupe", env=CAN)
    t.exit_code(r, 0)
    t.contains(r.out, "dry run: %d duplicates would be replaced by reflinks" % (2 * len(shared)), "table footer")

with t.guard("--hardlink: same owner only"):
    r = run("--store", a1.root, "--store", a2.root, "--store", b.root, "dedupe", "--hardlink", "--format", "json")
    t.exit_code(r, 0)
    acts = r.json().get("actions", [])
    to_a2 = [a for a in acts if a["replace"] == a2.root]
    to_b = [a for a in acts if a["replace"] == b.root]
    t.ok(to_a2 and all(a["status"] == "planned" and a["how"] == "hardlink" for a in to_a2),
         "alice -> alice: planned hard links", to_a2)
    if CROSS_OWNER:
        t.ok(to_b and all(a["status"] == "refused-owner" for a in to_b), "alice -> bob: refused", to_b)
        t.ok(all("across users" in a.get("note", "") for a in to_b), "the refusal says why")
        t.ok(all(a["keep_user"] == "alice" and a["replace_user"] == "bob" for a in to_b), "user names")
    else:
        me = ms.user_name(passwd, os.geteuid())
        t.ok(to_b and all(a["status"] == "planned" and a["how"] == "hardlink" for a in to_b),
             "one real owner (not root): b gets planned hard links too", to_b)
        t.ok(all(a["keep_user"] == me and a["replace_user"] == me for a in to_b), "user names: %s" % me, to_b)
        t.skip("not root: every store has one owner; the cross-owner refusal is not tested")

with t.guard("--apply needs --yes without a terminal"):
    snap = t.snapshot(a2.root)
    r = run("--store", a1.root, "--store", a2.root, "dedupe", "--hardlink", "--apply")
    t.exit_code(r, 16)
    t.contains(r.err, "--yes", "says to add --yes")
    t.eq(t.diff_snapshots(snap, t.snapshot(a2.root)), [], "nothing changed")
    r = run("--store", a1.root, "list", "--hardlink")
    t.exit_code(r, 16, "--hardlink on another command")

with t.guard("apply hard links between alice's stores"):
    bsnap = t.snapshot(b.root)
    r = run("--store", a1.root, "--store", a2.root, "--store", b.root, "dedupe", "--hardlink", "--apply", "--yes",
            "--format", "json")
    t.exit_code(r, 0)
    doc = r.json()
    done = [a for a in doc.get("actions", []) if a["status"] == "done"]
    t.eq(len([a for a in done if a["replace"] == a2.root]), len(shared), "every shared blob of a2 replaced")
    t.eq(doc.get("summary", {}).get("applied"), True, "applied")
    for n in shared_files:
        t.eq(ino(os.path.join(a2.blobs, n)), ino(os.path.join(a1.blobs, n)), "a2's %s is a1's inode" % n[:19])
    if CROSS_OWNER:
        t.eq(len(done), len(shared), "nothing but a2's blobs replaced")
        for n in shared_files:
            t.ne(ino(os.path.join(b.blobs, n)), ino(os.path.join(a1.blobs, n)), "bob's %s is his own" % n[:19])
        t.eq(t.diff_snapshots(bsnap, t.snapshot(b.root)), [], "bob's store untouched")
    else:
        # one real owner: b is linked like a2 (the cross-owner case needs root)
        t.eq(len(done), 2 * len(shared), "a2's and b's shared blobs replaced: same owner")
        for n in shared_files:
            t.eq(ino(os.path.join(b.blobs, n)), ino(os.path.join(a1.blobs, n)), "b's %s is a1's inode" % n[:19])
        t.exit_code(run("--store", b.root, "verify"), 0, "b verifies after the switch")
    r = run("--store", a2.root, "verify")
    t.exit_code(r, 0, "a2 verifies after the switch")
    r = run("--store", a2.root, "list", "--format", "json")
    t.eq(len(r.json()["stores"][0]["models"]), 1, "a2 still lists its model")
    r = run("--store", a1.root, "--store", a2.root, "du", "--duplicates", "--format", "json")
    tot = r.json().get("total", {})
    t.eq(tot.get("saving_bytes"), 0, "nothing left to save between a1 and a2")
    t.ok(tot.get("already_shared_bytes", 0) > 0, "already shared bytes reported", tot)
    r = run("--store", a1.root, "--store", a2.root, "dedupe", "--hardlink", "--format", "json")
    t.eq([a for a in r.json().get("actions", []) if a["status"] == "planned"], [], "a second plan is empty")
    no_temps(a1, a2, b)

where, mounted, why = base, None, None
supported = t.can_reflink(base)
if not supported:
    mounted, why = t.mount_btrfs()
    if mounted:
        where, supported = mounted, t.can_reflink(mounted)
        why = None if supported else "cp --reflink fails on the btrfs mount"
    else:
        print("note: no reflink-capable filesystem for this test (%s)" % why)


PAUSE = {}  # the pause directory of the running run_with_pauses


def run_with_pauses(args, on_pause):
    """Run the binary with OA_TEST_DEDUPE_PAUSE: at every pause point
    (<point>-<action index>) call on_pause(point, index), then let it go on.
    Returns (result, the pause points seen in order)."""
    pdir = t.tempdir("pause")
    PAUSE["dir"] = pdir
    env = dict(ENV, OA_TEST_DEDUPE_PAUSE=pdir)
    box = {}
    th = threading.Thread(target=lambda: box.setdefault("r", t.run(*args, env=env, input=b"")))
    th.start()
    seen = []
    def pending():
        return sorted(n for n in os.listdir(pdir) if not n.startswith("."))  # .x: being written

    while th.is_alive() or pending():
        for n in pending():
            point, idx = n.rsplit("-", 1)
            on_pause(point, int(idx))
            seen.append(n)
            os.unlink(os.path.join(pdir, n))
        time.sleep(0.005)
    th.join()
    return box["r"], seen


with t.guard("reflinks (where the filesystem supports them)"):
    if True:
        c1, _ = store("c1", "alice", where=where)
        c2, _ = store("c2", "bob", where=where)
        before = {n: (ino(os.path.join(c2.blobs, n)), ms.sha256_file(os.path.join(c2.blobs, n))) for n in blobs(c2)}
        r = run("--store", c1.root, "--store", c2.root, "dedupe", "--apply", "--yes", "--format", "json")
        acts = r.json().get("actions", [])
        if not supported:
            t.skip("reflink apply: the test filesystem (%s) cannot reflink; checking the clean refusal"
                   % subprocess.run(["stat", "-f", "-c", "%T", base], stdout=subprocess.PIPE).stdout.decode().strip())
            t.exit_code(r, 8, "--apply that can do nothing it was asked: exit 8")
            t.ok(acts and all(a["status"] == "reflink-unsupported" for a in acts), "status reflink-unsupported", acts)
            after = {n: (ino(os.path.join(c2.blobs, n)), ms.sha256_file(os.path.join(c2.blobs, n))) for n in blobs(c2)}
            t.eq(after, before, "bob's blobs unchanged")
        else:
            t.exit_code(r, 0)
            t.ok(acts and all(a["status"] == "done" for a in acts), "reflinks done", acts)
            for n in blobs(c2):
                p = os.path.join(c2.blobs, n)
                t.ne(ino(p), before[n][0], "%s replaced (new inode)" % n[:19])
                t.ne(ino(p), ino(os.path.join(c1.blobs, n)), "%s is not a hard link" % n[:19])
                t.eq(ms.sha256_file(p), n[7:], "%s content" % n[:19])
                if ms.IS_ROOT:
                    t.eq(os.stat(p).st_uid, ms.UIDS["bob"], "%s keeps bob as owner" % n[:19])
            t.exit_code(run("--store", c2.root, "verify"), 0, "bob's store verifies")
            print("reflink apply tested on %s" % subprocess.run(["stat", "-f", "-c", "%T", where],
                                                                stdout=subprocess.PIPE).stdout.decode().strip())
            # Copies that already share their extents are not cloned again.
            r = run("--store", c1.root, "--store", c2.root, "dedupe", "--format", "json")
            t.exit_code(r, 0)
            t.eq([a for a in r.json().get("actions", []) if a["status"] == "planned"], [],
                 "after a reflink apply a second dedupe plans nothing")
            r = run("--store", c1.root, "--store", c2.root, "du", "--duplicates", "--format", "json")
            tot = r.json().get("total", {})
            t.eq(tot.get("linkable_bytes"), 0, "reflinked copies: nothing left for dedupe", tot)
            t.ok(tot.get("already_shared_bytes", 0) > 0, "reflinked copies count as already shared", tot)
        no_temps(c1, c2)

with t.guard("an honest dry run: reflinks are tested before they are promised"):
    fstype = subprocess.run(["stat", "-f", "-c", "%T", base], stdout=subprocess.PIPE).stdout.decode().strip()
    e1, _ = store("e1", "alice", where=base)
    e2, _ = store("e2", "alice", where=base)
    snap = {s.root: t.snapshot(s.root) for s in (e1, e2)}
    r = run("--store", e1.root, "--store", e2.root, "dedupe", "--format", "json")
    t.exit_code(r, 0, "a dry run")
    doc = r.json()
    acts = doc.get("actions", [])
    summ = doc.get("summary", {})
    for s in (e1, e2):
        t.eq(t.diff_snapshots(snap[s.root], t.snapshot(s.root)), [], "the probe leaves nothing in %s" % s.root)
    if shutil.which("strace") and subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"]).returncode == 0:
        # Read-only by default: the probe's unnamed scratch file goes to the
        # store root's parent, never inside a store.
        roots = [os.path.realpath(s.root) for s in (e1, e2)]
        # However the store is spelled: S/blobs/.. and, from inside blobs/, ..
        for spelling, cwd in ((e2.root, None), (os.path.join(e2.root, "blobs", ".."), None),
                              ("..", os.path.join(e2.root, "blobs"))):
            trace = os.path.join(t.tempdir("probe-strace"), "trace")
            subprocess.run(["strace", "-f", "-qq", "-y", "-e", "trace=open,openat", "-o", trace, t.BIN,
                            "--store", e1.root, "--store", spelling, "dedupe"], cwd=cwd,
                           env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0", **ENV), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=120)
            writes = [l.strip() for l in open(trace, errors="replace")
                      if re.search(r"O_(WRONLY|RDWR|CREAT|TMPFILE)", l)]
            t.eq([l for l in writes if any(r in l for r in roots)], [],
                 "--store %s: the dry run opens nothing for writing inside a store" % spelling)
            t.ok(any("O_TMPFILE" in l for l in writes), "--store %s: the probe ran (an unnamed file beside "
                 "the store)" % spelling, writes)
    else:
        t.skip("strace cannot trace here: the probe's scratch location is not checked")
    if t.can_reflink(base):
        t.ok(acts and all(a["status"] == "planned" for a in acts), "%s reflinks: planned" % fstype, acts)
        t.skip("the no-reflink case: this machine's %s can reflink" % fstype)
    else:
        t.ok(acts and all(a["status"] == "reflink-unsupported" for a in acts),
             "%s cannot reflink: no reflink is promised" % fstype, acts)
        t.ok(all("--hardlink" in a.get("note", "") for a in acts), "each says --hardlink would work", acts)
        t.eq(summ.get("planned"), 0, "nothing planned")
        t.eq(summ.get("planned_bytes"), 0, "nothing promised")
        want = sum(os.stat(os.path.join(e2.blobs, n)).st_blocks * 512 for n in blobs(e2))
        t.eq(summ.get("hardlink_planned_bytes"), want, "what --hardlink would free instead")
        r = run("--store", e1.root, "--store", e2.root, "dedupe")
        t.contains(r.out, "dry run: 0 duplicates would be replaced by reflinks", "the table promises nothing", r.out)
        t.contains(r.out, "`dedupe --hardlink` would replace %d" % len(blobs(e2)), "and suggests --hardlink", r.out)
        r = run("--store", e1.root, "--store", e2.root, "dedupe", "--apply", "--yes")
        t.exit_code(r, 8, "--apply with reflinks on %s: nothing it was asked for can be done" % fstype)
        t.eq(t.diff_snapshots(snap[e2.root], t.snapshot(e2.root)), [], "nothing changed")
        r = run("--store", e1.root, "--store", e2.root, "stores", env={"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")})
        t.contains(r.out, "`dedupe --hardlink` can free", "stores says which method can free it here", r.out)
    if mounted or supported:
        w = mounted or base
        f1, _ = store("f1", "alice", where=w)
        f2, _ = store("f2", "alice", where=w)
        fsnap = t.snapshot(f2.root)
        r = run("--store", f1.root, "--store", f2.root, "dedupe", "--format", "json")
        acts = r.json().get("actions", [])
        t.eq(t.diff_snapshots(fsnap, t.snapshot(f2.root)), [], "a successful probe leaves nothing either")
        t.ok(acts and all(a["status"] == "planned" and a["how"] == "reflink" for a in acts),
             "on a filesystem that reflinks, reflinks are planned", acts)
        r = run("--store", f1.root, "--store", f2.root, "stores", env={"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")})
        t.contains(r.out, "`dedupe` can free", "stores: reflinks free it here", r.out)
    else:
        t.skip("no filesystem that can reflink (%s)" % why)

with t.guard("dedupe never plans junk: a copy nothing references is prune's"):
    j1, _ = store("j1", "alice", ("shared:latest",))
    j2, j2info = store("j2", "alice", ("shared:latest",))
    # j2's manifest goes: its blobs are orphans there, junk that prune removes
    os.unlink(j2info[0]["path"])
    r = run("--store", j1.root, "--store", j2.root, "dedupe", "--hardlink", "--format", "json")
    t.exit_code(r, 0)
    acts = r.json().get("actions", [])
    t.ok(acts and all(a["status"] == "junk" for a in acts), "every copy in j2 is junk, not planned", acts)
    t.ok(all("prune" in a.get("note", "") for a in acts), "the note says prune removes it", acts)
    t.eq(r.json().get("summary", {}).get("planned_bytes"), 0, "nothing promised")
    r = run("--store", j1.root, "--store", j2.root, "dedupe", "--hardlink")
    t.contains(r.out, "that nothing references left alone: `prune` removes them", "the table says so", r.out)

with t.guard("reflink: the kept copy rewritten between actions (mtime restored) reaches no other store"):
    if not supported:
        t.skip("no reflink-capable filesystem (%s)" % why)
    else:
        k1, _ = store("k1", "alice", where=where)
        v1, _ = store("v1", "bob", where=where)
        v2, _ = store("v2", "bob", where=where)
        args = ("--store", k1.root, "--store", v1.root, "--store", v2.root, "dedupe", "--format", "json")
        plan = run(*args).json().get("actions", [])
        idx = [i for i, a in enumerate(plan) if a["digest"] == shared[0] and a["status"] == "planned"]
        t.eq([plan[i]["replace"] for i in idx], [v1.root, v2.root], "k1's copy is kept for v1 and v2")
        attack_at = idx[1]
        src = os.path.join(k1.blobs, shared_files[0])
        victim = os.path.join(v2.blobs, shared_files[0])

        def attack(point, i):
            # alice rewrites her kept copy after the first action, in place,
            # and puts its mtime back: size, inode and mtime are as scanned
            if point == "clone" and i == attack_at:
                st = os.stat(src)
                data = bytearray(open(src, "rb").read())
                data[0] ^= 0xFF
                with open(src, "r+b") as f:
                    f.write(data)
                os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))

        r, seen = run_with_pauses(args + ("--apply", "--yes"), attack)
        t.ok("clone-%d" % attack_at in seen, "the attack ran before the second clone", seen)
        t.exit_code(r, 4, "a kept copy that does not hash to its digest")
        acts = r.json().get("actions", [])
        t.eq(acts[attack_at].get("status") if len(acts) > attack_at else None, "digest-mismatch",
             "the poisoned clone is reported as a mismatch")
        t.eq(ms.sha256_file(victim), shared_files[0][7:], "bob's copy in v2 still has its digest")
        t.exit_code(run("--store", v2.root, "verify"), 0, "v2 verifies")
        t.exit_code(run("--store", v1.root, "verify"), 0, "v1 verifies")
        no_temps(k1, v1, v2)

with t.guard("reflink: a corrupt kept copy: the next copy that verifies is kept"):
    if not supported:
        t.skip("no reflink-capable filesystem (%s)" % why)
    else:
        f1, _ = store("f1", "alice", where=where)
        f2, _ = store("f2", "bob", where=where)
        f3, _ = store("f3", "bob", where=where)
        bad = os.path.join(f1.blobs, shared_files[0])
        data = bytearray(open(bad, "rb").read())
        data[10] ^= 0x55
        with open(bad, "r+b") as f:
            f.write(data)
        r = run("--store", f1.root, "--store", f2.root, "--store", f3.root, "dedupe", "--apply", "--yes",
                "--format", "json")
        t.exit_code(r, 4, "a corrupt copy was found")
        acts = [a for a in r.json().get("actions", []) if a["digest"] == shared[0]]
        t.eq([a["status"] for a in acts], ["digest-mismatch", "done"], "f2's copy is kept, f3's replaced", acts)
        t.ok(len(acts) == 2 and acts[1]["keep"] == f2.root, "f3 is a reflink of f2's good copy", acts)
        t.ok(acts and "corrupt" in acts[0].get("note", ""), "says the kept copy is corrupt", acts)
        for s in (f2, f3):
            t.eq(ms.sha256_file(os.path.join(s.blobs, shared_files[0])), shared_files[0][7:], "%s intact" % s.root)
        t.eq(bytes(data), open(bad, "rb").read(), "the corrupt copy is left alone")
        no_temps(f1, f2, f3)

with t.guard("fewer than two stores: a usage error (16), or 8 when a store failed to open"):
    one, _ = store("one", "alice")
    for cmd in (("dedupe",), ("du", "--duplicates")):
        r = run("--store", one.root, *cmd)
        t.exit_code(r, 16, "%s with one store" % " ".join(cmd))
        t.contains(r.err, "two or more stores", "says why")
        r = run("--store", one.root, "--store", os.path.join(base, "no-such-store"), *cmd)
        t.exit_code(r, 8, "%s: the second store cannot be opened" % " ".join(cmd))

with t.guard("store paths with terminal escapes are printed escaped"):
    evil = os.path.join(base, "evil\x1b]0;owned\x07\x1b[2J")
    os.makedirs(evil)
    x1, _ = store("x1", "alice", where=evil)
    x2, _ = store("x2", "alice", where=evil)
    for cmd in (("dedupe",), ("dedupe", "--hardlink"), ("du", "--duplicates"), ("du",)):
        r = run("--store", x1.root, "--store", x2.root, *cmd)
        t.ok("\x1b" not in r.out and "\x07" not in r.out, "%s: no raw escape on stdout" % " ".join(cmd),
             r.out[:400])
        t.contains(r.out, "evil\\x1b]0;owned\\x07", "%s: the path is shown escaped" % " ".join(cmd))


def run_tty(args, answer):
    r = t.run_tty(args, answer, env=ENV)
    return r.code, r.out, r.err


with t.guard("the confirmation accepts only y or yes"):
    y1, _ = store("y1", "alice")
    y2, _ = store("y2", "alice")
    for answer in (b"yeah\n", b"ynot\n", b"\n", b"n\n"):
        snap = t.snapshot(y2.root)
        code, out, err = run_tty(("--store", y1.root, "--store", y2.root, "dedupe", "--hardlink", "--apply"), answer)
        t.eq(code, 0, "answer %r: declined is an answer, not an interruption (exit 0)" % answer)
        t.contains(err, "[y/N]", "the question is asked")
        t.contains(err, "nothing done", "answer %r: says nothing was done" % answer)
        t.eq(t.diff_snapshots(snap, t.snapshot(y2.root)), [], "answer %r: nothing changed" % answer)
    code, out, err = run_tty(("--store", y1.root, "--store", y2.root, "dedupe", "--hardlink", "--apply"), b"YES\n")
    t.eq(code, 0, "YES: done")
    t.eq(ino(os.path.join(y2.blobs, shared_files[0])), ino(os.path.join(y1.blobs, shared_files[0])), "linked")

with t.guard("more than 64 owners: every user name is right"):
    if not ms.IS_ROOT:
        t.skip("not root: cannot give stores 70 owners")
    else:
        many = t.tempdir("many")
        os.chmod(many, 0o755)
        mpasswd = os.path.join(many, "passwd")
        owners = [("user%02d" % i, 24000 + i) for i in range(70)]
        with open(mpasswd, "w") as f:
            for name, uid in owners:
                f.write("%s:x:%d:%d::/home/%s:/bin/sh\n" % (name, uid, ms.GID, name))
        args = []
        for name, uid in owners:
            root = os.path.join(many, name, "models")
            ms.make_store(root, ["shared:latest"])
            ms.chown_tree(os.path.dirname(root), uid)
            args += ["--store", root]
        r = t.run(*args, "du", "--duplicates", "--format", "json", env={"OLLAMA_AUDIT_PASSWD": mpasswd})
        t.exit_code(r, 0)
        got = sorted((u["user"], u["copies"]) for u in r.json().get("users", []))
        t.eq(got, sorted((name, len(shared)) for name, _ in owners), "70 users, each with their own copies")
        r = t.run(*args, "dedupe", "--format", "json", env={"OLLAMA_AUDIT_PASSWD": mpasswd})
        acts = r.json().get("actions", [])
        t.ok(acts and all(a["replace_user"] == os.path.basename(os.path.dirname(a["replace"])) and
                          a["keep_user"] == "user00" for a in acts), "keep_user and replace_user are right",
             [(a["keep_user"], a["replace_user"], a["replace"]) for a in acts if
              a["replace_user"] != os.path.basename(os.path.dirname(a["replace"]))][:5])

with t.guard("a duplicate swapped for a FIFO after the scan: skipped, no hang"):
    q1, _ = store("q1", "alice")
    q2, _ = store("q2", "alice")
    fifo = os.path.join(q2.blobs, shared_files[0])

    def swap(point, i):
        if point == "open" and i == 0:
            os.unlink(fifo)
            os.mkfifo(fifo)

    r, seen = run_with_pauses(("--store", q1.root, "--store", q2.root, "dedupe", "--hardlink", "--apply", "--yes",
                               "--format", "json"), swap)
    t.ne(r.code, -999, "no hang")
    acts = r.json().get("actions", [])
    t.eq(acts[0].get("status") if acts else None, "changed", "the FIFO is not the scanned file: skipped", acts[:1])
    t.ok(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO is left alone")
    no_temps(q1, q2)

with t.guard("SIGTERM during apply: the temporary is removed, the action is not done"):
    s1, _ = store("s1", "alice")
    s2, _ = store("s2", "alice")
    before = {n: ino(os.path.join(s2.blobs, n)) for n in blobs(s2)}
    pdir_seen = []

    def term(point, i):
        if point == "rename" and i == 0:
            pid = int(open(os.path.join(PAUSE["dir"], "%s-%d" % (point, i))).read())
            pdir_seen.append(sorted(n for n in os.listdir(s2.blobs) if n.startswith(".oa-dedupe")))
            os.kill(pid, signal.SIGTERM)
            time.sleep(0.2)

    r, seen = run_with_pauses(("--store", s1.root, "--store", s2.root, "dedupe", "--hardlink", "--apply",
                               "--yes", "--format", "json"), term)
    t.ok(pdir_seen and len(pdir_seen[0]) == 1, "a temporary existed when the signal came", pdir_seen)
    t.exit_code(r, 32, "interrupted")
    acts = r.json().get("actions", [])
    t.ok(acts and all(a["status"] == "not-done" for a in acts), "no action done", acts)
    no_temps(s1, s2)
    t.eq({n: ino(os.path.join(s2.blobs, n)) for n in blobs(s2)}, before, "s2's blobs unchanged")

with t.guard("digest mismatch: never linked"):
    d1, _ = store("d1", "alice")
    d2, _ = store("d2", "alice")
    victim = os.path.join(d2.blobs, shared_files[0])
    data = bytearray(open(victim, "rb").read())
    data[100] ^= 0x55
    with open(victim, "wb") as f:
        f.write(data)
    vino = ino(victim)
    r = run("--store", d1.root, "--store", d2.root, "dedupe", "--hardlink", "--apply", "--yes", "--format", "json")
    t.exit_code(r, 4, "a copy whose content is not its digest")
    acts = {a["digest"]: a for a in r.json().get("actions", [])}
    bad = acts.get(shared[0], {})
    t.eq(bad.get("status"), "digest-mismatch", "the corrupt copy is left alone")
    t.eq(ino(victim), vino, "same inode")
    t.eq(bytes(data), open(victim, "rb").read(), "same bytes")
    t.eq(sorted(a["status"] for d, a in acts.items() if d != shared[0]), ["done"] * (len(shared) - 1),
         "the good copies are linked")
    no_temps(d1, d2)

with t.guard("a running server blocks apply unless --force"):
    e1, _ = store("e1", "alice")
    e2, _ = store("e2", "alice")
    proc = t.start_fake_server('cd "$1" && exec -a "ollama serve" sleep 60', "ollama serve", args=[e2.root])
    try:
        snap = t.snapshot(e2.root)
        r = run("--store", e1.root, "--store", e2.root, "dedupe", "--hardlink", "--apply", "--yes", "--format", "json")
        t.exit_code(r, 8, "refused: a server uses the store")
        acts = r.json().get("actions", [])
        t.ok(acts and all(a["status"] == "server-running" for a in acts), "status server-running", acts)
        t.contains(r.err, "pid %d" % proc.pid, "names the process")
        t.eq(t.diff_snapshots(snap, t.snapshot(e2.root)), [], "nothing changed")
        r = run("--store", e1.root, "--store", e2.root, "dedupe", "--hardlink", "--apply", "--yes", "--force",
                "--format", "json")
        t.exit_code(r, 0, "--force")
        t.ok(all(a["status"] == "done" for a in r.json().get("actions", [])), "done with --force")
    finally:
        proc.kill()
        proc.wait()
    no_temps(e1, e2)

if mounted:
    subprocess.run(["umount", mounted])
t.done()
