#!/usr/bin/env python3
"""Build fixtures/store-0.40/, a tiny store as Ollama 0.40 writes it
(spec §2.5, the seed article), deterministically.

    python3 tests/tools/make_040_store.py [--out DIR]

What is in it (the expected `ollama-audit list` output is in
fixtures/store-0.40.md, and tests/cli/test_v2.py checks it):
- qwen3.5:4b          a manifests-v2 symlink to a manifest list with a GGUF
                      (llamacpp) and an MLX child; only the GGUF child was
                      pulled (a Linux pull); a legacy manifests/ tag of the
                      same name, an older GGUF build, stays as a downgrade
                      anchor;
- qwen3.5:4b-q4_K_M   a manifests-v2 symlink to the very manifest blob that
                      is the list's GGUF child (same ID, as on the registry);
- gemma4:12b          a list of two children of which only the MLX one is here
                      (a disk copied from a Mac);
- localhost:5000/team/tiny:v1  a private registry with a port (%3A), the tag a
                      copy of its manifest blob;
- llama3.2:1b         a legacy GGUF model from before 0.40 (runner "ggml").
Hard-link tags are not in the fixture (git does not keep hard links); the
tests build them in temp stores.  Python 3 standard library only.
"""

import argparse
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oastore as oa  # noqa: E402

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
T0 = 1767225600  # 2026-01-01T00:00:00Z
TEMPLATE = "{{ if .System }}<|system|>{{ .System }}{{ end }}<|user|>{{ .Prompt }}<|assistant|>"


def gguf_parts(s, seed, arch):
    gguf = oa.tiny_llama_gguf(name="Tiny 0.40 " + seed, arch=arch)
    layers = [s.layer("model", gguf), s.layer("template", TEMPLATE),
              s.layer("params", oa.go_json({"stop": ["<|user|>"]}))]
    return oa.gguf_config(s, gguf, layers), layers


def build(out):
    if os.path.exists(out):
        shutil.rmtree(out)
    s = oa.Store(out)
    q_cfg, q_layers = gguf_parts(s, "qwen", "qwen35")
    q_gguf, _ = s.add_manifest_blob(q_cfg, q_layers, runner="llamacpp", fmt="gguf")
    # the MLX child's digest as the registry lists it; its blob was never pulled
    q_mlx = "sha256:" + oa.hashlib.sha256(b"qwen3.5:4b mlx child, not pulled").hexdigest()
    q_list, _ = s.add_list_blob([{"digest": q_gguf, "runner": "llamacpp", "format": "gguf"},
                                 {"digest": q_mlx, "runner": "mlx", "format": "safetensors"}])
    s.add_v2_tag("qwen3.5:4b", q_list)
    s.add_v2_tag("qwen3.5:4b-q4_K_M", q_gguf)
    a_cfg, a_layers = gguf_parts(s, "qwen-old", "qwen3")
    s.add_manifest("qwen3.5:4b", a_cfg, a_layers, style="registry")

    m_cfg, m_layers = oa.tiny_mlx_model(s)
    g_mlx, _ = s.add_manifest_blob(m_cfg, m_layers, runner="mlx", fmt="safetensors")
    g_gguf = "sha256:" + oa.hashlib.sha256(b"gemma4:12b gguf child, not pulled").hexdigest()
    g_list, _ = s.add_list_blob([{"digest": g_gguf, "runner": "llamacpp", "format": "gguf"},
                                 {"digest": g_mlx, "runner": "mlx", "format": "safetensors"}])
    s.add_v2_tag("gemma4:12b", g_list)

    r_cfg, r_layers = gguf_parts(s, "registry", "llama")
    r_man, _ = s.add_manifest_blob(r_cfg, r_layers, runner="llamacpp", fmt="gguf")
    s.add_v2_tag("localhost:5000/team/tiny:v1", r_man, how="copy")

    l_cfg, l_layers = gguf_parts(s, "llama", "llama")
    s.add_manifest("llama3.2:1b", l_cfg, l_layers, style="registry")

    for i, (d, _, files) in enumerate(sorted(os.walk(out))):
        for f in sorted(files):
            os.utime(os.path.join(d, f), (T0 + 3600, T0 + 3600), follow_symlinks=False)
    return {"qwen_list": q_list, "qwen_gguf": q_gguf, "gemma_list": g_list, "gemma_mlx": g_mlx,
            "registry": r_man}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "fixtures", "store-0.40"))
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    if os.path.basename(out) in ("", "/", "fixtures") or out == REPO:
        sys.exit("refusing to rebuild %s" % out)
    for k, v in sorted(build(out).items()):
        print("%-11s %s" % (k, v))
    print("wrote %s" % out)


if __name__ == "__main__":
    main()
