#!/usr/bin/env python3
"""Stores written by Ollama 0.40 (spec §2.5, the seed article): manifests-v2/
tags that are symlinks, hard links or copies of manifest blobs, manifest lists
with one child per runner (only one of them pulled), the canonical ollama.com
host and %3A-encoded ports, legacy downgrade anchors, and the runner/format
labels of /api/tags.  Every read command sees these models as `ollama list`
0.40 would: the child's digest as the ID, SIZE over unique digests."""

import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()


def gguf_model(s, seed, arch="llama"):
    gguf = oa.tiny_llama_gguf(name="Tiny v2 " + seed, arch=arch)
    layers = [s.layer("model", gguf), s.layer("template", t.TEMPLATE + seed),
              s.layer("params", oa.go_json({"stop": ["<|user|>"], "seed": seed}))]
    cfg = oa.gguf_config(s, gguf, layers)
    return cfg, layers


def unique_size(cfg, layers):
    seen, total = set(), 0
    for l in [cfg] + list(layers):
        if l["digest"] not in seen:
            seen.add(l["digest"])
            total += l["size"]
    return total


def hexof(d):
    return d.split(":", 1)[1]


def v2_store(tag="v2"):
    s = t.new_store(tag)
    info = {}
    # qwen3.5:4b: a list; only the llama.cpp child was pulled (a Linux pull)
    gcfg, glayers = gguf_model(s, "qwen-gguf", arch="qwen35")
    gd, _ = s.add_manifest_blob(gcfg, glayers, runner="llamacpp", fmt="gguf")
    absent_mlx = "sha256:" + hashlib.sha256(b"the mlx child, never pulled here").hexdigest()
    ld, _ = s.add_list_blob([{"digest": gd, "runner": "llamacpp", "format": "gguf"},
                             {"digest": absent_mlx, "runner": "mlx", "format": "safetensors"}])
    s.add_v2_tag("qwen3.5:4b", ld, how="symlink")
    info["qwen"] = dict(list=ld, child=gd, cfg=gcfg, layers=glayers)
    # gemma:12b: a list with both children here (hard-link tag)
    g2cfg, g2layers = gguf_model(s, "gemma-gguf", arch="gemma3")
    g2d, _ = s.add_manifest_blob(g2cfg, g2layers, runner="llamacpp", fmt="gguf")
    mcfg, mlayers = oa.tiny_mlx_model(s)
    md, _ = s.add_manifest_blob(mcfg, mlayers, runner="mlx", fmt="safetensors")
    l2, _ = s.add_list_blob([{"digest": g2d, "runner": "llamacpp", "format": "gguf"},
                             {"digest": md, "runner": "mlx", "format": "safetensors"}])
    s.add_v2_tag("gemma:12b", l2, how="hardlink")
    info["gemma"] = dict(list=l2, gguf=g2d, mlx=md, gcfg=g2cfg, glayers=g2layers, mcfg=mcfg, mlayers=mlayers)
    # plain:latest: an ordinary manifest with 0.40's runner/format, tag as a copy
    pcfg, players = gguf_model(s, "plain")
    players.append(players[1])  # a duplicate digest: SIZE counts it once in 0.40
    pd, _ = s.add_manifest_blob(pcfg, players, runner="llamacpp", fmt="gguf")
    s.add_v2_tag("plain:latest", pd, how="copy")
    info["plain"] = dict(digest=pd, cfg=pcfg, layers=players)
    # a private registry with a port
    rcfg, rlayers = gguf_model(s, "registry")
    rd, _ = s.add_manifest_blob(rcfg, rlayers, runner="llamacpp", fmt="gguf")
    p = s.add_v2_tag("localhost:5000/team/m:v1", rd)
    info["reg"] = dict(digest=rd, path=p)
    # old:latest: a legacy GGUF model from before 0.40 (no runner: "ggml")
    info["old"] = t.add_gguf_model(s, "old:latest", seed="old")
    # a legacy anchor of qwen3.5:4b that is another (older) model
    info["anchor"] = t.add_gguf_model(s, "qwen3.5:4b", seed="anchor")
    return s, info


def models(r):
    """Rows by name; of a list's rows (one per child here) the one in use."""
    out = {}
    for st in r.json().get("stores", []):
        for m in st.get("models", []):
            if m["name"] not in out or m.get("list_child", {}).get("in_use"):
                out[m["name"]] = m
    return out


