#!/usr/bin/env bash
# Runs the cuda lane from a bundle made by build-cuda-bundle.sh, on a machine with an NVIDIA GPU and no Java:
# the cuda lane's claim tests (U5, U8, R1, S1, S2, S3, S6, S7), X1 across every lane that loads here, and the CUDA
# failure tests (bad PTX, out of memory), with the cuda lane REQUIRED: no GPU fails with the probe's reason.
# Writes <out>/evidence/*.jsonl, <out>/reports/ (JUnit XML), <out>/claims-summary.txt (the ledger's summary of that
# evidence) and <out>/device.txt.
# Usage: run-cuda-lane.sh [out-dir]     (default: $OUT if set, else ./out next to this script)
# Environment: LANE_TIMEOUT (seconds, default 900): a hung device never hangs the run.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-${OUT:-$here/out}}"
mkdir -p "$out/evidence" "$out/reports" "$out/tmp"
java="$here/runtime/bin/java"
cp="$here/classes/main:$here/classes/test:$here/classes/fixtures:$here/classes/oracles:$here/classes/ledger"
for jar in "$here"/lib/*.jar; do
    case "$jar" in *junit-platform-console-standalone.jar) ;; *) cp="$cp:$jar" ;; esac
done

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -a)"
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv \
        || echo "nvidia-smi: not found"
    "$java" -version 2>&1
} > "$out/device.txt"
cat "$out/device.txt"

timeout "${LANE_TIMEOUT:-900}" "$java" --enable-native-access=ALL-UNNAMED -Xss4m \
    -Djava.io.tmpdir="$out/tmp" \
    -Dattnproof.evidence.dir="$out/evidence" \
    -Dattnproof.native.dir="$here/native" \
    -Dattnproof.require.cuda=true \
    -Dattnproof.require.emu="${REQUIRE_EMU:-false}" \
    -jar "$here/lib/junit-platform-console-standalone.jar" execute \
    --class-path "$cp" \
    --select-class io.attnproof.attention.backend.CudaLaneTest \
    --select-class io.attnproof.attention.backend.CudaDeviceFailureTest \
    --select-class io.attnproof.attention.backend.CrossLaneTest \
    --reports-dir "$out/reports" --details=tree --disable-banner --disable-ansi-colors 2>&1 | tee "$out/junit.txt"
status=${PIPESTATUS[0]}

"$java" -cp "$cp" io.attnproof.ledger.Summary "$out" "$out/evidence" > "$out/claims-summary.txt" 2>&1
cat "$out/claims-summary.txt"
rm -rf "$out/tmp"
echo "run-cuda-lane.sh: tests exited $status; evidence in $out/evidence"
exit "$status"
