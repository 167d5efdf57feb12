#!/usr/bin/env python3
"""`verify`: --jobs, the verification cache (--cache, --changed, --quick),
--max-duration and a later --changed run, SIGINT (exit code 32)."""

import json
import os
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()

# The cache trusts an entry only when the blob's ctime is older than the
# verification by more than this window (git's "racy clean" rule); tests that
# expect skips wait it out. Keep in sync with OA_VERIFY_DEFAULT_RACY_WINDOW.
RACY = 2.0


def verify(root, cache, *args, **kw):
    r = t.audit(root, "verify", "--format", "json", "--cache", cache, *args, **kw)
    return r, r.json()


def fset(doc):
    return sorted((f["code"], f["path"], f.get("model")) for f in t.findings_of(doc))


flip = t.flip_last_byte


def store_with_models(n, tag):
    s = t.new_store(tag)
    infos = [t.add_gguf_model(s, "m%02d:latest" % k, seed=str(k)) for k in range(n)]
    return s, infos


# ------------------------------------------------------------------ --jobs
with t.guard("--jobs 1 and default give the same findings"):
    s, infos = store_with_models(12, "jobs")
    flip(s.blob_path(infos[0]["layers"][0]["digest"]))
    os.truncate(s.blob_path(infos[1]["layers"][0]["digest"]), 1000)
    os.truncate(s.blob_path(infos[2]["layers"][2]["digest"]), 0)
    os.remove(s.blob_path(infos[3]["layers"][0]["digest"]))
    with open(s.blob_path(infos[4]["layers"][0]["digest"]), "r+b") as f:
        f.write(b"\0" * 64)
    results = {}
    for jobs in (None, "1", "3", "16"):
        cache = os.path.join(t.tempdir("jc"), "c.json")
        args = ["--jobs", jobs] if jobs else []
        r, doc = verify(s.root, cache, *args)
        t.exit_code(r, 4, "verify --jobs %s" % jobs)
        results[jobs] = fset(doc)
        sm = t.summary_of(doc)
        t.eq(sm.get("not_done"), 0, "--jobs %s finished every blob" % jobs)
    t.eq(sorted(c for c, _, _ in results[None]),
         sorted(["digest-mismatch", "digest-mismatch", "size-mismatch", "empty-blob", "missing-blob"]),
         "default --jobs finds the five defects")
    for j in ("1", "3", "16"):
        t.eq(results[j], results[None], "--jobs %s findings equal the default's" % j)

# ------------------------------------------------------------------ cache: --changed
with t.guard("verify --changed and the cache"):
    s, infos = store_with_models(5, "changed")
    nblobs = len(os.listdir(s.blobs))
    total = sum(os.path.getsize(os.path.join(s.blobs, f)) for f in os.listdir(s.blobs))
    time.sleep(RACY + 0.2)
    cdir = t.tempdir("cache")
    cache = os.path.join(cdir, "sub", "verify-cache.json")
    before = t.snapshot(s.root)
    r, doc = verify(s.root, cache)
    t.exit_code(r, 0, "first verify")
    sm = t.summary_of(doc)
    t.eq((sm.get("blobs"), sm.get("bytes_hashed"), sm.get("skipped_unchanged")), (nblobs, total, 0),
         "first verify hashes every blob")
    t.ok(os.path.isfile(cache), "the cache file is written where --cache says")
    try:
        json.load(open(cache))
        t.ok(True, "the cache is JSON")
    except ValueError as e:
        t.fail("the cache is not JSON: %s" % e)
    t.eq(os.listdir(os.path.join(t._globals["OA_TEST_HOME"], "cache")), [],
         "nothing written to $XDG_CACHE_HOME when --cache is given")
    r, doc = verify(s.root, cache, "--changed")
    t.exit_code(r, 0, "second verify --changed")
    sm = t.summary_of(doc)
    t.eq((sm.get("skipped_unchanged"), sm.get("bytes_hashed")), (nblobs, 0), "--changed skips every unchanged blob")
    # touch one blob's mtime: it is hashed again, the rest skipped
    p = s.blob_path(infos[0]["layers"][0]["digest"])
    st = os.stat(p)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    r, doc = verify(s.root, cache, "--changed")
    sm = t.summary_of(doc)
    t.eq((sm.get("skipped_unchanged"), sm.get("bytes_hashed")), (nblobs - 1, os.path.getsize(p)),
         "--changed re-hashes exactly the touched blob")
    t.exit_code(r, 0, "touched but intact blob is fine")
    # corrupt a blob and keep its mtime: --changed still notices (ctime moved)
    p2 = s.blob_path(infos[1]["layers"][0]["digest"])
    st2 = os.stat(p2)
    flip(p2)
    os.utime(p2, ns=(st2.st_atime_ns, st2.st_mtime_ns))
    r, doc = verify(s.root, cache, "--changed")
    t.exit_code(r, 4, "--changed after an in-place corruption (mtime restored)")
    t.eq([(f["code"], f["path"]) for f in t.findings_of(doc)],
         [("digest-mismatch", os.path.relpath(p2, s.root))], "--changed finds the corrupted blob")
    # a failed blob is never cached as good: it is reported again
    r, doc = verify(s.root, cache, "--changed")
    t.exit_code(r, 4, "the bad blob is reported again on the next --changed run")
    after = t.snapshot(s.root)
    t.eq([l for l in t.diff_snapshots(before, after) if not l.startswith("changed: blobs/")], [],
         "verify wrote nothing in the store")

