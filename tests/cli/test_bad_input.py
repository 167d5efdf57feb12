#!/usr/bin/env python3
"""Bad input (issue 2): every broken thing under manifests/ is reported on
stderr with its path and a one-line reason, and in JSON `problems`; the rest
of the store is still listed; exit codes (issue 4) for every command; and
nothing in the store is ever written, whatever the command."""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()

LIB = "manifests/registry.ollama.ai/library/"


def bad_store(tag="bad"):
    """Two good models plus one of every manifests/ defect from issue 2."""
    s = t.new_store(tag)
    good = t.add_gguf_model(s, "good:latest", seed="g")
    t.add_gguf_model(s, "alice/also-good:v1", seed="a")
    # manifest that is not JSON
    s.write_raw(LIB + "notjson/latest", b"{this is not json")
    # a name that fails validation
    s.write_raw(LIB + "Bad!Name/latest", good["bytes"])
    # missing config blob
    nc = t.add_gguf_model(s, "noconfig:latest", seed="nc")
    os.remove(s.blob_path(nc["config"]["digest"]))
    # broken config JSON
    bc = t.add_gguf_model(s, "badconfig:latest", seed="bc")
    bad = b'{"model_format":"gguf","model_family":'
    d = s.add_blob(bad)
    m = json.loads(bc["bytes"])
    os.remove(s.blob_path(m["config"]["digest"]))
    m["config"] = {"mediaType": oa.MT_CONFIG, "digest": d, "size": len(bad)}
    with open(bc["path"], "wb") as f:
        f.write(oa.go_json(m, newline=True))
    # .DS_Store at depth 4
    s.write_raw(LIB + "good/.DS_Store", b"\0\0\0\1Bud1")
    # a manifest path that is a directory
    s.mkdir(LIB + "dirmodel/latest")
    # a dangling symlink at depth 4
    s.symlink(LIB + "ghost/latest", "/nonexistent/oa-test/ghost")
    return s, good, {"noconfig": nc, "badconfig": bc, "badconfig_digest": d}


EXPECT = [
    # (code, path, severity)
    ("invalid-manifest", LIB + "notjson/latest", "error"),
    ("invalid-name", LIB + "Bad!Name/latest", "error"),
    ("invalid-name", LIB + ".DS_Store".join(["good/", ""]), "error"),
    ("invalid-manifest", LIB + "ghost/latest", "error"),
    ("hidden-from-list", LIB + "noconfig/latest", "warning"),
    ("hidden-from-list", LIB + "badconfig/latest", "warning"),
]

with t.guard("list with every bad input"):
    s, good, extra = bad_store()
    before = t.snapshot(s.root)
    r = t.audit(s.root, "list", "--format", "json", "--fail-on", "error")
    t.exit_code(r, 4, "list --fail-on error exits 4: broken manifests and configs are integrity errors")
    t.exit_code(t.audit(s.root, "list", "--format", "json"), 0, "list exits 0: it listed, as ollama list does")
    doc = r.json()
    st = (doc.get("stores") or [{}])[0]
    names = sorted(m["name"] for m in st.get("models", []))
    for want in ("good:latest", "alice/also-good:v1", "noconfig:latest", "badconfig:latest"):
        t.ok(want in names, "%s is still listed" % want, names)
    t.ok("notjson:latest" in names, "the unparsable manifest is listed (as invalid)", names)
    t.ok(not any("Bad" in n or "DS_Store" in n or "dirmodel" in n or "ghost" in n for n in names),
         "invalid names, directories and dangling links are not models", names)
    probs = st.get("problems", [])
    got = sorted((p["code"], p["path"]) for p in probs)
    want = sorted([(c, p) for c, p, _ in EXPECT] + [
        ("missing-config", "blobs/" + extra["noconfig"]["config"]["digest"].replace(":", "-")),
        ("invalid-config", "blobs/" + extra["badconfig_digest"].replace(":", "-"))])
    t.eq(got, want, "json problems: exactly one entry per bad input")
    for p in probs:
        t.ok(p.get("message") and "\n" not in p["message"], "one-line reason for %s" % p["path"])
    nj = [m for m in st.get("models", []) if m["name"] == "notjson:latest"]
    if nj:
        t.eq(nj[0].get("manifest_ok"), False, "the unparsable manifest has manifest_ok false")
        t.ok("JSON" in (nj[0].get("manifest_error") or ""), "manifest_error says why: %r" % nj[0].get("manifest_error"))

    # stderr with -v: "ollama-audit: <severity> <code>: <path>: <reason>" for
    # every problem, one line each, then the one line that counts them
    r = t.audit(s.root, "list", "-v")
    t.exit_code(r, 0, "list -v (table)")
    for code, path in want:
        t.ok(re.search(r"^ollama-audit: (error|warning) %s: %s: \S.*$" % (re.escape(code), re.escape(path)), r.err, re.M),
             "stderr line for %s %s" % (code, path), r.err)
    t.eq(len([l for l in r.err.splitlines() if l.strip()]), len(want) + 1, "one stderr line per problem, and the count",
         r.err)
    t.ok(re.match(r"ollama-audit: \d+ models? and \d+ files? have problems: ollama-audit --store \S+ check$",
                  r.err.splitlines()[-1]), "the last line counts the models and files with problems", r.err)
    t.contains(r.out, "good:latest", "table still lists the good model")
    t.contains(r.out, "alice/also-good:v1", "table still lists the other good model")
    t.not_contains(r.out, "Bad!Name", "the invalid name is not a row")
    # ollama list hides the models with config problems, and so does /api/tags
    r = t.audit(s.root, "list", "--format", "tags")
    names = [m["name"] for m in r.json().get("models", [])]
    t.ok("good:latest" in names and "noconfig:latest" not in names, "tags lists the rest, not the hidden", names)
    t.ok("notjson:latest" not in names, "tags leaves out the unparsable manifest (no digest to give)", names)
    # ndjson problems
    r = t.audit(s.root, "list", "--format", "ndjson")
    recs = r.ndjson()
    t.eq(sorted((x["code"], x["path"]) for x in recs if x.get("type") == "problem"), want, "ndjson problem records")
    # show of a broken model still works and says why
    r = t.audit(s.root, "show", "notjson", "--format", "json")
    t.exit_code(r, 4, "show of the unparsable manifest")
    t.eq(r.json().get("manifest_ok"), False, "show: manifest_ok false")
    r = t.audit(s.root, "show", "badconfig")
    t.exit_code(r, 4, "show of the model with a broken config")
    t.contains(r.out, "not JSON", "show says the config is not JSON")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing in the store was written")

