#!/bin/sh
# The Debian package, from the tree already built (cpack reruns no compile):
# `cpack -G DEB`, its control fields and contents (dpkg-deb), then as root
# `dpkg -i`, the installed program from /usr/bin on the demo store, and
# `dpkg --purge` (remove and purge in one run: each dpkg run costs the
# man-db and ldconfig triggers), after which no file of the package is left.
#   test_deb.sh BUILD_DIR SOURCE_DIR
# Exits 77 (skipped) with the reason when it cannot run here: not root, no
# dpkg, or an ollama-audit package already installed (never replaced).
set -u
build=$1 src=$2
skip() { echo "SKIP: $*"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "dpkg -i needs root (run as $(id -un))"
for tool in dpkg dpkg-deb cpack flock; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"
done

# One package install at a time on this machine, whichever tree runs it:
# dpkg's own lock would make a second run fail, not wait.
exec 9>/run/lock/ollama-audit-deb-test.lock 2>/dev/null || exec 9>/tmp/ollama-audit-deb-test.lock
flock 9
if dpkg-query -W -f='${Status}' ollama-audit 2>/dev/null | grep -q 'installed'; then
  skip "an ollama-audit package is already installed here; not replacing it"
fi

scratch=$(mktemp -d /tmp/oa-deb.XXXXXX)
installed=no
cleanup() {
  [ "$installed" = no ] || dpkg --purge ollama-audit >/dev/null 2>&1
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1" >&2; fi; }

if ! (cd "$build" && cpack -G DEB -B "$scratch" >"$scratch/cpack.log" 2>&1); then
  cat "$scratch/cpack.log" >&2
  echo "FAIL: cpack -G DEB"; echo "0 passed, 1 failed"; exit 1
fi
deb=$(ls "$scratch"/ollama-audit_*.deb)
version=$(sed -n 's/^project(ollama-audit VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
field() { dpkg-deb -f "$deb" "$1"; }
check "package name" "[ \"\$(field Package)\" = ollama-audit ]"
check "version $version" "[ \"\$(field Version)\" = '$version' ]"
for dep in libc6 libjansson4 libxxhash0 libssl3 libarchive13; do
  check "depends on $dep" "field Depends | tr ',' '\\n' | grep -q '^ *$dep\\b'"
done
if grep -q '^SYSTEMD_FOUND:INTERNAL=1' "$build/CMakeCache.txt"; then
  # loaded when history reads the journal (dlopen), not linked
  check "recommends libsystemd0" "field Recommends | tr ',' '\\n' | grep -q '^ *libsystemd0\\b'"
  check "does not depend on libsystemd0" "! field Depends | grep -q libsystemd"
fi
homepage=$(sed -n 's/^OA_HOMEPAGE_URL:STRING=//p' "$build/CMakeCache.txt")
check "the Homepage is this project's (the one configured, else none), never Ollama's" \
  "[ \"\$(field Homepage)\" = '$homepage' ]"
check "the control archive holds the shlibs file (for packages built against it)" \
  "dpkg-deb --info '$deb' | grep -q ' shlibs'"
dpkg-deb --contents "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$scratch/contents"
for f in /usr/bin/ollama-audit /usr/share/man/man1/ollama-audit.1.gz \
         /usr/share/bash-completion/completions/ollama-audit /usr/share/zsh/vendor-completions/_ollama-audit \
         /usr/share/fish/vendor_completions.d/ollama-audit.fish \
         /usr/lib/systemd/system/ollama-audit.service /usr/lib/systemd/system/ollama-audit.timer \
         /usr/share/doc/ollama-audit/copyright /usr/share/doc/ollama-audit/changelog.gz \
         /usr/include/ollama_audit/store.h /usr/lib/pkgconfig/ollama-audit.pc \
         /usr/lib/cmake/ollama_audit/ollama_auditConfig.cmake; do
  check "the package holds $f" "grep -qx '$f' '$scratch/contents'"
done
check "the package holds the shared library" "grep -q '^/usr/lib/.*libollama_audit\\.so\\.0$' '$scratch/contents'"
check "the service runs /usr/bin/ollama-audit" \
  "dpkg-deb --fsys-tarfile '$deb' | tar -xOf - ./usr/lib/systemd/system/ollama-audit.service | grep -q '^ExecStart=/usr/bin/ollama-audit '"
check "the changelog names this version" \
  "dpkg-deb --fsys-tarfile '$deb' | tar -xOf - ./usr/share/doc/ollama-audit/changelog.gz | gzip -dc | head -1 | grep -q '^ollama-audit ($version) '"

installed=yes
check "dpkg -i installs it" "dpkg -i '$deb' >'$scratch/dpkg.log' 2>&1 || { cat '$scratch/dpkg.log' >&2; false; }"
check "dpkg says it is installed" "dpkg-query -W -f='\${Status}' ollama-audit | grep -q 'install ok installed'"
check "/usr/bin/ollama-audit --help" "/usr/bin/ollama-audit --help | grep -q '^usage: ollama-audit'"
check "/usr/bin/ollama-audit list on the demo store" \
  "HOME='$scratch' /usr/bin/ollama-audit --store '$src/fixtures/demo-store' list -q | grep -qx 'demo-llama:1b'"
check "the library is known to the dynamic linker" "ldconfig -p | grep -q 'libollama_audit\\.so\\.0 '"
check "dpkg --purge removes and purges it" "dpkg --purge ollama-audit >'$scratch/dpkg.log' 2>&1 || { cat '$scratch/dpkg.log' >&2; false; }"
installed=no
check "dpkg no longer knows it" "! dpkg-query -W -f='\${Status}' ollama-audit 2>/dev/null | grep -q installed"
left=$(while read -r f; do [ -d "$f" ] || { [ -e "$f" ] || [ -L "$f" ]; } && [ ! -d "$f" ] && echo "$f"; done <"$scratch/contents")
check "no file of the package is left behind" "[ -z '$left' ] || { echo '$left' >&2; false; }"
check "the library is gone from the dynamic linker's cache" "! ldconfig -p | grep -q 'libollama_audit\\.so\\.0 '"
if command -v lintian >/dev/null 2>&1; then
  check "lintian finds no error" "lintian --no-tag-display-limit '$deb' >'$scratch/lintian.log' 2>&1; ! grep -q '^E:' '$scratch/lintian.log' || { cat '$scratch/lintian.log' >&2; false; }"
else
  echo "note: lintian is not installed; the package is not linted"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