# ------------------------------------------------------------------ --quick
with t.guard("verify --quick"):
    s, infos = store_with_models(4, "quick")
    time.sleep(RACY + 0.2)
    cache = os.path.join(t.tempdir("qc"), "c.json")
    r, doc = verify(s.root, cache)
    t.exit_code(r, 0, "good verify")
    r, doc = verify(s.root, cache, "--quick")
    t.exit_code(r, 0, "--quick on intact blobs")
    t.eq(t.findings_of(doc), [], "--quick: no findings on intact blobs")
    p = s.blob_path(infos[2]["layers"][0]["digest"])
    st = os.stat(p)
    flip(p)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # bit rot keeps the mtime
    r, doc = verify(s.root, cache, "--quick")
    t.exit_code(r, 4, "--quick after a flipped byte")
    t.eq([(f["code"], f["path"]) for f in t.findings_of(doc)],
         [("fingerprint-mismatch", os.path.relpath(p, s.root))], "--quick reports fingerprint-mismatch")
    # a blob not in the cache falls back to sha256
    extra = t.add_gguf_model(s, "newcomer:latest", seed="new")
    flip(s.blob_path(extra["layers"][0]["digest"]))
    r, doc = verify(s.root, cache, "--quick", "newcomer")
    t.exit_code(r, 4, "--quick on an uncached blob")
    t.eq([f["code"] for f in t.findings_of(doc)], ["digest-mismatch"], "uncached blob: sha256 fallback")
    # without any cache file, --quick still verifies by sha256
    r, doc = verify(s.root, os.path.join(t.tempdir("qc2"), "none.json"), "--quick")
    t.eq(sorted(f["code"] for f in t.findings_of(doc)), ["digest-mismatch", "digest-mismatch"],
         "--quick with an empty cache = full sha256")

# ------------------------------------------------------------------ --max-duration
with t.guard("verify --max-duration, then --changed completes"):
    s, infos = store_with_models(30, "budget")
    nblobs = len(os.listdir(s.blobs))
    time.sleep(RACY + 0.2)
    cache = os.path.join(t.tempdir("mc"), "c.json")
    r, doc = verify(s.root, cache, "--max-duration", "0.000001")
    sm = t.summary_of(doc)
    t.ok(sm.get("not_done", 0) > 0, "a tiny budget leaves blobs not done: %r" % sm)
    t.eq(sm.get("timed_out"), True, "summary says timed_out")
    t.eq(r.code & 32, 0, "a time budget is not an interruption")
    t.eq(r.code & 4, 0, "a time budget is not an integrity error")
    r2 = t.audit(s.root, "verify", "--cache", os.path.join(t.tempdir("mc2"), "c.json"), "--max-duration", "0.000001")
    t.contains(r2.out, "not done", "the table summary says blobs were not done")
    r, doc = verify(s.root, cache, "--changed")
    t.exit_code(r, 0, "the following --changed run")
    sm2 = t.summary_of(doc)
    t.eq(sm2.get("not_done"), 0, "--changed completes the rest")
    t.eq(sm2.get("skipped_unchanged", 0) + (nblobs - sm2.get("skipped_unchanged", 0)), nblobs, "all blobs accounted")
    t.eq(nblobs - sm2.get("skipped_unchanged", 0), sm.get("not_done"),
         "--changed hashes exactly the blobs the budget left")
    r, doc = verify(s.root, cache, "--changed")
    t.eq(t.summary_of(doc).get("skipped_unchanged"), nblobs, "a third run skips everything")