with t.guard("list shows manifests-v2 models as ollama list 0.40 does"):
    s, info = v2_store()
    t.ok(os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(info["reg"]["path"])))) == "localhost%3A5000",
         "the fixture encodes the port as %3A")
    r = t.audit(s.root, "list", "--format", "json", "--platform", "linux/amd64")
    t.exit_code(r, 0, "list")
    ms = models(r)
    t.eq(sorted(ms), sorted(["qwen3.5:4b", "gemma:12b", "plain:latest", "localhost:5000/team/m:v1", "old:latest"]),
         "every v2 model and the legacy one, once each (the anchor is not listed)")
    q = ms.get("qwen3.5:4b", {})
    t.eq(q.get("id"), hexof(info["qwen"]["child"])[:12], "a list's ID is the pulled child's digest")
    t.eq(q.get("size"), unique_size(info["qwen"]["cfg"], info["qwen"]["layers"]), "SIZE of the child")
    t.eq((q.get("format"), q.get("runner")), ("gguf", "llamacpp"), "the GGUF child runs on llama.cpp")
    t.eq(q.get("tree"), "manifests-v2", "the JSON says which tree the tag is in")
    t.eq(q.get("manifest_list", {}).get("digest"), info["qwen"]["list"], "and which list it is")
    kids = q.get("manifest_list", {}).get("children", [])
    t.eq([(k["runner"], k["present"], k["in_use"]) for k in kids],
         [("llamacpp", True, True), ("mlx", False, False)], "children: present and in use")
    p = ms.get("plain:latest", {})
    t.eq(p.get("id"), hexof(info["plain"]["digest"])[:12], "a plain v2 tag's ID is its manifest blob's digest")
    t.eq(p.get("size"), unique_size(info["plain"]["cfg"], info["plain"]["layers"]),
         "SIZE counts each digest once (0.40's TotalSizeForName)")
    t.eq(p.get("tag_kind"), "copy", "a copied tag is recognised")
    t.eq(ms.get("gemma:12b", {}).get("tag_kind"), "hardlink", "a hard-linked tag is recognised")
    t.eq(ms.get("localhost:5000/team/m:v1", {}).get("tag_kind"), "symlink", "a symlinked tag is recognised")
    r = t.audit(s.root, "list")
    t.contains(r.out, "qwen3.5:4b", "the table uses the short name (ollama.com is the default host)")
    t.not_contains(r.out, "ollama.com/", "no ollama.com/ prefix on library models")

with t.guard("the child in use follows --platform"):
    s, info = v2_store("v2-platform")
    g = info["gemma"]
    for platform, digest, fmt, runner in (("linux/amd64", g["gguf"], "gguf", "llamacpp"),
                                          ("darwin/arm64", g["mlx"], "safetensors", "mlx")):
        r = t.audit(s.root, "list", "--format", "json", "--platform", platform)
        m = models(r).get("gemma:12b", {})
        t.eq(m.get("id"), hexof(digest)[:12], "%s: the ID is the %s child's" % (platform, runner))
        t.eq((m.get("format"), m.get("runner")), (fmt, runner), "%s: format and runner" % platform)
        r = t.audit(s.root, "list", "--format", "tags", "--platform", platform)
        rows = [x for x in r.json().get("models", []) if x["name"] == "gemma:12b"]
        t.eq(sorted(x["details"]["runner"] for x in rows), ["llamacpp", "mlx"],
             "%s: /api/tags has a row per child here, each with its details.runner" % platform)
    # qwen3.5:4b has only the GGUF child: a Mac audit still uses it, and says a pull would fetch MLX
    r = t.audit(s.root, "check", "--format", "json", "--platform", "darwin/arm64")
    msgs = [f["message"] for f in t.findings_of(r.json()) if f["code"] == "manifest-list" and f["model"] == "qwen3.5:4b"]
    t.ok(any("darwin/arm64" in m and "mlx" in m and "not here" in m for m in msgs),
         "check says a pull on darwin/arm64 would fetch the mlx child, which is not here", msgs)
    r = t.audit(s.root, "list", "--platform", "beos")
    t.exit_code(r, 16, "a --platform that is not os/arch is a usage error")

