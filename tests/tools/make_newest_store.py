#!/usr/bin/env python3
"""Build a store in the state the newest Ollama (after manifest lists: pull
anchors that link manifest blobs, sharded GGUF, retirement, fail-closed
cleanup; docs/store-format-notes.md, "The newest layout") leaves behind,
deterministically.

    python3 tests/tools/make_newest_store.py --out DIR

What is in it (tests/cli/test_newest.py checks each):
- qwen3:8b       pulled: manifests-v2 list [llamacpp child here, mlx child
                 not pulled]; the legacy tag is the pull's downgrade anchor:
                 the child's manifest plus one link layer per manifest blob
                 (the list, the child);
- my-qwen:latest `ollama cp qwen3:8b my-qwen`: a list narrowed to the child
                 here (a new list blob), no anchor (copies write none);
- gemma3:1b      pulled, not a list: the v2 tag is the manifest blob, the
                 anchor that manifest plus a link layer naming it;
- llama3.3:70b   a 3-shard GGUF (llama.cpp gguf-split: split.no, split.count,
                 split.tensors.count; only the first shard has the metadata),
                 pulled as a list with one child, anchored; two
                 blobs/.ollama-split-<12 hex>-<digits>/ directories of hard
                 links to the shards: one in use (new), one stale (2 h);
- gemma3:4b      a retired conversion: the list is [llamacpp child] (the
                 ggml child, the old list and the source GGUF are gone), no
                 anchor; its compatibility shadow llamacpp:<hex> stays;
- mistral:7b     a list [child with the older runner name "ollama", its
                 converted llamacpp child], anchored (links the list and both
                 children), with its shadow; two list rows;
- tinyllama:latest  a zero-length manifests-v2 tag (a copy cut short): the
                 newest server's cleanup fails closed on it;
- phi3:mini      gone: `ollama rm` removed its tag and anchor, then the
                 cleanup failed: its config, weights, template, child manifest
                 and list blobs are left, referenced by nothing;
- metadata/      a cache for the first shard (kept), one whose blob is gone
                 (stale), .gguf-metadata-*.tmp (old and new);
- blobs/         temps: sha256-<digits> (a staged manifest, old and new) and
                 sha256-<hex>.tmp (a tensor pull's partial, old).
Every file is two hours old except the split directory in use and the
files named "new" above.  Python 3 standard library only.
"""

import argparse
import hashlib
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oastore as oa  # noqa: E402
from make_migrated_store import shadow_name, write_legacy_bytes  # noqa: E402,F401 (test_newest uses both)

TEMPLATE = "{{ if .System }}<|system|>{{ .System }}{{ end }}<|user|>{{ .Prompt }}<|assistant|>"
OLD = 7200  # seconds: past the server's one-hour grace period


def hexof(d):
    return d.split(":", 1)[1]


def small_layers(s, seed):
    return [s.layer("template", TEMPLATE + seed), s.layer("params", oa.go_json({"stop": ["<|user|>"]}))]


def gguf_model(s, seed, arch, n_layers=2):
    gguf = oa.tiny_llama_gguf(name="Newest " + seed, arch=arch, n_layers=n_layers)
    layers = [s.layer("model", gguf)] + small_layers(s, seed)
    return oa.gguf_config(s, gguf, layers, rootfs=False), layers


def link_layer(digest, data, is_list):
    """A downgrade anchor's extra layer naming a manifest blob."""
    return {"mediaType": oa.MT_MANIFEST_LIST if is_list else oa.MT_MANIFEST, "digest": digest,
            "size": len(data)}


