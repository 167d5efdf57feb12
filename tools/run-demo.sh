#!/bin/sh
# `make run`: list the user's store if there is one, else the bundled demo store.
bin="$1"
store="${OLLAMA_MODELS:-$HOME/.ollama/models}"
if [ -d "$store/manifests" ] || [ -d "$store/models/manifests" ]; then
  exec "$bin" list
fi
here=$(cd "$(dirname "$0")/.." && pwd)
echo "ollama-audit: no store at $store; listing the bundled demo store instead" >&2
exec "$bin" --store "$here/fixtures/demo-store" list
