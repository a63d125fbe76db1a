#!/usr/bin/env bash
# npm run test:times: where npm test's time goes, step by step. Each step runs alone (one at a
# time, so steps do not slow each other; npm test runs the C test steps and tsc beside the release
# build and the JS files, tools/test.sh) and is measured in CPU seconds (user + sys of the step
# and every process it waited for) as well as wall seconds: on a machine shared with other builds
# the wall time says little, the CPU time changes little. The steps are tools/test.sh's: the
# builds (incremental: delete build/ first for a fresh clone's figures), each ctest run, the
# thread pool's test under ThreadSanitizer, each JS test file alone (node --test FILE) and the
# TypeScript check.
#
#   bash tools/test_times.sh                          every step
#   bash tools/test_times.sh tests/js/a.test.mjs ...  those JS files only (before and after a change)
#
# Prints one row per step (cpu, user, sys, wall, the step; for a JS file its tests, passed and
# failed), then the JS files by CPU, longest first, and the total of each phase. A failing step
# is marked FAILED and the run goes on; the exit code is 1 when any step failed. The logs are
# in build/test-times/.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
LOGS=$ROOT/build/test-times
mkdir -p "$LOGS"
TIMEFORMAT='%U %S %R'
failed=0
rows=()   # "cpu phase step ..." for the summary

# measure PHASE STEP CMD...: runs CMD, its output in build/test-times/<step>.log; prints its row.
measure() {
  local phase=$1 step=$2; shift 2
  local log=$LOGS/${step//\//_}.log t rc
  t=$( { time "$@" >"$log" 2>&1; } 2>&1 ) # bash's time reports the command and its children
  rc=$?
  local user sys wall
  read -r user sys wall <<<"${t##*$'\n'}"
  local cpu extra=''
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  if [[ $step == *.test.mjs ]]; then
    extra=$(awk '/^# (tests|pass|fail) / { printf " %s %s", $2, $3 }' "$log")
  fi
  ((rc)) && { extra+=" FAILED (exit $rc, $log)"; failed=1; }
  printf '%8s cpu %8s user %7s sys %8s wall  %s%s\n' "$cpu" "$user" "$sys" "$wall" "$step" "$extra"
  rows+=("$cpu $phase $step")
}

js_files=("$@")
if ((${#js_files[@]} == 0)); then
  measure build 'build release (native + wasm)' bash tools/build.sh release
  measure build 'build asan' bash tools/build.sh asan
  measure build 'build tsan' bash tools/build.sh tsan
  measure c 'ctest native-release' ctest --test-dir build/native-release -j 1
  measure sanitizers 'ctest native-asan' ctest --test-dir build/native-asan -j 1
  measure sanitizers 'test_threads under ThreadSanitizer' env TSAN_OPTIONS=halt_on_error=1 build/native-tsan/test_threads
  measure c 'ctest wasm-release' ctest --test-dir build/wasm-release -j 1
  shopt -s nullglob
  js_files=(tests/js/*.test.mjs)
  shopt -u nullglob
fi
for f in "${js_files[@]}"; do
  measure js "$f" node --test "$f"
done
if (($# == 0)); then
  measure tsc 'tsc -p tests/js/types' npx --no-install tsc -p tests/js/types
fi

echo
echo "JS files by CPU seconds, longest first:"
printf '%s\n' "${rows[@]}" | awk '$2 == "js"' | sort -k1,1 -rn | awk '{ printf "%8s  %s\n", $1, $3 }'
echo
echo "CPU seconds by phase:"
printf '%s\n' "${rows[@]}" | awk '{ cpu[$2] += $1 } END { for (p in cpu) printf "%8.1f  %s\n", cpu[p], p }' | sort -k1,1 -rn
exit "$failed"
