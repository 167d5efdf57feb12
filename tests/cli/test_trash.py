#!/usr/bin/env python3
"""A quarantine as a trash: every prune/rm --apply --quarantine DIR is one
operation; `restore DIR` lists them and changes nothing; --last, --op ID
and MODEL put back one; --all everything; --empty [--older-than] deletes
for good (a dry run without --apply). The apply says what it freed on disk
(nothing, for a move) and what the quarantine holds; du and its
Prometheus metrics count the quarantine given with --quarantine."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()


def store(tag):
    """alpha, beta and an orphan (2 h old: prune's default --min-age takes it)."""
    s = t.new_store(tag)
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    b = t.add_gguf_model(s, "beta:latest", seed="b")
    orphan = s.add_blob(oa.det_bytes(40000, "orphan " + tag))
    s.age_all(7200)
    return s, a, b, orphan


def two_ops(tag):
    """A prune (the orphan), then an rm of alpha, into one quarantine."""
    s, a, b, orphan = store(tag)
    q = os.path.join(t.tempdir(tag + "q"), "q")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "prune into the quarantine")
    r = t.audit(s.root, "rm", "alpha", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm into the quarantine")
    t.ok(not os.path.exists(a["path"]) and not os.path.exists(s.blob_path(orphan)), "both moved away")
    return s, a, b, orphan, q


def ops_of(q):
    r = t.run("restore", q, "--format", "json")
    t.exit_code(r, 0, "restore DIR --format json lists")
    return r.json()


def stored_alloc(q, op):
    """Allocated bytes of the files DIR holds for operation op (one link each)."""
    idx = json.load(open(os.path.join(q, "index.json")))
    total = 0
    for e in idx["entries"]:
        if e.get("op") == op and e["state"] == "moved":
            p = os.path.join(q, e["stored"])
            for d, _, files in os.walk(p) if os.path.isdir(p) else [(os.path.dirname(p), [], [os.path.basename(p)])]:
                for f in files:
                    total += os.lstat(os.path.join(d, f)).st_blocks * 512
    return total


with t.guard("restore DIR lists the operations and changes nothing"):
    s, a, b, orphan, q = two_ops("list")
    before, qbefore = t.snapshot(s.root), t.snapshot(q)
    r = t.run("restore", q)
    t.exit_code(r, 0, "restore DIR")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "the store is unchanged")
    t.eq(t.diff_snapshots(qbefore, t.snapshot(q)), [], "the quarantine is unchanged")
    for head in ("ID", "WHEN", "COMMAND", "ENTRIES", "SIZE", "STATE"):
        t.contains(r.out, head, "the table has " + head)
    t.contains(r.out, "rm alpha:latest", "rm's row names the model")
    doc = ops_of(q)
    t.eq(doc["schema"], "ollama-audit.restore-list/1", "schema")
    t.eq([o["command"] for o in doc["operations"]], ["prune", "rm"], "two operations, oldest first")
    t.eq(doc["operations"][1]["models"], ["alpha:latest"], "rm's models")
    t.eq([o["state"] for o in doc["operations"]], ["held", "held"], "both held")
    t.ok(len(set(o["id"] for o in doc["operations"])) == 2, "ids unique")
    t.ok(all(o["id"] in r.out for o in doc["operations"]), "the table shows the ids")
    t.ok(doc["held_bytes"] > 0 and doc["held_entries"] >= 3, "what it holds")
    recs = t.run("restore", q, "--format", "ndjson").ndjson()
    t.eq([x["type"] for x in recs], ["operation", "operation", "summary"], "ndjson records")
    csv = t.run("restore", q, "--format", "csv").out.splitlines()
    t.eq(csv[0].split(",")[:3], ["quarantine", "store", "id"], "csv header")
    t.eq(len(csv), 3, "csv: a row per operation")
    r = t.run("restore", q, "--last", "--format", "json")
    t.exit_code(r, 16, "putting back prints a table only")