with t.guard("--platform holds however the store was found: --store, OLLAMA_MODELS, --all-users, stores"):
    s, info = v2_store("v2-platform-paths")
    g = info["gemma"]
    env = {"OLLAMA_MODELS": s.root}
    paths = {"--store": ["--store", s.root], "OLLAMA_MODELS": [], "--all-users": ["--store", s.root, "--all-users"]}

    def gemma_metrics(out):
        # ollama_du_model_size_bytes{...} N and ollama_store_model_size_bytes{...} N: model_size_bytes N
        return sorted(line.split("{")[0].split("_", 2)[2] + line.split("}")[1] for line in out.splitlines()
                      if 'model="gemma:12b"' in line and 'store="%s"' % s.root in line)

    for platform, digest in (("linux/amd64", g["gguf"]), ("darwin/arm64", g["mlx"])):
        for how, args in paths.items():
            r = t.run(*args, "list", "--format", "json", "--platform", platform, env=env)
            ms = [m for st in r.json()["stores"] if st["root"] == s.root for m in st["models"]
                  if m["name"] == "gemma:12b"]
            t.eq([m["id"] for m in ms][:1], [hexof(digest)[:12]], "%s, found by %s: the tag's row has the "
                 "child's ID" % (platform, how))
        # stores' metrics are du's: the per-model sizes follow the child in use
        want = gemma_metrics(t.run("--store", s.root, "du", "--format", "prometheus", "--platform", platform,
                                   env=env).out)
        got = gemma_metrics(t.run("--store", s.root, "stores", "--format", "prometheus", "--platform", platform,
                                  env=env).out)
        t.ok(want, "du has gemma's metrics")
        t.eq(got, want, "%s: stores --format prometheus sizes gemma's %s child, as du does" % (platform, platform))

with t.guard("/api/tags details.runner and format as 0.40 reports them"):
    s, info = v2_store("v2-tags")
    r = t.audit(s.root, "list", "--format", "tags", "--platform", "linux/amd64")
    tags = {x["name"]: x for x in r.json().get("models", [])}
    t.eq(tags.get("qwen3.5:4b", {}).get("details", {}).get("runner"), "llamacpp", "a list child's runner")
    t.eq(tags.get("old:latest", {}).get("details", {}).get("runner"), "ggml",
         "a legacy GGUF manifest without runner is 'ggml' (MetadataForConfig)")
    t.eq(tags.get("qwen3.5:4b", {}).get("digest"), hexof(info["qwen"]["child"]), "tags digest is the child's")
    t.eq(len(tags), 5, "the anchor is not in /api/tags either")

with t.guard("check: a 0.40 store is clean and none of its blobs is an orphan"):
    s, info = v2_store("v2-check")
    r = t.audit(s.root, "check", "--format", "json", "--platform", "linux/amd64")
    codes = t.codes(t.findings_of(r.json()))
    for bad in ("orphan-blob", "manifest-blob", "unparsed-reference", "missing-blob", "invalid-manifest"):
        t.not_contains(codes, bad, "no %s" % bad)
    t.contains(codes, "manifest-list", "lists are described")
    anchors = [f for f in t.findings_of(r.json()) if f["code"] == "legacy-anchor"]
    t.eq([(f["severity"], f["model"]) for f in anchors], [("warning", "qwen3.5:4b")],
         "the differing legacy anchor is a warning")
    t.exit_code(r, 0, "no errors")

with t.guard("show prints the list and its children"):
    s, info = v2_store("v2-show")
    r = t.audit(s.root, "show", "qwen3.5:4b", "--platform", "linux/amd64")
    t.exit_code(r, 0, "show")
    t.contains(r.out, "manifest list " + hexof(info["qwen"]["list"]), "the list digest")
    t.contains(r.out, "in use", "the child in use")
    t.contains(r.out, "not here", "the child that was not pulled")
    t.contains(r.out, "manifests-v2 symlink of blob " + info["qwen"]["list"], "how the tag is stored")
    r = t.audit(s.root, "show", "localhost:5000/team/m:v1")
    t.exit_code(r, 0, "a private registry name with a port resolves")

with t.guard("du counts 0.40 models and no junk"):
    s, info = v2_store("v2-du")
    r = t.audit(s.root, "du", "--format", "json", "--platform", "linux/amd64")
    doc = r.json()
    st = doc["stores"][0]
    names = sorted(n for row in st["models"] for n in row.get("names", [row.get("name")]))
    for n in ("qwen3.5:4b", "gemma:12b", "plain:latest"):
        t.ok(n in names, "du has a row for %s" % n, names)
    junk = st.get("junk", {})
    t.eq(junk.get("orphans", {}).get("count", 0), 0, "no orphans", junk)
    t.eq(junk.get("manifest-blobs", {}).get("count", 0), 0, "no manifest blobs", junk)


