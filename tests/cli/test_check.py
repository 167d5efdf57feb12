#!/usr/bin/env python3
"""`check` and `verify` on a clean store and on the same store with exactly
one defect each: the right finding(s), with the right path, nothing else, and
the documented exit code. Every run also asserts that the store is unchanged."""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()

MAN = "manifests/registry.ollama.ai/library/tiny/latest"


def blob(info, i):
    """blobs/sha256-<hex> of layer i (or 'config')."""
    d = info["config"]["digest"] if i == "config" else info["layers"][i]["digest"]
    return "blobs/" + d.replace(":", "-")


def rewrite_manifest(info, fn):
    m = json.loads(info["bytes"])
    fn(m)
    with open(info["path"], "wb") as f:
        f.write(oa.go_json(m, newline=True))


def got_findings(r):
    return sorted((f["code"], f["path"]) for f in t.findings_of(r.json()))


def run_case(name, mutate, check_want, check_exit, verify_want, verify_exit, as_nobody=False,
             list_exit=None, extra=None):
    """Build the clean store, apply mutate(s, info), then run check and verify
    (json) and compare the findings as a sorted list of (code, path)."""
    with t.guard(name):
        if as_nobody and t.nobody_skip():
            t.skip(t.nobody_skip())
            return
        s, info = t.clean_store("case")
        mutate(s, info)
        before = t.snapshot(s.root)
        cw = sorted(check_want(s, info)) if callable(check_want) else sorted(check_want)
        vw = sorted(verify_want(s, info)) if callable(verify_want) else sorted(verify_want)
        r = t.audit(s.root, "check", "--format", "json", as_nobody=as_nobody)
        t.exit_code(r, check_exit, "check")
        t.eq(got_findings(r), cw, "check findings", r.describe())
        for f in t.findings_of(r.json()):
            t.ok(f.get("message") and "\n" not in f["message"], "one-line message for %s" % f.get("code"))
        # the table form carries the same findings and a summary line
        rt = t.audit(s.root, "check", as_nobody=as_nobody)
        t.exit_code(rt, check_exit, "check (table)")
        for code, path in cw:
            t.contains(rt.out, "%s: %s" % (code, path), "table shows %s with its path" % code)
        nerr = sum(1 for f in t.findings_of(r.json()) if f["severity"] == "error")
        t.contains(rt.out, "%d error%s" % (nerr, "" if nerr == 1 else "s"), "summary line counts errors")
        cache = os.path.join(t.tempdir("cache"), "verify-cache.json")
        if as_nobody:
            os.chmod(os.path.dirname(cache), 0o777)
        r = t.audit(s.root, "verify", "--format", "json", "--cache", cache, as_nobody=as_nobody)
        t.exit_code(r, verify_exit, "verify")
        t.eq(got_findings(r), vw, "verify findings", r.describe())
        if list_exit is not None:
            # list_exit: what list's findings make its status under --fail-on;
            # without it list exits 0 when it listed (8: a part was unreadable)
            r = t.audit(s.root, "list", "--format", "json", "--fail-on", "error", as_nobody=as_nobody)
            t.exit_code(r, list_exit, "list --fail-on error")
            r = t.audit(s.root, "list", "--format", "json", as_nobody=as_nobody)
            t.exit_code(r, list_exit & 8, "list: 0 when it listed, 8 when part of the store was unreadable")
            names = [m["name"] for m in r.json().get("stores", [{}])[0].get("models", [])]
            t.ok("tiny:latest" in names or "tiny:latest" not in [info["name"]], "the damaged model is still listed", names)
        if extra:
            extra(s, info)
        t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing in the store was written")


