#!/usr/bin/env bash
# Builds the emulated lanes: native/cuda/sinks_attn.cu and native/metal/sinks_attn.metal compiled UNCHANGED as host
# C++20 through the shims in this directory, one shared library per lane. The CUDA source is standard CUDA C++: the
# front end (frontend/cuda2emu.py, libclang) first rewrites it into <out>/gen/<name>.emu.cpp (+ .rewrites.txt), which
# the cuda lanes include; without libclang's Python bindings (bin/install-frontend.sh) the build fails saying so.
#   <out>/libattnproof_cuda_emu.so       (cuda-emu: FMA contraction off, every a*b+c rounded twice)
#   <out>/libattnproof_cuda_emu_fma.so   (cuda-emu-fma: -ffp-contract=fast, as nvcc contracts by default; only where
#                                         the build machine has FMA instructions, which it then runs on)
#   <out>/libattnproof_metal_emu.so      (metal-emu: the .metal source through the MSL front end, frontend/msl2emu.py,
#                                         into <out>/gen/sinks_attn_metal.emu.cpp with its [[buffer(n)]] kernel table)
#   <out>/libattnproof_cuda_emu_plain.so, <out>/libattnproof_metal_emu_plain.so
#                                        (the plain builds: -DATTNPROOF_EMU_PLAIN, no bounds checks and no race
#                                         records; claim N5 compares their bits with the checked lanes')
#   <out>/libattnproof_{cuda,metal}_emu_fidelity.so
#                                        (the probe kernels of <fidelity-dir>: fidelity.cu / fidelity.metal behind
#                                         cuda_fidelity_host.cpp / metal_fidelity_host.cpp; claim N4; always at -O0,
#                                         like a mutant's lane (cxx.sh): small probes whose compile, not run, costs)
# Usage: native/emu/build.sh <out-dir> [cuda-source] [metal-source] [fidelity-dir]
#   (the Maven build passes system-under-test/target/native and the test resources' emu-kernels; the mutant runner
#    a mutant's own folder and its patched copy of one source)
# ATTNPROOF_EMU_ONLY=<group>[,<group>...] builds those groups only: cuda-emu, cuda-emu-fma, metal-emu, plain, fidelity
#   (the mutant runner: a kernel mutant's one lane; an emulator mutant's groups its claims' tests load).
# ATTNPROOF_EMU_OPT=<0|1|2> (default 2): the optimisation level of every library but cuda-emu-fma (g++ contracts
#   a * b + c only when optimising, so that lane stays at -O2). The mutant runner builds a kernel mutant's lane at 0,
#   with clang++ where it is installed (cxx.sh); OptLevelBitsTest shows that lane gives the bits of the -O2 lane on
#   the claim inputs.
# Needs g++ (or $CXX; clang++ at -O0, see cxx.sh) with C++20 <barrier>, and libclang's Python bindings for the CUDA and Metal sources (exit 4
# without them; ATTNPROOF_PYTHON names another Python that has them); rebuilds a library only when a source is newer
# than it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh <out-dir> [cuda-source] [metal-source]}"
cu="${2:-$here/../cuda/sinks_attn.cu}"
msl="${3:-$here/../metal/sinks_attn.metal}"
fidelity="${4:-}"
. "$here/cxx.sh"
mkdir -p "$out/gen"
cu="$(cd "$(dirname "$cu")" && pwd)/$(basename "$cu")"
msl="$(cd "$(dirname "$msl")" && pwd)/$(basename "$msl")"
opt="${ATTNPROOF_EMU_OPT:-2}"
case "$opt" in
    0|1|2) ;;
    *) echo "native/emu/build.sh: ATTNPROOF_EMU_OPT=$opt: must be 0, 1 or 2 (the optimisation level)" >&2; exit 1 ;;
