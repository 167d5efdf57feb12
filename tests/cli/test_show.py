#!/usr/bin/env python3
"""`ollama-audit show MODEL`: name resolution (short, full, case, ID prefix,
ambiguous, too short), the JSON fields, --tensors, and exit codes."""

import hashlib
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()
DEMO = t.DEMO_STORE

with t.guard("resolution"):
    before = t.snapshot(DEMO)
    cases = [
        ("demo-llama:1b", "demo-llama:1b"),
        ("demo-embed", "demo-embed:latest"),                         # default tag
        ("library/demo-embed", "demo-embed:latest"),                 # default host
        ("registry.ollama.ai/library/demo-llama:1b", "demo-llama:1b"),  # full name
        ("DEMO-LLAMA:1B", "demo-llama:1b"),                          # case-insensitive
        ("Registry.Ollama.AI/Library/Demo-Llama:1B", "demo-llama:1b"),
        ("alice/tiny-coder:q4", "alice/tiny-coder:q4"),
        ("ALICE/Tiny-Coder:Q4", "alice/tiny-coder:q4"),
        ("hf.co/bartowski/tiny-GGUF:Q4_K_M", "hf.co/bartowski/tiny-GGUF:Q4_K_M"),
        ("HF.CO/BARTOWSKI/TINY-gguf:q4_k_m", "hf.co/bartowski/tiny-GGUF:Q4_K_M"),
        ("3aa17b", "demo-llama:1b"),                                 # 6-hex ID prefix
        ("3AA17B41", "demo-llama:1b"),                               # upper-case hex
        ("3aa17b41d61c", "demo-llama:1b"),                           # the ID column
        ("3aa17b41d61ca6f8213c378b303f274c2604e7836f140ef8ec5060e6ef6b0485", "demo-llama:1b"),
        ("sha256:3aa17b41d61ca6f8213c378b303f274c2604e7836f140ef8ec5060e6ef6b0485", "demo-llama:1b"),
        ("8b2ca6c93a19", "tiny-mlx:int4"),
    ]
    for query, want in cases:
        r = t.audit(DEMO, "show", query, "--format", "json")
        t.exit_code(r, 0, "show %s" % query)
        t.eq(r.json().get("name"), want, "show %r resolves to %s" % (query, want))
        r = t.audit(DEMO, "show", query)
        t.exit_code(r, 0, "show %s (table)" % query)
        t.eq(r.out.splitlines()[0] if r.out else "", want, "table title of show %r" % query)

    for query, why in [("3aa17", "a 5-hex prefix is too short"), ("3aa", "3 hex"),
                       ("demo-llama", "no :latest tag exists"), ("nosuch:model", "unknown model"),
                       ("3aa17c", "a 6-hex prefix of no model"), ("demo-llama:1", "tag prefix is not a match"),
                       ("Bad!Name", "an invalid name")]:
        r = t.audit(DEMO, "show", query)
        t.exit_code(r, 16, "show %r: %s" % (query, why))
        t.contains(r.err, query, "the error names %r" % query)
        t.eq(r.out, "", "nothing on stdout for show %r" % query)
    r = t.audit(DEMO, "show")
    t.exit_code(r, 16, "show without MODEL")
    r = t.audit(DEMO, "show", "demo-llama:1b", "demo-embed")
    t.exit_code(r, 16, "show with two MODELs")
    t.eq(t.diff_snapshots(before, t.snapshot(DEMO)), [], "show wrote nothing to the demo store")

with t.guard("ambiguous ID prefix"):
    s = t.new_store("ambig")
    gg = oa.tiny_llama_gguf(name="ambig")
    lay = s.layer("model", gg)
    cfg = oa.gguf_config(s, gg, [lay], rootfs=False)
    seen = {}
    pair = None
    for i in range(200000):
        l2 = dict(lay)
        l2["from"] = "pad%d" % i
        data = s.manifest_bytes(cfg, [l2])
        mid = oa.manifest_id(data, full=True)
        k = mid[:6]
        if k in seen:
            pair = (seen[k], (i, data, mid))
            break
        seen[k] = (i, data, mid)
    if t.ok(pair is not None, "found two manifests sharing a 6-hex ID prefix"):
        (i1, d1, id1), (i2, d2, id2) = pair
        for tag, data in (("a", d1), ("b", d2)):
            p = s.manifest_path("ambig:" + tag)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "wb").write(data)
        r = t.audit(s.root, "show", id1[:6])
        t.exit_code(r, 16, "an ambiguous 6-hex prefix is a usage error")
        t.contains(r.err, id1[:6], "the error names the prefix")
        t.eq(r.out, "", "nothing shown for an ambiguous prefix")
        # one more digit disambiguates (when the IDs differ there)
        n = 6
        while id1[:n] == id2[:n]:
            n += 1
        r = t.audit(s.root, "show", id1[:n], "--format", "json")
        t.exit_code(r, 0, "a longer prefix is unique")
        t.eq(r.json().get("digest"), id1, "the longer prefix picks the right model")
        r = t.audit(s.root, "check", id1[:6])
        t.exit_code(r, 16, "check with an ambiguous prefix is a usage error")

