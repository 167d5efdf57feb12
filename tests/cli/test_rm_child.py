#!/usr/bin/env python3
"""rm MODEL --child RUNNER: one child of a manifest list removed (the list tag
rewritten without it, then the blobs only that child used), on the store
Ollama 0.40's compatibility migration leaves (tests/tools/make_migrated_store.py;
docs/disk-space.md, "Removing one child of a list")."""

import hashlib
import json
import os
import stat
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import make_migrated_store as mk  # noqa: E402  (tests/tools is on the path)

t.check_binary()

TAG = "manifests-v2/ollama.com/library/gemma3/4b"
ANCHOR = "manifests/registry.ollama.ai/library/gemma3/4b"
PLAT = ("--platform", "linux/amd64")


def hexof(d):
    return d.split(":", 1)[1]


def blob(d):
    return "blobs/sha256-" + hexof(d)


def store(tag, kind="symlink", mode=0o644):
    """The fixture, its gemma3:4b tag made a symlink, hard link or copy."""
    root = os.path.join(t.tempdir(tag), "models")
    info = mk.build(root)
    p = os.path.join(root, TAG)
    target = os.path.join(root, blob(info["gemma_list"]))
    if kind != "symlink":
        os.remove(p)
        if kind == "hardlink":
            os.link(target, p)
        else:
            with open(target, "rb") as f, open(p, "wb") as g:
                g.write(f.read())
            os.chmod(p, mode)
    return root, info


def doc_of(r):
    d = r.json()
    return d["stores"][0] if "stores" in d else d


def gemma_rows(root):
    r = t.audit(root, "list", "--format", "json", *PLAT)
    return [m for st in r.json().get("stores", []) for m in st.get("models", []) if m["name"] == "gemma3:4b"]


def errors(root):
    r = t.audit(root, "check", "--format", "json", *PLAT)
    return [f for f in t.findings_of(r.json()) if f["severity"] == "error" or f["code"].startswith("missing")]


def tag_list(root):
    with open(os.path.join(root, TAG), "rb") as f:
        data = f.read()
    return data, json.loads(data)


with t.guard("a dry run changes nothing and shows the rewrite and the bytes"):
    root, info = store("child-dry")
    before = t.snapshot(root)
    r = t.audit(root, "rm", "gemma3:4b", "--child", "llamacpp", "--format", "json", *PLAT)
    t.exit_code(r, 0, "the dry run plans")
    doc = doc_of(r)
    rw = doc.get("list_rewrite") or {}
    t.eq((rw.get("path"), rw.get("child_removed"), rw.get("children_kept"), rw.get("tag_kind")),
         (TAG, "llamacpp", ["ggml"], "symlink"), "list_rewrite names the tag, the child and what stays", rw)
    t.eq(rw.get("child_digest"), info["gemma_llamacpp"], "and the child's digest")
    t.eq(rw.get("list_digest"), info["gemma_list"], "and the list it rewrites")
    t.eq(doc["entries"][0]["path"] if doc.get("entries") else None, TAG, "the rewrite is the plan's first entry")
    t.eq(doc["entries"][0]["category"] if doc.get("entries") else None, "list-rewrite", "category list-rewrite")
    todo = {e["path"] for e in doc.get("entries", [])}
    kept = {e["path"] for e in doc.get("kept", [])}
    t.ok(blob(info["gemma_list"]) in todo, "the old list blob goes after the rewrite", sorted(todo))
    t.ok(blob(info["gemma_converted_weights"]) in kept, "the shadow keeps the converted weights", sorted(kept))
    sh = doc.get("shadows", [])
    t.eq([(x["name"], x["removed"]) for x in sh], [(info["gemma_shadow"], False)], "the shadow is named, kept")
    t.ok(sh and sh[0]["bytes_only_it_holds"] > 0, "with the bytes it keeps", sh)
    t.contains(r.err, "leaves its compatibility shadow " + info["gemma_shadow"], "stderr says so")

    r = t.audit(root, "rm", "gemma3:4b", "--child", "llamacpp", "--with-shadow", "--format", "json", *PLAT)
    doc = doc_of(r)
    todo = {e["path"] for e in doc.get("entries", [])}
    t.ok(blob(info["gemma_converted_weights"]) in todo and blob(info["gemma_llamacpp"]) in todo,
         "--with-shadow: the converted weights and child manifest go", sorted(todo))
    t.ok(blob(info["gemma_source_weights"]) not in todo and ANCHOR not in todo,
         "nothing of the ggml child, nor its anchor", sorted(todo))
    du = t.audit(root, "du", "--format", "json").json()["stores"][0]["conversions"][0]
    t.ok(doc["planned_bytes"] >= du["drop_llamacpp_frees_bytes"] > 0,
         "it frees at least what du says dropping the converted child frees", (doc["planned_bytes"], du))
    r = t.audit(root, "rm", "gemma3:4b", "--child", "llamacpp", *PLAT)
    t.contains(r.out, "list-rewrite", "the table shows the rewrite")
    t.contains(r.out, "the list keeps ggml", "and what the list keeps")
    t.eq(t.diff_snapshots(before, t.snapshot(root)), [], "no dry run changed anything")

