#!/bin/sh
# bench_gguf.sh - benchmark the GGUF header reader against @huggingface/gguf 0.4.6 on real files
# written by llama.cpp's gguf-py (the ggml-vocab-*.gguf files of llama.cpp release v0.4.0, from
# the npm package node-llama-cpp@3.21.1) plus a synthetic model with tensors.
# Nothing fetched is committed: everything lives in $OA_BENCH_CACHE
# (default ${XDG_CACHE_HOME:-$HOME/.cache}/ollama-audit-bench). Not part of ctest.
#   tests/bench/bench_gguf.sh [ITERS]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${OA_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ollama-audit-bench}
ITERS=${1:-20}
mkdir -p "$CACHE"

# 1. Real GGUF files (spec §8.2).
if [ ! -d "$CACHE/lc/models" ]; then
	( cd "$CACHE"
	  [ -f node-llama-cpp-3.21.1.tgz ] || npm pack --silent node-llama-cpp@3.21.1 >/dev/null
	  tar xzf node-llama-cpp-3.21.1.tgz package/llama/gitRelease.bundle
	  rm -rf lc && git -c advice.detachedHead=false clone -q package/llama/gitRelease.bundle lc )
fi
# 2. The oracle, in a scratch dir.
if [ ! -d "$CACHE/hf/node_modules/@huggingface/gguf" ]; then
	( mkdir -p "$CACHE/hf" && cd "$CACHE/hf" && [ -f package.json ] || npm init -y >/dev/null
	  cd "$CACHE/hf" && npm install --silent @huggingface/gguf@0.4.6 >/dev/null )
fi
# 3. A synthetic model-like file with 291 tensors, 128k tokens and 280k merges.
SYN="$CACHE/synth-llama.gguf"
[ -f "$SYN" ] || node "$ROOT/tests/bench/gguf_oracle.mjs" --make-synth "$SYN"

# 4. Our bench program, optimised, straight from the sources it needs.
BIN="$CACHE/bench_gguf"
${CC:-cc} -std=c17 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$ROOT/include" -I"$ROOT/src" \
	"$ROOT/src/formats/gguf.c" "$ROOT/src/base/platform.c" "$ROOT/src/base/util.c" "$ROOT/src/base/oom.c" "$ROOT/tests/bench/bench_gguf.c" -lxxhash -o "$BIN"

FILES=$(ls -S -r "$CACHE"/lc/models/ggml-vocab-*.gguf)
FILES="$FILES $SYN"
OURS="$CACHE/ours.jsonl"; HF="$CACHE/hf.jsonl"
# shellcheck disable=SC2086
"$BIN" -n "$ITERS" $FILES > "$OURS" 2>"$CACHE/ours.err"
# shellcheck disable=SC2086
node "$ROOT/tests/bench/gguf_oracle.mjs" "$CACHE/hf/node_modules" -n 3 $FILES > "$HF"

python3 - "$OURS" "$HF" <<'PY'
import json, os, sys
ours = {j["file"]: j for j in map(json.loads, open(sys.argv[1]))}
hf = {j["file"]: j for j in map(json.loads, open(sys.argv[2]))}
print(f"{'file':32} {'bytes':>11} {'ours ms':>9} {'hf ms':>9} {'ratio':>7}  facts")
bad = 0
for f, o in ours.items():
    h = hf.get(f, {})
    name = os.path.basename(f).replace("ggml-vocab-", "").replace(".gguf", "")
    ratio = h.get("ms_median", 0) / o["ms_median"] if o["ms_median"] else 0
    diffs = []
    for k in ("arch", "version", "kv_count", "tensor_count", "vocab", "file_type", "params"):
        if "error" in h:
            diffs = ["hf error: " + h["error"][:60]]
            break
        if o.get(k) != h.get(k):
            diffs.append(f"{k}: ours={o.get(k)!r} hf={h.get(k)!r}")
    if o["rc"] != 0:
        diffs.append(f"ours rc={o['rc']} errors={o['errors']}")
    if o["tensor_count"] == 0 and h.get("data_offset") not in (None, o["data_offset"]):
        note = f" (data offset: ours {o['data_offset']} = EOF, hf {h.get('data_offset')}, padded)"
    else:
        note = ""
    bad += bool(diffs)
    print(f"{name:32} {os.path.getsize(f):>11,} {o['ms_median']:>9.3f} {h.get('ms_median', 0):>9.1f}"
          f" {ratio:>6.0f}x  {'AGREE' if not diffs else 'DISAGREE ' + '; '.join(diffs)}{note}")
print(f"\n{len(ours) - bad}/{len(ours)} files agree on arch, version, kv/tensor counts, vocab, file_type, params")
PY

echo
echo "QUICK mode (stops at the first tokenizer.* key):"
"$BIN" -q "$SYN" "$CACHE/lc/models/ggml-vocab-gemma-4.gguf" "$CACHE/lc/models/ggml-vocab-llama-bpe.gguf"
echo
echo "Peak RSS of one FULL walk of the gemma-4 vocab (getrusage):"
"$BIN" -r "$CACHE/lc/models/ggml-vocab-gemma-4.gguf" 2>/dev/null
if [ -x /usr/bin/time ]; then
	/usr/bin/time -v "$BIN" -r "$CACHE/lc/models/ggml-vocab-gemma-4.gguf" 2>&1 >/dev/null |
		grep -E "Maximum resident" || true
	/usr/bin/time -v node "$ROOT/tests/bench/gguf_oracle.mjs" "$CACHE/hf/node_modules" -n 1 \
		"$CACHE/lc/models/ggml-vocab-gemma-4.gguf" 2>&1 >/dev/null |
		sed -n 's/Maximum resident/@huggingface\/gguf: Maximum resident/p' || true
fi

# 5. The same facts through the CLI: `ollama-audit show` on a scratch store whose
#    model layers are these files (v2 and v3, with and without tensors).
OA_BIN=${OA_BIN:-$ROOT/build/ollama-audit}
echo
if [ -x "$OA_BIN" ]; then
	# shellcheck disable=SC2086
	python3 "$ROOT/tests/bench/show_vs_oracle.py" "$OA_BIN" "$HF" $FILES
else
	echo "($OA_BIN not built: skipping the show-vs-oracle comparison; run make first)"
fi