with t.guard("unreadable manifest and directory (EACCES)"):
    # as root, chmod 000 does not stop reads: the binary runs as nobody
    if t.nobody_skip():
        t.skip(t.nobody_skip())
    else:
        s = t.new_store("eacces")
        t.add_gguf_model(s, "good:latest", seed="g")
        locked = t.add_gguf_model(s, "locked:latest", seed="l")
        t.add_gguf_model(s, "hidden/model:tag", seed="h")
        os.chmod(locked["path"], 0)
        ns_dir = os.path.join(s.manifests, "registry.ollama.ai", "hidden")
        os.chmod(ns_dir, 0)
        r = t.audit(s.root, "list", "--format", "json", as_nobody=t.IS_ROOT)
        t.exit_code(r, 8, "an unreadable file or directory is an operational error")
        st = (r.json().get("stores") or [{}])[0]
        names = [m["name"] for m in st.get("models", [])]
        t.ok("good:latest" in names, "the readable model is still listed", names)
        got = sorted((p["code"], p["path"]) for p in st.get("problems", []))
        t.eq(got, sorted([("unreadable", LIB + "locked/latest"), ("unreadable", "manifests/registry.ollama.ai/hidden")]),
             "problems name the unreadable file and the unreadable directory")
        r = t.audit(s.root, "list", as_nobody=t.IS_ROOT)
        t.exit_code(r, 8, "list: an unreadable part is still an operational error")
        t.ok(re.search(r"unreadable: %s: .*Permission denied" % re.escape(LIB + "locked/latest"), r.err),
             "without -v too, stderr says what could not be read: exit 8 never comes unexplained", r.err)
        t.ok(r.err.splitlines()[-1].endswith("check"), "and the count comes last", r.err)
        r = t.audit(s.root, "list", "-v", as_nobody=t.IS_ROOT)
        t.exit_code(r, 8, "list -v: an unreadable part is still an operational error")
        t.ok(re.search(r"unreadable: %s: .*Permission denied" % re.escape(LIB + "locked/latest"), r.err),
             "stderr says why the manifest is unreadable", r.err)
        os.chmod(ns_dir, 0o755)

