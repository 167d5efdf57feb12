#!/usr/bin/env python3
"""check, report and prune read one audit of a store (audit.h), so they
agree: on every fixture store (fixtures/ and the stores tests/tools builds,
the newest layout's too)
and on the case an architecture review found (the demo store plus a 15-byte
blob that a stray file under manifests/ mentions: check, prune and the
report's page must all keep it), check --format json and the report's page
list the same findings, each with the same fix, and a finding whose fix is
a prune removes exactly what that prune plans (and every entry of prune's
plan is promised by a finding)."""

import hashlib
import json
import os
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from reportpage import Page  # noqa: E402

t.check_binary()

TOOLS = os.path.join(t.SOURCE_DIR, "tests", "tools")
ENV = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("agree-sysroot")}


def aged(root, seconds):
    """Every file and directory of root `seconds` old: past prune's grace."""
    when = time.time() - seconds
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            os.utime(os.path.join(d, n), (when, when), follow_symlinks=False)


def built(script, *args):
    out = os.path.join(t.tempdir("agree-" + script), "models")
    subprocess.run([sys.executable, os.path.join(TOOLS, script), "--out", out, *args], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def copied(path):
    dst = os.path.join(t.tempdir("agree-copy"), "models")
    subprocess.run(["cp", "-a", path, dst], check=True)
    return dst


def stray_mention_case():
    """The review's case: a 15-byte blob, 3 h old, that only a stray file
    under manifests/ mentions (a file the server ignores: prune keeps what
    it names)."""
    root = copied(os.path.join(t.SOURCE_DIR, "fixtures", "demo-store"))
    aged(root, 2 * 86400)
    data = b"fifteen bytes!!"
    hexd = hashlib.sha256(data).hexdigest()
    blob = os.path.join(root, "blobs", "sha256-" + hexd)
    with open(blob, "wb") as f:
        f.write(data)
    stray = os.path.join(root, "manifests", "registry.ollama.ai", "library", "stray.json")
    with open(stray, "w") as f:
        json.dump({"note": "sha256:" + hexd}, f)
    for p in (blob, stray):
        os.utime(p, (time.time() - 3 * 3600,) * 2)
    return root, "blobs/sha256-" + hexd


def unblocked(root):
    """The newest layout's store without the zero-length tag that makes the
    server's cleanup fail closed: prune plans, and the findings' fixes are
    that prune."""
    os.remove(os.path.join(root, "manifests-v2", "ollama.com", "library", "tinyllama", "latest"))
    return root


def check_findings(root):
    r = t.run("--store", root, "check", "--format", "json", env=ENV)
    t.ok(r.code in (0, 1, 4, 5), "check reads %s" % root, r.err)
    return t.findings_of(r.json())


def report_findings(root):
    r = t.run("--store", root, "report", env=ENV)
    t.ok(r.code in (0, 1, 4, 5), "report reads %s" % root, r.err)
    page = Page(r.out)
    t.eq(page.problems, [], "the page is well formed")
    out = []
    for sec in page.findings.values():
        out.extend(sec)
    return out


def key(f):
    """A finding as both show it: code, model, path and message, and its fix."""
    text = (f["path"] + ": " if f.get("path") else "") + f["message"]
    return (f["code"], f.get("model"), text)


def page_key(f):
    return (f["code"], f["model"], f["text"])


def prune_plan(root, extra=()):
    r = t.run("--store", root, "prune", *extra, "--format", "json", env=ENV)
    t.ok(r.code in (0, 1), "prune plans %s %s" % (root, " ".join(extra)), r.err)
    st = r.json()["stores"][0]
    return {e["path"] for e in st["entries"]}, {e["path"]: e.get("note") for e in st["kept"]}


# While a manifest blocks prune --apply, a junk file's fix is that prune
# after the blocker's own fix: it still promises what the prune removes.
BLOCKED = "by hand: first fix what its prune-blocker finding names; then "


def prune_args(fix, root):
    """The arguments of a fix that is one prune --apply of this store (once
    the blockers are fixed), else None."""
    fix = fix[len(BLOCKED):] if fix.startswith(BLOCKED) else fix
    words = shlex.split(fix) if fix.startswith("ollama-audit ") else []
    if words[:3] != ["ollama-audit", "prune", "--apply"] or "--store" not in words:
        return None
    at = words.index("--store")
    if os.path.realpath(words[at + 1]) != os.path.realpath(root):
        return None
    return [w for i, w in enumerate(words[3:], 3) if i not in (at, at + 1)]


def agree(name, root, shown=True):
    """shown: the findings' paths read the same in JSON and on the page
    (no name the page must escape); else their fixes are compared alone."""
    found = check_findings(root)
    page = report_findings(root)
    if shown:
        t.eq(sorted(page_key(f) for f in page), sorted(key(f) for f in found),
             "%s: the report lists the findings check reports" % name)
        fixes = {key(f): f.get("fix") for f in found}
        for f in page:
            t.eq(f["remedy"], fixes.get(page_key(f)), "%s: the page prints check's fix of %s" % (name, f["code"]))
    else:
        t.eq(sorted((f["code"], f["remedy"]) for f in page), sorted((f["code"], f.get("fix") or "") for f in found),
             "%s: the page prints check's fixes, as they paste" % name)
    # Each prune a fix names, and the default one: what it plans is what the
    # findings promise it removes.
    runs = {(): []}
    for f in found:
        args = prune_args(f.get("fix") or "", root)
        if args is not None:
            runs.setdefault(tuple(args), []).append(f)
    for args, promised in sorted(runs.items()):
        todo, kept = prune_plan(root, args)
        for f in promised:
            t.ok(f["path"] in todo, "%s: prune %s plans %s, as the %s finding's fix says"
                 % (name, " ".join(args), f["path"], f["code"]), sorted(todo))
        paths = {f["path"] for f in promised}
        # a download's -partial-N part files go with its -partial data file
        stray = sorted(p for p in todo if p not in paths and not any(p.startswith(q + "-") for q in paths))
        t.eq(stray, [], "%s: every entry prune %s plans is a finding whose fix is that prune" % (name, " ".join(args)))
    return found


def hostile(root):
    """Names a shell, a terminal or a page must quote: in blobs/ (foreign
    files, a partial download, a legacy name beside its blob) and under
    manifests/ (invalid names, two that flatten alike), two days old."""
    for n in (b"a\nb", b"esc\x1b[31mred", b"x\xffy", b"$(touch pwned)", b"-rf", b"it's <b>&amp;<i>",
              b"sha256-" + b"c" * 64 + b"-partial", b"sha256:" + b"e" * 64):
        with open(os.path.join(root.encode(), b"blobs", n), "wb") as f:
            f.write(b"mine: " + n)
    for rel in (b"registry.ollama.ai/library/Bad!/x-y", b"registry.ollama.ai/library/Bad!-x/y",
                b"registry.ollama.ai/library/q\xff'\n/latest"):
        p = os.path.join(root.encode(), b"manifests", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(b"{}")
    aged(root, 2 * 86400)
    return root


with t.guard("the review's case: a blob only a stray file mentions"):
    root, blob = stray_mention_case()
    found = agree("stray mention", root)
    t.eq([f["code"] for f in found if f.get("path") == blob], [],
         "check does not call the blob a stray file mentions an orphan")
    page = report_findings(root)
    t.eq([f["code"] for f in page if f["text"].startswith(blob)], [],
         "nor does the report's page")
    todo, kept = prune_plan(root)
    t.ok(blob not in todo and blob in kept, "prune keeps it", kept)

with t.guard("every fixture store"):
    stores = [
        ("fixtures/demo-store", copied(os.path.join(t.SOURCE_DIR, "fixtures", "demo-store"))),
        ("fixtures/demo-store, 2 days old", copied(os.path.join(t.SOURCE_DIR, "fixtures", "demo-store"))),
        ("fixtures/store-0.40", copied(os.path.join(t.SOURCE_DIR, "fixtures", "store-0.40"))),
        ("make_demo_store.py", built("make_demo_store.py", "--doc", os.path.join(t.tempdir("doc"), "d.md"))),
        ("make_040_store.py", built("make_040_store.py")),
        ("make_migrated_store.py", built("make_migrated_store.py")),
        ("make_migrated_store.py --fresh", built("make_migrated_store.py", "--fresh")),
        ("make_newest_store.py", built("make_newest_store.py")),
        ("make_newest_store.py, its zero-length tag gone", unblocked(built("make_newest_store.py"))),
    ]
    aged(stores[1][1], 2 * 86400)
    for name, root in stores:
        agree(name, root)

with t.guard("a store with hostile names"):
    agree("demo-store with hostile names", hostile(copied(os.path.join(t.SOURCE_DIR, "fixtures", "demo-store"))),
          shown=False)

t.done()
