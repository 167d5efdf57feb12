#!/usr/bin/env python3
"""Plans by model: rm's table is a row per model (NAME, FREES, LAST USED,
PULLED), prune's a row per kind of junk (an interrupted pull is one row with
its part count), then the total; -v lists every file. In json an entry's
bytes are planned_bytes until applied: freed_bytes is only what a run freed.
du --unused-for ends with what rm --unused-for frees (the same plan), and
the one-liner `rm $(list -q --unused-for 90d)` plans the same models, or
nothing, without an error, when none is unused."""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()

FAMILIES = ["llama3.2", "qwen2.5-coder", "phi4", "gemma3", "mistral"]
DAY = 86400


def iso(secs_ago):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - secs_ago))


def build(tag, n=14):
    """n models pulled 400 days ago sharing a template, one pulled now, logs
    beside the store loading three of them 10, 30 and 150 days ago, an
    interrupted pull of 16 parts and two orphans. Returns (store, names,
    loaded {name: days ago})."""
    s = t.new_store(tag)
    old = time.time() - 400 * DAY
    blobs, names = {}, []
    for k in range(n):
        name = "%s:%db" % (FAMILIES[k % len(FAMILIES)], k + 1)
        info = t.add_gguf_model(s, name, seed="s%d" % k, mtime=old)
        blobs[name] = t.weight_layer(info)["digest"].split(":")[1]
        names.append(name)
    t.add_gguf_model(s, "fresh:1b", seed="fresh")
    s.partial_download(os.urandom(20000), n_parts=16, completed=0.3, mtime=old)
    for data in (b"orphan one" * 300, b"orphan two" * 300):
        p = s.blob_path(s.add_blob(data))
        os.utime(p, (old, old))
    loaded = {names[k]: days for k, days in ((0, 10), (2, 30), (3, 150)) if k < n}
    lines = ['time=%s level=INFO source=routes.go:1277 msg="Listening on [::]:11434 (version 0.5.13)"'
             % iso(200 * DAY)]
    for name, days in sorted(loaded.items(), key=lambda x: -x[1]):
        lines.append('time=%s level=INFO source=server.go:380 msg="starting llama server" '
                     'cmd="/usr/bin/ollama runner --model %s/blobs/sha256-%s --port 1"'
                     % (iso(days * DAY), s.root, blobs[name]))
    logs = os.path.join(os.path.dirname(s.root), "logs")
    os.makedirs(logs, exist_ok=True)
    with open(os.path.join(logs, "server.log"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return s, names, loaded


def rows_of(out, head):
    """The table rows after the heading line that starts with head."""
    lines = out.splitlines()
    i = next((k for k, ln in enumerate(lines) if ln.startswith(head)), None)
    if i is None:
        return []
    rows = []
    for ln in lines[i + 1:]:
        if not ln or ln.startswith("kept ") or " entries, " in ln or " entry, " in ln or ln.startswith("list-"):
            break
        rows.append(ln)
    return rows


with t.guard("rm --unused-for on many models: a row per model, then the total"):
    s, names, loaded = build("bymodel")
    unused = sorted(n for n in names if loaded.get(n, 1000) > 90)
    r = t.audit(s.root, "rm", "--unused-for", "90d", "--units", "bytes")
    t.exit_code(r, 0, "rm --unused-for 90d: a dry run")
    t.contains(r.out.splitlines()[0], "rm plan (by model; -v lists every file)", "the heading says how to see files")
    rows = rows_of(r.out, "NAME ")
    t.eq(sorted(x.split()[0] for x in rows), unused, "one row per model the plan removes, %d of them" % len(unused),
         r.out)
    t.ok(len(unused) >= 10, "a plan of many models (%d)" % len(unused))
    t.not_contains(r.out, "sha256-", "no blob path without -v")
    t.not_contains(r.out, "manifests/", "no manifest path without -v")
    head = r.out.splitlines()[1].split()
    t.eq(head, ["NAME", "FREES", "LAST", "USED", "PULLED"], "the columns")
    doc = t.audit(s.root, "rm", "--unused-for", "90d", "--format", "json").json()["stores"][0]
    frees = {}
    for e in doc["entries"]:
        frees[e["model"]] = frees.get(e["model"], 0) + e["planned_bytes"]
    by_row = {x.split()[0]: x.split() for x in rows}
    for name in unused:
        row = by_row.get(name, [])
        t.eq(row[1:2], [str(frees.get(name))], "%s: FREES is what its entries free" % name, row)
        want_used = "5 months ago" if name in loaded else "never"
        t.eq(" ".join(row[2:5] if name in loaded else row[2:3]), want_used, "%s: LAST USED from the logs" % name, row)
        t.ok(" ".join(row).endswith("months ago") or " ".join(row).endswith("year ago"),
             "%s: PULLED, the manifest's age" % name, row)
    sizes = [int(by_row[n][1]) for n in [x.split()[0] for x in rows]]
    t.eq(sizes, sorted(sizes, reverse=True), "largest first", rows)
    total = r.out.strip().splitlines()[-1]
    t.eq(total, "%d entries, %d to free (%d allocated); dry run, nothing removed: --apply removes"
         % (len(doc["entries"]), doc["planned_bytes"], doc["disk_bytes"]), "the total line, as before")
    kept = [ln for ln in r.out.splitlines() if ln.startswith("kept ")]
    t.eq(len(kept), 1, "what is kept: a line per reason", r.out)
    t.ok(kept and re.match(r"kept %d model-blob entries \(\d+ on disk\): also used by fresh:1b$" % len(doc["kept"]),
                           kept[0]), "its count, size and why (the template and params fresh:1b shares)", kept)
    v = t.audit(s.root, "rm", "--unused-for", "90d", "-v")
    t.exit_code(v, 0, "rm -v")
    for e in doc["entries"] + doc["kept"]:
        t.contains(v.out, e["path"], "-v lists %s" % e["path"])
    t.contains(v.out, "CATEGORY      AGE    ON DISK      FREED  PATH", "-v: the file table")

with t.guard("prune: an interrupted pull is one row with its part count, orphans one row"):
    s, names, loaded = build("bykind", n=2)
    r = t.audit(s.root, "prune")
    t.exit_code(r, 0, "prune: a dry run")
    rows = rows_of(r.out, "KIND ")
    t.eq(len(rows), 2, "two rows: the orphans and the interrupted pull", r.out)
    part = [x for x in rows if x.startswith("partials ")]
    t.ok(len(part) == 1 and part[0].split()[1] == "17", "the pull: its data file and 16 parts, one row", rows)
    t.contains(part[0] if part else "", "in 16 part files", "with its progress")
    orph = [x for x in rows if x.startswith("orphans ")]
    t.ok(len(orph) == 1 and orph[0].split()[1] == "2", "the two orphans: one row with their count", rows)
    t.not_contains(r.out, "-partial-", "no part file without -v")
    v = t.audit(s.root, "prune", "-v")
    t.eq(v.out.count("-partial-"), 16, "-v lists every part file", v.out)

with t.guard("json: planned_bytes until applied, freed_bytes only what went"):
    s, names, loaded = build("freed", n=3)
    victim = names[1]
    doc = t.audit(s.root, "rm", victim, "--format", "json").json()
    st = doc["stores"][0]
    t.eq(doc["schema"], "ollama-audit.rm/5", "rm/5: an entry's freed_bytes changed meaning")
    t.ok(st["entries"] and all(e["freed_bytes"] == 0 for e in st["entries"]), "a dry run: no entry freed anything",
         st["entries"])
    t.ok(all(e["planned_bytes"] > 0 for e in st["entries"]), "each planned entry says what it would free")
    t.eq(st["planned_bytes"], sum(e["planned_bytes"] for e in st["entries"]), "planned_bytes: the entries' sum")
    t.ok(st["kept"] and all(e["freed_bytes"] == 0 and e["planned_bytes"] == 0 for e in st["kept"]),
         "a kept entry frees nothing and plans nothing", st["kept"])
    r = t.audit(s.root, "rm", victim, "--format", "csv")
    head, *rows = r.out.splitlines()
    cols = head.split(",")
    # added after the columns there were (which keep their places), before
    # the user column added after it
    t.eq(cols[cols.index("note") + 1:], ["planned_bytes", "user"], "csv: planned_bytes added after note, then user")
    t.ok(all(x.split(",")[cols.index("freed_bytes")] == "0" for x in rows), "csv: freed_bytes 0 in a dry run", rows)
    doc = t.audit(s.root, "rm", victim, "--apply", "--yes", "--format", "json").json()
    st = doc["stores"][0]
    t.eq([e["freed_bytes"] for e in st["entries"]], [e["planned_bytes"] for e in st["entries"]],
         "applied: each entry freed what it planned")
    t.eq(sum(e["freed_bytes"] for e in st["entries"]), st["result"]["freed_bytes"], "and they add up to the run's")
    q = os.path.join(t.tempdir("freedq"), "q")
    doc = t.audit(s.root, "rm", names[2], "--apply", "--yes", "--quarantine", q, "--format", "json").json()
    st = doc["stores"][0]
    t.ok(all(e["freed_bytes"] == 0 for e in st["entries"] if not e["empty_dir"]),
         "moved into a quarantine: nothing freed", st["entries"])
    t.eq(sum(e["freed_bytes"] for e in st["entries"]), st["freed_bytes"], "only the directories removed free bytes")

with t.guard("du --unused-for ends with what rm --unused-for frees"):
    s, names, loaded = build("durm")
    r = t.audit(s.root, "du", "--unused-for", "90d", "--units", "bytes")
    t.exit_code(r, 0, "du --unused-for 90d")
    plan = t.audit(s.root, "rm", "--unused-for", "90d", "--format", "json").json()["stores"][0]
    n = len({e["model"] for e in plan["entries"]})
    last = r.out.strip().splitlines()[-1]
    t.eq(last.split(), ["rm", "would", "free", str(plan["planned_bytes"]), "the", str(n), "models", "of",
                        "`ollama-audit", "rm", "--unused-for", "90d`"], "the last line: rm's planned bytes", r.out)
    doc = t.audit(s.root, "du", "--unused-for", "90d", "--format", "json").json()["stores"][0]
    t.eq(doc.get("selection"), {"rm_args": "--unused-for 90d", "models": n, "planned_bytes": plan["planned_bytes"]},
         "json: the same, as selection")
    r = t.audit(s.root, "du")
    t.not_contains(r.out, "rm would free", "no selection: no such line")

with t.guard("the one-liner rm $(list -q --unused-for 90d), and with nothing unused"):
    s, names, loaded = build("oneliner")
    q = t.audit(s.root, "list", "-q", "--unused-for", "90d")
    t.exit_code(q, 0, "list -q --unused-for")
    listed = q.out.split()
    t.ok(len(listed) >= 10, "it lists the unused models", listed)
    a = t.audit(s.root, "rm", *listed, "--format", "json").json()["stores"][0]
    b = t.audit(s.root, "rm", "--unused-for", "90d", "--format", "json").json()["stores"][0]
    t.eq(sorted(e["path"] for e in a["entries"]), sorted(e["path"] for e in b["entries"]),
         "rm $(list -q --unused-for 90d) plans what rm --unused-for 90d plans")
    r = t.audit(s.root, "rm", "-q", "--unused-for", "90d")
    t.eq(sorted(r.out.split()), sorted(listed), "rm -q: the names of the models planned")
    r = t.audit(s.root, "rm", "-q", "--unused-for", "90d", "--apply")
    t.exit_code(r, 16, "rm -q with --apply is refused")
    q = t.audit(s.root, "list", "-q", "--unused-for", "5000d")
    t.eq((q.code, q.out), (0, ""), "nothing unused that long: list -q prints nothing")
    before = t.snapshot(s.root)
    for extra in ([], ["--apply", "--yes"]):
        r = t.audit(s.root, "rm", *(extra + q.out.split()))
        t.exit_code(r, 0, "rm %s with no model: nothing to do is no error" % " ".join(extra))
        t.contains(r.err, "nothing to remove", "it says there is nothing to remove")
        t.eq(r.out, "", "and plans nothing")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "the store is unchanged")
    doc = t.audit(s.root, "rm", "--format", "json").json()
    t.eq((doc["status"], doc["stores"]), ("ok", []), "json: an empty document, status ok")

t.done()
