#!/usr/bin/env python3
"""A store in the state Ollama 0.40's compatibility migration leaves
(spec §2.5.1; docs/store-format-notes.md, "The state Ollama 0.40's
compatibility migration leaves"), built by tests/tools/make_migrated_store.py:
one list row per child here, the migration's downgrade anchor, compatibility
shadows (kept and orphaned), the downgrade hazard of an older server, the
.manifest-* temps and metadata/ caches, converted copies and models the
current server refuses."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import make_migrated_store as mk  # noqa: E402  (tests/tools is on the path)

t.check_binary()


def hexof(d):
    return d.split(":", 1)[1]


def migrated_store(tag, fresh=False):
    root = os.path.join(t.tempdir(tag), "models")
    return root, mk.build(root, fresh=fresh)


def rows(r, name):
    return [m for st in r.json().get("stores", []) for m in st.get("models", []) if m["name"] == name]


def plan_paths(r):
    return [e["path"] for st in r.json().get("stores", []) for e in st.get("entries", [])]


def findings(root, code):
    r = t.audit(root, "check", "--format", "json", "--platform", "linux/amd64")
    return [f for f in t.findings_of(r.json()) if f["code"] == code]


with t.guard("list: a row per child of a list that is here (buildModelListSummaries)"):
    root, info = migrated_store("mig-list")
    r = t.audit(root, "list", "--format", "json", "--platform", "linux/amd64")
    g = rows(r, "gemma3:4b")
    t.eq(sorted((m["id"], m["runner"]) for m in g),
         sorted([(hexof(info["gemma_ggml"])[:12], "ggml"), (hexof(info["gemma_llamacpp"])[:12], "llamacpp")]),
         "gemma3:4b has two rows: the ggml child and the converted llamacpp child, each its own ID and runner")
    t.eq([m["list_child"]["runner"] for m in g if m["list_child"]["in_use"]], ["llamacpp"],
         "the row a load uses on linux/amd64 is marked in_use")
    t.ok(len({m["size"] for m in g}) == 2, "each row has its child's SIZE", g)
    r = t.audit(root, "list", "--platform", "linux/amd64")
    lines = [l for l in r.out.splitlines() if l.startswith("gemma3:4b ")]
    t.eq(len(lines), 2, "the table has two gemma3:4b rows", r.out)
    t.ok(any("llamacpp*" in l for l in lines) and any(" ggml " in l for l in lines),
         "RUNNER says ggml and llamacpp, * on the one a load uses", lines)
    r = t.audit(root, "list", "--format", "csv", "--platform", "linux/amd64")
    t.eq(sum(1 for l in r.out.splitlines() if ",gemma3:4b," in l), 2, "csv has both rows")
    r = t.audit(root, "list", "--format", "ndjson", "--platform", "linux/amd64")
    t.eq(sum(1 for x in r.ndjson() if x.get("type") == "model" and x.get("name") == "gemma3:4b"), 2,
         "ndjson has both rows")
    r = t.audit(root, "show", "gemma3:4b", "--platform", "linux/amd64")
    t.exit_code(r, 0, "show NAME takes the tag")
    t.contains(r.out, "manifest list", "show still shows the list")
    t.ok("ggml" in r.out and "in use" in r.out, "and its children", r.out)

with t.guard("the migration's downgrade anchor is info; a legacy tag that differs stays a warning"):
    root, info = migrated_store("mig-anchor")
    fs = findings(root, "legacy-anchor")
    by = {f["model"]: f for f in fs}
    t.eq(by.get("gemma3:4b", {}).get("severity"), "info", "the anchor equal to the ggml child is info", fs)
    t.contains(by.get("gemma3:4b", {}).get("message", ""), "ggml child", "and says it is the ggml child")
    t.eq(by.get("llama3.2:1b", {}).get("severity"), "warning", "an anchor that differs from every child warns")

with t.guard(".manifest-* in manifests-v2/ is a temp, never an error"):
    root, info = migrated_store("mig-temp")
    r = t.audit(root, "check")
    t.ok(r.code & 4 == 0, "no error exit for an interrupted tag write", r.describe())
    t.not_contains(r.out + r.err, "invalid-name", "not an invalid name")
    r = t.audit(root, "prune", "--format", "json")
    paths = plan_paths(r)
    t.ok(any(p.endswith("/.manifest-4242") for p in paths), "prune plans its removal", paths)
    froot, _ = migrated_store("mig-temp-fresh", fresh=True)
    r = t.audit(froot, "prune", "--format", "json")
    t.ok(not any(p.endswith(".manifest-4242") for p in plan_paths(r)),
         "not inside the grace period", r.out)

with t.guard("compatibility shadows: named, kept, and orphaned ones said"):
    root, info = migrated_store("mig-shadow")
    r = t.audit(root, "list", "--format", "json")
    sh = rows(r, info["gemma_shadow"])
    t.eq([m.get("shadow_of") for m in sh], ["gemma3:4b"], "the shadow is listed with the model it shadows")
    orph = rows(r, info["orphan_shadow"])
    t.eq([m.get("shadow_of", "absent") for m in orph], [None], "an orphaned shadow shadows nothing")
    r = t.audit(root, "list")
    t.contains(r.out, "SHADOW OF", "the table has a SHADOW OF column")
    # on a terminal the column is the first to give way (docs/ollama-audit.1, COLUMNS)
    shadow_only = False
    for cols in range(60, 240, 10):
        r = t.run_tty(("--store", root, "list"), None, stdout_tty=True, cols=cols)
        head = next((ln for ln in r.out.splitlines() if ln.startswith("NAME")), "")
        others = [c for c in ("RUNNER", "ARCH", "PARAMS", "QUANT", "FORMAT") if c not in head]
        t.ok(not others or "SHADOW OF" not in head,
             "%d columns: SHADOW OF hides before %s" % (cols, ", ".join(others)), r.out)
        shadow_only |= "SHADOW OF" not in head and not others
    t.ok(shadow_only, "some width hides SHADOW OF alone", r.out)
    cs = findings(root, "compat-shadow")
    t.eq([(f["model"], f["severity"]) for f in cs], [(info["gemma_shadow"], "info")], "compat-shadow is info")
    os_ = findings(root, "orphaned-shadow")
    t.eq([(f["model"], f["severity"]) for f in os_], [(info["orphan_shadow"], "warning")],
         "orphaned-shadow warns")
    t.ok(os_ and "KB" in os_[0]["message"], "with the bytes only the shadow holds", os_)

with t.guard("prune --predict-server answers for an older server too (the downgrade hazard)"):
    root, info = migrated_store("mig-predict")
    r = t.audit(root, "prune", "--predict-server")
    t.contains(r.out, "Ollama 0.40", "the default is the newest server the layout implies")
    t.contains(r.out, "assumed", "and it says it was assumed")
    t.contains(r.out, "0 files deleted", "0.40 deletes nothing any tag reaches")
    r = t.audit(root, "prune", "--predict-server", "--server-version", "0.33", "--format", "json")
    doc = r.json()
    doc = doc["stores"][0] if "stores" in doc else doc
    destroyed = sorted(m["name"] for m in doc.get("models_destroyed", []))
    t.eq(destroyed, ["llama3.2:1b", "qwen3:0.6b"], "an older server destroys the models only manifests-v2/ names")
    deleted = {d["path"] for d in doc.get("deletes", [])}
    t.ok("blobs/sha256-" + hexof(info["qwen_weights"]) in deleted, "their weights are in its delete list", deleted)
    for keep in (info["gemma_source_weights"], info["gemma_converted_weights"], info["orphan_weights"]):
        t.ok("blobs/sha256-" + hexof(keep) not in deleted,
             "the anchor and the shadows keep their blobs for it (%s)" % keep[:19])
    r = t.audit(root, "prune", "--predict-server", "--server-version", "0.33")
    t.ok(r.out.index("destroys") < r.out.index("delete "), "the models come above the blobs", r.out)
    r = t.audit(root, "prune", "--predict-server", "--server-version", "zero")
    t.exit_code(r, 16, "a version that is not one is a usage error")
    fs = findings(root, "downgrade-loss")
    t.eq(sorted(f["model"] for f in fs), ["llama3.2:1b", "qwen3:0.6b"], "check reports downgrade-loss for them")
    t.ok(all(f["severity"] == "warning" for f in fs), "as a warning")

with t.guard("metadata/: caches kept and counted, stale ones pruned"):
    root, info = migrated_store("mig-meta")
    fs = findings(root, "stale-metadata")
    t.eq(len(fs), 1, "one stale cache", fs)
    t.contains(fs[0]["path"] if fs else "", info["metadata_stale"], "the one whose blob is gone")
    r = t.audit(root, "du")
    t.contains(r.out, "metadata/", "du shows the metadata total")
    r = t.audit(root, "prune", "--format", "json")
    paths = plan_paths(r)
    t.ok(any(info["metadata_stale"] in p for p in paths), "prune removes the stale cache", paths)
    t.ok(not any(info["metadata_kept"] in p for p in paths), "not the one whose blob is here", paths)

with t.guard("converted children: the copy's bytes and what dropping either frees"):
    root, info = migrated_store("mig-conv")
    r = t.audit(root, "du", "--format", "json")
    conv = r.json()["stores"][0].get("conversions", [])
    t.eq([c["name"] for c in conv], ["gemma3:4b"], "du names the converted tag")
    t.ok(conv and conv[0]["duplicated_bytes"] > 0 and conv[0]["drop_ggml_frees_bytes"] > 0,
         "with the duplicated bytes and what dropping each child frees", conv)
    r = t.audit(root, "show", "gemma3:4b")
    t.contains(r.out, "duplicates", "show says the converted child duplicates its source")

with t.guard("unservable models: mllama and image generation"):
    root, info = migrated_store("mig-unserv")
    fs = {f["model"]: f for f in findings(root, "unservable")}
    t.eq(sorted(fs), ["llama3.2-vision:11b", "x/z-image:turbo"], "both are unservable")
    t.contains(fs.get("llama3.2-vision:11b", {}).get("message", ""), "mllama", "with the reason")
    r = t.audit(root, "show", "x/z-image:turbo")
    t.contains(r.out, "unservable", "show says it")
    unserv = {"llama3.2-vision:11b", "x/z-image:turbo"}
    for cmd in ("du", "list"):
        r = t.audit(root, cmd, "--sort", "unservable", "--format", "json")
        names = [m["name"] for st in r.json().get("stores", []) for m in st.get("models", [])]
        t.eq(set(names[:2]), unserv, "%s --sort unservable puts them first, for cleanup" % cmd, names)
        t.ok(not unserv & set(names[2:]), "%s --sort unservable: only them first" % cmd, names)
    r = t.audit(root, "du", "--sort", "unservable", "--format", "json")
    ms = [m for st in r.json().get("stores", []) for m in st.get("models", [])]
    t.ok(ms[0]["unique_bytes"] >= ms[1]["unique_bytes"] and
         all(a["unique_bytes"] >= b["unique_bytes"] for a, b in zip(ms[2:], ms[3:])),
         "du: then by UNIQUE, as by default", [(m["name"], m["unique_bytes"]) for m in ms])

with t.guard("rm NAME removes every child of the list; the shadow keeps the converted one"):
    root, info = migrated_store("mig-rm")
    r = t.audit(root, "rm", "gemma3:4b", "--format", "json")
    doc = r.json()
    doc = doc["stores"][0] if "stores" in doc else doc
    todo = {e["path"] for e in doc.get("entries", [])}
    kept = {e["path"] for e in doc.get("kept", [])}
    t.ok("blobs/sha256-" + hexof(info["gemma_source_weights"]) in todo,
         "the ggml child's weights go with the tag (its row is not another user)", sorted(todo))
    t.ok("blobs/sha256-" + hexof(info["gemma_converted_weights"]) in kept,
         "the converted weights stay: the compatibility shadow uses them", sorted(kept))
    t.eq(sum(1 for p in todo if p.startswith("manifests-v2/")), 2, "the tag file once, and its directory")

with t.guard("prune --apply removes nothing a tag, list, child, anchor or shadow references"):
    root, info = migrated_store("mig-apply")
    before = t.snapshot(root)
    r = t.audit(root, "prune", "--apply", "--yes", "--what", "all")
    t.exit_code(r, 0, "prune --apply runs")
    gone = [k for k in before if k not in t.snapshot(root)]
    t.eq(sorted(gone), sorted(["manifests-v2/ollama.com/library/qwen3/.manifest-4242",
                               "metadata/sha256-%s.json" % info["metadata_stale"]]),
         "only the temp and the stale cache are removed")
    r = t.audit(root, "check", "--format", "json")
    t.eq([f for f in t.findings_of(r.json()) if f["severity"] == "error"], [], "the store is still whole")
    r = t.audit(root, "list", "--format", "json")
    t.eq(len(rows(r, "gemma3:4b")), 2, "both children still listed")

with t.guard("rm of a converted model says it leaves the compatibility shadow; --with-shadow removes it"):
    root, info = migrated_store("mig-rm-shadow")
    shadow = info["gemma_shadow"]
    conv = "blobs/sha256-" + hexof(info["gemma_converted_weights"])
    before = t.snapshot(root)
    r = t.audit(root, "rm", "gemma3:4b", "--format", "json")
    t.contains(r.err, "leaves its compatibility shadow " + shadow, "the dry run names the shadow it leaves")
    t.contains(r.err, "--with-shadow", "and how to remove it too")
    doc = r.json()
    doc = doc["stores"][0] if "stores" in doc else doc
    sh = doc.get("shadows", [])
    t.eq([(x["name"], x["removed"]) for x in sh], [(shadow, False)], "the plan names the shadow, kept", sh)
    t.ok(sh and sh[0]["bytes_only_it_holds"] > 0, "with the bytes only it holds once the tag is gone", sh)
    r = t.audit(root, "rm", "gemma3:4b", "--units", "bytes")
    t.contains(r.err, ", %d bytes only it holds" % (sh[0]["bytes_only_it_holds"] if sh else -1),
               "stderr says the same bytes")
    t.ok(conv in {e["path"] for e in doc.get("kept", [])}, "its weights are not in the plan")
    t.eq(sorted(before), sorted(t.snapshot(root)), "a dry run changes nothing")

    r = t.audit(root, "rm", "gemma3:4b", "--with-shadow", "--format", "json")
    doc = r.json()
    doc = doc["stores"][0] if "stores" in doc else doc
    t.eq([(x["name"], x["removed"]) for x in doc.get("shadows", [])], [(shadow, True)], "--with-shadow plans it")
    t.eq(sum(e["bytes_only_it_holds"] for e in doc["shadows"]) > 0, True, "same bytes field")
    t.ok(conv in {e["path"] for e in doc.get("entries", [])}, "and the converted weights with it")

    plan = os.path.join(t.tempdir("mig-rm-plan"), "plan.json")
    r = t.audit(root, "rm", "gemma3:4b", "--plan", plan)
    r = t.audit(root, "rm", "--apply", "--yes", "--plan", plan, "--with-shadow")
    t.exit_code(r, 16, "--with-shadow with --apply --plan FILE is a usage error (the plan decides)")
    t.eq(sorted(before), sorted(t.snapshot(root)), "and it changes nothing")

    r = t.audit(root, "rm", "gemma3:4b", "--with-shadow", "--apply", "--yes")
    t.exit_code(r, 0, "rm --with-shadow --apply runs")
    r = t.audit(root, "list", "--format", "json")
    names = {m["name"] for st in r.json().get("stores", []) for m in st.get("models", [])}
    t.ok("gemma3:4b" not in names and shadow not in names, "the tag and its shadow are gone", sorted(names))
    t.ok(info["orphan_shadow"] in names, "another shadow stays", sorted(names))
    t.ok(not os.path.exists(os.path.join(root, conv)), "the converted weights are gone")
    r = t.audit(root, "check", "--format", "json")
    bad = [f for f in t.findings_of(r.json()) if f["severity"] == "error" or f["code"].startswith("missing")]
    t.eq(bad, [], "nothing another tag references went: no missing blob")

with t.guard("rm --apply without --with-shadow leaves an orphaned shadow, as ollama rm does"):
    root, info = migrated_store("mig-rm-noshadow")
    r = t.audit(root, "rm", "gemma3:4b", "--apply", "--yes")
    t.exit_code(r, 0, "rm --apply runs")
    t.contains(r.err, "leaves its compatibility shadow " + info["gemma_shadow"], "--apply says it too")
    t.eq(sorted(f["model"] for f in findings(root, "orphaned-shadow")),
         sorted([info["gemma_shadow"], info["orphan_shadow"]]), "check reports the shadow left behind")
    t.ok(os.path.exists(os.path.join(root, "blobs/sha256-" + hexof(info["gemma_converted_weights"]))),
         "its weights stay")

t.done()