esac
cxx="$(emu_cxx "$opt")"
fma_cxx="$(emu_cxx 2)" # the fma lane is always built at -O2 (below), so with the -O2 compiler
for c in "$cxx" "$fma_cxx"; do
    if ! command -v "$c" >/dev/null 2>&1; then
        echo "native/emu/build.sh: $c not found: the emulated lanes (cuda-emu, metal-emu) need a C++20 compiler" >&2
        exit 1
    fi
    emu_probe "$c"
done
flags=(-std=c++20 -O"$opt" -pthread -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden -Wall -Wextra
    -Wno-unknown-pragmas)

# The CUDA lanes' kernel source: the front end's rewrite of $cu, regenerated when the source or the front end changed
# (its timestamp kept when the text is the same, so that the libraries are not rebuilt for nothing).
only="${ATTNPROOF_EMU_ONLY:-}"
wants() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
if wants cuda-emu || wants cuda-emu-fma || wants plain; then
    cu_emu="$out/gen/$(basename "$cu" .cu).emu.cpp"
    stamp="$cu_emu.stamp"  # when the rewrite last ran (the output keeps its time when the text did not change)
    if [ ! -f "$cu_emu" ] || [ ! -f "$stamp" ] || [ "$cu" -nt "$stamp" ] ||
        [ "$here/frontend/cuda2emu.py" -nt "$stamp" ] || [ "$here/frontend/frontend_common.py" -nt "$stamp" ] ||
        [ "$here/frontend/cuda_parse.h" -nt "$stamp" ]; then
        rc=0
        "${ATTNPROOF_PYTHON:-/usr/bin/python3}" "$here/frontend/cuda2emu.py" "$cu" "$cu_emu.tmp.$$" || rc=$?
        if [ "$rc" -ne 0 ]; then
            rm -f "$cu_emu.tmp.$$" "$cu_emu.tmp.$$.rewrites.txt"
            echo "native/emu/build.sh: the front end failed on $cu (exit $rc): the cuda lanes cannot be built" >&2
            exit "$rc"
        fi
        mv -f "$cu_emu.tmp.$$.rewrites.txt" "$cu_emu.rewrites.txt"
        if cmp -s "$cu_emu.tmp.$$" "$cu_emu"; then rm -f "$cu_emu.tmp.$$"; else mv -f "$cu_emu.tmp.$$" "$cu_emu"; fi
        touch "$stamp"
    fi
    cu_flags=(-I "$here" -I "$here/frontend" -I "$here/frontend/include" -DATTNPROOF_KERNEL_SOURCE="\"$cu_emu\"")
fi

