#!/usr/bin/env python3
"""Names that differ only in case (issue 11, defect 4): every command that
takes a MODEL (show, check, verify, rm) prefers the exact-case match, and
refuses (exit 16, "ambiguous: ...") a name that several models match only
case-insensitively. Never the wrong model."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()


def two_cases(tag, names):
    s = t.new_store(tag)
    info = {}
    for i, n in enumerate(names):
        info[n] = t.add_gguf_model(s, n, seed=n, mtime=1700000000 + i)
    return s, info


def unique_blob(info):
    return info["layers"][0]["digest"]  # the weights, distinct per seed


with t.guard("exact case preferred"):
    s, info = two_cases("case-exact", ["tiny:latest", "TINY:latest"])
    for query, want in [("tiny", "tiny:latest"), ("TINY", "TINY:latest"),
                        ("library/tiny:latest", "tiny:latest"),
                        ("registry.ollama.ai/library/TINY:latest", "TINY:latest")]:
        r = t.audit(s.root, "show", query, "--format", "json")
        t.exit_code(r, 0, "show %s" % query)
        t.eq(r.json().get("name"), want, "show %s shows %s" % (query, want))
    # TINY is damaged, tiny is not: check/verify tiny must look at tiny only.
    tiny_w = s.blob_path(unique_blob(info["TINY:latest"]))
    saved = open(tiny_w, "rb").read()
    os.remove(tiny_w)
    for cmd in ("check", "verify"):
        t.exit_code(t.audit(s.root, cmd, "tiny"), 0, "%s tiny ignores TINY's missing blob" % cmd)
        t.exit_code(t.audit(s.root, cmd, "TINY"), 4, "%s TINY reports its missing blob" % cmd)
    with open(tiny_w, "wb") as f:
        f.write(saved)

    before = t.snapshot(s.root)
    r = t.audit(s.root, "rm", "tiny", "--apply", "--yes")
    t.exit_code(r, 0, "rm tiny --apply")
    t.ok(not os.path.exists(info["tiny:latest"]["path"]), "tiny's manifest removed")
    t.ok(os.path.exists(info["TINY:latest"]["path"]), "TINY's manifest kept")
    t.ok(os.path.exists(s.blob_path(unique_blob(info["TINY:latest"]))), "TINY's weights kept")
    t.ok(not os.path.exists(s.blob_path(unique_blob(info["tiny:latest"]))), "tiny's weights removed")
    r = t.audit(s.root, "check", "--format", "json")
    t.exit_code(r, 0, "TINY still checks clean after rm tiny")

with t.guard("only case-folded matches: ambiguous, refused"):
    s, info = two_cases("case-ambig", ["TINY:latest", "Tiny:latest"])
    before = t.snapshot(s.root)
    for args in (["show", "tiny"], ["check", "tiny"], ["verify", "tiny"],
                 ["rm", "tiny"], ["rm", "tiny", "--apply", "--yes"]):
        r = t.audit(s.root, *args)
        t.exit_code(r, 16, " ".join(args))
        t.contains(r.err, "ambiguous: tiny matches ", "%s says it is ambiguous" % args[0])
        t.contains(r.err, "TINY:latest", "%s names TINY:latest" % args[0])
        t.contains(r.err, "Tiny:latest", "%s names Tiny:latest" % args[0])
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing removed")

with t.guard("one case-folded match still resolves"):
    s, info = two_cases("case-one", ["TINY:latest"])
    r = t.audit(s.root, "show", "tiny", "--format", "json")
    t.exit_code(r, 0, "show tiny with only TINY present")
    t.eq(r.json().get("name"), "TINY:latest", "show tiny finds TINY")

t.done()