with t.guard("--apply of the llamacpp child: the list keeps ggml, one row, nothing of ggml lost"):
    root, info = store("child-lcpp")
    r = t.audit(root, "rm", "gemma3:4b", "--child", "llamacpp", "--with-shadow", "--apply", "--yes", *PLAT)
    t.exit_code(r, 0, "rm --child --apply runs")
    t.contains(r.out, "rewrote " + TAG, "it says it rewrote the tag")
    rows = gemma_rows(root)
    t.eq([m["runner"] for m in rows], ["ggml"], "list shows one gemma3:4b row, the ggml child", rows)
    t.eq(rows[0]["id"] if rows else None, hexof(info["gemma_ggml"])[:12], "with the ggml child's ID")
    data, lst = tag_list(root)
    t.eq([(c["digest"], c["runner"]) for c in lst.get("manifests", [])], [(info["gemma_ggml"], "ggml")],
         "the tag is the list with the ggml child only")
    link = os.readlink(os.path.join(root, TAG))
    t.eq(link, "../../../../blobs/sha256-" + hashlib.sha256(data).hexdigest(),
         "still a relative symlink, to the new list's blob")
    for keep in (info["gemma_source_weights"], info["gemma_ggml"]):
        t.ok(os.path.exists(os.path.join(root, blob(keep))), "kept: %s" % keep[:19])
    t.ok(os.path.exists(os.path.join(root, ANCHOR)), "the downgrade anchor (the ggml child) stays")
    for gone in (info["gemma_converted_weights"], info["gemma_llamacpp"], info["gemma_list"]):
        t.ok(not os.path.exists(os.path.join(root, blob(gone))), "removed: %s" % gone[:19])
    names = {m["name"] for st in t.audit(root, "list", "--format", "json").json()["stores"] for m in st["models"]}
    t.ok(info["gemma_shadow"] not in names, "--with-shadow removed the shadow tag", sorted(names))
    t.eq(errors(root), [], "check: no error, no missing blob")
    fs = [f for f in t.findings_of(t.audit(root, "check", "--format", "json").json())
          if f["code"] == "legacy-anchor" and f["model"] == "gemma3:4b"]
    t.eq([f["severity"] for f in fs], ["info"], "the anchor still equals a child (info)", fs)

