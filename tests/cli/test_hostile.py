#!/usr/bin/env python3
"""Hostile stores found in review: FIFOs where files belong, sizes that
overflow, JSON documents left open, durations that are not numbers, and a
cache path that is a FIFO. Each must end in a clear result, never a hang."""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

with t.guard("a FIFO as a manifest is reported, not waited on"):
    s, info = t.clean_store("fifo-manifest")
    os.mkfifo(os.path.join(os.path.dirname(info["path"]), "fifo"))
    r = t.audit(s.root, "list", timeout=20)
    t.ok(r.code is not None and r.code >= 0, "list finished", r.describe())
    t.contains(r.err, "fifo", "the FIFO is named on stderr")
    t.contains(r.out, "tiny:latest", "the rest is still listed")

with t.guard("a FIFO as a config blob is reported, not waited on"):
    s, info = t.clean_store("fifo-config")
    cfg = s.blob_path(info["config"]["digest"])
    os.remove(cfg)
    os.mkfifo(cfg)
    for cmd in (["list"], ["check"], ["verify"], ["du"], ["prune"]):
        r = t.audit(s.root, *cmd, timeout=20)
        t.ok(r.code is not None and r.code >= 0, "%s finished" % cmd[0], r.describe())

with t.guard("a FIFO as a download part file is reported, not waited on"):
    s, info = t.clean_store("fifo-part")
    os.mkfifo(os.path.join(s.root, "blobs", "sha256-" + "a" * 64 + "-partial-0"))
    for cmd in (["check"], ["du"], ["prune"]):
        r = t.audit(s.root, *cmd, timeout=20)
        t.ok(r.code is not None and r.code >= 0, "%s finished" % cmd[0], r.describe())

with t.guard("sizes that overflow int64 do not crash"):
    s, info = t.clean_store("overflow")
    m = json.loads(info["bytes"])
    for layer in m["layers"]:
        layer["size"] = 9223372036854775807
    open(info["path"], "w").write(json.dumps(m))
    for cmd in (["list", "--format", "json"], ["check"], ["show", "tiny"], ["du"]):
        r = t.audit(s.root, *cmd)
        t.ok(r.code in (0, 4), "%s exits normally (%s)" % (cmd[0], r.code), r.describe())
        t.not_contains(r.err, "runtime error", "%s has no undefined behaviour" % cmd[0])

with t.guard("JSON stays one document when a store is skipped"):
    s1, _ = t.clean_store("json-a", name="alpha:latest")
    s2, _ = t.clean_store("json-b", name="gamma:latest")
    for cmd in ("check", "verify"):
        cache = ["--cache", os.path.join(t.tempdir("c"), "cache.json")] if cmd == "verify" else []
        r = t.run("--store", s1.root, "--store", s2.root, cmd, "alpha", "--format", "json", *cache)
        t.exit_code(r, 16, "%s of a model one store lacks" % cmd)
        try:
            doc = json.loads(r.out)
            t.eq(len(doc["stores"]), 1, "%s reports the store that has the model" % cmd)
        except ValueError as e:
            t.fail("%s printed invalid JSON: %s" % (cmd, e), r.out[-200:])
    r = t.run("--store", s2.root, "check", "alpha", "--format", "json")
    try:
        t.eq(json.loads(r.out)["stores"], [], "no store reported is still a complete document")
    except ValueError as e:
        t.fail("check printed invalid JSON: %s" % e, r.out)

with t.guard("durations that are not numbers are usage errors"):
    s, _ = t.clean_store("dur")
    for bad in ("nan", "inf", "-1", "1x", ""):
        r = t.audit(s.root, "prune", "--min-age", bad)
        t.exit_code(r, 16, "--min-age %r" % bad)
        r = t.audit(s.root, "verify", "--max-duration", bad)
        t.exit_code(r, 16, "--max-duration %r" % bad)

with t.guard("a FIFO at the cache path is not waited on"):
    s, _ = t.clean_store("fifo-cache")
    fifo = os.path.join(t.tempdir("fc"), "cache.json")
    os.mkfifo(fifo)
    r = t.audit(s.root, "verify", "--cache", fifo, timeout=20)
    t.ok(r.code is not None and r.code >= 0, "verify finished", r.describe())
    t.contains(r.err, "not a regular file", "the cache problem is said")

