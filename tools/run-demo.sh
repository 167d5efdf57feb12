#!/bin/sh
# `make run`: list the user's store if there is one, else the bundled demo store.
bin="$1"
store="${OLLAMA_MODELS:-$HOME/.ollama/models}"
if [ -d "$store/manifests" ] || [ -d "$store/models/manifests" ]; then
  exec "$bin" list
fi
here=$(cd "$(dirname "$0")/.." && pwd)
echo "ollama-audit: no store at $store; listing the bundled demo store instead" >&2
# git keeps no file times: give the demo tags fixed ages, so the order and
# the MODIFIED column are the README's on every clone.
demo="$here/fixtures/demo-store/manifests"
now=$(date +%s)
age() { # age SECONDS TAGFILE
  t=$((now - $1))
  stamp=$(date -u -d "@$t" +%Y%m%d%H%M.%S 2>/dev/null || date -u -r "$t" +%Y%m%d%H%M.%S 2>/dev/null) &&
    TZ=UTC0 touch -t "$stamp" "$demo/$2" 2>/dev/null
}
age 120 registry.ollama.ai/library/demo-embed/latest
age 10800 registry.ollama.ai/library/gpt-oss/120b-cloud
age 172800 registry.ollama.ai/library/tiny-mlx/int4
age 432000 hf.co/bartowski/tiny-GGUF/Q4_K_M
age 1296000 registry.ollama.ai/alice/tiny-coder/q4
age 3024000 registry.ollama.ai/library/demo-vision/latest
age 8640000 registry.ollama.ai/library/demo-llama/1b
exec "$bin" --store "$here/fixtures/demo-store" list