def broken(tag, build):
    s = t.new_store(tag)
    build(s)
    r = t.audit(s.root, "check", "--format", "json")
    return r, t.codes(t.findings_of(r.json()))


with t.guard("check: a dangling v2 tag, a list with no child here, a nested list, a runner contradiction"):
    def dangling(s):
        d = "sha256:" + "d" * 64
        p = s.v2_tag_path("gone:latest")
        os.makedirs(os.path.dirname(p))
        os.symlink(os.path.relpath(s.blob_path(d), os.path.dirname(p)), p)
    r, codes = broken("v2-dangling", dangling)
    t.contains(codes, "dangling-tag", "a dangling tag symlink")
    t.exit_code(r, 4, "is an integrity error")

    def nochild(s):
        ld, _ = s.add_list_blob([{"digest": "sha256:" + "e" * 64, "runner": "mlx", "format": "safetensors"}])
        s.add_v2_tag("empty:latest", ld)
    r, codes = broken("v2-nochild", nochild)
    t.contains(codes, "missing-child", "a list with no child here")
    t.exit_code(r, 4, "is an integrity error")

    def nested(s):
        cfg, layers = gguf_model(s, "nested")
        cd, _ = s.add_manifest_blob(cfg, layers, runner="llamacpp")
        inner, _ = s.add_list_blob([{"digest": cd, "runner": "llamacpp"}])
        outer, _ = s.add_list_blob([{"digest": inner, "runner": "llamacpp"}])
        s.add_v2_tag("nest:latest", outer)
    r, codes = broken("v2-nested", nested)
    t.contains(codes, "nested-list", "a list whose child is a list")
    t.not_contains(codes, "orphan-blob", "the inner list's child is still not an orphan")

    def mismatch(s):
        cfg, layers = gguf_model(s, "mismatch")
        cd, _ = s.add_manifest_blob(cfg, layers)
        ld, _ = s.add_list_blob([{"digest": cd, "runner": "mlx", "format": "safetensors"}])
        s.add_v2_tag("liar:latest", ld)
    r, codes = broken("v2-mismatch", mismatch)
    t.contains(codes, "child-mismatch", "an mlx entry whose config is GGUF")

with t.guard("rm of a manifests-v2 list tag removes the tag, its anchor and what only they reach"):
    s, info = v2_store("v2-rm")
    s.age_all(7200)
    q = info["qwen"]
    only_qwen = {q["list"], q["child"]} | {l["digest"] for l in [q["cfg"]] + q["layers"]} | \
        {l["digest"] for l in [info["anchor"]["config"]] + info["anchor"]["layers"]}
    only_qwen -= {l["digest"] for l in [info["old"]["config"]] + info["old"]["layers"]}  # shared template, params
    before = set(os.listdir(s.blobs))
    r = t.audit(s.root, "rm", "qwen3.5:4b", "--format", "json")
    t.exit_code(r, 0, "rm dry run")
    planned = [e["path"] for e in r.json()["stores"][0]["entries"]]
    t.ok(os.path.relpath(s.v2_tag_path("qwen3.5:4b"), s.root) in planned, "the plan removes the v2 tag", planned)
    t.ok(os.path.relpath(info["anchor"]["path"], s.root) in planned, "and the legacy anchor", planned)
    t.eq(set(os.listdir(s.blobs)), before, "the dry run removed nothing")
    r = t.audit(s.root, "rm", "qwen3.5:4b", "--apply", "--yes")
    t.exit_code(r, 0, "rm --apply")
    t.ok(not os.path.lexists(s.v2_tag_path("qwen3.5:4b")), "the v2 tag is gone")
    t.ok(not os.path.exists(info["anchor"]["path"]), "the anchor is gone")
    left = set(os.listdir(s.blobs))
    t.eq(sorted(("sha256-" + hexof(d)) for d in only_qwen if ("sha256-" + hexof(d)) in left), [],
         "the list, its child and the blobs only they used are removed")
    t.eq(sorted(before - left - {"sha256-" + hexof(d) for d in only_qwen}), [], "nothing else is removed")
    r = t.audit(s.root, "check", "--format", "json", "--platform", "linux/amd64")
    codes = t.codes(t.findings_of(r.json()))
    t.not_contains(codes, "missing-blob", "every other model still has its blobs")
    t.not_contains(codes, "orphan-blob", "and nothing is left orphaned")
    names = sorted(models(t.audit(s.root, "list", "--format", "json")).keys())
    t.eq(names, sorted(["gemma:12b", "plain:latest", "localhost:5000/team/m:v1", "old:latest"]),
         "the others are still listed")

