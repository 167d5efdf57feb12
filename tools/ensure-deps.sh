#!/bin/sh
# Install the Debian packages named on the command line that are missing.
# As root: apt-get install them. Otherwise: print the exact command and fail.
missing=""
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
    missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ollama-audit: missing packages:$missing (no apt-get here; install them by hand)" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "ollama-audit: missing packages. Run:" >&2
  echo "  sudo apt-get install -y$missing" >&2
  exit 1
fi
echo "ollama-audit: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null