# ------------------------------------------------------------------ clean
with t.guard("clean store"):
    s, info = t.clean_store("clean")
    before = t.snapshot(s.root)
    for args in (["check"], ["check", "--fail-on", "warning"], ["verify"], ["list"], ["show", "tiny"]):
        r = t.audit(s.root, *args, "--format", "json")
        t.exit_code(r, 0, " ".join(args) + " on the clean store")
    r = t.audit(s.root, "check", "--format", "json")
    sm = t.summary_of(r.json())
    t.eq((sm.get("errors"), sm.get("warnings"), sm.get("infos")), (0, 0, 0), "clean: 0 errors, 0 warnings, 0 infos")
    t.eq(sm.get("models"), 1, "check counted 1 model")
    t.eq(sm.get("blob_files"), 4, "check counted 4 blob files")
    t.eq(t.findings_of(r.json()), [], "clean: no findings")
    r = t.audit(s.root, "check")
    t.contains(r.out, "0 errors, 0 warnings", "table summary of the clean store")
    r = t.audit(s.root, "verify", "--format", "json")
    sm = t.summary_of(r.json())
    total = sum(os.path.getsize(os.path.join(s.blobs, f)) for f in os.listdir(s.blobs))
    t.eq((sm.get("blobs"), sm.get("bytes_hashed"), sm.get("errors")), (4, total, 0), "verify hashed every blob")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing in the store was written")


def zero(p):
    n = os.path.getsize(p)
    with open(p, "r+b") as f:
        f.write(b"\0" * n)


def truncate(p, n):
    os.truncate(p, n)


# ------------------------------------------------------------------ content defects
run_case("flipped byte in the model blob",
         lambda s, i: t.flip_last_byte(os.path.join(s.root, blob(i, 0))),
         [], 0, lambda s, i: [("digest-mismatch", blob(i, 0))], 4)
run_case("flipped byte in the template blob",
         lambda s, i: t.flip_last_byte(os.path.join(s.root, blob(i, 1))),
         [], 0, lambda s, i: [("digest-mismatch", blob(i, 1))], 4)
run_case("zeroed params blob of the right size",
         lambda s, i: zero(os.path.join(s.root, blob(i, 2))),
         [], 0, lambda s, i: [("digest-mismatch", blob(i, 2))], 4)
# A zeroed GGUF also loses its header, which check does see.
run_case("zeroed model blob of the right size",
         lambda s, i: zero(os.path.join(s.root, blob(i, 0))),
         lambda s, i: [("invalid-gguf", blob(i, 0))], 4, lambda s, i: [("digest-mismatch", blob(i, 0))], 4)
run_case("truncated template blob",
         lambda s, i: truncate(os.path.join(s.root, blob(i, 1)), 10),
         lambda s, i: [("size-mismatch", blob(i, 1))], 4, lambda s, i: [("size-mismatch", blob(i, 1))], 4)
# A blob of the wrong size gets that one finding: its header is not parsed
# on top, which would only say the same thing again.
run_case("truncated model blob",
         lambda s, i: truncate(os.path.join(s.root, blob(i, 0)), len(i["gguf"]) - 100),
         lambda s, i: [("size-mismatch", blob(i, 0))], 4,
         lambda s, i: [("size-mismatch", blob(i, 0))], 4)
run_case("empty template blob",
         lambda s, i: truncate(os.path.join(s.root, blob(i, 1)), 0),
         lambda s, i: [("empty-blob", blob(i, 1))], 4, lambda s, i: [("empty-blob", blob(i, 1))], 4)
run_case("empty params blob",
         lambda s, i: truncate(os.path.join(s.root, blob(i, 2)), 0),
         lambda s, i: [("empty-blob", blob(i, 2))], 4, lambda s, i: [("empty-blob", blob(i, 2))], 4)
run_case("missing model blob",
         lambda s, i: os.remove(os.path.join(s.root, blob(i, 0))),
         lambda s, i: [("missing-blob", blob(i, 0))], 4, lambda s, i: [("missing-blob", blob(i, 0))], 4,
         list_exit=0)  # list reports only what changes the listing; a missing weight blob does not
run_case("missing template blob (ollama list drops the model)",
         lambda s, i: os.remove(os.path.join(s.root, blob(i, 1))),
         lambda s, i: [("missing-blob", blob(i, 1)), ("hidden-from-list", MAN)], 4,
         lambda s, i: [("missing-blob", blob(i, 1))], 4, list_exit=0,  # hidden-from-list is a warning
         extra=lambda s, i: t.contains(t.audit(s.root, "list", "-v").err, "hidden-from-list: " + MAN,
                                       "list -v warns on stderr that ollama list hides the model"))
run_case("missing config blob",
         lambda s, i: os.remove(os.path.join(s.root, blob(i, "config"))),
         lambda s, i: [("missing-config", blob(i, "config")), ("hidden-from-list", MAN)], 4,
         lambda s, i: [("missing-config", blob(i, "config"))], 4, list_exit=4)