with t.guard("--apply of the ggml child: its anchor goes, the converted child stays (a copy tag keeps its mode)"):
    root, info = store("child-ggml", kind="copy", mode=0o640)
    r = t.audit(root, "rm", "gemma3:4b", "--child", "ggml", "--apply", "--yes", *PLAT)
    t.exit_code(r, 0, "rm --child ggml --apply runs")
    t.contains(r.err, "downgrade anchor", "stderr says the anchor goes and what that means")
    t.contains(r.err, "no longer sees gemma3:4b", "an older Ollama no longer sees the model")
    rows = gemma_rows(root)
    t.eq([m["runner"] for m in rows], ["llamacpp"], "one row, the llamacpp child", rows)
    st = os.lstat(os.path.join(root, TAG))
    t.ok(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640, "still a copy, mode 0640", oct(st.st_mode))
    data, lst = tag_list(root)
    t.eq([c["runner"] for c in lst.get("manifests", [])], ["llamacpp"], "the list names the llamacpp child only")
    t.ok(os.path.exists(os.path.join(root, "blobs/sha256-" + hashlib.sha256(data).hexdigest())),
         "and the new list is stored as a blob too")
    t.ok(not os.path.exists(os.path.join(root, ANCHOR)), "the anchor is removed")
    t.ok(not os.path.exists(os.path.join(root, blob(info["gemma_source_weights"]))), "the ggml weights are freed")
    for keep in (info["gemma_converted_weights"], info["gemma_llamacpp"]):
        t.ok(os.path.exists(os.path.join(root, blob(keep))), "kept: %s" % keep[:19])
    t.eq(errors(root), [], "check: no error, no missing blob")

with t.guard("refusals: not a list, a child not here, the last child, bad option combinations"):
    root, info = store("child-refuse")
    before = t.snapshot(root)
    cases = [
        (("llama3.2:1b", "--child", "ggml"), "not a manifest list"),
        (("qwen3:0.6b", "--child", "mlx"), "no mlx child here"),
        (("qwen3:0.6b", "--child", "llamacpp"), "no child here"),
        (("gemma3:4b", "--child", "mlx"), "no mlx child here"),
        (("gemma3:4b", "--child", "vulkan"), "--child takes"),
        (("gemma3:4b", "qwen3:0.6b", "--child", "ggml"), "exactly one MODEL"),
        (("gemma3:4b", "--child", "ggml", "--plan", os.path.join(t.tempdir("child-plan"), "p.json")),
         "not saved as a plan"),
    ]
    for args, says in cases:
        r = t.audit(root, "rm", *args, "--apply", "--yes", *PLAT)
        t.exit_code(r, 16, "rm %s is a usage error" % " ".join(args[:3]))
        t.contains(r.err, says, "and says why")
    r = t.audit(root, "rm", "llama3.2:1b", "--child", "ggml", "--format", "json", *PLAT)
    t.exit_code(r, 16, "json: the refusal is a usage error too")
    errs = r.json().get("errors", [])
    t.ok(any("not a manifest list" in e.get("message", "") for e in errs), "and the document's errors say why", errs)
    t.eq(t.diff_snapshots(before, t.snapshot(root)), [], "no refusal changed anything")

with t.guard("--quarantine: restore puts the list back byte-identical"):
    for kind in ("symlink", "hardlink"):
        root, info = store("child-q-" + kind, kind=kind)
        before = t.snapshot(root)
        q = os.path.join(t.tempdir("child-q"), "q")
        r = t.audit(root, "rm", "gemma3:4b", "--child", "ggml", "--apply", "--yes", "--quarantine", q, *PLAT)
        t.exit_code(r, 0, "%s tag: rm --child --quarantine runs" % kind)
        t.eq([m["runner"] for m in gemma_rows(root)], ["llamacpp"], "the list lost its ggml child")
        r = t.run("restore", q)
        t.contains(r.out, "rm gemma3:4b --child ggml", "the quarantine's listing names the child removed")
        r = t.run("restore", q, "--format", "json")
        t.eq([o.get("child") for o in r.json().get("operations", [])], ["ggml"], "json: the operation's child")
        r = t.run("restore", q, "--last")
        t.exit_code(r, 0, "restore runs")
        t.contains(r.out, "restored " + TAG, "and puts the list tag back")
        after = t.snapshot(root)
        new_list = [k for k in after if k not in before]
        t.eq(len(new_list), 1, "only the new list blob is left over (prune removes it)", new_list)
        for k in new_list:
            del after[k]
        files = lambda s: {k: v for k, v in s.items() if not os.path.isdir(os.path.join(root, k))}
        t.eq(t.diff_snapshots(files(before), files(after)), [], "every file is back, byte-identical")
        t.eq(sorted(m["runner"] for m in gemma_rows(root)), ["ggml", "llamacpp"], "both children listed again")
        t.eq(errors(root), [], "check: no error")

