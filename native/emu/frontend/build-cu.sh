#!/usr/bin/env bash
# Builds a standard CUDA source through the front end into an emulated shared library:
#   cuda2emu.py <src.cu> -> <out-dir>/<name>.emu.cpp (+ .rewrites.txt), then C++ -> <out-dir>/lib<name>.so
# Usage: native/emu/frontend/build-cu.sh <src.cu> <out-dir> <name> [compiler flags...]
# Exit 4 (with the reason) where libclang's Python bindings are missing; 3 on a refused construct; 2 on a parse error.
# ATTNPROOF_PYTHON: the Python with libclang's bindings (default /usr/bin/python3, where Debian installs them).
# ATTNPROOF_FRONTEND_OPT: the optimisation level (default 2; the tests and mutants use 0). The compiler: ../cxx.sh.
# ATTNPROOF_BUILD_CACHE: a folder of outputs built before, by content (cache.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:?usage: build-cu.sh <src.cu> <out-dir> <name> [flags]}"; out="${2:?out-dir}"; name="${3:?name}"; shift 3
. "$here/../cxx.sh"
. "$here/cache.sh"
opt="${ATTNPROOF_FRONTEND_OPT:-2}"
cxx="$(emu_cxx "$opt")"
mkdir -p "$out"
outputs=("$name.emu.cpp" "$name.emu.cpp.rewrites.txt" "lib$name.so")
if [ -n "${ATTNPROOF_BUILD_CACHE:-}" ]; then
    key="$(emu_cache_key "$(basename "$0")" "$src" "$name" "$@")"
    if emu_cache_get "$key" "$out" "${outputs[@]}"; then exit 0; fi
fi
emu_probe "$cxx"
"${ATTNPROOF_PYTHON:-/usr/bin/python3}" "$here/cuda2emu.py" "$src" "$out/$name.emu.cpp"
# shellcheck disable=SC2046 # (the compiler's own flags are single words)
"$cxx" -std=c++20 -O"$opt" -pthread -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden -Wall \
    -Wno-unknown-pragmas -Wno-unused-variable -Wno-unused-parameter $(emu_cxx_flags "$cxx") -ffp-contract=off \
    -I "$here" -I "$here/include" -I "$here/.." "$@" -o "$out/lib$name.so.tmp.$$" "$out/$name.emu.cpp"
mv -f "$out/lib$name.so.tmp.$$" "$out/lib$name.so"
if [ -n "${ATTNPROOF_BUILD_CACHE:-}" ]; then emu_cache_put "$key" "$out" "${outputs[@]}"; fi