# ------------------------------------------------------------------ SIGINT
def sigcgt_has_sigint(pid):
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    except OSError:
        pass
    return False


with t.guard("SIGINT stops verify cleanly with exit code 32"):
    s = t.new_store("sigint")
    # ~192 MB in 6 blobs, referenced by one model (no config needed for verify)
    layers = []
    for k in range(6):
        data = os.urandom(1 << 20) * 32
        layers.append(s.layer("license" if k else "model", data))
    s.add_manifest("big:latest", None, layers)
    cache = os.path.join(t.tempdir("sc"), "c.json")
    e = dict(os.environ, XDG_CACHE_HOME=t.tempdir("xdg"), NO_COLOR="1")
    p = subprocess.Popen([t.BIN, "--store", s.root, "verify", "--jobs", "1", "--format", "json", "--cache", cache],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    deadline = time.time() + 30
    while not sigcgt_has_sigint(p.pid) and p.poll() is None and time.time() < deadline:
        time.sleep(0.0005)
    if p.poll() is None:
        os.kill(p.pid, signal.SIGSTOP)
        os.kill(p.pid, signal.SIGINT)
        os.kill(p.pid, signal.SIGCONT)
    out, err = p.communicate(timeout=120)
    rc = p.returncode
    t.ok(rc >= 0, "verify was not killed by the signal (rc %s)" % rc, err.decode(errors="replace")[-2000:])
    t.ok(rc & 32, "exit code includes 32 (interrupted): %s" % rc, err.decode(errors="replace")[-2000:])
    try:
        doc = json.loads(out)
        sm = t.summary_of(doc)
        t.eq(sm.get("interrupted"), True, "summary says interrupted")
        t.ok(sm.get("not_done", 0) > 0, "some blobs were not done: %r" % sm)
        t.ok(sm.get("bytes_hashed", -1) < 6 * 32 << 20, "not every byte was hashed: %r" % sm)
        t.eq([f for f in t.findings_of(doc) if f["severity"] == "error"], [], "no false errors after SIGINT")
    except ValueError:
        t.fail("interrupted verify did not print a JSON report", out[-2000:])
    t.not_contains(err.decode(errors="replace"), "Sanitizer", "no sanitizer report after SIGINT")
    # the next --changed run finishes and finds nothing wrong
    r, doc = verify(s.root, cache, "--changed")
    t.exit_code(r, 0, "--changed after the interrupted run")
    t.eq(t.summary_of(doc).get("not_done"), 0, "the rest is done")

with t.guard("the cache is never written inside a store"):
    s, info = t.clean_store("cache-inside")
    before = t.snapshot(s.root)
    r = t.audit(s.root, "verify", "--cache", os.path.join(s.root, "blobs", "cache.json"))
    t.exit_code(r, 16, "verify --cache inside the store")
    t.contains(r.err, "inside the store", "the refusal says why")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "the store is unchanged")

def mismatches(doc):
    return [f["code"] for f in t.findings_of(doc) if f["code"] == "digest-mismatch"]


