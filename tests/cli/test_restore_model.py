#!/usr/bin/env python3
"""`restore DIR MODEL` puts back that model only: its tag(s) and the blobs it
needs that are not in the store, nothing else of the operation; the rest
stays in DIR, listed and restorable later, and a blob another model still in
DIR needs stays there for it. MODEL is matched as `rm` matches it (the exact
case first; a name several models match only case-insensitively is refused).
The listing counts what DIR holds: an apply killed before it moved anything
holds `nothing`, and `--last` skips it. An entry whose file is in DIR, whatever
its state says (a link left by a failed `rm --child` rename), is counted,
restored and emptied."""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import make_migrated_store as mk  # noqa: E402  (tests/tools is on the path)

t.check_binary()
OLD = time.time() - 3 * 86400


def three(tag):
    """alpha, beta and gamma: each its own weights and config, all three the
    same template and params blobs (one file each)."""
    s = t.new_store(tag)
    m = {n: t.add_gguf_model(s, n + ":latest", seed=n) for n in ("alpha", "beta", "gamma")}
    s.age_all(7200)
    return s, m


def blobs_of(s, info):
    return [s.blob_path(x["digest"]) for x in [info["config"]] + info["layers"]]


def own_blobs(s, info):
    """Its weights and config: no other model of three() has them."""
    return [s.blob_path(info["config"]["digest"]), s.blob_path(info["layers"][0]["digest"])]


def complete(s, info):
    return os.path.exists(info["path"]) and all(os.path.exists(p) for p in blobs_of(s, info))


def ops_of(q):
    r = t.run("restore", q, "--format", "json")
    t.exit_code(r, 0, "restore DIR --format json lists")
    return r.json()


def errors(root):
    r = t.audit(root, "check", "--format", "json")
    return [f["code"] for f in t.findings_of(r.json()) if f["severity"] == "error"]


def in_q(q):
    return sorted(os.listdir(os.path.join(q, "files")))


