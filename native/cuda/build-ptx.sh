#!/usr/bin/env bash
# Builds PTX from native/cuda/sinks_attn.cu with nvcc (virtual arch compute_75: sm_75 and every later GPU JIT it)
# and writes it with its .version lowered to $PTX_ISA (default 8.0, what a CUDA 12.0 driver reads) once ptxas has
# assembled it for sm_75 at that ISA, so that a GPU machine whose driver predates nvcc 13 (PTX ISA 9.0) still loads
# it. Rebuilds only when sinks_attn.cu or this script is newer than the output.
# The header names the SHA-256 of sinks_attn.cu it was built from ("// attnproof: source sha256 <hex>"): a test
# (KernelSourcesTest, claim N3) compares it with the source on every build, nvcc or not.
# Usage: native/cuda/build-ptx.sh <out.ptx>
#   the nvcc Maven profile:    <out> = system-under-test/target/native/ptx/sinks_attn.ptx
#   the checked-in fallback:   native/cuda/build-ptx.sh native/cuda/sinks_attn.ptx
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build-ptx.sh <out.ptx>}"
nvcc="${NVCC:-nvcc}"
ptxas="${PTXAS:-$(dirname "$(command -v "$nvcc")")/ptxas}"
isa="${PTX_ISA:-8.0}"
if command -v sha256sum >/dev/null 2>&1; then
    hash="$(sha256sum "$here/sinks_attn.cu" | cut -d' ' -f1)"
else
    hash="$(shasum -a 256 "$here/sinks_attn.cu" | cut -d' ' -f1)"
fi
if [ -f "$out" ] && [ "$out" -nt "$here/sinks_attn.cu" ] && [ "$out" -nt "$0" ] && grep -q "^// attnproof: source sha256 $hash\$" "$out"; then
    echo "native/cuda/build-ptx.sh: $out is up to date"
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$nvcc" -ptx -arch=compute_75 -o "$work/raw.ptx" "$here/sinks_attn.cu"
sed "s/^\.version .*/.version $isa/" "$work/raw.ptx" > "$work/lowered.ptx"
"$ptxas" -arch=sm_75 "$work/lowered.ptx" -o "$work/lowered.cubin"
{
    echo "// attnproof: built by native/cuda/build-ptx.sh from sinks_attn.cu ($("$nvcc" --version | tail -n 1));"
    echo "// .version lowered from $(sed -n 's/^\.version //p' "$work/raw.ptx") to $isa after ptxas accepted it for sm_75."
    echo "// attnproof: source sha256 $hash"
    cat "$work/lowered.ptx"
} > "$work/out.ptx"
mkdir -p "$(dirname "$out")"
mv -f "$work/out.ptx" "$out"
echo "native/cuda/build-ptx.sh: wrote $out (PTX ISA $isa, entries: $(grep -c '^\.visible \.entry' "$out"))"