with t.guard("--quarantine: a rename that fails leaves the tag and nothing in the quarantine unaccounted"):
    shim = os.environ.get("OA_FAULTINJECT", "")
    if not shim or not os.path.exists(shim):
        t.skip("no fault-injection shim (OA_FAULTINJECT): the failing rename is not tried")
    else:
        # the renameat that puts the new tag in place: find its number, then fail it
        fired, k = None, 0
        new_tag = TAG.rsplit("/", 1)[0] + "/.manifest-oa"
        while new_tag not in (fired or "") and k < 12:
            k += 1
            root, info = store("child-rnfail%d" % k)
            before = t.snapshot(root)
            q = os.path.join(t.tempdir("child-rnfailq"), "q")
            log = os.path.join(t.tempdir("child-rnfaillog"), "log")
            r = t.audit(root, "rm", "gemma3:4b", "--child", "ggml", "--apply", "--yes", "--quarantine", q, *PLAT,
                        env={"LD_PRELOAD": shim, "OA_FAULT": "renameat:%d:EIO" % k, "OA_FAULT_LOG": log,
                             "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0"})
            lines = open(log).read().split("\n") if os.path.exists(log) else []
            fired = next((x.split(" ", 3)[3] for x in lines if x.startswith("fault ")), None)
        if t.ok(new_tag in (fired or ""), "the rename of the new tag over the old one failed", fired):
            t.ok(r.code & 8, "the apply says it failed: exit %d" % r.code, r.describe())
            data, lst = tag_list(root)
            t.eq(sorted(c["runner"] for c in lst["manifests"]), ["ggml", "llamacpp"], "the tag is the list as it was")
            doc = t.run("restore", q, "--format", "json").json()
            held = len(os.listdir(os.path.join(q, "files")))
            t.eq(doc["held_entries"], held, "what the listing counts is what DIR/files holds",
                 (doc, os.listdir(os.path.join(q, "files"))))
            r = t.run("restore", q, "--all")
            t.exit_code(r, 0, "restore --all")
            t.eq(os.listdir(os.path.join(q, "files")), [], "nothing is left in DIR/files")
            t.eq(errors(root), [], "check: no error")
            t.eq(sorted(m["runner"] for m in gemma_rows(root)), ["ggml", "llamacpp"], "both children")


def dup_store(tag):
    """dup:1, a list naming its llamacpp child twice (the same digest), and
    its ggml child."""
    s = t.oa.Store(os.path.join(t.tempdir(tag), "models"))

    def child(seed, runner, n):
        g = t.oa.tiny_llama_gguf(name="dup " + seed, n_layers=n)
        layers = [s.layer("model", g), s.layer("template", "T"), s.layer("params", t.oa.go_json({"stop": ["x"]}))]
        d, _ = s.add_manifest_blob(t.oa.gguf_config(s, g, layers), layers, runner=runner, fmt="gguf")
        return d, layers
    ggml, _ = child("ggml", "ggml", 2)
    lcpp, layers = child("lcpp", "llamacpp", 3)
    entry = lambda d, r: {"digest": d, "runner": r, "format": "gguf"}
    lst, _ = s.add_list_blob([entry(ggml, "ggml"), entry(lcpp, "llamacpp"), entry(lcpp, "llamacpp")])
    s.add_v2_tag("dup:1", lst)
    s.age_all(7200)
    return s, {"ggml": ggml, "lcpp": lcpp, "lcpp_weights": layers[0]["digest"], "list": lst}