with t.guard("restore DIR MODEL puts back that model only; the rest stays, listed, restorable"):
    s, m = three("one")
    q = os.path.join(t.tempdir("oneq"), "q")
    r = t.audit(s.root, "rm", "alpha", "beta", "gamma", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm of three models into one operation")
    op = ops_of(q)["operations"][0]
    held_before = len(in_q(q))
    r = t.run("restore", q, "beta")
    t.exit_code(r, 0, "restore DIR beta")
    t.ok(complete(s, m["beta"]), "beta is back whole", r.out)
    for n in ("alpha", "gamma"):
        t.ok(not os.path.exists(m[n]["path"]), "%s's manifest stays in the quarantine" % n, r.out)
        t.ok(not any(os.path.exists(p) for p in own_blobs(s, m[n])), "%s's own blobs stay there too" % n)
    t.contains(r.out, "beta:latest from operation %s" % op["id"], "it says which model, from which operation")
    t.contains(r.out, "alpha:latest", "and names what the operation still holds")
    t.contains(r.out, "restore %s --op %s" % (q, op["id"]), "and how to put that back")
    t.eq(errors(s.root), [], "check: no error after restoring one model")
    doc = ops_of(q)
    o = doc["operations"][0]
    t.eq(o["state"], "partial", "the operation is partial")
    t.eq(o.get("models_held"), ["alpha:latest", "gamma:latest"], "json: the models it still holds", o)
    t.ok(0 < o["held_entries"] < held_before, "it holds fewer entries than before", (o, held_before))
    t.eq(doc["held_entries"], len(in_q(q)), "the held count is what DIR/files holds", in_q(q))
    txt = t.run("restore", q).out
    t.contains(txt, "still holds alpha:latest, gamma:latest", "the table says which models it still holds")
    # the template and params, shared with alpha and gamma, went back with
    # beta; gamma's restore finds them there
    r = t.run("restore", q, "gamma")
    t.exit_code(r, 0, "restore DIR gamma")
    t.ok(complete(s, m["gamma"]), "gamma is back whole, its shared blobs found in the store", r.out)
    t.ok(not os.path.exists(m["alpha"]["path"]), "alpha still in the quarantine")
    r = t.run("restore", q, "--last")
    t.exit_code(r, 0, "restore --last puts back the rest")
    t.ok(complete(s, m["alpha"]), "alpha back")
    t.eq(ops_of(q)["operations"][0]["state"], "restored", "the operation is restored")
    t.eq(in_q(q), [], "the quarantine holds nothing")
    t.eq(errors(s.root), [], "check: no error")

with t.guard("a blob another quarantined model needs stays in DIR for it"):
    s, m = three("keep")
    q = os.path.join(t.tempdir("keepq"), "q")
    r = t.audit(s.root, "rm", "alpha", "beta", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm alpha and beta (gamma keeps the shared template in the store)")
    r = t.audit(s.root, "rm", "gamma", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm gamma: the shared template and params go to the quarantine now")
    tmpl = s.blob_path(m["gamma"]["layers"][1]["digest"])
    t.ok(not os.path.exists(tmpl), "the shared template is in the quarantine")
    r = t.run("restore", q, "gamma")
    t.exit_code(r, 0, "restore gamma")
    t.ok(complete(s, m["gamma"]), "gamma back whole")
    held = json.load(open(os.path.join(q, "index.json")))
    kept = [e for e in held["entries"] if e["path"] == "blobs/" + os.path.basename(tmpl)]
    t.eq([e["state"] for e in kept], ["moved"], "the template is still held for alpha and beta", kept)
    t.ok(kept and os.path.exists(os.path.join(q, kept[0]["stored"])), "its file is still in DIR")
    ops = ops_of(q)["operations"]
    t.eq([o["state"] for o in ops], ["held", "restored"],
         "gamma's operation is restored; the copy kept for alpha and beta is their operation's", ops)
    t.eq(kept[0].get("op") if kept else None, ops[0]["id"], "the kept entry belongs to alpha's and beta's rm")
    # gamma goes for good (no quarantine), and the server's own start-up
    # prune deletes the template no manifest in the store names any more:
    # alpha and beta come back whole all the same
    r = t.audit(s.root, "rm", "gamma", "--apply", "--yes")
    t.exit_code(r, 0, "rm gamma for good")
    if os.path.exists(tmpl):
        os.remove(tmpl)
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore the rest")
    t.contains(r.out, "missing 0", "nothing missing")
    t.ok(complete(s, m["alpha"]) and complete(s, m["beta"]), "alpha and beta back whole", r.out)
    t.eq(in_q(q), [], "the quarantine holds nothing")
    t.eq(errors(s.root), [], "check: no error")

with t.guard("restore DIR MODEL of a manifest list: the tag, the list and its children's blobs"):
    root = os.path.join(t.tempdir("lists"), "models")
    info = mk.build(root)
    q = os.path.join(t.tempdir("listsq"), "q")
    plat = ("--platform", "linux/amd64")
    r = t.audit(root, "rm", "gemma3:4b", "qwen3:0.6b", "--with-shadow", "--apply", "--yes", "--quarantine", q,
                *plat)
    t.exit_code(r, 0, "rm two list models")
    r = t.run("restore", q, "qwen3:0.6b")
    t.exit_code(r, 0, "restore qwen3:0.6b")
    names = {x["name"] for st in t.audit(root, "list", "--format", "json", *plat).json()["stores"]
             for x in st["models"]}
    t.ok("qwen3:0.6b" in names and "gemma3:4b" not in names, "qwen3 is back, gemma3 is not", sorted(names))
    for d in (info["qwen_list"], info["qwen_child"], info["qwen_weights"]):
        t.ok(os.path.exists(os.path.join(root, "blobs", d.replace(":", "-"))), "back: %s" % d[:19])
    for d in (info["gemma_list"], info["gemma_source_weights"]):
        t.ok(not os.path.exists(os.path.join(root, "blobs", d.replace(":", "-"))), "still held: %s" % d[:19])
    r = t.audit(root, "check", "--format", "json", *plat)
    t.eq([f for f in t.findings_of(r.json()) if f.get("model") == "qwen3:0.6b" and f["severity"] == "error"], [],
         "check: qwen3 has no error")

with t.guard("MODEL is matched as rm matches it: exact case first, a case-only ambiguity refused"):
    s = t.new_store("case")
    tiny = t.add_gguf_model(s, "tiny:1", seed="lower")
    big = t.add_gguf_model(s, "TINY:1", seed="upper")
    s.age_all(7200)
    q = os.path.join(t.tempdir("caseq"), "q")
    for n in ("tiny:1", "TINY:1"):  # removed on purpose, one at a time
        r = t.audit(s.root, "rm", n, "--apply", "--yes", "--quarantine", q)
        t.exit_code(r, 0, "rm %s" % n)
    r = t.run("restore", q, "tiny:1")
    t.exit_code(r, 0, "restore tiny:1")
    t.ok(os.path.exists(tiny["path"]), "tiny:1 is back")
    t.ok(not os.path.exists(big["path"]), "TINY:1 stays removed", r.out)
    r = t.run("restore", q, "tiny:1")
    t.exit_code(r, 8, "tiny:1 again: nothing of it held any more (TINY:1 is not taken instead)")
    t.ok(not os.path.exists(big["path"]), "TINY:1 still stays removed")

    s = t.new_store("ambig")
    a = t.add_gguf_model(s, "TINY:1", seed="a")
    b = t.add_gguf_model(s, "Tiny:1", seed="b")
    s.age_all(7200)
    q = os.path.join(t.tempdir("ambigq"), "q")
    r = t.audit(s.root, "rm", "TINY:1", "Tiny:1", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm both")
    before = t.snapshot(s.root)
    r = t.run("restore", q, "tiny:1")
    t.exit_code(r, 16, "restore tiny:1 is ambiguous")
    t.contains(r.err, "ambiguous", "it says so")
    t.contains(r.err, "TINY:1", "and names TINY:1")
    t.contains(r.err, "Tiny:1", "and Tiny:1")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing restored")
    r = t.run("restore", q, "Tiny:1")
    t.exit_code(r, 0, "the exact case restores")
    t.ok(os.path.exists(b["path"]) and not os.path.exists(a["path"]), "Tiny:1 only")

with t.guard("an apply killed before it moved anything holds nothing; --last skips it"):
    s, m = three("killed")
    orphan = s.add_blob(b"an old orphan" * 300, mtime=OLD)
    q = os.path.join(t.tempdir("killedq"), "q")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "a prune into the quarantine first")
    t.ok(not os.path.exists(s.blob_path(orphan)), "the orphan moved")
    e = dict(os.environ, OA_TEST_APPLY_DELAY_US="60000000", ASAN_OPTIONS="detect_leaks=0")
    p = subprocess.Popen([t.BIN, "--store", s.root, "rm", "alpha", "--apply", "--yes", "--quarantine", q], env=e,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def planned():
        idx = json.load(open(os.path.join(q, "index.json")))
        j = os.path.join(q, idx.get("journal", ""))
        return os.path.exists(j) and b'"state":"planned"' in open(j, "rb").read()
    deadline = time.monotonic() + 60
    while not planned() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    t.ok(p.poll() is None, "the rm is waiting before its first move")
    p.send_signal(signal.SIGKILL)
    p.wait()
    t.ok(os.path.exists(m["alpha"]["path"]), "alpha never moved")
    doc = ops_of(q)
    t.eq([o["command"] for o in doc["operations"]], ["prune", "rm"], "two operations")
    killed = doc["operations"][1]
    t.eq((killed["state"], killed["entries"], killed["held_bytes"]), ("nothing", 0, 0),
         "the killed rm holds nothing", killed)
    t.ok(killed["planned_entries"] > 0, "what it planned is still said", killed)
    t.eq(doc["held_entries"], len(in_q(q)), "held entries: what DIR/files holds")
    r = t.run("restore", q, "--last")
    t.exit_code(r, 0, "restore --last")
    t.ok(os.path.exists(s.blob_path(orphan)), "--last skipped the killed rm and put back the prune's orphan", r.out)
    t.contains(r.out, "from operation %s" % doc["operations"][0]["id"], "it names the prune")
    r = t.run("restore", q, "--last")
    t.exit_code(r, 8, "then nothing is left to put back")

with t.guard("a file in DIR whose entry says failed is counted, restored and emptied"):
    for how in ("restore", "empty"):
        s, m = three("failed" + how)
        q = os.path.join(t.tempdir("failedq" + how), "q")
        r = t.audit(s.root, "rm", "alpha", "--apply", "--yes", "--quarantine", q)
        t.exit_code(r, 0, "rm alpha")
        r = t.run("restore", q, "--all")
        t.exit_code(r, 0, "restore it")
        # what a failed rm --child rename left: a hard link of the tag in
        # DIR/files, its entry "failed"
        idx = json.load(open(os.path.join(q, "index.json")))
        e = [x for x in idx["entries"] if x["path"].endswith("alpha/latest")][0]
        os.link(m["alpha"]["path"], os.path.join(q, e["stored"]))
        e["state"] = "failed"
        json.dump(idx, open(os.path.join(q, "index.json"), "w"))
        doc = ops_of(q)
        t.eq((doc["held_entries"], doc["operations"][0]["held_entries"]), (1, 1), "counted as held", doc)
        if how == "restore":
            r = t.run("restore", q, "--last")
            t.exit_code(r, 0, "restore --last picks it")
            t.contains(r.out, "already in place 1", "the tag is there: the link in DIR goes")
        else:
            r = t.run("restore", q, "--empty", "--apply", "--yes")
            t.exit_code(r, 0, "--empty deletes it")
            t.contains(r.out, "deleted 1 entr", "one entry deleted")
        t.eq(in_q(q), [], "DIR/files is empty")
        t.ok(complete(s, m["alpha"]), "alpha untouched")

t.done()
