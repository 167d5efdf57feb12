#!/bin/sh
# `make bench`: every benchmark, one after the other. They print figures and
# ratios; none of them fails on a number.
set -e
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
echo "== structure pass (check/list) on a store of 500 models"
python3 "$HERE/bench_check.py" "$BUILD" 500
echo "== a store of ${OA_BENCH_MODELS:-10000} models: list, check, verify, du vs a bare walk; prune --apply vs its dry run;"
echo "   then one of ${OA_BENCH_GROWTH:-100000} models, and how each cost grows"
OA_BENCH_GROWTH=${OA_BENCH_GROWTH:-100000} python3 "$HERE/bench_scale.py" "$BUILD"
echo "== export and import of a 512 MiB model vs tar -cf and tar -xf"
python3 "$HERE/bench_carry.py" "$BUILD" 512
echo "== a machine of ${OA_BENCH_ACCOUNTS:-25} accounts, then twice as many, of ${OA_BENCH_ACCOUNT_MODELS:-200} models each:"
echo "   stores, du, check and report --all-users against list --all-users, and how each grows"
python3 "$HERE/bench_fleet.py" "$BUILD"
echo "== verify throughput"
sh "$HERE/bench_verify.sh"
echo "== GGUF header reader vs @huggingface/gguf"
sh "$HERE/bench_gguf.sh"
