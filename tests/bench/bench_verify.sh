#!/bin/sh
# bench_verify.sh - throughput and memory of the verify engine (see README-verify.md).
# Not part of `make test`. Usage: sh tests/bench/bench_verify.sh
# Environment: REPS (best of, default 3), LARGE_N/LARGE_MB, SMALL_N/SMALL_KB,
# RSS_N (blobs for the memory figure), TMPDIR (where the data set goes), CC.
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
LARGE_N=${LARGE_N:-64}
LARGE_MB=${LARGE_MB:-16}
SMALL_N=${SMALL_N:-1000}
SMALL_KB=${SMALL_KB:-64}
BIG_MB=${BIG_MB:-512}
RSS_N=${RSS_N:-10000}
CC=${CC:-cc}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/oa-bench-verify.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM

# The driver is compiled straight from the library sources at -O2 (the flags of
# a RelWithDebInfo build), so it does not depend on anyone's build directory.
BIN=$WORK/bench_verify
$CC -std=c17 -O2 -g -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$SRC/include" \
	"$SRC/tests/bench/bench_verify.c" "$SRC/src/verify.c" "$SRC/src/verify_cache.c" \
	"$SRC/src/platform.c" $(pkg-config --cflags --libs jansson libxxhash libcrypto) -lpthread \
	-o "$BIN"

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
mbps() { awk -v by="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? by / 1e6 / s : 0) }'; }

# best_of CMD...: the smallest wall time of REPS runs, in seconds.
best_of() {
	best=""
	i=0
	while [ $i -lt "$REPS" ]; do
		t0=$(now)
		"$@" >/dev/null
		t1=$(now)
		t=$(sub "$t0" "$t1")
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
		i=$((i + 1))
	done
	echo "$best"
}

NPROC=$(nproc)
CPU=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')
SHANI=$(grep -m1 -ow sha_ni /proc/cpuinfo 2>/dev/null || echo "no sha_ni")
FS=$(df -P "$WORK" | awk 'NR == 2 { print $1 " mounted on " $6 }')
echo "machine: nproc=$NPROC cpu=\"$CPU\" ($SHANI), $(openssl version | cut -d' ' -f1-2)," \
     "$(sha256sum --version | head -1)"
echo "data set: $WORK on $FS"

echo "generating $LARGE_N x $LARGE_MB MiB + $SMALL_N x $SMALL_KB KiB, one $BIG_MB MiB file, $RSS_N x 4 KiB ..."
"$BIN" gen "$WORK/set" "$LARGE_N" $((LARGE_MB << 20)) 1
"$BIN" gen "$WORK/set" "$SMALL_N" $((SMALL_KB << 10)) 2
"$BIN" gen "$WORK/big" 1 $((BIG_MB << 20)) 3
"$BIN" gen "$WORK/many" "$RSS_N" 4096 4
SET_BYTES=$(( (LARGE_N * LARGE_MB << 20) + (SMALL_N * SMALL_KB << 10) ))
BIG_BYTES=$((BIG_MB << 20))
# Warm the page cache: every figure below is CPU-bound, not disk-bound.
cat "$WORK"/set/blobs/* "$WORK"/big/blobs/* "$WORK"/many/blobs/* >/dev/null

echo "best of $REPS runs each (wall clock, whole process):"
T_OSSL=$(best_of openssl dgst -sha256 "$WORK"/big/blobs/*)
R_OSSL=$(mbps $BIG_BYTES "$T_OSSL")
echo "  openssl dgst -sha256, one $BIG_MB MiB file, 1 core: ${T_OSSL}s = $R_OSSL MB/s"

T_SUM=$(best_of sha256sum "$WORK"/set/blobs/*)
R_SUM=$(mbps $SET_BYTES "$T_SUM")
echo "  sha256sum over the set (1 core):                ${T_SUM}s = $R_SUM MB/s"

for BUF in 262144 1048576 4194304; do
	T=$(best_of "$BIN" run --jobs "$NPROC" --buf $BUF "$WORK/set")
	echo "  engine sha256 jobs=$NPROC buffer=$((BUF >> 10)) KiB:          ${T}s = $(mbps $SET_BYTES "$T") MB/s"
done
T_VER=$(best_of "$BIN" run --jobs "$NPROC" "$WORK/set")
R_VER=$(mbps $SET_BYTES "$T_VER")
echo "  engine sha256 jobs=$NPROC default buffer:          ${T_VER}s = $R_VER MB/s"
T_VER1=$(best_of "$BIN" run --jobs 1 "$WORK/set")
echo "  engine sha256 jobs=1 default buffer:            ${T_VER1}s = $(mbps $SET_BYTES "$T_VER1") MB/s"

"$BIN" run --jobs "$NPROC" --cache "$WORK/cache.json" "$WORK/set" >/dev/null
T_QUICK=$(best_of "$BIN" run --jobs "$NPROC" --mode quick --cache "$WORK/cache.json" "$WORK/set")
R_QUICK=$(mbps $SET_BYTES "$T_QUICK")
echo "  engine quick  jobs=$NPROC default buffer:          ${T_QUICK}s = $R_QUICK MB/s"
T_CO=$(best_of "$BIN" run --jobs "$NPROC" --changed-only --cache "$WORK/cache.json" "$WORK/set")
echo "  engine changed-only (all unchanged):            ${T_CO}s"

echo "memory:"
echo "  $RSS_N blobs x 4 KiB, sha256, with cache:     $("$BIN" run --jobs "$NPROC" --cache "$WORK/c2.json" "$WORK/many" | sed 's/.*maxrss_kb=/maxrss_kb=/')"
echo "  the set (1 GiB), sha256, with cache:           $("$BIN" run --jobs "$NPROC" --cache "$WORK/c3.json" "$WORK/set" | sed 's/.*maxrss_kb=/maxrss_kb=/')"

echo "ratios (targets in brackets):"
echo "  verify / (cores x openssl 1-core) = $R_VER / ($NPROC x $R_OSSL) = $(div "$R_VER" $((NPROC * R_OSSL)))  [>= 0.85]"
echo "  verify / sha256sum                = $(div "$R_VER" "$R_SUM")  [>= 3]"
echo "  quick / verify                    = $(div "$R_QUICK" "$R_VER")  [>= 3]"
