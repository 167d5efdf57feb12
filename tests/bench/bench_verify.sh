#!/bin/sh
# bench_verify.sh - throughput and memory of the verify engine (see README-verify.md).
# Not part of `make test`. Usage: sh tests/bench/bench_verify.sh
# Environment: REPS (best of, default 3), LARGE_N/LARGE_MB, SMALL_N/SMALL_KB,
# RSS_N (blobs for the memory figure), TMPDIR (where the data set goes), CC.
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-5}
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
$CC -std=c17 -O2 -g -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$SRC/include" -I"$SRC/src" \
	"$SRC/tests/bench/bench_verify.c" "$SRC/src/verify/verify.c" "$SRC/src/verify/verify_cache.c" \
	"$SRC/src/base/platform.c" "$SRC/src/base/util.c" "$SRC/src/base/oom.c" "$SRC/src/base/outfile.c" $(pkg-config --cflags --libs jansson libxxhash libcrypto) -lpthread \
	-o "$BIN"

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
mbps() { awk -v by="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? by / 1e6 / s : 0) }'; }

# best_engine ARGS...: the smallest engine time (oa_verify_run only, as the
# driver reports it: no process start, directory listing or cache save) of REPS runs.
best_engine() {
	best=""
	i=0
	while [ $i -lt "$REPS" ]; do
		warm
		t=$("$BIN" run "$@" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p')
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
# Other work on the machine skews every figure: measure how busy it is first.
busy() {
	[ -r /proc/stat ] || { echo 0; return; }
	a=$(head -1 /proc/stat)
	sleep 1
	b=$(head -1 /proc/stat)
	echo "$a $b" | awk '{ n = (NF - 2) / 2; for (i = 2; i <= n + 1; i++) { t0 += $i; t1 += $(i + n + 1) }
		idle0 = $5 + $6; idle1 = $(5 + n + 1) + $(6 + n + 1)
		d = t1 - t0; printf "%.0f", (d > 0 ? 100 * (1 - (idle1 - idle0) / d) : 0) }'
}
BUSY=$(busy)
echo "CPU busy before starting: $BUSY%"
if [ "$BUSY" -gt 10 ]; then
	echo "WARNING: other work is running; the figures below will be low and noisy"
fi

echo "generating $LARGE_N x $LARGE_MB MiB + $SMALL_N x $SMALL_KB KiB, one $BIG_MB MiB file, $RSS_N x 4 KiB ..."
"$BIN" gen "$WORK/set" "$LARGE_N" $((LARGE_MB << 20)) 1
"$BIN" gen "$WORK/set" "$SMALL_N" $((SMALL_KB << 10)) 2
"$BIN" gen "$WORK/big" 1 $((BIG_MB << 20)) 3
"$BIN" gen "$WORK/many" "$RSS_N" 4096 4
SET_BYTES=$(( (LARGE_N * LARGE_MB << 20) + (SMALL_N * SMALL_KB << 10) ))
BIG_BYTES=$((BIG_MB << 20))
# Warm the page cache: every figure below is CPU-bound, not disk-bound. Done
# again before each measurement: some VMs run proactive reclaim (DAMON
# "pageout" schemes) that evicts page cache idle for a few seconds.
warm() { cat "$WORK"/set/blobs/* "$WORK"/big/blobs/* >/dev/null; }
cat "$WORK"/many/blobs/* >/dev/null
warm

# The headline figures are measured interleaved (openssl, sha256sum, engine
# sha256, engine quick, repeat) and the best of REPS taken for each, so a busy
# spell on a shared machine hits every side alike.
"$BIN" run --jobs "$NPROC" --cache "$WORK/cache.json" "$WORK/set" >/dev/null
T_OSSL="" T_SUM="" T_VER="" T_QUICK="" T_VERW=""
min() { if [ -z "$1" ] || awk -v a="$2" -v b="$1" 'BEGIN { exit !(a < b) }'; then echo "$2"; else echo "$1"; fi; }
wall() { t0=$(now); "$@" >/dev/null; t1=$(now); sub "$t0" "$t1"; }
engine() { "$BIN" run "$@" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
r=0
while [ $r -lt "$REPS" ]; do
	warm
	T_OSSL=$(min "$T_OSSL" "$(wall openssl dgst -sha256 "$WORK"/big/blobs/*)")
	T_SUM=$(min "$T_SUM" "$(wall sha256sum "$WORK"/set/blobs/*)")
	T_VER=$(min "$T_VER" "$(engine --jobs "$NPROC" "$WORK/set")")
	T_VERW=$(min "$T_VERW" "$(wall "$BIN" run --jobs "$NPROC" "$WORK/set")")
	T_QUICK=$(min "$T_QUICK" "$(engine --jobs "$NPROC" --mode quick --cache "$WORK/cache.json" "$WORK/set")")
	r=$((r + 1))
done
R_OSSL=$(mbps $BIG_BYTES "$T_OSSL")
R_SUM=$(mbps $SET_BYTES "$T_SUM")
R_VER=$(mbps $SET_BYTES "$T_VER")
R_QUICK=$(mbps $SET_BYTES "$T_QUICK")
echo "best of $REPS, interleaved:"
echo "  openssl dgst -sha256, one $BIG_MB MiB file (1 core, wall): ${T_OSSL}s = $R_OSSL MB/s"
echo "  sha256sum over the set (1 core, wall):                 ${T_SUM}s = $R_SUM MB/s"
echo "  engine sha256, jobs=$NPROC (oa_verify_run time):         ${T_VER}s = $R_VER MB/s"
echo "  engine sha256, jobs=$NPROC (whole driver process, wall): ${T_VERW}s = $(mbps $SET_BYTES "$T_VERW") MB/s"
echo "  engine quick,  jobs=$NPROC (oa_verify_run time):         ${T_QUICK}s = $R_QUICK MB/s"

echo "engine details (best of $REPS each):"
for BUF in 131072 262144 524288 1048576 4194304; do
	T=$(best_engine --jobs "$NPROC" --buf $BUF "$WORK/set")
	echo "  sha256 jobs=$NPROC buffer=$((BUF >> 10)) KiB: ${T}s = $(mbps $SET_BYTES "$T") MB/s"
done
T=$(best_engine --jobs 1 "$WORK/set")
echo "  sha256 jobs=1 buffer=1024 KiB: ${T}s = $(mbps $SET_BYTES "$T") MB/s"
for BUF in 131072 262144 1048576 4194304; do
	T=$(best_engine --jobs "$NPROC" --buf $BUF --mode quick --cache "$WORK/cache.json" "$WORK/set")
	echo "  quick  jobs=$NPROC buffer=$((BUF >> 10)) KiB: ${T}s = $(mbps $SET_BYTES "$T") MB/s"
done
T=$(best_engine --jobs "$NPROC" --changed-only --cache "$WORK/cache.json" "$WORK/set")
echo "  changed-only, nothing changed: ${T}s"

echo "memory:"
echo "  $RSS_N blobs x 4 KiB, sha256, with cache:     $("$BIN" run --jobs "$NPROC" --cache "$WORK/c2.json" "$WORK/many" | sed 's/.*maxrss_kb=/maxrss_kb=/')"
echo "  $RSS_N blobs, changed-only (loads that cache): $("$BIN" run --jobs "$NPROC" --changed-only --cache "$WORK/c2.json" "$WORK/many" | sed 's/.*maxrss_kb=/maxrss_kb=/')"
echo "  $RSS_N blobs, sha256, no cache:               $("$BIN" run --jobs "$NPROC" "$WORK/many" | sed 's/.*maxrss_kb=/maxrss_kb=/')"
echo "  the set (1 GiB), sha256, with cache:           $("$BIN" run --jobs "$NPROC" --cache "$WORK/c3.json" "$WORK/set" | sed 's/.*maxrss_kb=/maxrss_kb=/')"

echo "CPU busy after: $(busy)%"

echo "ratios (targets in brackets):"
echo "  verify / (cores x openssl 1-core) = $R_VER / ($NPROC x $R_OSSL) = $(div "$R_VER" $((NPROC * R_OSSL)))  [>= 0.85]"
echo "  verify / sha256sum                = $(div "$R_VER" "$R_SUM")  [>= 3]"
echo "  quick / verify                    = $(div "$R_QUICK" "$R_VER")  [>= 3]"
