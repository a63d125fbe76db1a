#!/usr/bin/env bash
# Install what onemodel needs, idempotently; takes about a second when everything is there.
#
#   bash tools/bootstrap.sh        Debian packages, protobuf-c runtime source, ONNX's node tests, npm ci
#   source tools/bootstrap.sh      only defines the om_* helpers below (tools/build.sh does this
#                                  to find PROTOBUF_C_SRC: this file is the one source of truth)
#
# Nothing is written into the repository except node_modules/. The protobuf-c source (for the
# WASM build; native builds link the system libprotobuf-c) goes to $(om_cache_dir), fetched
# with a private apt state there; the system's apt configuration is never modified. ONNX's
# backend node tests are generated there too (third-party data: never committed).

# Debian packages. gcc/libc6-dev/make are listed because --no-install-recommends skips them;
# python3-onnx and python3-numpy generate ONNX's backend node tests (om__onnx_tests);
# python3-pil shrinks the docs' screenshots (npm run screenshots, tools/quantize_png.py).
OM_APT_PACKAGES=(emscripten protobuf-c-compiler libprotobuf-c-dev libonnx-dev cmake pkgconf
                 dpkg-dev chromium gcc libc6-dev make python3-onnx python3-numpy python3-pil)

om_cache_dir() { printf '%s/onemodel\n' "${XDG_CACHE_HOME:-$HOME/.cache}"; }

# Debian *source* version of the installed libprotobuf-c-dev (e.g. 1.4.1-1; the binary is 1.4.1-1+b1).
om_pbc_version() {
  local st
  st=$(dpkg-query -W -f='${db:Status-Status} ${source:Version}' libprotobuf-c-dev 2>/dev/null) || return 1
  [[ $st == "installed "?* ]] || return 1
  printf '%s\n' "${st#installed }"
}

# Unpacked protobuf-c source matching the installed runtime; holds protobuf-c/protobuf-c.{c,h}.
om_pbc_src() {
  local v
  v=$(om_pbc_version) || { echo "libprotobuf-c-dev is not installed: run tools/bootstrap.sh" >&2; return 1; }
  printf '%s/protobuf-c-%s\n' "$(om_cache_dir)" "${v//:/_}"
}

# Where ONNX's backend node tests are generated: one folder per installed python3-onnx version
# (tests/js/onnx-backend.mjs reads it from here).
om_onnx_tests_dir() {
  local v
  v=$(dpkg-query -W -f='${Version}' python3-onnx 2>/dev/null) || { echo "python3-onnx is not installed: run tools/bootstrap.sh" >&2; return 1; }
  printf '%s/onnx-node-tests-%s\n' "$(om_cache_dir)" "${v//[^A-Za-z0-9.+-]/_}"
}

om__log() { printf 'bootstrap: %s\n' "$*"; }

om__run_logged() {  # run "$@" with output to $OM_LOG; show the log and fail if it fails
  if ! "$@" >>"$OM_LOG" 2>&1; then
    echo "bootstrap: FAILED: $*" >&2
    tail -n 40 "$OM_LOG" >&2
    return 1
  fi
}

