#!/bin/sh
# `make run`: configure and build only the binary, printing one progress line
# when something is compiled (none when it is up to date). The full output
# goes to a log that is shown only when the build fails.
#   tools/quiet-build.sh BUILD_DIR JOBS [cmake -D options...]
build=$1 jobs=$2
shift 2
mkdir -p "$build" || exit 1
log=$build/quiet-build.log
status=$build/quiet-build.status
echo 1 >"$status"
{
  cmake -S . -B "$build" "$@" && cmake --build "$build" --target ollama-audit -j "$jobs"
  echo $? >"$status"
} 2>&1 | tee "$log" | awk -v msg="ollama-audit: building $build/ollama-audit (output in $log)" \
  '/Building C object|Linking C/ && !n++ { print msg; fflush() }' >&2
code=$(cat "$status")
rm -f "$status"
if [ "$code" -ne 0 ]; then
  cat "$log" >&2
  echo "ollama-audit: the build failed (exit $code); the output is above and in $log" >&2
  exit "$code"
fi
