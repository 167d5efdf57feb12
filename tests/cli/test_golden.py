#!/usr/bin/env python3
"""Golden output: every command x every --format on a copy of the demo store
(fixtures/demo-store, fixed mtimes), stdout and exit code compared byte for
byte with tests/golden/<command>.<format>.txt after masking what varies by
machine and run (temp paths, times, ages, durations, the host name).

A refactoring must leave these unchanged; a deliberate change of output is
recorded by regenerating them:

    OA_GOLDEN_UPDATE=1 OA_BIN=build/ollama-audit python3 tests/cli/test_golden.py

and reviewing the diff.  Formats a command does not produce are recorded
too (today many fall back to the table: the contract issue makes them usage
errors), so that change will show here as well."""

import os
import re
import shutil
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import oastore as oa  # noqa: E402

t.check_binary()

GOLDEN = os.path.join(t.SOURCE_DIR, "tests", "golden")
UPDATE = os.environ.get("OA_GOLDEN_UPDATE") == "1"
FORMATS = ("table", "json", "ndjson", "csv", "tags", "prometheus")
# Every file 2 days and 1 hour old: ages print as "2d" and "2 days ago" for a
# whole day, and past the 1 h prune grace period.
AGE = 2 * 86400 + 3600


def demo_copy(tag):
    import time
    s = t.copy_demo_store(tag)
    when = time.time() - AGE
    for d, dirs, files in os.walk(s.root):
        for n in dirs + files:
            os.utime(os.path.join(d, n), (when, when), follow_symlinks=False)
    return s


def mask(text, roots):
    for i, r in enumerate(roots):
        text = text.replace(os.path.realpath(r), "<STORE%d>" % i).replace(r, "<STORE%d>" % i)
    host = socket.gethostname()
    if host:
        text = text.replace('"%s"' % host, '"<HOST>"').replace('host="%s"' % host, 'host="<HOST>"')
        text = re.sub(r"(?m)^%s," % re.escape(host), "<HOST>,", text)  # the csv host column
    text = re.sub(r'"uid":\s*\d+', '"uid":<UID>', text)
    text = text.replace("tester,%d," % os.getuid(), "tester,<UID>,")  # the stores csv uid column
    text = re.sub(r"/tmp/oa-cli-[^\s\"',/]+", "<TMP>", text)
    text = re.sub(r"\b(\d+|a|an|About a|About an) (second|minute|hour|day|week|month|year)s? ago\b|Less than a second ago",
                  "<AGO>", text)
    text = re.sub(r"\b20\d\d[01]\d[0-3]\d-\d{6}-(\d+)\b", r"<OPID>-\1", text)  # a quarantine operation's id
    text = re.sub(r'"unix_time":\s*\d+', '"unix_time":<N>', text)
    text = re.sub(r"\b20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", "<TIME>", text)
    text = re.sub(r"\d+\.\d+ s\b", "<SECONDS> s", text)
    text = re.sub(r'"seconds":\s*[0-9.e+-]+', '"seconds":<SECONDS>', text)
    text = re.sub(r'"(duration|elapsed)_?(seconds)?":\s*[0-9.e+-]+', r'"\1":<SECONDS>', text)
    text = re.sub(r"(_seconds(\{[^}]*\})?) [0-9.e+-]+", r"\1 <NUM>", text)
    text = re.sub(r'"(owner|user)":\s*"[^"]*"', r'"\1":"<USER>"', text)
    text = re.sub(r'"(store_dev|store_ino|dev|ino|age_seconds|mtime_ns|created_ns)":\s*[0-9.]+', r'"\1":<N>', text)
    text = re.sub(r"\(\d+(\.\d+)? [KMGT]?i?B/s\)", "(<RATE>)", text)
    text = re.sub(r'user="[^"]*"', 'user="<USER>"', text)
    return text