om__apt_packages() {
  local p missing=()
  for p in "${OM_APT_PACKAGES[@]}"; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    om__log "apt packages: ok (${#OM_APT_PACKAGES[@]} installed)"
    return
  fi
  local sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || { echo "bootstrap: need root to install: ${missing[*]}" >&2; return 1; }
    sudo=(sudo)
  fi
  om__log "apt packages: installing ${missing[*]}"
  om__run_logged "${sudo[@]}" apt-get update
  om__run_logged "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

om__pbc_source() {
  local src ver cache a tmp
  src=$(om_pbc_src)
  if [[ -f $src/protobuf-c/protobuf-c.c ]]; then
    om__log "protobuf-c source: ok ($src)"
    return
  fi
  ver=$(om_pbc_version)
  cache=$(om_cache_dir)
  a=$cache/apt
  om__log "protobuf-c source: fetching protobuf-c=$ver from Debian's source package"
  mkdir -p "$a/sources.list.d" "$a/lists/partial" "$a/cache/archives/partial"
  # deb-src twins of the system's Debian entries (only Debian's: other repos have no Sources).
  : >"$a/sources.list"
  rm -f "$a/sources.list.d/"*
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed -E 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      >"$a/sources.list.d/debian-src.sources"
  elif [[ -f /etc/apt/sources.list ]]; then
    sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list >"$a/sources.list"
  fi
  local apto=(-o "Dir::Etc::SourceList=$a/sources.list" -o "Dir::Etc::SourceParts=$a/sources.list.d"
              -o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache")
  ((EUID == 0)) && apto+=(-o APT::Sandbox::User=root)   # no "unsandboxed as root" warning
  om__run_logged apt-get "${apto[@]}" update
  tmp=$(mktemp -d "$cache/tmp.XXXXXX")
  if ! (cd "$tmp" && om__run_logged apt-get "${apto[@]}" source "protobuf-c=$ver"); then
    rm -rf "$tmp"; return 1
  fi
  local unpacked
  unpacked=$(find "$tmp" -mindepth 3 -maxdepth 3 -path '*/protobuf-c/protobuf-c.c' -printf '%h\n' | head -n1)
  [[ -n $unpacked ]] || { echo "bootstrap: protobuf-c.c not found in the source package" >&2; rm -rf "$tmp"; return 1; }
  rm -rf "$src"
  mv "$(dirname "$unpacked")" "$src"
  rm -rf "$tmp"
  om__log "protobuf-c source: ok ($src)"
}

# ONNX's backend node tests (npm test's onnx-conformance test runs them), generated once per
# python3-onnx version by tools/onnx_node_tests.py; a folder holds a `done` file once complete.
om__onnx_tests() {
  local root=$1 dir tmp
  dir=$(om_onnx_tests_dir)
  if [[ -f $dir/done ]]; then
    om__log "onnx node tests: ok ($dir)"
    return
  fi
  om__log "onnx node tests: generating into $dir"
  tmp=$(mktemp -d "$(om_cache_dir)/tmp.XXXXXX")
  if ! om__run_logged /usr/bin/python3 "$root/tools/onnx_node_tests.py" "$tmp"; then
    rm -rf "$tmp"; return 1
  fi
  [[ -d $tmp/node ]] || { echo "bootstrap: the generator wrote no node tests" >&2; rm -rf "$tmp"; return 1; }
  touch "$tmp/done"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  om__log "onnx node tests: ok ($(find "$dir/node" -mindepth 1 -maxdepth 1 | wc -l) tests)"
}

om__npm() {
  local root=$1
  if [[ -f $root/node_modules/.package-lock.json && ! $root/package-lock.json -nt $root/node_modules/.package-lock.json ]]; then
    om__log "npm: ok (node_modules up to date)"
    return
  fi
  om__log "npm: npm ci"
  # onnxruntime-node (if ever pulled in) would download from NuGet in its postinstall.
  (cd "$root" && ONNXRUNTIME_NODE_INSTALL=skip om__run_logged npm ci --no-audit --no-fund)
}

om_bootstrap() {
  set -euo pipefail
  local root start
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  start=$EPOCHREALTIME
  mkdir -p "$(om_cache_dir)"
  OM_LOG=$(om_cache_dir)/bootstrap.log
  : >"$OM_LOG"
  om__apt_packages
  om__pbc_source
  om__onnx_tests "$root"
  om__npm "$root"
  PROTOBUF_C_SRC=$(om_pbc_src)
  export PROTOBUF_C_SRC
  om__log "PROTOBUF_C_SRC=$PROTOBUF_C_SRC"
  om__log "done in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  om_bootstrap "$@"
fi
