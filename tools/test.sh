#!/usr/bin/env bash
# Everything CI runs (npm test, .ci/run): bootstrap, builds, C tests (native, ASan+UBSan, the
# thread pool's under TSan, WASM under node), JS tests, TypeScript check of the shipped
# declarations. Stops at the first failure of the foreground steps (bootstrap, the release build,
# the JS tests); the steps run beside them (below) are all awaited, their output printed when each
# ends, and any failure fails the run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

step() { printf '\n=== %s\n' "$*"; }

# The C test steps and the TypeScript check need nothing the JS tests make, and the JS tests need
# none of them: they run beside the release build and the JS files instead of before and after
# them. Each step on its own leaves a core idle part of the time (configures, links, a test run's
# last test, test_threads' one process, tsc's one thread, a JS file that waits on a child process
# or a page), so one beside the other fills those gaps. They run at the lowest priority (nice 19:
# the scheduler gives such a process about 1/70 of the CPU a nice-0 one gets when both want it), so
# they take what the foreground leaves idle and barely slow it; when nothing is left idle they
# finish after the JS files, which is the order they had, the ASan and the TSan steps side by side. Each runs as its own process group (set -m), so a failing foreground step
# stops them all.
LOGS=$ROOT/build/test-logs
mkdir -p "$LOGS"
beside_pids=() beside_names=()
stop_beside() {
  local pid
  for pid in "${beside_pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
}
trap stop_beside EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# beside NAME FUNCTION: FUNCTION in the background at nice 19, its output in build/test-logs/NAME.log.
beside() {
  local name=$1 fn=$2
  set -m
  ( renice -n 19 -p "$BASHPID" >/dev/null; SECONDS=0
    trap 'echo "($name: $SECONDS s)"' EXIT
    "$fn" ) </dev/null >"$LOGS/$name.log" 2>&1 &
  set +m
  beside_pids+=("$!") beside_names+=("$name")
}
# await_beside: waits for each step run beside, prints its output; fails when any failed.
await_beside() {
  local i rc failed=()
  for i in "${!beside_pids[@]}"; do
    rc=0
    wait "${beside_pids[$i]}" || rc=$?
    printf '\n=== (beside) %s: %s\n' "${beside_names[$i]}" "$( ((rc)) && echo "FAILED (exit $rc)" || echo ok)"
    cat "$LOGS/${beside_names[$i]}.log"
    ((rc)) && failed+=("${beside_names[$i]}")
  done
  beside_pids=()
  if ((${#failed[@]})); then
    printf '\nfailed beside the JS tests: %s (logs in build/test-logs/)\n' "${failed[*]}" >&2
    return 1
  fi
}

asan() {
  step "build asan (native, Debug + OM_SANITIZE)"
  bash tools/build.sh asan
  step "ctest native-asan"
  ctest --test-dir build/native-asan --output-on-failure -j 2
}

tsan() {
  step "build tsan (native test_threads, Release + OM_TSAN)"
  bash tools/build.sh tsan
  step "test_threads under ThreadSanitizer"
  # a race report makes the run exit non-zero (TSan's exitcode, 66, after the tests)
  TSAN_OPTIONS=halt_on_error=1 build/native-tsan/test_threads
}

release_ctests() {
  step "ctest native-release"
  ctest --test-dir build/native-release --output-on-failure -j 2
  step "ctest wasm-release (node)"
  ctest --test-dir build/wasm-release --output-on-failure -j 2
}

typescript() {
  step "tsc -p tests/js/types"
  if [[ -f tests/js/types/tsconfig.json ]]; then
    npx --no-install tsc -p tests/js/types
    echo "tsc: ok"
  else
    echo "notice: tests/js/types/tsconfig.json does not exist yet, skipped"
  fi
}

step "bootstrap"
bash tools/bootstrap.sh

# the sanitizer builds use their own build directories; tsc reads the sources and node_modules
beside asan asan
beside tsan tsan
beside typescript typescript

step "build release (native + wasm)"
bash tools/build.sh release

beside release-ctests release_ctests

step "node --test tests/js/*.test.mjs"
# node --test starts the files in the order given: the longest first (seconds of CPU each, measured
# one file at a time), then the rest in name order, so that the two slots end together instead of
# one running a long file alone at the end. A file missing from the list only runs later.
longest=(examples random-models trace-oracle graph-economy web-demo torchvision-ports package
  web-demo-view torchvision-ports-video-densenet-seg onnx-ops transformers-ports-bloom-wav2vec2-segformer
  symbolic torchvision-ports-2 symbolic-loop-scan computed-sizes transformers-ports
  transformers-ports-longformer depth-anything-port transformers-ports-dinov2 transformers-ports-more)
js_tests=()
for name in "${longest[@]}"; do
  [[ -f tests/js/$name.test.mjs ]] && js_tests+=("tests/js/$name.test.mjs")
done
shopt -s nullglob
for f in tests/js/*.test.mjs; do
  [[ " ${js_tests[*]} " == *" $f "* ]] || js_tests+=("$f")
done
shopt -u nullglob
if ((${#js_tests[@]})); then
  # node --test runs one file at a time on a 2-core machine (its default is the cores less one);
  # the files are independent (own temporary names, ports chosen by the system), so run two at
  # once: the JS phase is most of npm test's time and each file computes on one thread
  node --test --test-concurrency=2 "${js_tests[@]}"
else
  echo "notice: no tests/js/*.test.mjs yet, skipped"
fi

await_beside
