#!/usr/bin/env bash
# Builds the emulated lanes: native/cuda/sinks_attn.cu and native/metal/sinks_attn.metal compiled UNCHANGED as host
# C++20 through the shims in this directory, one shared library per lane:
#   <out>/libattnproof_cuda_emu.so    (cuda-emu)
#   <out>/libattnproof_metal_emu.so   (metal-emu)
# Usage: native/emu/build.sh <out-dir>      (the Maven build passes system-under-test/target/native)
# Needs only g++ (or $CXX) with C++20 <barrier>; rebuilds a library only when a source is newer than it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh <out-dir>}"
cxx="${CXX:-g++}"
mkdir -p "$out"
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "native/emu/build.sh: $cxx not found: the emulated lanes (cuda-emu, metal-emu) need a C++20 compiler" >&2
    exit 1
fi
flags=(-std=c++20 -O2 -pthread -fPIC -shared -Wall -Wextra -Wno-unknown-pragmas)
if "$cxx" --version 2>/dev/null | grep -qi clang; then
    # Apple's g++ is clang: the MSL attributes are "unknown attributes" there; no -Werror on a compiler we do not
    # build with here.
    flags+=(-Wno-unknown-attributes)
else
    flags+=(-Werror -Wno-attributes)
fi

build() { # <library> <main source> <kernel source> [extra flags...]
    local lib="$out/$1" main="$here/$2" kernel="$3"
    shift 3
    local newest
    newest=$(ls -t "$main" "$kernel" "$here"/*.h "$here"/metal/metal_stdlib "$0" | head -n 1)
    if [ -f "$lib" ] && [ "$lib" -nt "$newest" ]; then
        echo "native/emu/build.sh: $lib is up to date"
        return 0
    fi
    echo "native/emu/build.sh: $cxx -> $lib"
    "$cxx" "${flags[@]}" "$@" -o "$lib.tmp.$$" "$main"
    mv -f "$lib.tmp.$$" "$lib"
}

build libattnproof_cuda_emu.so cuda_emu_host.cpp "$here/../cuda/sinks_attn.cu" &
cuda_pid=$!
build libattnproof_metal_emu.so metal_emu_host.cpp "$here/../metal/sinks_attn.metal" -I "$here/metal" &
metal_pid=$!
status=0
wait "$cuda_pid" || status=$?
wait "$metal_pid" || status=$?
exit "$status"
