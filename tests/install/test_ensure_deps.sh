#!/bin/sh
# tools/ensure-deps.sh (make build, make test) on a machine without dpkg or
# apt-get: it passes when cc, make, cmake and pkg-config find everything the
# build needs, and fails naming the package when pkg-config misses a library.
#   test_ensure_deps.sh SOURCE_DIR
set -u
src=$1
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1" >&2; fi; }
# A PATH with the build's tools and no dpkg-query, apt-get or anything else.
for tool in sh cc make cmake pkg-config grep id; do
  path=$(command -v "$tool") || { echo "SKIP: $tool is not installed"; exit 77; }
  ln -s "$path" "$bin/$tool"
done
build_pkgs="build-essential cmake pkg-config libjansson-dev libxxhash-dev libssl-dev libarchive-dev"
check "no dpkg: the build's packages are found through pkg-config" \
  "PATH='$bin' sh '$src/tools/ensure-deps.sh' $build_pkgs 2>'$bin/err'"
check "and nothing is said" "[ ! -s '$bin/err' ]"
check "a library pkg-config does not find is missing, by its package name" \
  "! PATH='$bin' PKG_CONFIG_LIBDIR='$bin' PKG_CONFIG_PATH= sh '$src/tools/ensure-deps.sh' $build_pkgs 2>'$bin/err' &&
   grep -q 'missing:.*libjansson-dev' '$bin/err'"
check "a test package no probe knows is reported as unchecked, not missing" \
  "PATH='$bin' sh '$src/tools/ensure-deps.sh' pkg-config systemd-journal-remote 2>'$bin/err' &&
   grep -q 'cannot tell.*systemd-journal-remote' '$bin/err'"
# A normal user's PATH has no /usr/sbin, where mkfs.btrfs lives: found all
# the same (make test as a normal user stopped here, asking for sudo).
if [ -x /usr/sbin/mkfs.btrfs ] || [ -x /sbin/mkfs.btrfs ]; then
  check "btrfs-progs is found in sbin with a PATH that has no sbin" \
    "PATH='$bin' sh '$src/tools/ensure-deps.sh' btrfs-progs 2>'$bin/err'"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
