#!/usr/bin/env bash
# Builds a standard CUDA source through the front end into an emulated shared library:
#   cuda2emu.py <src.cu> -> <out-dir>/<name>.emu.cpp (+ .rewrites.txt), then g++ -> <out-dir>/lib<name>.so
# Usage: native/emu/frontend/build-cu.sh <src.cu> <out-dir> <name> [g++ flags...]
# Exit 4 (with the reason) where libclang's Python bindings are missing; 3 on a refused construct; 2 on a parse error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:?usage: build-cu.sh <src.cu> <out-dir> <name> [flags]}"; out="${2:?out-dir}"; name="${3:?name}"; shift 3
mkdir -p "$out"
/usr/bin/python3 "$here/cuda2emu.py" "$src" "$out/$name.emu.cpp"
"${CXX:-g++}" -std=c++20 -O${ATTNPROOF_FRONTEND_OPT:-2} -pthread -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden -Wall \
    -Wno-unknown-pragmas -Wno-unused-variable -Wno-unused-parameter -fno-gnu-unique -ffp-contract=off \
    -I "$here" -I "$here/include" -I "$here/.." "$@" -o "$out/lib$name.so.tmp.$$" "$out/$name.emu.cpp"
mv -f "$out/lib$name.so.tmp.$$" "$out/lib$name.so"
