#!/bin/sh
# Install into a scratch DESTDIR and build a program against the installed
# headers and library through the installed pkg-config file, as a user would.
set -eu
build=$1
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1" >&2; fi; }
export DESTDIR=$dest
cmake --install "$build" --prefix /usr/local >/dev/null
unset DESTDIR
root=$dest/usr/local
check "binary installed" "[ -x '$root/bin/ollama-audit' ]"
check "man page installed" "[ -f '$root/share/man/man1/ollama-audit.1' ]"
check "headers installed" "[ -f '$root/include/ollama_audit/store.h' ]"
# pkg-config mangles a sysroot with a space or a non-ASCII byte in it (and
# $TMPDIR may have them): build from inside DESTDIR, with "." as the sysroot.
cd "$dest"
export PKG_CONFIG_SYSROOT_DIR=. PKG_CONFIG_PATH=$(ls -d usr/local/lib*/pkgconfig | head -1)
cat > "$dest/consumer.c" <<'C'
#include <ollama_audit/name.h>
#include <stdio.h>
int main(void)
{
	oa_name n;
	char b[OA_NAME_DISPLAY_MAX];
	if (!oa_name_parse("hf.co/org/repo:Q4_K_M", &n))
		return 1;
	oa_name_display(&n, b, sizeof b);
	puts(b);
	return 0;
}
C
check "consumer compiles via pkg-config" "cc consumer.c \$(pkg-config --cflags --libs ollama-audit) -o consumer"
check "consumer runs" "[ \"\$('$dest/consumer')\" = 'hf.co/org/repo:Q4_K_M' ]"
check "installed binary runs" "'$root/bin/ollama-audit' --version | grep -q '^ollama-audit '"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