with t.guard("a verify cache someone else could write is ignored, and never written back as theirs"):
    s, info = t.clean_store("forged")
    weights = s.blob_path(info["layers"][0]["digest"])
    hexd = info["layers"][0]["digest"].split(":")[1]
    flip(weights)            # corrupt: only a full sha256 can tell
    d = t.tempdir("forged-cache")
    os.chmod(d, 0o700)
    # 1. writable by others (any user can test this)
    cache = os.path.join(d, "open.json")
    t.forged_cache(cache, weights, hexd, 0o666)
    r, doc = verify(s.root, cache, "--changed")
    t.contains(r.err, "verify cache %s is writable by others (mode 0666): its entries are ignored" % cache,
               "the warning names the file and why", r.err)
    t.eq(mismatches(doc), ["digest-mismatch"], "the corrupt blob is hashed and found, not passed by the forged "
         "entry", r.out)
    t.exit_code(r, 4, "exit 4: a digest mismatch (the cache was written afresh)")
    st = os.stat(cache)
    t.eq((oct(stat.S_IMODE(st.st_mode)), st.st_uid), (oct(0o600), os.geteuid()),
         "the file was replaced by one of ours, mode 0600, not written back 0666")
    t.contains(r.err, "written afresh (yours, mode 0600)", "and stderr says so")
    t.eq(list(json.load(open(cache))["entries"][hexd][0].get("failed", "")), list("digest-mismatch"),
         "the fresh cache records the failure, not the forged good entry")
    # 2. writable by its group
    t.forged_cache(cache, weights, hexd, 0o620)
    r, doc = verify(s.root, cache, "--changed")
    t.contains(r.err, "is writable by its group (mode 0620)", "group-writable: ignored", r.err)
    t.eq(mismatches(doc), ["digest-mismatch"], "group-writable: the blob is hashed", r.out)
    # 3. in a directory others can write: read by no one, and not written
    shared = t.tempdir("forged-shared")
    os.chmod(shared, 0o1777)
    cache2 = os.path.join(shared, "c.json")
    t.forged_cache(cache2, weights, hexd, 0o666)
    with open(cache2) as f:
        forged = f.read()
    r, doc = verify(s.root, cache2, "--changed")
    t.eq(mismatches(doc), ["digest-mismatch"], "in a shared directory: the blob is hashed", r.out)
    t.exit_code(r, 4 | 8, "exit 12: a digest mismatch, and the cache could not be saved")
    t.contains(r.err, "not saved: the file there was ignored and its directory %s is writable by others" % shared,
               "stderr says why it was not saved", r.err)
    t.eq((open(cache2).read(), oct(stat.S_IMODE(os.stat(cache2).st_mode))), (forged, oct(0o666)),
         "the file is left as it was, not rewritten in place")
    # 4. a symlink: not followed to read, not replaced
    target = os.path.join(d, "target.json")
    t.forged_cache(target, weights, hexd)
    link = os.path.join(d, "link.json")
    os.symlink(target, link)
    r, doc = verify(s.root, link, "--changed")
    t.contains(r.err, "verify cache %s is a symlink: its entries are ignored" % link, "a symlink: ignored", r.err)
    t.eq(mismatches(doc), ["digest-mismatch"], "a symlink: the blob is hashed", r.out)
    t.ok(os.path.islink(link) and json.load(open(target))["entries"][hexd][0].get("failed") is None,
         "the link stays, its target unchanged")
    # show and check read the cache too: the same rule
    t.forged_cache(cache, weights, hexd, 0o666)
    r = t.audit(s.root, "show", "tiny", "--cache", cache)
    t.contains(r.err, "is writable by others (mode 0666): its entries are ignored", "show: ignored too", r.err)
    # 5. another user's file (root only: chown)
    if not t.IS_ROOT:
        t.skip("not root: a cache owned by another user needs chown (the group, other and symlink cases ran)")
    else:
        t.forged_cache(cache, weights, hexd, 0o600)
        os.chown(cache, 12345, 12345)
        r, doc = verify(s.root, cache, "--changed")
        t.contains(r.err, "verify cache %s is owned by uid 12345, not by you (uid 0): its entries are ignored"
                   % cache, "root: another user's cache is ignored", r.err)
        t.eq(mismatches(doc), ["digest-mismatch"], "root: the corrupt blob is found (was '0 errors')", r.out)
        st = os.stat(cache)
        t.eq((st.st_uid, oct(stat.S_IMODE(st.st_mode))), (0, oct(0o600)),
             "root's fresh cache is root's (not chowned back to uid 12345)")
        other = t.tempdir("forged-theirs")
        os.chown(other, 12345, 12345)
        os.chmod(other, 0o755)
        cache3 = os.path.join(other, "c.json")
        t.forged_cache(cache3, weights, hexd, 0o600)
        os.chown(cache3, 12345, 12345)
        r, doc = verify(s.root, cache3, "--changed")
        t.eq(mismatches(doc), ["digest-mismatch"], "root, the cache in another user's directory: hashed", r.out)
        t.contains(r.err, "its directory %s is owned by uid 12345" % other, "and not saved there", r.err)
        t.eq(os.stat(cache3).st_uid, 12345, "their file is left alone")