def broken_config(s, i):
    data = b'{"model_format":"gguf",'
    d = s.add_blob(data)
    os.remove(os.path.join(s.root, blob(i, "config")))
    i["config"] = {"mediaType": oa.MT_CONFIG, "digest": d, "size": len(data)}
    rewrite_manifest(i, lambda m: m.__setitem__("config", i["config"]))


run_case("config blob that is not JSON", broken_config,
         lambda s, i: [("invalid-config", blob(i, "config")), ("hidden-from-list", MAN)], 4,
         [], 0, list_exit=4)


def wrong_type_config(s, i):
    data = oa.go_json({"model_format": "gguf", "model_family": 7}, newline=True)
    d = s.add_blob(data)
    os.remove(os.path.join(s.root, blob(i, "config")))
    i["config"] = {"mediaType": oa.MT_CONFIG, "digest": d, "size": len(data)}
    rewrite_manifest(i, lambda m: m.__setitem__("config", i["config"]))


run_case("config blob with a field of the wrong type", wrong_type_config,
         lambda s, i: [("invalid-config", blob(i, "config")), ("hidden-from-list", MAN)], 4, [], 0)


# ------------------------------------------------------------------ bad digests: never a path
def bad_digest(value):
    def mutate(s, i):
        os.remove(os.path.join(s.root, blob(i, 2)))
        rewrite_manifest(i, lambda m: m["layers"][2].__setitem__("digest", value))
    return mutate


for value in ("sha256:../../etc/passwd", "sha256:" + "a" * 63, "md5:" + "a" * 32, "", "sha256:" + "g" * 64,
              "sha256:" + "a" * 64 + "/../x"):
    run_case("invalid digest %r" % value, bad_digest(value),
             [("invalid-digest", MAN)], 4, [("invalid-digest", MAN)], 4)


def strace_paths(args):
    """Every path the binary passes to a file syscall (strace -f)."""
    out = os.path.join(t.tempdir("strace"), "trace")
    e = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", XDG_CACHE_HOME=t.tempdir("xdg"))
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=%file", "-o", out, t.BIN] + args, env=e,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return open(out, errors="replace").read()


with t.guard("an invalid digest is never turned into a path"):
    s, info = t.clean_store("passwd")
    os.remove(os.path.join(s.root, blob(info, 2)))
    # The traversal aims at a canary file of this test's own (the process may
    # legitimately read /etc/passwd to name file owners).
    canary = os.path.join(t.tempdir("canary"), "canary-%d" % os.getpid())
    open(canary, "w").write("must never be read\n")
    rewrite_manifest(info, lambda m: m["layers"][2].__setitem__("digest", "sha256:../../../../../.." + canary))
    if shutil.which("strace") and subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"]).returncode == 0:
        for cmd in (["check"], ["verify", "--all"], ["list"], ["show", "tiny"]):
            tr = strace_paths(["--store", s.root] + cmd)
            mark = os.path.basename(canary)
            t.ok(mark not in tr and "sha256-.." not in tr,
                 "%s never opens or stats a path built from the bad digest" % cmd[0],
                 "\n".join(l for l in tr.splitlines() if mark in l or "sha256-.." in l))
            t.ok("blobs" in tr, "strace saw the store being read by %s" % cmd[0])
    else:
        t.skip("strace unavailable (or ptrace not allowed here): the no-path check of the bad digest")


# ------------------------------------------------------------------ symlinks
def dangling_model(s, i):
    p = os.path.join(s.root, blob(i, 0))
    os.remove(p)
    os.symlink("/nonexistent/oa-test/blob", p)


run_case("dangling symlinked model blob", dangling_model,
         lambda s, i: [("missing-blob", blob(i, 0)), ("symlinked-blob", blob(i, 0))], 4,
         lambda s, i: [("missing-blob", blob(i, 0))], 4)


def outside_link(s, i):
    p = os.path.join(s.root, blob(i, 0))
    q = os.path.join(os.path.dirname(s.root), "elsewhere.gguf")
    shutil.move(p, q)
    os.symlink(q, p)


run_case("model blob symlinked outside the store", outside_link,
         lambda s, i: [("symlinked-blob", blob(i, 0))], 0, [], 0)