with t.guard("show --format json fields"):
    r = t.audit(DEMO, "show", "demo-llama:1b", "--format", "json")
    t.exit_code(r, 0)
    d = r.json()
    mbytes = open(os.path.join(DEMO, "manifests/registry.ollama.ai/library/demo-llama/1b"), "rb").read()
    man = json.loads(mbytes)
    t.ok(str(d.get("schema", "")).startswith("ollama-audit.show/"), "show json has a schema: %r" % d.get("schema"))
    t.eq(d.get("id"), "3aa17b41d61c", "id")
    t.eq(d.get("digest"), oa.manifest_id(mbytes, full=True), "digest")
    t.eq(d.get("full_name"), "registry.ollama.ai/library/demo-llama:1b", "full_name")
    t.eq(d.get("size"), 40339, "size")
    t.eq(d.get("manifest_bytes"), len(mbytes), "manifest_bytes")
    t.eq(d.get("schema_version"), 2, "schema_version")
    t.eq(d.get("format"), "gguf", "format")
    t.eq(d.get("runner"), "llamacpp", "runner")
    t.ok(str(d.get("manifest_file", "")).endswith("manifests/registry.ollama.ai/library/demo-llama/1b"),
         "manifest_file path: %r" % d.get("manifest_file"))
    cf = d.get("config_fields", {})
    t.eq((cf.get("model_format"), cf.get("model_family"), cf.get("model_type"), cf.get("file_type")),
         ("gguf", "llama", "50K", "Q4_K_M"), "config fields")
    t.eq(cf.get("model_families"), ["llama"], "config model_families")
    t.eq(d.get("config_layer", {}).get("digest"), man["config"]["digest"], "config layer digest")
    t.eq(d.get("config_layer", {}).get("exists"), True, "config blob exists")
    ll = d.get("layer_list", [])
    t.eq(len(ll), len(man["layers"]), "one entry per layer")
    for i, (got, want) in enumerate(zip(ll, man["layers"])):
        t.eq(got.get("digest"), want["digest"], "layer %d digest" % i)
        t.eq(got.get("media_type"), want["mediaType"], "layer %d media type" % i)
        t.eq(got.get("size"), want["size"], "layer %d declared size" % i)
        t.eq(got.get("exists"), True, "layer %d exists" % i)
        t.eq(got.get("apparent_bytes"), os.path.getsize(os.path.join(DEMO, "blobs", want["digest"].replace(":", "-"))),
             "layer %d apparent_bytes" % i)
        t.eq(got.get("from"), want.get("from"), "layer %d from" % i)
    h = ll[0].get("header", {}) if ll else {}
    t.eq((h.get("type"), h.get("ok"), h.get("version"), h.get("architecture"), h.get("file_type"),
          h.get("file_type_ollama"), h.get("block_count"), h.get("context_length"), h.get("embedding_length")),
         ("gguf", True, 3, "llama", 15, "Q4_K_M", 2, 4096, 256), "GGUF header summary of the model layer")
    gg = open(os.path.join(DEMO, "blobs", man["layers"][0]["digest"].replace(":", "-")), "rb").read()
    info = oa.read_gguf(gg)
    t.eq(h.get("parameter_count"), oa.gguf_param_count(gg), "GGUF parameter count")
    t.eq(h.get("tensor_count"), len(info["tensors"]), "GGUF tensor count")
    t.eq(h.get("kv_count"), len(info["kv"]), "GGUF kv count")
    t.ok("tensors" not in h, "no tensor list without --tensors")
    t.eq(d.get("findings"), [], "no findings for a clean model")

    # MLX model: safetensors summary
    r = t.audit(DEMO, "show", "tiny-mlx:int4", "--format", "json", "--tensors")
    t.exit_code(r, 0)
    d = r.json()
    st = d.get("safetensors", {})
    t.eq(st.get("quantization_level"), "int4", "MLX quantization level from headers")
    man = json.load(open(os.path.join(DEMO, "manifests/registry.ollama.ai/library/tiny-mlx/int4")))
    store = oa.Store.__new__(oa.Store)
    store.root = DEMO
    store.blobs = os.path.join(DEMO, "blobs")
    t.eq(st.get("parameter_count"), oa.mlx_param_count(store, man["layers"]), "MLX parameter count")
    lay2 = (d.get("layer_list") or [{}] * 3)[2]
    t.eq(lay2.get("name"), "model.layers.0.self_attn.q_proj.weight", "tensor layer name")
    hh = lay2.get("header", {})
    t.eq(hh.get("type"), "safetensors", "tensor layer header type")
    names = sorted(x.get("name") for x in hh.get("tensors", []))
    t.eq(names, sorted(["model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.q_proj.weight.scale",
                        "model.layers.0.self_attn.q_proj.weight.bias"]), "--tensors lists the safetensors tensors")
    js = [x for x in d.get("layer_list", []) if x.get("kind") == "json"]
    t.eq([x.get("name") for x in js], ["config.json", "tokenizer.json"], "json layers carry their names")