with t.guard("a list naming its child twice: the plan says what the rewrite writes, nothing is orphaned"):
    s, d = dup_store("child-dup")
    r = t.audit(s.root, "rm", "dup:1", "--child", "llamacpp", *PLAT)
    t.exit_code(r, 0, "the dry run")
    t.contains(r.out, "the list keeps ggml\n", "the note names what the new list keeps, and only that")
    t.contains(r.out, "named by 2 entries", "and that both entries naming the child go")
    doc = doc_of(t.audit(s.root, "rm", "dup:1", "--child", "llamacpp", "--format", "json", *PLAT))
    rw = doc.get("list_rewrite") or {}
    t.eq((rw.get("children_kept"), rw.get("entries_removed")), (["ggml"], 2), "json: what the rewrite writes", rw)
    todo = {e["path"] for e in doc.get("entries", [])}
    t.ok(blob(d["lcpp_weights"]) in todo, "the child's weights are planned: no entry left reaches them",
         sorted(todo))
    r = t.audit(s.root, "rm", "dup:1", "--child", "llamacpp", "--apply", "--yes", *PLAT)
    t.exit_code(r, 0, "the apply")
    tagp = s.v2_tag_path("dup:1")
    lst = json.loads(open(tagp, "rb").read())
    t.eq([(c["digest"], c["runner"]) for c in lst["manifests"]], [(d["ggml"], "ggml")], "the list keeps ggml only")
    r = t.audit(s.root, "check", "--format", "json", *PLAT)
    left = [f for f in t.findings_of(r.json()) if f["code"] in ("orphan-blob", "missing-blob", "missing-child")]
    t.eq(left, [], "check: no orphaned blob, nothing missing")
    t.ok(not os.path.exists(os.path.join(s.root, blob(d["lcpp_weights"]))), "the child's weights are freed")

with t.guard("rm --child killed before its rename left .manifest-oa<pid>: a warning, prune removes it, nothing blocked"):
    root, info = store("child-temps")
    leftover = os.path.join(root, ANCHOR.rsplit("/", 1)[0], ".manifest-oa4242")
    with open(leftover, "wb") as f:  # killed before its rename, beside a legacy manifests/ tag
        f.write(open(os.path.join(root, blob(info["gemma_list"])), "rb").read())
    old = time.time() - 7200
    os.utime(leftover, (old, old))
    r = t.audit(root, "check", "--format", "json", *PLAT)
    codes = {(f["code"], f["severity"]) for f in t.findings_of(r.json()) if (f.get("path") or "").endswith(".manifest-oa4242")}
    t.ok(("temp-file", "warning") in codes, "check: a temp-file warning", codes)
    t.ok(all(sev != "error" for _, sev in codes), "and no error", codes)
    r = t.audit(root, "check", *PLAT)
    t.ok("ollama-audit prune --apply --store %s" % root in r.out, "check's fix is prune --apply", r.out[-600:])
    r = t.audit(root, "rm", "llama3.2-vision:11b", "--apply", "--yes", *PLAT)
    t.exit_code(r, 0, "another rm is not blocked")
    r = t.audit(root, "prune", "--apply", "--yes", *PLAT)
    t.exit_code(r, 0, "prune runs")
    t.ok(not os.path.exists(leftover), "prune removed the old .manifest-oa temp", r.out)
    t.eq(errors(root), [], "check: no error")

with t.guard("rm --child killed at its first link left the new list's blob temp: the next run is not blocked"):
    root, info = store("child-blobtmp")
    doc = doc_of(t.audit(root, "rm", "gemma3:4b", "--child", "llamacpp", "--format", "json", *PLAT))
    new_list = hexof((doc.get("list_rewrite") or {}).get("new_list_digest", "sha256:"))
    tmp = os.path.join(root, "blobs", "sha256-%s.tmp" % new_list)
    with open(tmp, "wb") as f:
        f.write(b"half")
    r = t.audit(root, "rm", "gemma3:4b", "--child", "llamacpp", "--apply", "--yes", *PLAT)
    t.exit_code(r, 0, "rm --child runs whatever a killed run left")
    t.eq([m["runner"] for m in gemma_rows(root)], ["ggml"], "and drops the child")
    temps = [n for n in os.listdir(os.path.join(root, "blobs")) if not n.startswith("sha256-") or
             len(n) != 7 + 64]
    t.eq(sorted(temps), ["sha256-%s.tmp" % new_list], "it leaves no temp of its own", temps)
    t.eq(errors(root), [], "check: no error")

t.done()
