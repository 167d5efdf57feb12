#!/usr/bin/env python3
"""Manifests the tool cannot parse or read (issue 11, defects 8 and 9): what
Go's decoder accepts is parsed (unknown fields are skipped whatever their
value, known fields stay strict), and one unreadable manifest is one
prune blocker, not two."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

with t.guard("one unreadable manifest is counted once"):
    if t.nobody_skip():
        t.skip(t.nobody_skip())
    else:
        s, info = t.clean_store("blk-once")
        t.add_gguf_model(s, "other:latest", seed="o")
        s.write_raw("blobs/sha256-" + "ab" * 32 + "-partial", b"x" * 100)
        s.age_all(7200)
        os.chmod(info["path"], 0)
        before = t.snapshot(s.root)
        r = t.audit(s.root, "prune", "--apply", "--yes", as_nobody=t.IS_ROOT)
        t.exit_code(r, 8, "prune refuses")
        t.contains(r.err, "refusing to prune: 1 manifest cannot be parsed or read", "counted once")
        rel = t.rel(s, info["path"])
        t.eq(sum(1 for line in r.err.splitlines() if line.startswith("ollama-audit:   " + rel)), 1,
             "the manifest is listed once", r.err)
        r = t.audit(s.root, "prune", "--apply", "--yes", "--force", as_nobody=t.IS_ROOT)
        t.contains(r.err, "1 manifest cannot be parsed or read; going on because of --force",
                   "--force: counted once")
        os.chmod(info["path"], 0o644)


def with_fields(s, info, manifest_edit=None, config_edit=None):
    """Rewrite a model's manifest (and config blob) with raw byte edits:
    Python's json cannot write 1e400 or keep 99999999999999999999 as is."""
    cfg = info["config"]
    if config_edit:
        data = config_edit(open(s.blob_path(cfg["digest"]), "rb").read())
        cfg = dict(cfg, digest=s.add_blob(data), size=len(data))
    data = s.manifest_bytes(cfg, info["layers"])
    if manifest_edit:
        data = manifest_edit(data)
    with open(info["path"], "wb") as f:
        f.write(data)


def add_before_end(extra):
    return lambda b: b.rstrip()[:-1] + extra + b"}\n"


BIG = b'"x":1e400,"y":99999999999999999999,"z":-99999999999999999999,"w":[1E+999,{"v":1e309}]'


with t.guard("unknown fields with numbers beyond int64 or double are skipped, as Go does"):
    s, info = t.clean_store("unknown-big")
    t.add_gguf_model(s, "other:latest", seed="o")
    with_fields(s, info,
                manifest_edit=lambda b: add_before_end(b"," + BIG)(
                    b.replace(b'"size":', b'"annotations":{"n":1e400},"size":', 1)),
                config_edit=add_before_end(b"," + BIG))
    s.write_raw("blobs/sha256-" + "cd" * 32 + "-partial", b"x" * 100)
    s.age_all(7200)
    r = t.audit(s.root, "check", "--format", "json")
    t.exit_code(r, 0, "check: the manifest and config parse")
    cs = t.codes(t.findings_of(r.json()))
    for code in ("invalid-manifest", "invalid-config", "prune-blocker"):
        t.ok(code not in cs, "no %s" % code, cs)
    r = t.audit(s.root, "list", "--format", "json")
    t.eq(sorted(m.get("name") for m in r.json()["stores"][0].get("models", [])),
         ["other:latest", "tiny:latest"],
         "both models listed")
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 0, "prune --apply is not blocked")
    t.ok(not os.path.exists(s.path("blobs/sha256-" + "cd" * 32 + "-partial")), "the partial is removed")
    t.ok(os.path.exists(s.blob_path(info["layers"][0]["digest"])), "the weights are kept")

with t.guard("known fields stay strict: an overflowing number is an error, as in Go"):
    for what, edit, cfg_edit, code in [
        ("layer size 1e400", lambda b: b.replace(b'"size":', b'"size":1e400,"_":', 1), None,
         "invalid-manifest"),
        ("layer size beyond int64", lambda b: b.replace(b'"size":', b'"size":9223372036854775808,"_":', 1),
         None, "invalid-manifest"),
        ("schemaVersion beyond int64", add_before_end(b',"schemaVersion":99999999999999999999'), None,
         "invalid-manifest"),
        ("config context_length 1e400", None, add_before_end(b',"context_length":1e400'),
         "invalid-config"),
    ]:
        s, info = t.clean_store("known-big")
        with_fields(s, info, manifest_edit=edit, config_edit=cfg_edit)
        r = t.audit(s.root, "check", "--format", "json")
        t.exit_code(r, 4, "check: %s" % what)
        t.ok(code in t.codes(t.findings_of(r.json())), "%s: %s" % (what, code))

t.done()
