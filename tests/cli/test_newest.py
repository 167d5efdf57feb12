#!/usr/bin/env python3
"""The store the newest Ollama writes (docs/store-format-notes.md, "The newest
layout"), built by tests/tools/make_newest_store.py: pull anchors that link
manifest blobs, a 3-shard GGUF and its split directories, metadata/ caches and
temps, a retired conversion, a copied v2-only tag, a list child with the older
runner name "ollama", a zero-length tag and what a failed `ollama rm` leaves.
Each guard is one of the answers a user expects on that store; the last ones
check that nothing a tag, list, child, anchor, shadow or shard reaches is ever
planned by prune or rm."""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import make_newest_store as mk  # noqa: E402  (tests/tools is on the path)

t.check_binary()
LINUX = ("--platform", "linux/amd64")


def hexof(d):
    return d.split(":", 1)[1]


def blob(d):
    return "blobs/sha256-" + hexof(d)


def newest_store(tag):
    root = os.path.join(t.tempdir(tag), ".ollama", "models")
    return root, mk.build(root)


def models(r):
    return [m for st in r.json().get("stores", []) for m in st.get("models", [])]


def entries(r, key="entries"):
    doc = r.json()
    doc = doc["stores"][0] if "stores" in doc else doc
    return {e["path"]: e for e in doc.get(key, [])}


def check(root, *extra):
    r = t.audit(root, "check", "--format", "json", *LINUX, *extra)
    return r, t.findings_of(r.json())


def of(fs, code, model=None):
    return [f for f in fs if f["code"] == code and (model is None or f.get("model") == model)]