# ------------------------------------------------------------------ exit codes
with t.guard("exit codes"):
    s, info = t.clean_store("exit")
    missing = os.path.join(t.tempdir("nostore"), "does-not-exist")
    cases = [
        (["--store", s.root, "list"], 0, "clean list"),
        (["--store", s.root, "check"], 0, "clean check"),
        (["--store", s.root, "verify"], 0, "clean verify"),
        (["--store", s.root, "show", "tiny"], 0, "clean show"),
        (["--version"], 0, "--version"),
        (["--help"], 0, "--help"),
        (["list", "--help"], 0, "list --help"),
        (["help", "verify"], 0, "help verify"),
        (["--store", missing, "list"], 8, "list of a store that does not exist"),
        (["--store", missing, "check"], 8, "check of a store that does not exist"),
        (["--store", missing, "verify"], 8, "verify of a store that does not exist"),
        (["--store", missing, "show", "x"], 8, "show in a store that does not exist"),
        (["--store", s.root, "frobnicate"], 16, "unknown command"),
        (["--store", s.root, "list", "--bogus"], 16, "unknown option"),
        (["--store", s.root, "list", "--format", "yaml"], 16, "bad --format"),
        (["--store", s.root, "check", "--fail-on", "panic"], 16, "bad --fail-on"),
        (["--store", s.root, "verify", "--jobs", "0"], 16, "--jobs 0"),
        (["--store", s.root, "verify", "--max-duration", "soon"], 16, "bad --max-duration"),
        (["--store", s.root, "list", "a", "b"], 16, "list with two prefixes"),
        (["--store", s.root, "show", "nosuch"], 16, "show of an unknown model"),
        (["--store", s.root, "check", "nosuch"], 16, "check of an unknown model"),
        (["--store", s.root, "verify", "nosuch"], 16, "verify of an unknown model"),
        ([], 16, "no command"),
    ]
    for args, want, what in cases:
        r = t.run(*args)
        t.exit_code(r, want, what)
        if want == 16:
            t.ok(r.err.strip() != "", "%s: a message on stderr" % what)
        if want == 8:
            t.contains(r.err, missing, "%s: the message names the path" % what)
    empty = t.new_store("empty")
    for c in (["list"], ["list", "--format", "tags"], ["check"], ["verify"]):
        t.exit_code(t.audit(empty.root, *c), 0, "%s on an empty store" % " ".join(c))
    r = t.run("--version")
    t.ok(re.match(r"^ollama-audit \S+\n$", r.out), "--version prints one line: %r" % r.out)
    # codes OR together: an error store and a missing store
    s2, info2 = t.clean_store("exit-err")
    os.remove(s2.blob_path(info2["layers"][0]["digest"]))
    r = t.run("--store", s2.root, "--store", missing, "check")
    t.exit_code(r, 4 | 8, "errors in one store, another store missing")
    # warnings only
    s3, info3 = t.clean_store("exit-warn")
    s3.create_temp()
    t.exit_code(t.audit(s3.root, "check"), 0, "warnings only, default --fail-on")
    t.exit_code(t.audit(s3.root, "check", "--fail-on", "warning"), 1, "warnings only, --fail-on warning")
    t.exit_code(t.audit(s3.root, "verify", "--fail-on", "warning"), 0, "verify ignores store-wide junk")
    # check of one model ignores the other model's errors
    s4 = t.new_store("exit-sel")
    t.add_gguf_model(s4, "fine:latest", seed="f")
    b = t.add_gguf_model(s4, "broken:latest", seed="b")
    os.remove(s4.blob_path(b["layers"][0]["digest"]))
    t.exit_code(t.audit(s4.root, "check", "fine"), 0, "check fine: the other model's error is not counted")
    t.exit_code(t.audit(s4.root, "check", "broken"), 4, "check broken")
    t.exit_code(t.audit(s4.root, "verify", "fine"), 0, "verify fine")
    t.exit_code(t.audit(s4.root, "verify", "broken"), 4, "verify broken")

# ------------------------------------------------------------------ nothing is written
with t.guard("read-only: every command leaves the store as it was"):
    s = t.copy_demo_store("ro")
    # add some of everything so the commands walk every code path
    t.add_gguf_model(s, "extra:latest", seed="x")
    s.write_raw(LIB + "extra/.DS_Store", b"x")
    s.write_raw(LIB + "notjson/latest", b"nope")
    s.symlink(LIB + "ghost/latest", "/nonexistent/ghost")
    s.add_blob(b"orphan")
    s.tmp_download(b"t" * 3000)
    s.age_all(7200)
    before = t.snapshot(s.root)
    cache = os.path.join(t.tempdir("rocache"), "c.json")
    cmds = [["list"], ["list", "--format", "tags"], ["list", "--format", "json"], ["list", "--format", "csv"],
            ["list", "--format", "ndjson"], ["show", "demo-llama:1b", "--tensors"], ["show", "tiny-mlx:int4", "--format", "json", "--tensors"],
            ["check"], ["check", "--format", "ndjson"], ["verify", "--cache", cache], ["verify", "--all", "--cache", cache, "--jobs", "1"],
            ["verify", "--changed", "--cache", cache], ["verify", "--quick", "--cache", cache]]
    for c in cmds:
        r = t.audit(s.root, *c)
        t.ok(r.code in (0, 4), "%s ran (exit %s)" % (" ".join(c), r.code), r.describe())
        t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "%s wrote nothing to the store" % " ".join(c))
    t.ok(os.path.exists(cache), "the verify cache was written outside the store")

t.done()