build() { # <library> <main source (relative to this directory, or absolute)> <kernel source> [extra flags...]
    local lib="$out/$1" main="$2" kernel="$3" c="${lane_cxx:-$cxx}"
    case "$main" in /*) ;; *) main="$here/$main" ;; esac
    shift 3
    local newest
    newest=$(ls -t "$main" "$kernel" "$here"/*.h "$here"/metal/metal_stdlib "$here"/frontend/*.h "$0" | head -n 1)
    if [ -f "$lib" ] && [ "$lib" -nt "$newest" ]; then
        echo "native/emu/build.sh: $lib is up to date"
        return 0
    fi
    echo "native/emu/build.sh: $c -> $lib"
    # shellcheck disable=SC2046 # (the compiler's own flags are single words)
    "$c" "${flags[@]}" $(emu_cxx_flags "$c") $(emu_cxx_werror "$c") "$@" -o "$lib.tmp.$$" "$main"
    mv -f "$lib.tmp.$$" "$lib"
}

# FMA instructions for the contracted build: native on arm64; on x86-64 only when this CPU has them (the library
# runs where it is built), else the fma lane is not built and its probe says why.
fma=()
case "$(uname -m)" in
    x86_64|amd64) if grep -qw fma /proc/cpuinfo 2>/dev/null; then fma=(-mfma); fi ;;
    arm64|aarch64) fma=(-DATTNPROOF_FMA_NATIVE) ;;
esac

# The Metal source goes through the MSL front end (frontend/msl2emu.py, libclang): the rewritten source and its kernel
# table, generated from the [[buffer(n)]] / position attributes the AST carries (the binder, frontend/msl_launch.h,
# binds each argument from the host's buffer index n, as Metal does, never by parameter position). Regenerated only
# when its output changes, so an unchanged source does not rebuild the metal libraries.
metal_gen="$out/gen/sinks_attn_metal.emu.cpp"
if wants metal-emu || wants plain; then
    "${ATTNPROOF_PYTHON:-/usr/bin/python3}" "$here/frontend/msl2emu.py" "$msl" "$metal_gen.tmp.$$" || {
        rc=$?; rm -f "$metal_gen.tmp.$$" "$metal_gen.tmp.$$.rewrites.txt"
        echo "native/emu/build.sh: the MSL front end failed on $msl (exit $rc)" >&2; exit "$rc"; }
    mv -f "$metal_gen.tmp.$$.rewrites.txt" "$metal_gen.rewrites.txt"
    if cmp -s "$metal_gen.tmp.$$" "$metal_gen"; then rm -f "$metal_gen.tmp.$$"; else mv -f "$metal_gen.tmp.$$" "$metal_gen"; fi
fi
metal_flags=(-I "$here/frontend" -I "$here/metal" -I "$here/frontend/include-msl")

pids=()
if wants cuda-emu; then
build libattnproof_cuda_emu.so cuda_emu_host.cpp "$cu_emu" -ffp-contract=off "${cu_flags[@]}" &
pids+=($!)
fi
if ! wants cuda-emu-fma; then
    :
elif [ ${#fma[@]} -gt 0 ]; then
    lane_cxx="$fma_cxx" build libattnproof_cuda_emu_fma.so cuda_emu_host.cpp "$cu_emu" -O2 -ffp-contract=fast "${fma[@]}" \
        -DATTNPROOF_LANE_NAME='"cuda-emu-fma"' "${cu_flags[@]}" &
    pids+=($!)
else
    rm -f "$out/libattnproof_cuda_emu_fma.so"
    echo "native/emu/build.sh: no FMA instructions on this CPU: cuda-emu-fma not built"
fi
if wants metal-emu; then
build libattnproof_metal_emu.so "$metal_gen" "$msl" -ffp-contract=off "${metal_flags[@]}" &
pids+=($!)
fi
# The plain builds and the fidelity probes (a kernel mutant builds one checked lane only).
if wants plain; then
    build libattnproof_cuda_emu_plain.so cuda_emu_host.cpp "$cu_emu" -ffp-contract=off -DATTNPROOF_EMU_PLAIN \
        -DATTNPROOF_LANE_NAME='"cuda-emu-plain"' "${cu_flags[@]}" &
    pids+=($!)
    build libattnproof_metal_emu_plain.so "$metal_gen" "$msl" -ffp-contract=off -DATTNPROOF_EMU_PLAIN \
        "${metal_flags[@]}" -DATTNPROOF_LANE_NAME='"metal-emu-plain"' &
    pids+=($!)
fi
if wants fidelity && [ -n "$fidelity" ]; then
    fidelity="$(cd "$fidelity" && pwd)"
    fid_cxx="$(emu_cxx 0)"
    emu_probe "$fid_cxx"
    lane_cxx="$fid_cxx" build libattnproof_cuda_emu_fidelity.so "$fidelity/cuda_fidelity_host.cpp" \
        "$fidelity/fidelity.cu" -O0 -ffp-contract=off -I "$here" -I "$fidelity" &
    pids+=($!)
    lane_cxx="$fid_cxx" build libattnproof_metal_emu_fidelity.so "$fidelity/metal_fidelity_host.cpp" \
        "$fidelity/fidelity.metal" -O0 -ffp-contract=off -I "$here" -I "$here/metal" -I "$fidelity" &
    pids+=($!)
fi
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
exit "$status"