def record(name, args, roots, env=None):
    r = t.run(*args, env=env, timeout=120)
    got = "exit %d\n%s" % (r.code, mask(r.out, roots))
    path = os.path.join(GOLDEN, name + ".txt")
    if UPDATE:
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(got)
        return
    want = open(path).read() if os.path.exists(path) else "(no golden file %s)" % path
    if got != want:
        import difflib
        diff = "".join(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now"))[:60])
        t.fail("%s differs from tests/golden/%s.txt" % (" ".join(args), name), diff)
    else:
        t.ok(True, name)


def allocation_is_4k(root):
    """The golden files hold allocated bytes (st_blocks) as recorded on a
    file system that gives a 1000-byte file one 4 KiB block (ext4, xfs,
    btrfs without compression). Elsewhere the numbers differ legitimately."""
    p = os.path.join(root, "blobs", "sha256-1234567890")  # 1000 bytes in the demo store
    return os.stat(p).st_blocks * 512 == 4096


with t.guard("every command x every format on the demo store"):
    a = demo_copy("golden-a")
    if not allocation_is_4k(a.root) and not UPDATE:
        print("SKIP golden outputs: this file system does not allocate 4 KiB for a 1000-byte file, "
              "so every allocated-bytes figure would differ")
        t.done()
    b = demo_copy("golden-b")
    empty_root = t.tempdir("golden-sysroot")
    # restore lists a quarantine's operations: one rm of another copy
    qstore = demo_copy("golden-q")
    quarantine = os.path.join(t.tempdir("golden-quarantine"), "q")
    # Owners print as "tester" whoever runs the suite (root or a normal user).
    passwd = os.path.join(t.tempdir("golden-passwd"), "passwd")
    with open(passwd, "w") as f:
        f.write("tester:x:%d:%d::/nonexistent:/bin/sh\n" % (os.getuid(), os.getgid()))
    # OA_TEST_REFLINK: dedupe answers as on a filesystem without reflinks
    # (ext4, tmpfs), whatever the test machine's /tmp is.
    env = {"OLLAMA_AUDIT_SYSROOT": empty_root, "OLLAMA_AUDIT_PASSWD": passwd, "TZ": "UTC", "OA_TEST_REFLINK": "no"}
    r = t.run("--store", qstore.root, "rm", "demo-llama:1b", "--apply", "--yes", "--quarantine", quarantine, env=env)
    t.exit_code(r, 0, "rm into the quarantine restore lists")
    cases = {
        "list": ["list"],
        "show": ["show", "demo-llama:1b"],
        "check": ["check"],
        "verify": ["verify", "--cache", os.path.join(t.tempdir("golden-cache"), "c.json")],
        "du": ["du"],
        "prune": ["prune"],
        "rm": ["rm", "demo-llama:1b"],
        "restore": ["restore", quarantine],
        "stores": ["stores"],
        "history": ["history"],
    }
    for cmd, args in cases.items():
        for fmt in FORMATS:
            # restore's list reads the quarantine only: no --store
            full = ([] if cmd == "restore" else ["--store", a.root]) + args + ["--format", fmt]
            record("%s.%s" % (cmd, fmt), full, [a.root, b.root], env=env)
    # -v draws a plan file by file: byte for byte the table these plans had
    # before they were drawn a row per model and per kind of junk
    for cmd in ("prune", "rm"):
        record("%s-v.table" % cmd, ["--store", a.root] + cases[cmd] + ["-v"], [a.root, b.root], env=env)
    for fmt in FORMATS:
        record("dedupe.%s" % fmt, ["--store", a.root, "--store", b.root, "dedupe", "--format", fmt],
               [a.root, b.root], env=env)
    if UPDATE:
        print("golden files written to %s" % GOLDEN)


def fleet():
    """A machine of four accounts (a fake sysroot), each with a store that
    --all-users finds in its home: a and b copies of the demo store (the
    same blobs twice); c with its own manifests/ and a blobs/ that is a
    symlink to a's, whose one tag names a's orphan; d whose tag is a symlink
    to an orphan in b's blobs/. Returns (sysroot, the store roots)."""
    import time
    sysroot = t.tempdir("golden-fleet")
    homes = [os.path.join(sysroot, "home", u, ".ollama") for u in "abcd"]
    os.makedirs(os.path.join(sysroot, "etc"))
    with open(os.path.join(sysroot, "etc", "passwd"), "w") as f:
        f.write("tester:x:%d:%d::/nonexistent:/bin/sh\n" % (os.getuid(), os.getgid()))
        for u in "abcd":
            f.write("%s:x:%d:%d::/home/%s:/bin/sh\n" % (u, os.getuid(), os.getgid(), u))
    roots = [os.path.join(h, "models") for h in homes]
    for r in roots[:2]:
        shutil.copytree(t.DEMO_STORE, r, symlinks=True)
    b_orphan = oa.Store(roots[1]).add_blob("an orphan of b that d's tag links to\n")
    c = oa.Store(roots[2])
    os.rmdir(c.blobs)
    os.symlink(os.path.join(roots[0], "blobs"), c.blobs)
    a_orphan = "sha256:eea2b987e671cd1fb9432d31224cba24d9fbfb93546c9083b039eedf57b24d3a"
    c_tag = c.manifest_path("keeps-a-orphan:latest")
    os.makedirs(os.path.dirname(c_tag))
    with open(c_tag, "w") as f:
        f.write('{"schemaVersion":2,"config":{"digest":"%s","size":249},"layers":[]}\n' % a_orphan)
    d = oa.Store(roots[3])
    d_tag = d.manifest_path("links-b:latest")
    os.makedirs(os.path.dirname(d_tag))
    os.symlink(oa.Store(roots[1]).blob_path(b_orphan), d_tag)
    when = time.time() - AGE
    for r in roots:
        for dirpath, dirs, files in os.walk(r):
            for n in dirs + files:
                os.utime(os.path.join(dirpath, n), (when, when), follow_symlinks=False)
    return sysroot, roots


with t.guard("several stores on one machine (--all-users): the same bytes whatever the number of stores"):
    sysroot, roots = fleet()
    env = {"OLLAMA_AUDIT_SYSROOT": sysroot, "TZ": "UTC", "OA_TEST_REFLINK": "no"}
    fleet_cases = {
        "stores.table": ["stores"], "stores.json": ["stores", "--format", "json"],
        "du.table": ["du", "--all-users"], "du.json": ["du", "--all-users", "--format", "json"],
        "du-duplicates.table": ["du", "--all-users", "--duplicates"],
        "check.table": ["check", "--all-users"], "check.json": ["check", "--all-users", "--format", "json"],
        "prune.json": ["prune", "--all-users", "--format", "json"],
        "dedupe.json": ["dedupe", "--all-users", "--format", "json"],
        "report.html": ["report", "--all-users"],
    }
    for name, args in fleet_cases.items():
        record("fleet." + name, args, roots, env=env)

t.done()