def inside_link(s, i):
    p = os.path.join(s.root, blob(i, 0))
    os.makedirs(os.path.join(s.root, "shelf"))
    q = os.path.join(s.root, "shelf", "model.gguf")
    shutil.move(p, q)
    os.symlink("../shelf/model.gguf", p)


run_case("model blob symlinked inside the store", inside_link,
         lambda s, i: [("symlinked-blob", blob(i, 0))], 0, [], 0)

with t.guard("symlink severities"):
    s, info = t.clean_store("sev")
    outside_link(s, info)
    r = t.audit(s.root, "check", "--format", "json")
    t.eq([f["severity"] for f in t.findings_of(r.json())], ["warning"], "a symlink out of the store is a warning")
    r = t.audit(s.root, "check", "--fail-on", "warning")
    t.exit_code(r, 1, "--fail-on warning with a symlink out of the store")
    s, info = t.clean_store("sev2")
    inside_link(s, info)
    r = t.audit(s.root, "check", "--format", "json")
    t.eq([f["severity"] for f in t.findings_of(r.json())], ["info"], "a symlink inside the store is info")
    r = t.audit(s.root, "check", "--fail-on", "warning")
    t.exit_code(r, 0, "--fail-on warning ignores an info finding")


# ------------------------------------------------------------------ unreadable (EACCES)
# As root, chmod 000 does not stop reads: run the binary as nobody instead
# (a copy of it that nobody can reach), or skip when that is impossible.
def chmod0(which):
    def mutate(s, i):
        p = i["path"] if which == "manifest" else os.path.join(s.root, blob(i, which))
        os.chmod(p, 0)
    return mutate


AS_NOBODY = t.IS_ROOT
if not t.IS_ROOT:
    print("note: not root: unreadable cases use chmod 000 as the current user")
run_case("unreadable model blob", chmod0(0),
         lambda s, i: [("unreadable", blob(i, 0))], 8, lambda s, i: [("unreadable", blob(i, 0))], 8,
         as_nobody=AS_NOBODY, list_exit=8)
run_case("unreadable template blob", chmod0(1),
         lambda s, i: [("unreadable", blob(i, 1))], 8, lambda s, i: [("unreadable", blob(i, 1))], 8,
         as_nobody=AS_NOBODY)
# the server reads params (like system, messages, license) at every load
run_case("unreadable params blob", chmod0(2),
         lambda s, i: [("unreadable", blob(i, 2))], 8, lambda s, i: [("unreadable", blob(i, 2))], 8,
         as_nobody=AS_NOBODY)
run_case("unreadable config blob", chmod0("config"),
         lambda s, i: [("unreadable", blob(i, "config")), ("hidden-from-list", MAN)], 8,
         lambda s, i: [("unreadable", blob(i, "config"))], 8, as_nobody=AS_NOBODY, list_exit=8)
# An unreadable manifest: its blobs are referenced by nothing the tool can read.
run_case("unreadable manifest", chmod0("manifest"),
         lambda s, i: [("unreadable", MAN), ("prune-blocker", MAN)] +
         [("orphan-blob", blob(i, k)) for k in (0, 1, 2, "config")], 8,
         [("unreadable", MAN)], 8, as_nobody=AS_NOBODY, list_exit=8)


# ------------------------------------------------------------------ store-wide junk (warnings)
def orphan(s, i):
    i["orphan"] = s.add_blob(b"an orphan: uploaded with POST /api/blobs and never used")


run_case("orphan blob", orphan, lambda s, i: [("orphan-blob", "blobs/" + i["orphan"].replace(":", "-"))], 0, [], 0)
run_case("partial download", lambda s, i: i.__setitem__("p", s.partial_download(b"z" * 9000, n_parts=3)),
         lambda s, i: [("partial-download", os.path.relpath(i["p"][1][0], s.root))], 0, [], 0)
run_case("partial part file without its data file",
         lambda s, i: s.write_raw("blobs/sha256-%s-partial-0" % ("c" * 64), '{"N":0,"Offset":0,"Size":10,"Completed":5}\n'),
         [("partial-download", "blobs/sha256-%s-partial-0" % ("c" * 64))], 0, [], 0)
