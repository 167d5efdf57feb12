#!/usr/bin/env python3
"""References that only a broken manifest holds, and names that only an ID
prefix shared by copied tags would reach."""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

with t.guard("blobs of a corrupt manifest are not orphans"):
    s, info = t.clean_store("weak", name="tiny:latest")
    # Cut the closing brackets: it no longer parses, but every digest is still in it.
    path = s.manifest_path("tiny:latest")
    data = open(path, "rb").read()
    cut = data.rstrip(b"\n").rstrip(b"]}")
    t.ok(cut.endswith(b"}") or cut[-1:].isdigit(), "the cut keeps every digest", cut[-40:])
    open(path, "wb").write(cut)
    r = t.audit(s.root, "check", "--format", "json")
    got = t.codes(t.findings_of(r.json()))
    t.ok("invalid-manifest" in got, "the cut manifest is reported", got)
    t.ok("prune-blocker" in got, "and blocks the server's prune", got)
    t.ok("orphan-blob" not in got, "its blobs are not called orphans", got)
    t.ok("unparsed-reference" in got, "they are reported as named by an unreadable manifest", got)

with t.guard("blobs of a manifest under an invalid name are not orphans"):
    s, info = t.clean_store("badname", name="tiny:latest")
    src = s.manifest_path("tiny:latest")
    dst = os.path.join(os.path.dirname(src), "Bad!Tag")
    shutil.move(src, dst)
    r = t.audit(s.root, "check", "--format", "json")
    got = t.codes(t.findings_of(r.json()))
    t.ok("invalid-name" in got, "the invalid name is reported", got)
    t.ok("orphan-blob" not in got, "its blobs are not called orphans", got)

with t.guard("a blob named only by an oversized manifest: check and prune agree (issue 19, 11c)"):
    s, info = t.clean_store("oversized", name="tiny:latest")
    only = s.add_blob(b"named only by the oversized manifest")
    path = s.manifest_path("tiny:latest")
    data = open(path, "rb").read()
    # Over 16 MiB: too large to parse, but the digest is in its bytes
    # (placed across a 1 MiB window boundary).
    pad = b" " * ((1 << 20) - 20)
    with open(path, "wb") as f:
        f.write(data.rstrip(b"\n")[:-1] + b',"x":"' + pad + only.encode() + b'"' + b" " * (17 << 20) + b"}")
    r = t.audit(s.root, "check", "--format", "json")
    got = t.findings_of(r.json())
    orphans = [f["path"] for f in got if f["code"] == "orphan-blob"]
    t.eq(orphans, [], "check calls none of its blobs an orphan", got)
    r = t.audit(s.root, "prune", "--format", "json", "--min-age", "0")
    planned = [e["path"] for p in r.json().get("stores", []) for e in p.get("entries", [])]
    t.ok("blobs/" + only.replace(":", "-") not in planned, "prune keeps it too", planned)

with t.guard("an ID prefix shared by copied tags is ambiguous"):
    s, info = t.clean_store("cp", name="tiny:latest")
    src = s.manifest_path("tiny:latest")
    dst = os.path.join(os.path.dirname(src), "copy")
    shutil.copyfile(src, dst)  # what `ollama cp` does: the same bytes, the same ID
    r = t.audit(s.root, "list", "--format", "json")
    ids = sorted(m["id"] for m in r.json()["stores"][0]["models"])
    t.eq(len(set(ids)), 1, "both tags have the same ID")
    r = t.audit(s.root, "show", ids[0][:8])
    t.exit_code(r, 16, "show by a shared ID prefix")
    t.contains(r.err, "tiny:copy", "the error names both tags")
    t.contains(r.err, "tiny:latest", "the error names both tags")
    r = t.audit(s.root, "show", "tiny:copy")
    t.exit_code(r, 0, "show by name still works")

t.done()