with t.guard("restore DIR --last brings back only the rm; MODEL and --op ID"):
    s, a, b, orphan, q = two_ops("last")
    r = t.run("restore", q, "--last")
    t.exit_code(r, 0, "restore --last")
    t.ok(os.path.exists(a["path"]), "alpha's manifest is back")
    t.ok(not os.path.exists(s.blob_path(orphan)), "the orphan the prune moved stays in the quarantine")
    doc = ops_of(q)
    t.eq([o["state"] for o in doc["operations"]], ["held", "restored"], "states after --last")
    prune_id = doc["operations"][0]["id"]
    # rm alpha again, then restore it by name
    r = t.audit(s.root, "rm", "alpha", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "rm alpha again")
    t.ok(not os.path.exists(a["path"]), "alpha gone again")
    r = t.run("restore", q, "alpha")
    t.exit_code(r, 0, "restore DIR MODEL")
    t.ok(os.path.exists(a["path"]), "alpha is back by name")
    t.ok(not os.path.exists(s.blob_path(orphan)), "the orphan still stays")
    r = t.run("restore", q, "gamma")
    t.exit_code(r, 8, "no operation removed gamma")
    r = t.run("restore", q, "--op", "nosuch")
    t.exit_code(r, 8, "an unknown operation")
    r = t.run("restore", q, "--op", prune_id)
    t.exit_code(r, 0, "restore --op ID")
    t.ok(os.path.exists(s.blob_path(orphan)), "the orphan is back")
    t.eq(set(o["state"] for o in ops_of(q)["operations"]), {"restored"}, "every operation restored")
    r = t.run("restore", q, "--last")
    t.exit_code(r, 8, "--last with nothing held")
    r = t.run("restore", q, "--last", "--all")
    t.exit_code(r, 16, "two selectors")
    r = t.run("restore", q, "--older-than", "1d")
    t.exit_code(r, 16, "--older-than without --empty")
    r = t.run("restore", q, "--last", "--apply")
    t.exit_code(r, 16, "putting back takes no --apply")

with t.guard("restore DIR --all puts back everything (the old restore DIR)"):
    s, a, b, orphan, q = two_ops("all")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore --all")
    t.ok(os.path.exists(a["path"]) and os.path.exists(s.blob_path(orphan)), "both back")

with t.guard("an index older than operations (quarantine/3) is one legacy operation"):
    s, a, b, orphan, q = two_ops("legacy")
    path = os.path.join(q, "index.json")
    idx = json.load(open(path))
    idx["schema"] = "ollama-audit.quarantine/3"
    del idx["operations"]
    for e in idx["entries"]:
        del e["op"]
    json.dump(idx, open(path, "w"))
    doc = ops_of(q)
    t.eq([o["id"] for o in doc["operations"]], ["legacy"], "one legacy operation")
    t.eq(doc["operations"][0]["models"], ["alpha:latest"], "with the models its rm removed")
    t.eq(doc["operations"][0]["state"], "held", "held")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore --all of a /3 index")
    t.ok(os.path.exists(a["path"]) and os.path.exists(s.blob_path(orphan)), "everything back")

with t.guard("the apply's last line and json: a move frees nothing on disk"):
    s, a, b, orphan = store("line")
    q = os.path.join(t.tempdir("lineq"), "q")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "prune into the quarantine")
    last = r.out.strip().splitlines()[-1]
    t.contains(last, "0 B freed on disk", "the last line says nothing was freed")
    t.contains(last, "the quarantine holds", "and what the quarantine holds")
    t.contains(last, "restore %s --empty" % q, "and how to free it")
    r = t.audit(s.root, "rm", "alpha", "--apply", "--yes", "--quarantine", q, "--format", "json")
    t.exit_code(r, 0, "rm --format json into the quarantine")
    doc = r.json()["stores"][0]
    # what went for good: the empty directories rmdir'ed; the moved files are not freed
    dirs = sum(e["freed_bytes"] for e in doc["entries"] if e["empty_dir"])
    t.eq(doc["freed_bytes"], dirs, "freed_bytes: only the directories removed")
    t.eq(doc["result"]["freed_bytes"], dirs, "result.freed_bytes too")
    t.ok(doc["result"]["moved_bytes"] > dirs, "moved_bytes says what moved")
    held = doc["result"]["quarantine"]
    t.eq(held["operation"], ops_of(q)["operations"][1]["id"], "result names the operation")
    t.eq(held["held_bytes"], ops_of(q)["held_bytes"], "and what the quarantine holds")
    s2, a2, b2, orphan2 = store("line2")
    r = t.audit(s2.root, "prune", "--apply", "--yes", "--quarantine", q + "2", "--format", "json")
    t.exit_code(r, 0, "prune --format json into a quarantine")
    doc = r.json()["stores"][0]
    t.eq((doc["freed_bytes"], doc["result"]["freed_bytes"]), (0, 0), "a moved orphan frees nothing")
    t.ok(doc["result"]["moved_bytes"] > 0, "it moved")

