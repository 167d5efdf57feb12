#!/usr/bin/env python3
"""show_vs_oracle.py - put real GGUF files (llama.cpp's own writer, v2 and v3,
with and without tensors) into a scratch Ollama store as model layers, run
`ollama-audit show --format json` on each, and compare the header facts it
prints with what @huggingface/gguf reported for the same file.

    python3 show_vs_oracle.py BINARY HF_JSONL FILE...

Exit status 1 on any disagreement."""
import json, os, shutil, sys, tempfile

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
import oastore as oa  # noqa: E402
import subprocess  # noqa: E402


def main():
    binary, hf_path, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    hf = {j["file"]: j for j in map(json.loads, open(hf_path))}
    tmp = tempfile.mkdtemp(prefix="oa-show-oracle.")
    bad = 0
    try:
        s = oa.Store(tmp)
        for i, f in enumerate(files):
            layer = s.layer("model", open(f, "rb").read())
            cfg = s.config(oa.config_v2(model_format="gguf"))
            s.add_manifest("oracle/m%d:latest" % i, cfg, [layer])
            r = subprocess.run([binary, "--store", tmp, "show", "oracle/m%d" % i, "--format", "json"],
                               capture_output=True, text=True)
            doc = json.loads(r.stdout)
            h = doc["layer_list"][0]["header"]
            want = hf[f]
            got = {"arch": h["architecture"], "version": h["version"], "kv_count": h["kv_count"],
                   "tensor_count": h["tensor_count"], "vocab": h["vocab_size"],
                   "file_type": h["file_type"], "params": h["parameter_count"]}
            diffs = ["%s: show=%r hf=%r" % (k, got[k], want.get(k)) for k in got if got[k] != want.get(k)]
            name = os.path.basename(f)
            print("%-34s %s" % (name, "AGREE" if not diffs else "DIFFER " + "; ".join(diffs)))
            bad += bool(diffs)
    finally:
        shutil.rmtree(tmp)
    print("%d/%d files: `show` agrees with @huggingface/gguf" % (len(files) - bad, len(files)))
    sys.exit(1 if bad else 0)


main()
