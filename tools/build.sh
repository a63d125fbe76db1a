#!/usr/bin/env bash
# Build onemodel natively and to WebAssembly. Configures only when needed; fast when up to date.
#
#   bash tools/build.sh [release|debug]   build/native-<flavour> + build/wasm-<flavour>,
#                                         then copies onemodel.{mjs,wasm} into js/dist/ and
#                                         bundles the demo page into web-demo/dist/ (esbuild)
#   bash tools/build.sh asan              build/native-asan only (Debug + OM_SANITIZE=ON)
#   bash tools/build.sh tsan              build/native-tsan's test_threads only (Release +
#                                         OM_TSAN=ON, which compiles at -O1: the thread pool
#                                         and its kernels' parts)
#
# Needs what tools/bootstrap.sh installs (it is not run from here). OM_JOBS overrides -j2.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/bootstrap.sh
source "$ROOT/tools/bootstrap.sh"   # defines om_pbc_src (does not install anything)

flavour=${1:-release}
case $flavour in
  release) type=Release ;;
  debug | asan) type=Debug ;;
  tsan) type=Release ;;
  *) echo "usage: $0 [release|debug|asan|tsan]" >&2; exit 2 ;;
esac
jobs=${OM_JOBS:-2}

# configure DIR LAUNCHER... -- CMAKE_ARGS...: (re)configure when DIR has no cache or the
# arguments changed since the last configure (recorded in DIR/.om-configure-args).
configure() {
  local dir=$1; shift
  local launcher=()
  while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
  shift
  local want
  want=$(printf '%s\n' "${launcher[@]}" "$@")
  if [[ -f $dir/CMakeCache.txt && -f $dir/.om-configure-args && $(<"$dir/.om-configure-args") == "$want" ]]; then
    return
  fi
  echo "build: configure ${dir#"$ROOT"/}"
  "${launcher[@]}" cmake -S "$ROOT" -B "$dir" "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; exit 1; }
  printf '%s\n' "$want" >"$dir/.om-configure-args"
}

mkdir -p "$ROOT/build"

# --- native ---------------------------------------------------------------
native=$ROOT/build/native-$flavour
native_args=(-DCMAKE_BUILD_TYPE=$type)
[[ $flavour == asan ]] && native_args+=(-DOM_SANITIZE=ON)
[[ $flavour == tsan ]] && native_args+=(-DOM_TSAN=ON)
configure "$native" -- "${native_args[@]}"
echo "build: native-$flavour"
if [[ $flavour == tsan ]]; then
  cmake --build "$native" -j "$jobs" --target test_threads
  exit 0
fi
cmake --build "$native" -j "$jobs"

[[ $flavour == asan ]] && exit 0

# --- wasm -----------------------------------------------------------------
wasm=$ROOT/build/wasm-$flavour
pbc=$(om_pbc_src)
[[ -f $pbc/protobuf-c/protobuf-c.c ]] || { echo "build: $pbc missing: run tools/bootstrap.sh" >&2; exit 1; }
node=$(command -v node)
configure "$wasm" emcmake -- -DCMAKE_BUILD_TYPE=$type -DPROTOBUF_C_SRC="$pbc" \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=$node;--no-experimental-fetch"
echo "build: wasm-$flavour"
emmake cmake --build "$wasm" -j "$jobs"

# The POST_BUILD step copies on every link; this also covers a flavour switch with nothing to relink.
if [[ -f $wasm/onemodel.mjs ]]; then
  mkdir -p "$ROOT/js/dist"
  for f in onemodel.mjs onemodel.wasm; do
    cmp -s "$wasm/$f" "$ROOT/js/dist/$f" || cp "$wasm/$f" "$ROOT/js/dist/$f"
  done
  echo "build: js/dist <- wasm-$flavour/onemodel.{mjs,wasm}"
fi

# --- the demo page ----------------------------------------------------------
node "$ROOT/web-demo/build.mjs"