def referenced(root):
    """Every blob any tag, list, child, anchor or shadow names (parsed here,
    independently of the binary): the paths nothing may plan."""
    out = set()

    def manifest(data):
        m = json.loads(data)
        for d in [m.get("config", {}).get("digest")] + [l.get("digest") for l in m.get("layers", [])]:
            if d:
                out.add(blob(d))
        for e in m.get("manifests", []):
            p = os.path.join(root, blob(e["digest"]))
            out.add(blob(e["digest"]))
            if os.path.exists(p):
                with open(p, "rb") as f:
                    manifest(f.read())

    for top in ("manifests", "manifests-v2"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for n in files:
                p = os.path.join(d, n)
                if os.path.islink(p):
                    out.add("blobs/" + os.path.basename(os.readlink(p)))
                with open(p, "rb") as f:
                    data = f.read()
                if data:
                    manifest(data)
    return {p for p in out if os.path.exists(os.path.join(root, p))}


def no_missing(root, msg):
    r, fs = check(root)
    bad = [f for f in fs if f["code"] in ("missing-blob", "missing-config", "missing-child", "dangling-tag")]
    t.eq(bad, [], msg + ": nothing a remaining tag names is missing")


# ------------------------------------------------------------------ list, anchors
with t.guard("list: anchors are not rows; the split GGUF is one model; runner 'ollama' as written"):
    root, info = newest_store("nw-list")
    r = t.audit(root, "list", "--format", "json", *LINUX)
    ms = models(r)
    names = sorted(m["name"] for m in ms)
    t.eq(names, sorted(["qwen3:8b", "my-qwen:latest", "gemma3:1b", "llama3.3:70b", "gemma3:4b", "mistral:7b",
                        "mistral:7b", "tinyllama:latest", info["retired_shadow"], info["mistral_shadow"]]),
         "one row per tag or list child; anchors are not rows", names)
    big = [m for m in ms if m["name"] == "llama3.3:70b"]
    t.eq(len(big), 1, "the three shards are one model")
    whole = t.oa.human_number(info["sharded_params"])
    t.eq(big[0].get("parameter_size") if big else None, whole, "its PARAMS count every shard (%s)" % whole)
    t.eq(sorted(m.get("runner") for m in ms if m["name"] == "mistral:7b"), ["llamacpp", "ollama"],
         "the child the older runner name labels is shown as written")
    r = t.audit(root, "list", *LINUX)
    t.ok(any(l.startswith("mistral:7b ") and " ollama " in l for l in r.out.splitlines()),
         "the table says ollama in RUNNER", r.out)

with t.guard("check: a pull's anchor (manifest plus links to its manifest blobs) is info, its links references"):
    root, info = newest_store("nw-anchor")
    r, fs = check(root)
    anchors = {f["model"]: f["severity"] for f in of(fs, "legacy-anchor")}
    t.eq(anchors, {"qwen3:8b": "info", "gemma3:1b": "info", "llama3.3:70b": "info", "mistral:7b": "info"},
         "every anchor is info, none a warning", of(fs, "legacy-anchor"))
    t.eq(of(fs, "unknown-media-type"), [], "a link layer is no unknown media type")
    links = {blob(info[k]) for k in ("qwen_list", "qwen_child", "gemma1b", "sharded_list", "sharded_child",
                                     "mistral_list", "mistral_ollama", "mistral_llamacpp")}
    orphans = {f["path"] for f in fs if f["code"] in ("orphan-blob", "manifest-blob")}
    t.eq(sorted(links & orphans), [], "the manifest blobs an anchor links are never orphans")

with t.guard("check: downgrade-loss for v2-only tags (a copy, a retired conversion), not for anchored pulls"):
    root, info = newest_store("nw-loss")
    r, fs = check(root)
    loss = {f["model"]: f for f in of(fs, "downgrade-loss")}
    t.eq(sorted(loss), ["gemma3:4b", "my-qwen:latest"], "the copy and the retired conversion, only they")
    t.ok(all(f["severity"] == "warning" for f in loss.values()), "as warnings")
    t.ok(all("KB" in f["message"] or "B " in f["message"] for f in loss.values()),
         "each with the bytes an older server deletes", loss)

# ------------------------------------------------------------------ shards
with t.guard("sharded GGUF: no per-shard warning, no mismatch with the whole, show lists the shards"):
    root, info = newest_store("nw-shard")
    r, fs = check(root)
    big = [f for f in fs if f.get("model") == "llama3.3:70b"]
    t.eq(of(big, "gguf-warning"), [], "no 'no general.architecture' for shards after the first")
    t.eq(of(big, "config-mismatch"), [], "the config's parameter size matches the whole")
    t.eq(of(big, "split-mismatch"), [], "the shards make one model")
    r = t.audit(root, "show", "llama3.3:70b", *LINUX)
    t.contains(r.out, "shards", "show names the shards")
    for k in (1, 2, 3):
        t.contains(r.out, "shard %d of 3" % k, "show: shard %d" % k)
    r = t.audit(root, "show", "llama3.3:70b", "--format", "json", *LINUX)
    t.eq(r.json().get("shards"), [info["shard1"], info["shard2"], info["shard3"]], "json lists the shard digests")


def reshard(root, info, shards):
    """llama3.3:70b's child manifest with these model layers (digests), the
    tag re-pointed at a list holding it."""
    s = t.oa.Store(root)
    with open(os.path.join(root, blob(info["sharded_child"])), "rb") as f:
        m = json.loads(f.read())
    rest = [l for l in m["layers"] if not l["mediaType"].endswith(".model")]
    sizes = {l["digest"]: l for l in m["layers"]}
    m["layers"] = [sizes[d] for d in shards] + rest
    child, _ = s.add_manifest_blob(m["config"], m["layers"], runner="llamacpp", fmt="gguf")
    lst, _ = s.add_list_blob([{"digest": child, "runner": "llamacpp", "format": "gguf"}])
    s.add_v2_tag("llama3.3:70b", lst)


with t.guard("sharded GGUF: a missing, duplicate or out-of-order shard is an error naming the model"):
    for how, shards, word in (("missing", ["shard1", "shard3"], "missing"),
                              ("duplicate", ["shard1", "shard2", "shard2"], "duplicate"),
                              ("order", ["shard1", "shard3", "shard2"], "out of order")):
        root, info = newest_store("nw-shard-" + how)
        reshard(root, info, [info[k] for k in shards])
        r, fs = check(root)
        sm = of(fs, "split-mismatch")
        t.eq([(f["model"], f["severity"]) for f in sm], [("llama3.3:70b", "error")], how + ": one error", sm)
        t.contains(sm[0]["message"] if sm else "", word, how + ": says what is wrong")
        t.ok(r.code & 4, how + ": check exits with the error bit", r.describe())

# ------------------------------------------------------------------ split directories
with t.guard("split directories: their own kind, counted once, only the stale one pruned"):
    root, info = newest_store("nw-split")
    r, fs = check(root)
    sd = {f["path"].rstrip("/") for f in of(fs, "split-dir")}
    t.eq(sd, {info["split_stale"], info["split_live"]}, "both are split-dir findings")
    t.ok(all(f["severity"] == "info" for f in of(fs, "split-dir")), "info: the runner makes them")
    t.eq([f for f in of(fs, "foreign-file") if ".ollama-split-" in f["path"]], [], "never foreign-file")
    r = t.audit(root, "du", "--format", "json")
    tot = r.json()["stores"][0]["totals"]
    junk = sum(tot["junk"][k]["disk_bytes"] for k in ("orphans", "manifest_blobs", "partials", "temps", "legacy",
                                                       "foreign"))
    meta = 0
    for d, _, files in os.walk(os.path.join(root, "metadata")):  # junk outside blobs/
        for n in files:
            if n.endswith(".tmp") or info["metadata_stale"] in n:
                meta += os.lstat(os.path.join(d, n)).st_blocks * 512
    t.ok(tot["referenced_bytes"] + junk - meta <= tot["blobs_bytes"],
         "referenced + junk in blobs/ <= what blobs/ holds on disk (hard links counted once)", tot)
    r = t.audit(root, "prune", "--format", "json")
    todo, kept = entries(r), entries(r, "kept")
    t.ok(info["split_stale"] in todo, "prune plans the stale directory", sorted(todo))
    t.ok(info["split_live"] not in todo and info["split_live"] in kept, "and keeps the one in use", sorted(kept))
    t.ok(todo.get(info["split_stale"], {}).get("freed_bytes", 1 << 40) <= 8192,
         "removing it frees the directory alone, not the shards' bytes", todo.get(info["split_stale"]))

with t.guard("split directories: never the last link to a blob's bytes"):
    root, info = newest_store("nw-split-last")
    os.remove(os.path.join(root, blob(info["shard2"])))  # its only names now: the split directories
    r = t.audit(root, "prune", "--format", "json")
    todo, kept = entries(r), entries(r, "kept")
    t.ok(info["split_stale"] not in todo, "the stale directory is not planned", sorted(todo))
    t.contains((kept.get(info["split_stale"]) or {}).get("note") or "", "no name in blobs/", "and says why")
    r, fs = check(root)
    t.ok(of(fs, "missing-blob", "llama3.3:70b"), "check reports the shard's blob as missing")

# ------------------------------------------------------------------ temporaries, failed rm
with t.guard("temporaries: metadata, staged manifest and tensor partial temps go after the grace period"):
    root, info = newest_store("nw-temps")
    r = t.audit(root, "prune", "--format", "json")
    todo, kept = entries(r), entries(r, "kept")
    for p in ("metadata/.gguf-metadata-1234567890.tmp", "blobs/sha256-3725648421", info["tensor_tmp"],
              "metadata/sha256-%s.json" % info["metadata_stale"]):
        t.eq(todo.get(p, {}).get("category"), "temps", "planned as a temp: " + p)
    for p in info["new_temps"].split(","):
        t.ok(p not in todo and p in kept, "inside the grace period, kept: " + p)
    t.ok("metadata/sha256-%s.json" % info["metadata_kept"] not in todo, "a cache whose blob is here stays")

with t.guard("a failed ollama rm: its leftovers are orphans, manifest blobs included; check names the blocker"):
    root, info = newest_store("nw-failed-rm")
    r = t.audit(root, "prune", "--format", "json")
    todo = entries(r)
    for d in info["failed_blobs"].split(","):
        t.eq(todo.get(blob(d), {}).get("category"), "orphans", "planned as an orphan: " + d[:19])
    r, fs = check(root)
    pb = of(fs, "prune-blocker")
    t.eq([f["path"] for f in pb], ["manifests-v2/ollama.com/library/tinyllama/latest"],
         "the zero-length tag is what makes the server's cleanup fail")
    t.contains(pb[0]["message"] if pb else "", "fails closed", "and says how")
    left = [f for f in of(fs, "orphan-blob") if f["path"] in {blob(d) for d in info["failed_blobs"].split(",")}]
    t.eq(len(left), 6, "every leftover is an orphan-blob", left)
    t.ok(all("tinyllama" in f["message"] for f in left), "each names the tag that keeps it there", left)

# ------------------------------------------------------------------ rm by digest
with t.guard("rm <child digest>: the child leaves every list that holds it; a list left empty goes"):
    root, info = newest_store("nw-rm-digest")
    q = hexof(info["qwen_child"])
    for form in (q[:12], "sha256-" + q, "sha256:" + q):
        r = t.audit(root, "rm", form, "--format", "json", *LINUX)
        t.exit_code(r, 0, "rm " + form[:19] + " plans")
        todo = entries(r)
        t.ok("manifests-v2/ollama.com/library/my-qwen/latest" in todo and
             "manifests-v2/ollama.com/library/qwen3/8b" in todo,
             form[:19] + ": both lists hold only that child here: both go", sorted(todo))
        t.ok("manifests/registry.ollama.ai/library/qwen3/8b" in todo, form[:19] + ": and the pull's anchor")
    m = hexof(info["mistral_llamacpp"])
    r = t.audit(root, "rm", m[:12], "--format", "json", *LINUX)
    t.exit_code(r, 0, "rm of mistral's converted child plans")
    todo, kept = entries(r), entries(r, "kept")
    rw = todo.get("manifests-v2/ollama.com/library/mistral/7b", {})
    t.eq(rw.get("category"), "list-rewrite", "mistral's list is rewritten, not removed", sorted(todo))
    t.ok(blob(info["mistral_weights"]) not in todo, "the other child's weights are not planned")
    doc = r.json()["stores"][0]
    t.eq([x["child_digest"] for x in doc.get("list_rewrites", [])], [info["mistral_llamacpp"]],
         "list_rewrites names the child removed")
    g = t.audit(root, "list", "--format", "json", *LINUX)
    gid = [x["id"] for x in models(g) if x["name"] == "gemma3:1b"][0]
    r = t.audit(root, "rm", gid, "--format", "json", *LINUX)
    t.ok("manifests-v2/ollama.com/library/gemma3/1b" in entries(r), "a tag's own ID keeps its meaning")
    r = t.audit(root, "rm", q[:12], "gemma3:1b", *LINUX)
    t.exit_code(r, 16, "a child's digest takes that one MODEL")

with t.guard("rm <prefix> naming two digests is refused with the candidates"):
    root, info = newest_store("nw-rm-ambiguous")
    s = t.oa.Store(root)
    with open(os.path.join(root, blob(info["gemma1b"])), "rb") as f:
        body = f.read()
    fakes = []
    for k, tail in enumerate(("0" * 52, "1" * 52)):  # two children whose digests share 12 hex digits
        d = "sha256:abcabcabcabc" + tail
        with open(os.path.join(root, blob(d)), "wb") as f:
            f.write(body)
        lst, _ = s.add_list_blob([{"digest": d, "runner": "llamacpp", "format": "gguf"}])
        s.add_v2_tag("twin%d:latest" % k, lst)
        fakes.append(d)
    before = t.snapshot(root)
    r = t.audit(root, "rm", "abcabcabcabc", *LINUX)
    t.exit_code(r, 16, "an ambiguous prefix is a usage error")
    t.ok("twin0" in r.err and "twin1" in r.err, "naming both candidates", r.err)
    t.eq(t.diff_snapshots(before, t.snapshot(root)), [], "and nothing changes")

# ------------------------------------------------------------------ predict-server
with t.guard("prune --predict-server: three generations, named; the newest fails closed here"):
    root, info = newest_store("nw-predict")
    r = t.audit(root, "prune", "--predict-server")
    t.contains(r.out, "the newest", "the default names the newest generation")
    t.contains(r.out, "fails closed", "which deletes nothing while a tag cannot be read")
    t.contains(r.out, "tinyllama", "and names that tag")
    r = t.audit(root, "prune", "--predict-server", "--format", "json")
    d = r.json()["stores"][0]
    t.eq((d.get("generation"), d.get("server_version_from"), d.get("deletes")), ("newest", "layout", []),
         "json: generation, what chose it, no delete")
    r = t.audit(root, "prune", "--predict-server", "--server-version", "pr-16590", "--format", "json")
    t.eq(r.json()["stores"][0].get("generation"), "pr-16590", "PR #16590's head by name")
    r = t.audit(root, "prune", "--predict-server", "--server-version", "0.33", "--format", "json")
    d = r.json()["stores"][0]
    t.eq(d.get("generation"), "before-lists", "0.33: before manifest lists")
    t.eq(sorted(m["name"] for m in d.get("models_destroyed", [])), ["gemma3:4b", "my-qwen:latest"],
         "it destroys the copy and the retired conversion (their manifests go)")
    os.makedirs(os.path.join(os.path.dirname(root), "logs"))
    with open(os.path.join(os.path.dirname(root), "logs", "server.log"), "w") as f:
        f.write('time=2026-10-22T08:00:00.000Z level=INFO source=routes.go:1700 '
                'msg="Listening on 127.0.0.1:11434 (version 0.33.4)"\n')
    r = t.audit(root, "prune", "--predict-server", "--format", "json")
    d = r.json()["stores"][0]
    t.eq((d.get("generation"), d.get("server_version"), d.get("server_version_from")),
         ("before-lists", "0.33.4", "logs"), "without the option, the version the logs last announced")
    r = t.audit(root, "prune", "--predict-server")
    t.contains(r.out, "logs", "and the text says so")

with t.guard("the newest server without the broken tag: deletes the leftovers, sweeps metadata/"):
    root, info = newest_store("nw-predict-clean")
    os.remove(os.path.join(root, "manifests-v2/ollama.com/library/tinyllama/latest"))
    r = t.audit(root, "prune", "--predict-server", "--format", "json")
    d = r.json()["stores"][0]
    gone = {x["path"] for x in d.get("deletes", [])}
    t.eq(sorted(gone & {blob(x) for x in info["failed_blobs"].split(",")}),
         sorted(blob(x) for x in info["failed_blobs"].split(",")), "every leftover of the failed rm")
    t.eq(sorted(gone & referenced(root)), [], "nothing a tag reaches")
    t.ok("metadata/sha256-%s.json" % info["metadata_stale"] in d.get("metadata_removed", []),
         "the stale metadata cache is swept")


def unretired(root):
    """A conversion the newest server retires: a list [ggml, llamacpp] whose
    anchor links the list and both children."""
    s = t.oa.Store(root)
    cfg, layers = mk.gguf_model(s, "retire-me", "gemma3", n_layers=1)
    g, g_bytes = s.add_manifest_blob(cfg, layers, runner="ggml", fmt="gguf")
    ccfg, conv = mk.converted(s, "retire-me", "gemma3", layers)
    lc, lc_bytes = s.add_manifest_blob(ccfg, conv, runner="llamacpp", fmt="gguf")
    lst, lst_bytes = s.add_list_blob([{"digest": g, "runner": "ggml", "format": "gguf"},
                                      {"digest": lc, "runner": "llamacpp", "format": "gguf"}])
    s.add_v2_tag("gemma3:12b", lst)
    mk.write_anchor(s, "gemma3:12b", cfg, layers, [mk.link_layer(lst, lst_bytes, True),
                                                   mk.link_layer(g, g_bytes, False),
                                                   mk.link_layer(lc, lc_bytes, False)])
    mk.write_legacy_bytes(s, mk.shadow_name(lc), lc_bytes)
    s.age_all(7200)
    return dict(ggml=g, weights=layers[0]["digest"], converted=conv[0]["digest"], list=lst)


with t.guard("the newest server retires a conversion first: the ggml child and its anchor go"):
    root, info = newest_store("nw-retire")
    os.remove(os.path.join(root, "manifests-v2/ollama.com/library/tinyllama/latest"))
    u = unretired(root)
    r = t.audit(root, "prune", "--predict-server", "--format", "json")
    d = r.json()["stores"][0]
    t.eq([(x["name"], x["child_dropped"]) for x in d.get("retired", [])], [("gemma3:12b", u["ggml"])],
         "it retires gemma3:12b's ggml child")
    gone = {x["path"] for x in d.get("deletes", [])}
    t.ok(blob(u["weights"]) in gone and blob(u["ggml"]) in gone, "the source GGUF and its manifest go", gone)
    t.ok(blob(u["converted"]) not in gone, "the converted weights stay")
    r = t.audit(root, "prune", "--predict-server")
    t.contains(r.out, "retire  gemma3:12b", "the text says it first")

# ------------------------------------------------------------------ nothing reached is ever planned
with t.guard("no prune or rm plans anything a tag, list, child, anchor, shadow or shard reaches"):
    root, info = newest_store("nw-safe")
    refs = referenced(root)
    t.ok({blob(info[k]) for k in ("shard1", "shard2", "shard3", "qwen_list", "mistral_ollama")} <= refs,
         "the independent reference set holds the shards and manifest blobs")
    for what in ("default", "all"):
        r = t.audit(root, "prune", "--what", what, "--min-age", "0", "--format", "json")
        t.eq(sorted(set(entries(r)) & refs), [], "prune --what %s plans no referenced blob" % what)
    before = t.snapshot(root)
    r = t.audit(root, "prune", "--apply", "--yes", "--force", "--what", "all")
    t.exit_code(r, 0, "prune --apply --force runs")
    after = t.snapshot(root)
    t.eq(sorted(p for p in refs if p not in after), [], "every referenced blob is still here")
    t.ok(info["split_live"] in after and info["split_stale"] not in after, "the live split directory stays")
    no_missing(root, "after prune --apply")
    for arg in (hexof(info["qwen_child"])[:12], hexof(info["mistral_llamacpp"])[:12], "gemma3:4b"):
        root, info = newest_store("nw-safe-rm")
        r = t.audit(root, "rm", arg, "--apply", "--yes", "--force", *LINUX)
        t.exit_code(r, 0, "rm %s --apply runs" % arg)
        no_missing(root, "after rm " + arg)
        r = t.audit(root, "list", "--format", "json", *LINUX)
        t.ok({"gemma3:1b", "llama3.3:70b"} <= {m["name"] for m in models(r)},
             "the other models are still listed after rm " + arg)

t.done()