with t.guard("show --tensors (GGUF)"):
    r = t.audit(DEMO, "show", "demo-llama:1b", "--tensors", "--format", "json")
    t.exit_code(r, 0)
    ll = r.json().get("layer_list", [])
    tv = ll[0].get("header", {}).get("tensors", []) if ll else []
    gg = open(os.path.join(DEMO, "blobs", json.load(open(os.path.join(
        DEMO, "manifests/registry.ollama.ai/library/demo-llama/1b")))["layers"][0]["digest"].replace(":", "-")), "rb").read()
    want = oa.read_gguf(gg)["tensors"]
    t.eq(len(tv), len(want), "every GGUF tensor listed")
    t.eq([x.get("name") for x in tv], [w[0] if isinstance(w, (list, tuple)) else w.get("name") for w in want],
         "tensor names in file order")
    r = t.audit(DEMO, "show", "demo-llama:1b", "--tensors")
    t.exit_code(r, 0)
    for name in ("token_embd.weight", "blk.0.attn_q.weight", "output.weight"):
        t.contains(r.out, name, "table --tensors lists %s" % name)
    r = t.audit(DEMO, "show", "demo-llama:1b")
    t.not_contains(r.out, "blk.0.attn_q.weight", "table without --tensors does not list tensors")

with t.guard("show table content"):
    r = t.audit(DEMO, "show", "gpt-oss:120b-cloud")
    t.exit_code(r, 0)
    t.contains(r.out, "remote, runner remote", "cloud stub format/runner")
    t.contains(r.out, "remote_host        https://ollama.com:443", "cloud stub remote_host")
    r = t.audit(DEMO, "show", "demo-vision")
    t.contains(r.out, "projector", "projector layer shown")
    t.contains(r.out, "vision", "vision capability shown")

with t.guard("show a damaged model"):
    s, info = t.clean_store("show-dmg")
    os.remove(s.blob_path(info["layers"][0]["digest"]))
    r = t.audit(s.root, "show", "tiny", "--format", "json")
    t.exit_code(r, 4, "show of a model with a missing blob")
    d = r.json()
    ll = d.get("layer_list", [])
    t.eq(ll[0].get("exists") if ll else None, False, "the missing layer has exists=false")
    t.ok("apparent_bytes" not in (ll[0] if ll else {}), "no apparent_bytes for a missing blob")
    t.eq([f["code"] for f in d.get("findings", [])], ["missing-blob"], "the model's findings")
    r = t.audit(s.root, "show", "tiny")
    t.exit_code(r, 4)
    t.contains(r.out, "MISSING", "table marks the missing blob")
    t.contains(r.out, "missing-blob", "table lists the finding")

with t.guard("show names a weight's file type as Ollama does, F32 too, the same in text and json"):
    s = t.new_store("ftypes")
    # general.file_type -> (the name, llama.cpp's); 0 is all F32: "F32" as
    # ggml.FileType's String and ollama list give it, not "unknown"
    want = {0: ("F32", "all F32"), 1: ("F16", "F16"), 32: ("BF16", "BF16"), 7: ("Q8_0", "Q8_0"),
            15: ("Q4_K_M", "Q4_K - Medium"), 38: ("MXFP4_MOE", "MXFP4 MoE"), 41: ("unknown", "Q2_0"),
            4: ("unknown", None)}
    for ft in want:
        gguf = oa.tiny_llama_gguf(file_type=ft, name="ft %d" % ft)
        layers = [s.layer("model", gguf)]
        s.add_manifest("ft%d:latest" % ft, oa.gguf_config(s, gguf, layers), layers)
    for ft, (name, llama) in sorted(want.items()):
        r = t.audit(s.root, "show", "ft%d:latest" % ft, "--format", "json")
        h = (r.json().get("layer_list") or [{}])[0].get("header", {})
        t.eq((h.get("file_type"), h.get("file_type_ollama"), h.get("file_type_llama")), (ft, name, llama),
             "show --format json: general.file_type %d is %s" % (ft, name))
        text = t.audit(s.root, "show", "ft%d:latest" % ft).out
        t.ok(re.search(r"\b%s \(%d\b" % (re.escape(name), ft), text) is not None,
             "show's text names file type %d %s too" % (ft, name), text)

t.done()