with t.guard("restore DIR --empty: a dry run, then --older-than --apply deletes only older operations"):
    s, a, b, orphan, q = two_ops("empty")
    path = os.path.join(q, "index.json")
    idx = json.load(open(path))
    old = int(time.time()) - 30 * 86400
    idx["operations"][0]["unix_time"] = old  # the prune: a month ago
    json.dump(idx, open(path, "w"))
    prune_id, rm_id = [o["id"] for o in idx["operations"]]
    before = t.snapshot(q)
    r = t.run("restore", q, "--empty")
    t.exit_code(r, 0, "dry run")
    t.contains(r.out, "would delete", "says what it would delete")
    t.contains(r.out, "dry run, nothing deleted", "and that nothing was")
    t.eq(t.diff_snapshots(before, t.snapshot(q)), [], "the dry run deletes nothing")
    r = t.run("restore", q, "--empty", "--older-than", "1w", "--apply")
    t.exit_code(r, 16, "--apply without --yes and no terminal")
    t.eq(t.diff_snapshots(before, t.snapshot(q)), [], "refused: nothing deleted")
    want = stored_alloc(q, prune_id)
    t.ok(want > 0, "the prune's files take room")
    r = t.run("restore", q, "--empty", "--older-than", "7d", "--apply", "--yes", "--units", "bytes")
    t.exit_code(r, 0, "--empty --older-than 7d --apply --yes")
    t.contains(r.out.strip().splitlines()[-1], ": %d freed on disk" % want, "says what it freed")
    states = {o["id"]: o["state"] for o in ops_of(q)["operations"]}
    t.eq(states, {prune_id: "deleted", rm_id: "held"}, "only the older operation went")
    t.ok(stored_alloc(q, rm_id) > 0, "the rm's files are still there")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore --all after emptying part")
    t.ok(os.path.exists(a["path"]), "the rm comes back")
    t.ok(not os.path.exists(s.blob_path(orphan)), "the deleted orphan does not")

with t.guard("restore DIR --empty asks on a terminal and never follows a symlink out of DIR"):
    s, a, b, orphan, q = two_ops("emptytty")
    before = t.snapshot(q)
    r = t.run_tty(("restore", q, "--empty", "--apply"), b"n\n")
    t.exit_code(r, 0, "declined")
    t.contains(r.err, "Delete", "it asked")
    t.eq(t.diff_snapshots(before, t.snapshot(q)), [], "declined: nothing deleted")
    # a stored file swapped for a symlink to a file outside DIR: the link goes, the file stays
    idx = json.load(open(os.path.join(q, "index.json")))
    victim = os.path.join(t.tempdir("victim"), "keep")
    with open(victim, "wb") as f:
        f.write(b"not the quarantine's" * 100)
    entry = [e for e in idx["entries"] if e["state"] == "moved" and e["type"] == "file"][0]
    os.unlink(os.path.join(q, entry["stored"]))
    os.symlink(victim, os.path.join(q, entry["stored"]))
    r = t.run_tty(("restore", q, "--empty", "--apply"), b"y\n")
    t.exit_code(r, 0, "confirmed")
    t.ok(os.path.exists(victim), "the file the symlink pointed to is still there")
    t.eq(os.listdir(os.path.join(q, "files")), [], "DIR/files is empty")
    t.eq(set(o["state"] for o in ops_of(q)["operations"]), {"deleted"}, "every operation deleted")
    t.ok(os.path.exists(b["path"]), "the store is untouched (beta)")

with t.guard("du --quarantine DIR and its Prometheus metrics count what the quarantine holds"):
    s, a, b, orphan, q = two_ops("du")
    held = ops_of(q)
    r = t.audit(s.root, "du", "--quarantine", q, "--format", "json")
    t.exit_code(r, 0, "du --quarantine --format json")
    st = r.json()["stores"][0]
    t.eq(st["quarantine"]["disk_bytes"], held["held_bytes"], "quarantine bytes in du's json")
    t.eq(st["quarantine"]["entries"], held["held_entries"], "and entries")
    r = t.audit(s.root, "du", "--quarantine", q, "--units", "bytes")
    t.exit_code(r, 0, "du --quarantine table")
    t.contains(r.out, "quarantine", "the table has a quarantine line")
    t.contains(r.out, " %d  " % held["held_bytes"], "with its bytes")
    r = t.audit(s.root, "du", "--quarantine", q, "--format", "prometheus")
    t.exit_code(r, 0, "du --quarantine --format prometheus")
    line = [x for x in r.out.splitlines() if x.startswith("ollama_du_quarantine_bytes{")]
    t.eq(len(line), 1, "one quarantine_bytes sample", r.out[-2000:])
    if line:
        t.contains(line[0], 'quarantine="%s"' % q, "labelled with the quarantine")
        t.eq(float(line[0].rsplit(" ", 1)[1]), float(held["held_bytes"]), "its value")
    other = t.new_store("duother")
    t.add_gguf_model(other, "x:latest")
    r = t.audit(other.root, "du", "--quarantine", q)
    t.exit_code(r, 8, "a quarantine of a store du does not show")

t.done()