with t.guard("a GGUF string longer than the read window (256 KiB) is read from a file"):
    s = t.new_store("longarch")
    from clitest import oa
    arch = "a" * 300000
    g = oa.gguf_bytes({"general.architecture": arch, "general.name": "n" * 400000,
                       arch + ".context_length": oa.typed("u32", 4096)},
                      [("token_embd.weight", [32, 4], 0)])
    layer = s.layer("model", g)
    s.add_manifest("long:latest", s.config(oa.config_v2(model_format="gguf")), [layer])
    for cmd in (["list"], ["check"], ["show", "long"]):
        r = t.audit(s.root, *cmd)
        t.ok(r.code in (0, 1, 4), "%s exits normally (%s)" % (cmd[0], r.code), r.describe())
        t.not_contains(r.err, "runtime error", "%s has no undefined behaviour" % cmd[0])
    r = t.audit(s.root, "show", "long", "--format", "json")
    h = r.json()["layer_list"][0]["header"]
    t.ok(h["architecture"].startswith("aaaa"), "the architecture is read (kept prefix)", h["architecture"][:20])
    t.eq(h["tensor_count"], 1, "the header is read to its end")

with t.guard("a safetensors header with 80,000 made-up dtypes is not quadratic"):
    s = t.new_store("dtypes")
    from clitest import oa
    n = 80000
    header = {"t%d" % i: {"dtype": "X%d" % i, "shape": [0], "data_offsets": [0, 0]} for i in range(n)}
    hj = json.dumps(header, separators=(",", ":")).encode()
    blob = len(hj).to_bytes(8, "little") + hj
    layer = s.layer("tensor", blob, name="t0")
    s.add_manifest("dt:latest", s.config(oa.config_v2(model_format="safetensors")), [layer])
    # Before the fix this took minutes (linear lookups per tensor); a hang
    # guard of 60 s, not a speed claim.
    r = t.audit(s.root, "show", "dt", "--format", "json", timeout=60)
    t.ok(r.code in (0, 1, 4), "show finished (%s)" % r.code, r.describe())
    dt = r.json()["safetensors"]["dtype_bytes"]
    t.eq(sorted(dt), ["other"], "unknown dtypes are totalled as other")

with t.guard("a store path that is not UTF-8 still gives valid JSON records"):
    base = t.tempdir("nonutf8")
    root = os.path.join(base.encode(), b"bad\xffstore")
    shutil.copytree(t.DEMO_STORE, os.fsdecode(root), symlinks=True)
    for cmd in (["list", "--format", "ndjson"], ["check", "--format", "ndjson"], ["list", "--format", "json"]):
        r = t.run("--store", os.fsdecode(root), *cmd)
        lines = [l for l in r.out.splitlines() if l.strip()]
        t.ok(lines, "%s printed records" % " ".join(cmd))
        for l in lines:
            try:
                rec = json.loads(l)
            except ValueError as e:
                t.fail("%s printed invalid JSON: %s" % (" ".join(cmd), e), l)
                continue
            stores = rec.get("stores")
            store = rec.get("store") or (stores[0].get("root") if isinstance(stores, list) and stores else None)
            if store is not None:
                t.contains(store, "\\xff", "the odd byte is escaped, not dropped")

with t.guard("dedupe and stores JSON keep stores whose path is not UTF-8"):
    base = t.tempdir("nonutf8-2")
    roots = []
    for tag in (b"a", b"b"):
        root = os.path.join(base.encode(), tag + b"\xffstore")
        shutil.copytree(t.DEMO_STORE, os.fsdecode(root), symlinks=True)
        roots.append(os.fsdecode(root))
    r = t.run("--store", roots[0], "--store", roots[1], "dedupe", "--hardlink", "--format", "json")
    doc = r.json()
    planned = doc["summary"].get("planned") if isinstance(doc.get("summary"), dict) else None
    t.ok(doc["actions"], "dedupe lists its actions", doc.get("summary"))
    t.ok(all("\\xff" in a["keep"] and "\\xff" in a["replace"] for a in doc["actions"]),
         "the store roots are escaped, not dropped")
    r = t.run("--store", roots[0], "stores", "--format", "json")
    t.ok(any("\\xff" in (s.get("root") or "") for s in r.json()["stores"]), "stores keeps the root")

t.done()
