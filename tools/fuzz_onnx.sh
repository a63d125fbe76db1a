#!/usr/bin/env bash
# Fuzzes the readers (ONNX, the library format v1 and v2) and the Session with libFuzzer
# (tools/fuzz_onnx.c): builds build/native-fuzz with clang (coverage, ASan, UBSan), seeds a
# corpus with the zoo models' .onnx and .om files (tools/fuzz_seeds.mjs) and runs for
# OM_FUZZ_SECONDS (default 300) on all cores but one.
#
#   npm run fuzz:onnx                   # or: OM_FUZZ_SECONDS=3600 bash tools/fuzz_onnx.sh
#
# A crash leaves its input as build/fuzz-onnx/crash-*; replay it with
#   build/native-fuzz/om_fuzz_onnx build/fuzz-onnx/crash-<hash>
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$ROOT/build/native-fuzz
work=$ROOT/build/fuzz-onnx
seconds=${OM_FUZZ_SECONDS:-300}
mkdir -p "$work/corpus"
if [[ ! -f $dir/CMakeCache.txt ]]; then
  CC=clang cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DOM_FUZZ=ON >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; exit 1; }
fi
cmake --build "$dir" -j "${OM_JOBS:-2}" --target om_fuzz_onnx
[[ -n $(ls -A "$work/corpus") ]] || node "$ROOT/tools/fuzz_seeds.mjs" "$work/corpus"
jobs=$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))
cd "$work"
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "$dir/om_fuzz_onnx" -max_total_time="$seconds" -max_len=1048576 -rss_limit_mb=4096 -timeout=20 \
  -jobs="$jobs" -workers="$jobs" -print_final_stats=1 corpus
