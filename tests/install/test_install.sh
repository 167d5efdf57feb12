#!/bin/sh
# `cmake --install BUILD --prefix P` into a scratch prefix, as a user would
# (no DESTDIR): every file lands where it should, then the prefix is moved
# (the pkg-config file and the CMake package must not care) and a small
# program that opens, checks and closes the demo store is built against it
# twice, through pkg-config and through find_package(ollama_audit), and run.
# Every installed header must compile alone under -std=c17 -pedantic -Werror
# (with one typedef after it: ISO C wants a translation unit to declare something).
#   test_install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
# pkg-config prints paths unquoted: a prefix with a space in it (and $TMPDIR
# may have one) would not survive; /tmp has none.
scratch=$(mktemp -d /tmp/oa-install.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1" >&2; fi; }

first=$scratch/first
cmake --install "$build" --prefix "$first" >/dev/null
libdir=$(cd "$first" && ls -d lib*/pkgconfig | head -1 | xargs dirname)
check "binary installed" "[ -x '$first/bin/ollama-audit' ]"
check "shared library with its SONAME link" \
  "[ -L '$first/$libdir/libollama_audit.so.0' ] && [ -L '$first/$libdir/libollama_audit.so' ]"
check "the SONAME is libollama_audit.so.0" \
  "readelf -d '$first/$libdir/libollama_audit.so' | grep -q 'SONAME.*\\[libollama_audit\\.so\\.0\\]'"
check "static library installed" "[ -f '$first/$libdir/libollama_audit.a' ]"
check "the installed headers are include/ollama_audit/, all of them" \
  "[ \"\$(cd '$first/include/ollama_audit' && ls)\" = \"\$(cd '$src/include/ollama_audit' && ls)\" ]"
check "man page installed, gzipped" "gzip -t '$first/share/man/man1/ollama-audit.1.gz'"
check "bash completion installed" "grep -q '^complete -F _ollama_audit ollama-audit' '$first/share/bash-completion/completions/ollama-audit'"
check "zsh completion installed" "head -1 '$first/share/zsh/site-functions/_ollama-audit' | grep -q '^#compdef ollama-audit'"
check "fish completion installed" "grep -q '^complete -c ollama-audit' '$first/share/fish/vendor_completions.d/ollama-audit.fish'"
check "the systemd service runs the installed binary by its full path" \
  "grep -qx 'ExecStart=$first/bin/ollama-audit check --all-users .*' '$first/lib/systemd/system/ollama-audit.service'"
check "the systemd timer installed" "grep -qx 'OnCalendar=hourly' '$first/lib/systemd/system/ollama-audit.timer'"
unit=$first/lib/systemd/system/ollama-audit.service
check "the service writes check's metrics to ollama-check.prom" \
  "grep -qx 'ExecStart=$first/bin/ollama-audit check --all-users --format prometheus --output /var/lib/prometheus/node-exporter/ollama-check.prom' '$unit'"
check "the service writes du's metrics to ollama-du.prom" \
  "grep -qx 'ExecStart=$first/bin/ollama-audit du --all-users --format prometheus --output /var/lib/prometheus/node-exporter/ollama-du.prom' '$unit'"
check "the service does not fail where node_exporter's directory is missing (ReadWritePaths=-, a condition)" \
  "grep -qx 'ReadWritePaths=-/var/lib/prometheus/node-exporter' '$unit' && grep -qx 'ConditionPathIsDirectory=/var/lib/prometheus/node-exporter' '$unit'"
check "no user units for a prefix outside the home" "[ ! -e '$first/share/systemd/user' ]"
if command -v systemd-analyze >/dev/null 2>&1; then
  check "systemd-analyze verify finds nothing to say about the system units" \
    "out=\$(systemd-analyze verify --man=no '$unit' '$first/lib/systemd/system/ollama-audit.timer' 2>&1) && [ -z \"\$out\" ] || { echo \"\$out\" >&2; false; }"
else
  echo "note: systemd-analyze is not installed; the units are not verified"
fi

# A prefix under the home of whoever installs (make install PREFIX=~/.local):
# user units, where the user's systemd looks, and no system units.
home=$scratch/home
mkdir -p "$home"
HOME=$home cmake --install "$build" --prefix "$home/.local" >"$scratch/home-install.log"
userdir=$home/.local/share/systemd/user
check "a home prefix gets user units in <prefix>/share/systemd/user" \
  "[ -f '$userdir/ollama-audit.service' ] && grep -qx 'OnCalendar=hourly' '$userdir/ollama-audit.timer'"
check "a home prefix gets no system units" "[ ! -e '$home/.local/lib/systemd' ]"
check "the user service audits the user's store into its state directory, check and du" \
  "grep -qx 'ExecStart=$home/.local/bin/ollama-audit check --format prometheus --output %S/ollama-audit/ollama-check.prom' '$userdir/ollama-audit.service' &&
   grep -qx 'ExecStart=$home/.local/bin/ollama-audit du --format prometheus --output %S/ollama-audit/ollama-du.prom' '$userdir/ollama-audit.service' &&
   grep -qx 'StateDirectory=ollama-audit' '$userdir/ollama-audit.service'"
check "make install says how to enable the user units" \
  "grep -q 'systemctl --user enable --now ollama-audit.timer' '$scratch/home-install.log'"
if command -v systemd-analyze >/dev/null 2>&1; then
  mkdir -m 700 "$scratch/run"
  check "the user's systemd reads units from ~/.local/share/systemd/user" \
    "env -i HOME='$home' PATH=/usr/bin:/bin XDG_RUNTIME_DIR='$scratch/run' systemd-analyze --user unit-paths | grep -qx '$userdir'"
  check "systemd-analyze --user verify finds nothing to say about the user units" \
    "out=\$(env -i HOME='$home' PATH=/usr/bin:/bin XDG_RUNTIME_DIR='$scratch/run' systemd-analyze --user verify --man=no '$userdir/ollama-audit.service' '$userdir/ollama-audit.timer' 2>&1) && [ -z \"\$out\" ] || { echo \"\$out\" >&2; false; }"
fi
check "copyright and changelog installed" \
  "[ -f '$first/share/doc/ollama-audit/copyright' ] && gzip -t '$first/share/doc/ollama-audit/changelog.gz'"
check "CMake package installed" "[ -f '$first/$libdir/cmake/ollama_audit/ollama_auditConfig.cmake' ]"

# Moved: nothing installed may hold the first prefix but the systemd unit.
root=$scratch/moved
mv "$first" "$root"
check "no installed text file names the prefix it was installed to" \
  "! grep -rlI --exclude=ollama-audit.service '$first' '$root'"
export PKG_CONFIG_PATH="$root/$libdir/pkgconfig"
cd "$scratch"
cp "$src/tests/install/consumer/consumer.c" "$src/tests/install/consumer/CMakeLists.txt" .
check "consumer compiles via pkg-config" "cc consumer.c \$(pkg-config --cflags --libs ollama-audit) -o consumer"
check "the consumer links the shared library" "readelf -d consumer | grep -q 'NEEDED.*libollama_audit\\.so\\.0'"
check "consumer (pkg-config, shared) checks the demo store" \
  "[ \"\$(LD_LIBRARY_PATH='$root/$libdir' ./consumer '$src/fixtures/demo-store')\" = '7 models, 0 errors' ]"
check "consumer compiles statically via pkg-config --static" \
  "cc consumer.c \$(pkg-config --cflags ollama-audit) -Wl,-Bstatic -lollama_audit -Wl,-Bdynamic \$(pkg-config --static --libs ollama-audit) -o consumer-static"
check "consumer (pkg-config, static) checks the demo store without the shared library" \
  "[ \"\$(./consumer-static '$src/fixtures/demo-store')\" = '7 models, 0 errors' ]"
check "consumer configures via find_package(ollama_audit)" \
  "cmake -S . -B cmake-build -DCMAKE_PREFIX_PATH='$root' -DCMAKE_BUILD_TYPE=Release >cmake.log 2>&1 || { cat cmake.log >&2; false; }"
check "consumer builds via find_package(ollama_audit)" \
  "cmake --build cmake-build >>cmake.log 2>&1 || { cat cmake.log >&2; false; }"
check "consumer (find_package, ollama_audit::ollama_audit) checks the demo store" \
  "[ \"\$(./cmake-build/consumer '$src/fixtures/demo-store')\" = '7 models, 0 errors' ]"
# One file per header, all compiled by one cc (each is its own translation
# unit); when that fails, each is compiled again on its own to name it.
mkdir headers
for h in "$root"/include/ollama_audit/*.h; do
  name=${h##*/}
  printf '#include <ollama_audit/%s>\ntypedef int not_empty;\n' "$name" >"headers/${name%.h}.c"
done
strict="-std=c17 -pedantic -Werror -Wall -Wextra -fsyntax-only $(pkg-config --cflags ollama-audit)"
if cc $strict headers/*.c 2>/dev/null; then
  check "every installed header ($(ls headers | wc -l)) compiles alone with -std=c17 -pedantic -Werror" true
else
  for c in headers/*.c; do
    name=$(basename "$c" .c).h
    check "ollama_audit/$name compiles alone with -std=c17 -pedantic -Werror" "cc $strict '$c'"
  done
fi
check "installed binary runs" "'$root/bin/ollama-audit' --help | grep -q '^usage: ollama-audit'"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
