#!/bin/sh
# Make sure what the Debian packages named on the command line provide is
# here. Each is first looked for the way the build uses it: a library through
# pkg-config, a tool in PATH. Only a package with no such probe is asked of
# dpkg, so a machine without dpkg (or with the libraries built by hand)
# builds when CMake and pkg-config find everything. What is missing: as root
# with apt-get, installed; otherwise the exact command is printed and it fails.

# probe PACKAGE: 0 found, 1 missing, 2 no probe for it (ask dpkg).
probe() {
  case $1 in
    build-essential) command -v cc && command -v make ;;
    libjansson-dev) pkg-config --exists jansson ;;
    libxxhash-dev) pkg-config --exists libxxhash ;;
    libssl-dev) pkg-config --exists libcrypto ;;
    libarchive-dev) pkg-config --exists libarchive ;;
    libsystemd-dev) pkg-config --exists libsystemd ;;
    # a normal user's PATH has no sbin: look there too
    btrfs-progs) command -v mkfs.btrfs || [ -x /usr/sbin/mkfs.btrfs ] || [ -x /sbin/mkfs.btrfs ] ;;
    cmake|pkg-config|python3|clang|strace|zsh|fish|lintian|chromium) command -v "$1" ;;
    man-db) command -v man ;;
    bash-completion) [ -f /usr/share/bash-completion/bash_completion ] ;;
    *) return 2 ;;
  esac >/dev/null 2>&1 || return 1
}

missing="" unknown=""
for pkg in "$@"; do
  probe "$pkg"
  case $? in
    0) continue ;;
    1) missing="$missing $pkg" ;;
    2) if command -v dpkg-query >/dev/null 2>&1; then
         dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
           missing="$missing $pkg"
       else
         unknown="$unknown $pkg"
       fi ;;
  esac
done
if [ -n "$unknown" ]; then
  echo "ollama-audit: cannot tell whether these are here (no dpkg-query):$unknown; the tests that need them skip" >&2
fi
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ollama-audit: missing:$missing (Debian package names; no apt-get here: install them by hand)" >&2
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
