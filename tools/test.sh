#!/usr/bin/env bash
# Everything CI runs (npm test, .ci/run): bootstrap, builds, C tests (native, ASan+UBSan, the
# thread pool's under TSan, WASM under node), JS tests, TypeScript check of the shipped
# declarations. Stops at the first failure.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

step() { printf '\n=== %s\n' "$*"; }

step "bootstrap"
bash tools/bootstrap.sh

step "build release (native + wasm)"
bash tools/build.sh release

step "build asan (native, Debug + OM_SANITIZE)"
bash tools/build.sh asan

step "ctest native-release"
ctest --test-dir build/native-release --output-on-failure -j 2

step "ctest native-asan"
ctest --test-dir build/native-asan --output-on-failure -j 2

step "build tsan (native test_threads, Release + OM_TSAN)"
bash tools/build.sh tsan

step "test_threads under ThreadSanitizer"
# a race report makes the run exit non-zero (TSan's exitcode, 66, after the tests)
TSAN_OPTIONS=halt_on_error=1 build/native-tsan/test_threads

step "ctest wasm-release (node)"
ctest --test-dir build/wasm-release --output-on-failure -j 2

step "node --test tests/js/*.test.mjs"
# node --test starts the files in the order given: the longest first (seconds of CPU each, measured
# one file at a time), then the rest in name order, so that the two slots end together instead of
# one running a long file alone at the end. A file missing from the list only runs later.
longest=(examples random-models trace-oracle graph-economy web-demo torchvision-ports package
  web-demo-view torchvision-ports-video-densenet-seg onnx-ops transformers-ports-bloom-wav2vec2-segformer
  symbolic torchvision-ports-2 symbolic-loop-scan computed-sizes transformers-ports
  transformers-ports-longformer transformers-ports-dinov2 transformers-ports-more)
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

step "tsc -p tests/js/types"
if [[ -f tests/js/types/tsconfig.json ]]; then
  npx --no-install tsc -p tests/js/types
  echo "tsc: ok"
else
  echo "notice: tests/js/types/tsconfig.json does not exist yet, skipped"
fi