with t.guard("the default cache is never read or written inside a store (XDG_CACHE_HOME there)"):
    s, info = t.clean_store("xdg-inside")
    lib = os.path.join(s.manifests, "registry.ollama.ai", "library")
    outside = t.tempdir("xdg-link")
    link = os.path.join(outside, "cache")
    os.symlink(s.root, link)         # inside through a symlink: by device and inode
    before = t.snapshot(s.root)
    for xdg in (lib, link):
        env = {"XDG_CACHE_HOME": xdg}
        where = os.path.join(xdg, "ollama-audit", "verify-cache.json")
        r = t.audit(s.root, "verify", env=env)
        t.exit_code(r, 0, "verify with XDG_CACHE_HOME=%s goes on without a cache" % xdg)
        t.contains(r.err, "verification cache: the default %s lies inside the store %s: going on without a "
                   "cache" % (where, s.root), "stderr says so", r.err)
        t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing was written in the store")
        r = t.audit(s.root, "verify", "--changed", env=env)
        t.contains(r.err, "--changed and --quick need the cache", "--changed: every blob gets a full sha256")
        r = t.audit(s.root, "list", "-q", env=env)
        t.eq(r.out.split(), ["tiny:latest"], "list shows no model named ollama-audit:verify-cache.json", r.out)
        r = t.audit(s.root, "check", env=env)
        t.exit_code(r, 0, "check with the default cache inside the store")
        t.eq(r.err.count("lies inside the store"), 1, "check says so once", r.err)
    # a planted cache there is not read either: its failure would make check report a corrupt blob
    os.makedirs(os.path.join(lib, "ollama-audit"), exist_ok=True)
    planted = os.path.join(lib, "ollama-audit", "verify-cache.json")
    t.forged_cache(planted, s.blob_path(info["layers"][0]["digest"]), info["layers"][0]["digest"].split(":")[1])
    doc = json.load(open(planted))
    for e in doc["entries"].values():
        e[0]["failed"] = "digest-mismatch"
    json.dump(doc, open(planted, "w"))
    r = t.audit(s.root, "check", "--format", "json", env={"XDG_CACHE_HOME": lib})
    t.eq([f["code"] for f in t.findings_of(r.json()) if f["code"] == "digest-mismatch"], [],
         "a cache planted in the store is not read by check", r.out)


with t.guard("a corrupt blob several models share: every one of them is named"):
    s = t.new_store("shared-bad")
    names = ["one:latest", "two:latest", "three:q4"]
    infos = [t.add_gguf_model(s, n, seed=n) for n in names]
    tmpl = infos[0]["layers"][1]["digest"]  # the template layer: the same bytes in all three
    t.ok(all(i["layers"][1]["digest"] == tmpl for i in infos), "the three share the template blob")
    p = t.blob_file(s, tmpl)
    data = bytearray(open(p, "rb").read())
    data[0] ^= 1  # same size, other content
    open(p, "wb").write(bytes(data))
    r = t.audit(s.root, "verify", "--format", "json")
    t.exit_code(r, 4, "verify finds it")
    found = [f for st in r.json().get("stores", []) for f in st.get("findings", [])
             if f.get("code") == "digest-mismatch"]
    t.eq(sorted(f.get("model") for f in found), sorted(names), "digest-mismatch names every model using the blob")
    t.ok(all(f.get("digest") == tmpl for f in found), "all about that blob", found)
    r = t.audit(s.root, "verify")
    for n in names:
        t.contains(r.out, "  %s\n    error digest-mismatch" % n, "the table lists it under %s" % n)
    r = t.audit(s.root, "verify", "two:latest", "--format", "json")
    found = [f for st in r.json().get("stores", []) for f in st.get("findings", [])]
    t.eq([f.get("model") for f in found if f.get("code") == "digest-mismatch"], ["two:latest"],
         "verify MODEL: the finding of that model")

t.done()
