#!/usr/bin/env python3
"""Build a store in the state Ollama 0.40's lazy compatibility migration
(compatmigrate/, spec §2.5.1) leaves behind, deterministically.

    python3 tests/tools/make_migrated_store.py --out DIR

What is in it (tests/cli/test_migrated.py checks each):
- gemma3:4b        migrated: the manifests-v2 tag is a list [ggml child,
                   llamacpp child], both here; the converted child has its own
                   weights (a second copy) and shares config, template and
                   params; the legacy manifests/ tag is the downgrade anchor
                   (the ggml child re-serialised with "runner":"ggml",
                   "format":"gguf" after "layers", byte-equal to the child);
- llamacpp:<hex>   the compatibility shadow of gemma3:4b's converted child
                   (a legacy tag whose content is that child, <hex> its sha256);
- llamacpp:<hex2>  an orphaned shadow: the model it was written for is gone,
                   its converted weights are held by the shadow alone;
- qwen3:0.6b       pulled under 0.40: manifests-v2 only (no legacy tag), so
                   an Ollama from before manifest lists deletes all of it;
- llama3.2:1b      a manifests-v2 tag with a legacy tag that differs from it
                   (a real conflict: still a warning);
- llama3.2-vision:11b  a legacy GGUF model of architecture mllama (refused);
- x/z-image:turbo  an image-generation safetensors model (capabilities
                   ["image"], a model_index.json layer; serving removed);
- manifests-v2/ollama.com/library/qwen3/.manifest-4242  an interrupted tag write;
- metadata/sha256-<hex>.json  one for gemma3's weights (kept), one whose blob
                   is gone (stale).
Every file is two hours old unless --fresh.  Python 3 standard library only.
"""

import argparse
import hashlib
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oastore as oa  # noqa: E402

TEMPLATE = "{{ if .System }}<|system|>{{ .System }}{{ end }}<|user|>{{ .Prompt }}<|assistant|>"


def gguf_parts(s, seed, arch, layers_extra=()):
    gguf = oa.tiny_llama_gguf(name="Migrated " + seed, arch=arch)
    layers = [s.layer("model", gguf), s.layer("template", TEMPLATE + seed),
              s.layer("params", oa.go_json({"stop": ["<|user|>"]}))] + list(layers_extra)
    return oa.gguf_config(s, gguf, layers), layers


def converted(s, seed, arch, layers):
    """The GGUF the migration writes for llama.cpp (a second full copy) and
    its config; template and params stay the source's."""
    gguf = oa.tiny_llama_gguf(name="Migrated " + seed + " (llama.cpp)", arch=arch, n_layers=3)
    conv = [s.layer("model", gguf)] + layers[1:]
    return oa.gguf_config(s, gguf, conv), conv


def shadow_name(child_digest):
    return "llamacpp:" + child_digest.split(":", 1)[1]