with t.guard("rm of a copied v2 tag removes the copy and its manifest blob"):
    s, info = v2_store("v2-rm-copy")
    s.age_all(7200)
    r = t.audit(s.root, "rm", "plain:latest", "--apply", "--yes")
    t.exit_code(r, 0, "rm --apply")
    t.ok(not os.path.exists(s.v2_tag_path("plain:latest")), "the copy is gone")
    t.ok(not os.path.exists(s.blob_path(info["plain"]["digest"])), "and the manifest blob it copied")
    r = t.audit(s.root, "check", "--format", "json")
    t.not_contains(t.codes(t.findings_of(r.json())), "missing-blob", "no other model lost a blob")

with t.guard("the committed 0.40 fixture is what its script writes, and lists as documented"):
    import filecmp
    import subprocess
    fixture = os.path.join(t.SOURCE_DIR, "fixtures", "store-0.40")
    fresh = os.path.join(t.tempdir("fixture"), "store-0.40")
    subprocess.run([sys.executable, os.path.join(t.SOURCE_DIR, "tests", "tools", "make_040_store.py"),
                    "--out", fresh], check=True, stdout=subprocess.DEVNULL)

    def tree(root):
        out = {}
        for d, dirs, files in os.walk(root):
            for n in dirs + files:
                p = os.path.join(d, n)
                r = os.path.relpath(p, root)
                if os.path.islink(p):
                    out[r] = ("link", os.readlink(p))
                elif os.path.isfile(p):
                    out[r] = ("file", open(p, "rb").read())
                else:
                    out[r] = ("dir", None)
        return out
    a, b = tree(fixture), tree(fresh)
    t.eq(sorted(set(a) ^ set(b)), [], "the same names")
    t.eq(sorted(k for k in a if k in b and a[k] != b[k]), [], "the same bytes and link targets")
    want = {"qwen3.5:4b": "e0c6a3e0bcd8", "qwen3.5:4b-q4_K_M": "e0c6a3e0bcd8", "gemma4:12b": "64c48d8d9f0f",
            "localhost:5000/team/tiny:v1": "7b7cb492a969", "llama3.2:1b": "ee6379e4514c"}
    for platform in ("linux/amd64", "darwin/arm64"):
        r = t.audit(fixture, "list", "--format", "json", "--platform", platform)
        t.eq({n: m["id"] for n, m in models(r).items()}, want, "fixtures/store-0.40.md's IDs on " + platform)
    r = t.audit(fixture, "check", "--format", "json", "--platform", "linux/amd64")
    t.exit_code(r, 0, "the fixture has no errors")

with t.guard("Prometheus: a legacy anchor adds no second series for its model; stores counts it once"):
    s, info = v2_store("v2-prom")
    r = t.audit(s.root, "check", "--format", "prometheus", "--platform", "linux/amd64")
    t.exit_code(r, 0, "check --format prometheus")
    series = [l.rsplit(" ", 1)[0] for l in r.out.splitlines() if l and not l.startswith("#")]
    t.eq(sorted(x for x in set(series) if series.count(x) > 1), [], "no series appears twice")
    t.eq(sum('model="qwen3.5:4b"' in x and x.startswith("ollama_check_model_info") for x in series), 1,
         "qwen3.5:4b has one model_info series")

with t.guard("rm of one of two v2 tags differing in case leaves the other's exact-case anchor"):
    s = t.new_store("v2-anchor-case")
    for name, seed in (("tiny:latest", "lower"), ("TINY:latest", "upper")):
        cfg, layers = gguf_model(s, "case-" + seed)
        d, _ = s.add_manifest_blob(cfg, layers)
        s.add_v2_tag(name, d)
    anchor = t.add_gguf_model(s, "tiny:latest", seed="case-anchor")
    s.age_all(7200)
    r = t.audit(s.root, "rm", "TINY:latest", "--apply", "--yes")
    t.exit_code(r, 0, "rm TINY")
    t.ok(os.path.exists(anchor["path"]), "legacy tiny, the anchor of v2 tiny, stays", r.describe())
    t.ok(not os.path.lexists(s.v2_tag_path("TINY:latest")), "v2 TINY is gone")

t.done()