run_case("create temp file", lambda s, i: s.create_temp("3725648421", b"half a blob"),
         [("temp-file", "blobs/sha256-3725648421")], 0, [], 0)
run_case("tensor pull .tmp", lambda s, i: i.__setitem__("tmp", s.tmp_download(b"q" * 4000)),
         lambda s, i: [("temp-file", os.path.relpath(i["tmp"], s.root))], 0, [], 0)
run_case("quantize temp", lambda s, i: s.write_raw("blobs/Q4_K_M987654", b"x"),
         [("temp-file", "blobs/Q4_K_M987654")], 0, [], 0)


def legacy(s, i):
    d = s.add_blob(b"a blob from an old Ollama")
    os.rename(s.blob_path(d), os.path.join(s.blobs, d))
    i["legacy"] = "blobs/" + d


run_case("legacy sha256: blob name", legacy, lambda s, i: [("legacy-blob-name", i["legacy"])], 0, [], 0)
run_case("foreign file in blobs/", lambda s, i: s.write_raw("blobs/notes.txt", "mine"),
         [("foreign-file", "blobs/notes.txt")], 0, [], 0)

with t.guard("warnings and --fail-on"):
    s, info = t.clean_store("failon")
    orphan(s, info)
    for args, want in ((["check"], 0), (["check", "--fail-on", "warning"], 1), (["check", "--fail-on", "error"], 0),
                       (["list", "--fail-on", "warning"], 0)):
        r = t.audit(s.root, *args)
        t.exit_code(r, want, " ".join(args) + " with an orphan")
    # verify --all hashes the orphan too; a wrong-content orphan is a digest-mismatch
    p = s.blob_path(info["orphan"])
    t.flip_last_byte(p)
    r = t.audit(s.root, "verify", "--format", "json")
    t.exit_code(r, 0, "verify without --all ignores unreferenced blobs")
    r = t.audit(s.root, "verify", "--all", "--format", "json")
    t.exit_code(r, 4, "verify --all hashes unreferenced blobs")
    t.eq(got_findings(r), [("digest-mismatch", "blobs/" + info["orphan"].replace(":", "-"))], "verify --all finding")


# ------------------------------------------------------------------ manifests/ defects
def add_raw_manifest(rel, data):
    return lambda s, i: s.write_raw(rel, data)


DS = "manifests/registry.ollama.ai/library/tiny/.DS_Store"
run_case(".DS_Store at depth 4", add_raw_manifest(DS, b"\0\0\0\1Bud1"),
         [("invalid-name", DS), ("prune-blocker", DS)], 4, [], 0, list_exit=4)
BAD = "manifests/registry.ollama.ai/library/Bad!Name/latest"
run_case("invalid name Bad!Name", lambda s, i: s.write_raw(BAD, i["bytes"]),
         [("invalid-name", BAD), ("prune-blocker", BAD)], 4, [], 0, list_exit=4)
NJ = "manifests/registry.ollama.ai/library/broken/latest"
run_case("manifest that is not JSON", add_raw_manifest(NJ, b"<html>502 Bad Gateway</html>"),
         [("invalid-manifest", NJ), ("prune-blocker", NJ)], 4, [("invalid-manifest", NJ)], 4, list_exit=4)
run_case("truncated manifest", lambda s, i: s.write_raw(NJ, i["bytes"][:100]),
         [("invalid-manifest", NJ), ("prune-blocker", NJ)], 4, [("invalid-manifest", NJ)], 4)
DM = "manifests/registry.ollama.ai/library/dirmodel/latest"
run_case("manifest path that is a directory", lambda s, i: s.mkdir(DM),
         [("ignored-file", DM)], 0, [], 0, list_exit=0)
DL = "manifests/registry.ollama.ai/library/ghost/latest"
run_case("dangling symlink at depth 4", lambda s, i: s.symlink(DL, "/nonexistent/oa-test/manifest"),
         [("invalid-manifest", DL), ("prune-blocker", DL)], 4, [("invalid-manifest", DL)], 4, list_exit=4)
UM = "manifests/registry.ollama.ai/library/weird/latest"
run_case("unknown layer media type",
         lambda s, i: rewrite_manifest(i, lambda m: m["layers"][2].__setitem__(
             "mediaType", "application/vnd.example.thing")),
         [("unknown-media-type", MAN)], 0, [], 0)

t.done()