def write_legacy_bytes(s, name, data):
    p = s.manifest_path(name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
    os.chmod(p, 0o644)
    return p


def migrated(s, name, seed, arch):
    """A model the migration converted: returns the digests."""
    cfg, layers = gguf_parts(s, seed, arch)
    # the source as the migration re-serialises it (json.Marshal of the
    # manifest struct with runner and format after layers)
    ggml, ggml_bytes = s.add_manifest_blob(cfg, layers, runner="ggml", fmt="gguf")
    ccfg, conv = converted(s, seed, arch, layers)
    lcpp, lcpp_bytes = s.add_manifest_blob(ccfg, conv, runner="llamacpp", fmt="gguf")
    lst, _ = s.add_list_blob([{"digest": ggml, "runner": "ggml", "format": "gguf"},
                              {"digest": lcpp, "runner": "llamacpp", "format": "gguf"}])
    s.add_v2_tag(name, lst)
    write_legacy_bytes(s, name, ggml_bytes)                 # the downgrade anchor
    write_legacy_bytes(s, shadow_name(lcpp), lcpp_bytes)    # the shadow
    return dict(list=lst, ggml=ggml, llamacpp=lcpp, source_weights=layers[0]["digest"],
                converted_weights=conv[0]["digest"], ggml_bytes=ggml_bytes)


def build(out, fresh=False):
    if os.path.exists(out):
        shutil.rmtree(out)
    s = oa.Store(out)
    info = {}
    g = migrated(s, "gemma3:4b", "gemma", "gemma3")
    info.update({"gemma_" + k: v for k, v in g.items() if k != "ggml_bytes"})
    info["gemma_shadow"] = shadow_name(g["llamacpp"])

    # an orphaned shadow: the model whose child it was is gone (rm'd under 0.40)
    cfg, layers = gguf_parts(s, "removed", "llama")
    ccfg, conv = converted(s, "removed", "llama", layers)
    orphan, orphan_bytes = s.add_manifest_blob(ccfg, conv, runner="llamacpp", fmt="gguf")
    for l in [cfg, layers[0]]:  # the removed model's own config and weights went with it
        os.remove(s.blob_path(l["digest"]))
    write_legacy_bytes(s, shadow_name(orphan), orphan_bytes)
    info["orphan_shadow"] = shadow_name(orphan)
    info["orphan_weights"] = conv[0]["digest"]

    # pulled under 0.40: manifests-v2 only
    cfg, layers = gguf_parts(s, "qwen", "qwen3")
    q, _ = s.add_manifest_blob(cfg, layers, runner="llamacpp", fmt="gguf")
    absent = "sha256:" + hashlib.sha256(b"qwen3:0.6b mlx child, not pulled").hexdigest()
    ql, _ = s.add_list_blob([{"digest": q, "runner": "llamacpp", "format": "gguf"},
                             {"digest": absent, "runner": "mlx", "format": "safetensors"}])
    s.add_v2_tag("qwen3:0.6b", ql)
    info["qwen_list"], info["qwen_child"] = ql, q
    info["qwen_weights"] = layers[0]["digest"]

    # a legacy tag that differs from its manifests-v2 tag
    cfg, layers = gguf_parts(s, "llama-new", "llama")
    l2, _ = s.add_manifest_blob(cfg, layers, runner="llamacpp", fmt="gguf")
    s.add_v2_tag("llama3.2:1b", l2)
    cfg, layers = gguf_parts(s, "llama-old", "llama")
    s.add_manifest("llama3.2:1b", cfg, layers, style="registry")

    # unservable: mllama, and image generation
    cfg, layers = gguf_parts(s, "vision", "mllama")
    s.add_manifest("llama3.2-vision:11b", cfg, layers, style="registry")
    mcfg, mlayers = oa.tiny_mlx_model(s, capabilities=("image",))
    mlayers = mlayers + [s.layer("application/vnd.ollama.image.json",
                                 oa.go_json({"_class_name": "ZImagePipeline"}),
                                 name="model_index.json")]
    s.add_manifest("x/z-image:turbo", mcfg, mlayers, style="local")

    # an interrupted tag write, and the metadata/ caches
    s.write_raw("manifests-v2/ollama.com/library/qwen3/.manifest-4242", b'{"schemaVersion":2')
    kept = g["source_weights"].split(":", 1)[1]
    gone = hashlib.sha256(b"a blob removed long ago").hexdigest()
    s.write_raw("metadata/sha256-%s.json" % kept, oa.go_json({"general.architecture": "gemma3"}))
    s.write_raw("metadata/sha256-%s.json" % gone, oa.go_json({"general.architecture": "llama"}))
    info["metadata_kept"], info["metadata_stale"] = kept, gone

    if not fresh:
        s.age_all(7200)
        for d, dirs, files in os.walk(out):
            for f in files:  # symlinks too (age_all follows them)
                p = os.path.join(d, f)
                if os.path.islink(p):
                    s.age(p, 7200)
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--fresh", action="store_true", help="leave every file new (inside the grace period)")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    if os.path.basename(out) in ("", "/", "fixtures", "tests"):
        sys.exit("refusing to rebuild %s" % out)
    for k, v in sorted(build(out, a.fresh).items()):
        print("%-18s %s" % (k, v))
    print("wrote %s" % out)


if __name__ == "__main__":
    main()