def write_anchor(s, name, cfg, layers, links, runner=None, fmt=None):
    """WriteLegacyAnchor: the runnable manifest (json.Marshal: compact, no
    newline) plus one layer per manifest blob it must keep alive."""
    extra = {}
    if runner:
        extra["runner"], extra["format"] = runner, fmt
    data = s.manifest_bytes(cfg, list(layers) + list(links), style="registry", extra=extra or None)
    p = s.manifest_path(name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
    return data


def pulled_list(s, name, seed, arch, absent_mlx=True):
    """A list pull on Linux: the llamacpp child here, the mlx child not."""
    cfg, layers = gguf_model(s, seed, arch)
    child, child_bytes = s.add_manifest_blob(cfg, layers, runner="llamacpp", fmt="gguf")
    entries = [{"digest": child, "runner": "llamacpp", "format": "gguf"}]
    if absent_mlx:
        mlx = "sha256:" + hashlib.sha256(("%s mlx child, not pulled" % name).encode()).hexdigest()
        entries.append({"digest": mlx, "runner": "mlx", "format": "safetensors"})
    lst, lst_bytes = s.add_list_blob(entries)
    s.add_v2_tag(name, lst)
    write_anchor(s, name, cfg, layers, [link_layer(lst, lst_bytes, True), link_layer(child, child_bytes, False)],
                 "llamacpp", "gguf")
    return dict(child=child, child_bytes=child_bytes, list=lst, cfg=cfg, layers=layers,
                weights=layers[0]["digest"])


# ---- a llama.cpp gguf-split model --------------------------------------------

def split_shards(n_shards=3, arch="llama"):
    """The shards gguf-split writes of one model: every shard has split.no
    (u16), split.count (u16) and split.tensors.count (i32); only the first
    has the model's key-values (general.architecture, tokenizer)."""
    whole = oa.read_gguf(oa.tiny_llama_gguf(name="Newest sharded", arch=arch, n_layers=4))
    kv = [(k, t, v) for k, (t, v) in whole["kv"].items()]
    tensors = [(name, dims, gt) for name, dims, gt, _ in whole["tensors"]]
    per = -(-len(tensors) // n_shards)
    out = []
    for i in range(n_shards):
        split = [("split.no", "u16", i), ("split.count", "u16", n_shards),
                 ("split.tensors.count", "i32", len(tensors))]
        skv = (split + kv) if i == 0 else split  # gguf-split sets them before copying the rest
        out.append(oa.gguf_bytes(skv, tensors[i * per:(i + 1) * per]))
    return out, whole["param_count"]


def sharded(s, name):
    shards, params = split_shards()
    layers = [s.layer("model", b, from_="Llama-3.3-70B-Q4_K_M-%05d-of-00003.gguf" % (i + 1))
              for i, b in enumerate(shards)]
    layers += small_layers(s, "sharded")
    cfg = oa.gguf_config(s, shards[0], layers, model_type=oa.human_number(params), rootfs=False)
    child, child_bytes = s.add_manifest_blob(cfg, layers, runner="llamacpp", fmt="gguf")
    lst, lst_bytes = s.add_list_blob([{"digest": child, "runner": "llamacpp", "format": "gguf"}])
    s.add_v2_tag(name, lst)
    write_anchor(s, name, cfg, layers, [link_layer(lst, lst_bytes, True), link_layer(child, child_bytes, False)],
                 "llamacpp", "gguf")
    return dict(child=child, list=lst, shards=[l["digest"] for l in layers[:3]], params=params)


def split_dir(s, child, digits, shards):
    """What the llama-server runner links at load: one directory per load."""
    d = os.path.join(s.blobs, ".ollama-split-%s-%s" % (hexof(child)[:12], digits))
    os.mkdir(d, 0o700)
    for i, sh in enumerate(shards):
        os.link(s.blob_path(sh), os.path.join(d, "model-%05d-of-%05d.gguf" % (i + 1, len(shards))))
    return os.path.relpath(d, s.root)


# ---- conversions -------------------------------------------------------------

def converted(s, seed, arch, layers):
    gguf = oa.tiny_llama_gguf(name="Newest " + seed + " (llama.cpp)", arch=arch, n_layers=3)
    conv = [s.layer("model", gguf)] + layers[1:]
    return oa.gguf_config(s, gguf, conv, rootfs=False), conv


def retired(s, name):
    """After RetireConvertedModels: the ggml child, the old list, the anchor
    and the source GGUF are gone; the list holds the converted child."""
    cfg, layers = gguf_model(s, "retired", "gemma3", n_layers=1)
    ccfg, conv = converted(s, "retired", "gemma3", layers)
    lcpp, lcpp_bytes = s.add_manifest_blob(ccfg, conv, runner="llamacpp", fmt="gguf")
    lst, _ = s.add_list_blob([{"digest": lcpp, "runner": "llamacpp", "format": "gguf"}])
    s.add_v2_tag(name, lst)
    write_legacy_bytes(s, shadow_name(lcpp), lcpp_bytes)
    for gone in (cfg, layers[0]):
        os.remove(s.blob_path(gone["digest"]))
    return dict(child=lcpp, list=lst, weights=conv[0]["digest"], shadow=shadow_name(lcpp))


def ollama_runner(s, name):
    """A conversion made by a version that named the original's runner
    "ollama" (later ones write "ggml"), anchored the newest way."""
    cfg, layers = gguf_model(s, "mistral", "llama")
    src, src_bytes = s.add_manifest_blob(cfg, layers, runner="ollama", fmt="gguf")
    ccfg, conv = converted(s, "mistral", "llama", layers)
    lcpp, lcpp_bytes = s.add_manifest_blob(ccfg, conv, runner="llamacpp", fmt="gguf")
    lst, lst_bytes = s.add_list_blob([{"digest": src, "runner": "ollama", "format": "gguf"},
                                      {"digest": lcpp, "runner": "llamacpp", "format": "gguf"}])
    s.add_v2_tag(name, lst)
    write_anchor(s, name, cfg, layers, [link_layer(lst, lst_bytes, True), link_layer(src, src_bytes, False),
                                        link_layer(lcpp, lcpp_bytes, False)])
    write_legacy_bytes(s, shadow_name(lcpp), lcpp_bytes)
    return dict(child_ollama=src, child_llamacpp=lcpp, list=lst, weights=layers[0]["digest"],
                converted_weights=conv[0]["digest"], shadow=shadow_name(lcpp))


def failed_rm(s):
    """phi3:mini after an `ollama rm` whose cleanup failed closed: the tag
    files are gone, every blob is left."""
    cfg, layers = gguf_model(s, "phi3", "phi3")
    layers[2] = s.layer("params", oa.go_json({"stop": ["<|end|>"]}))  # its own: every blob is its alone
    cfg = oa.gguf_config(s, oa.tiny_llama_gguf(name="Newest phi3", arch="phi3"), layers, rootfs=False)
    child, _ = s.add_manifest_blob(cfg, layers, runner="llamacpp", fmt="gguf")
    lst, _ = s.add_list_blob([{"digest": child, "runner": "llamacpp", "format": "gguf"}])
    return dict(child=child, list=lst, weights=layers[0]["digest"],
                blobs=sorted([cfg["digest"], child, lst] + [l["digest"] for l in layers]))


def build(out):
    if os.path.exists(out):
        shutil.rmtree(out)
    s = oa.Store(out)
    info = {}
    q = pulled_list(s, "qwen3:8b", "qwen", "qwen3")
    info.update(qwen_child=q["child"], qwen_list=q["list"], qwen_weights=q["weights"])
    # ollama cp: the list narrowed to the children here, a new list blob
    cp, _ = s.add_list_blob([{"digest": q["child"], "runner": "llamacpp", "format": "gguf"}])
    s.add_v2_tag("my-qwen:latest", cp)
    info["copy_list"] = cp

    cfg, layers = gguf_model(s, "gemma-1b", "gemma3")
    g, g_bytes = s.add_manifest_blob(cfg, layers, runner="llamacpp", fmt="gguf")
    s.add_v2_tag("gemma3:1b", g)
    write_anchor(s, "gemma3:1b", cfg, layers, [link_layer(g, g_bytes, False)], "llamacpp", "gguf")
    info["gemma1b"] = g

    sh = sharded(s, "llama3.3:70b")
    info.update(sharded_child=sh["child"], sharded_list=sh["list"], sharded_params=sh["params"])
    info.update({"shard%d" % (i + 1): d for i, d in enumerate(sh["shards"])})

    r = retired(s, "gemma3:4b")
    info.update(retired_child=r["child"], retired_list=r["list"], retired_weights=r["weights"],
                retired_shadow=r["shadow"])

    m = ollama_runner(s, "mistral:7b")
    info.update(mistral_ollama=m["child_ollama"], mistral_llamacpp=m["child_llamacpp"],
                mistral_list=m["list"], mistral_weights=m["weights"],
                mistral_converted_weights=m["converted_weights"], mistral_shadow=m["shadow"])

    s.write_raw("manifests-v2/ollama.com/library/tinyllama/latest", b"")
    f = failed_rm(s)
    info.update(failed_child=f["child"], failed_list=f["list"], failed_weights=f["weights"])
    info["failed_blobs"] = ",".join(f["blobs"])

    kept = hexof(sh["shards"][0])
    gone = hashlib.sha256(b"a blob removed long ago").hexdigest()
    s.write_raw("metadata/sha256-%s.json" % kept, oa.go_json({"general.architecture": "llama"}))
    s.write_raw("metadata/sha256-%s.json" % gone, oa.go_json({"general.architecture": "phi3"}))
    s.write_raw("metadata/.gguf-metadata-1234567890.tmp", oa.go_json({"general.architecture": "ll"}))
    info.update(metadata_kept=kept, metadata_stale=gone)
    s.create_temp("3725648421", b'{"schemaVersion":2,"mediaType":')
    tensor = b"\x08" * 4096
    s.tmp_download(tensor)
    info["tensor_tmp"] = "blobs/sha256-%s.tmp" % hashlib.sha256(tensor).hexdigest()

    s.age_all(OLD)
    for d, dirs, files in os.walk(out):
        for n in dirs + files:  # directories and symlinks too
            s.age(os.path.join(d, n), OLD)
    info["split_stale"] = split_dir(s, sh["child"], "2718281828", sh["shards"])
    info["split_live"] = split_dir(s, sh["child"], "3141592653", sh["shards"])
    s.age(info["split_stale"], OLD)  # its files are the blobs' inodes: already old
    # written a moment ago: inside the grace period
    s.write_raw("metadata/.gguf-metadata-9876543210.tmp", b"{")
    s.create_temp("1618033988", b"")
    info["new_temps"] = "metadata/.gguf-metadata-9876543210.tmp,blobs/sha256-1618033988"
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    if os.path.basename(out) in ("", "/", "fixtures", "tests"):
        sys.exit("refusing to rebuild %s" % out)
    for k, v in sorted(build(out).items()):
        print("%-24s %s" % (k, v))
    print("wrote %s" % out)


if __name__ == "__main__":
    main()
