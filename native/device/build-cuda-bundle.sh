#!/usr/bin/env bash
# Builds the CUDA device bundle: everything the cuda lane needs on a machine with an NVIDIA GPU and no Java.
#   <out>/runtime/       a jlinked Java 25 runtime (only the modules the tests use)
#   <out>/lib/           the third-party jars (JCuda + its Linux natives, commons-math3, QuickTheories) and the JUnit
#                        console launcher
#   <out>/classes/       the attnproof classes (oracles, fixtures, ledger, system-under-test main + test)
#   <out>/native/        the emulation libraries and the nvcc-built PTX from this build (the checked-in PTX is a
#                        classpath resource of classes/main)
#   <out>/run-cuda-lane.sh
# Run it after `mvn -B verify` (or `mvn -B -DskipTests verify`); it calls Maven only to list the declared
# dependencies and fetch the JUnit console launcher, offline unless BUNDLE_MAVEN_FLAGS says otherwise (CI sets it
# empty). Fails if the bundle exceeds $BUNDLE_LIMIT_MIB (64) MiB.
# Usage: native/device/build-cuda-bundle.sh <out-dir>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:?usage: build-cuda-bundle.sh <out-dir>}"
limit_mib="${BUNDLE_LIMIT_MIB:-64}"
console_version="${JUNIT_PLATFORM_VERSION:-1.14.4}"
modules="java.base,java.logging,java.xml,java.sql"

. "$root/bin/java25.sh"
pick_java_home
export JAVA_HOME
for dir in oracles/target/classes fixtures/target/classes ledger/target/classes system-under-test/target/classes \
           system-under-test/target/test-classes system-under-test/target/native; do
    [ -d "$root/$dir" ] || { echo "build-cuda-bundle.sh: $root/$dir is missing: run mvn -B verify first" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/lib" "$out/classes"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Third-party jars of the system-under-test's test classpath (the reactor's own modules are copied as classes).
# (-am with test-compile: the reactor resolves oracles and fixtures to their classes, never to ~/.m2 copies.)
(cd "$root" && mvn -B -q ${BUNDLE_MAVEN_FLAGS--o} test-compile dependency:build-classpath -pl system-under-test -am \
    -Dmdep.outputFile="$work/cp.txt" -Dmdep.includeScope=test >/dev/null)
# The ledger's runtime jars too: run-cuda-lane.sh prints the ledger's summary of the evidence it wrote.
(cd "$root" && mvn -B -q ${BUNDLE_MAVEN_FLAGS--o} test-compile dependency:build-classpath -pl ledger -am \
    -Dmdep.outputFile="$work/cp-ledger.txt" -Dmdep.includeScope=runtime >/dev/null)
{ cat "$work/cp.txt"; echo; cat "$work/cp-ledger.txt"; } | tr ':' '\n' | sort -u | grep '\.jar$' \
    | grep -v -e '/io/attnproof/' -e '/org/junit/' -e '/org/opentest4j/' -e '/org/apiguardian/' \
    | while read -r jar; do
        case "$jar" in
            */jcuda-natives-*.jar)
                # Only the driver API's binding is used: the jar's other libraries (NVRTC, the PTX compiler, the
                # runtime API) would be 8 MiB of the bundle.
                mkdir -p "$work/natives"
                (cd "$work/natives" && unzip -q "$jar" 'lib/libJCudaDriver-*' \
                    && "$JAVA_HOME/bin/jar" --create --file "$out/lib/$(basename "$jar" .jar)-driver-only.jar" lib)
                ;;
            *) cp "$jar" "$out/lib/" ;;
        esac
    done
(cd "$root" && mvn -B -q -N ${BUNDLE_MAVEN_FLAGS--o} dependency:copy \
    -Dartifact="org.junit.platform:junit-platform-console-standalone:$console_version" \
    -DoutputDirectory="$work/console" >/dev/null)
cp "$work"/console/junit-platform-console-standalone-*.jar "$out/lib/junit-platform-console-standalone.jar"

cp -r "$root/oracles/target/classes" "$out/classes/oracles"
cp -r "$root/fixtures/target/classes" "$out/classes/fixtures"
cp -r "$root/ledger/target/classes" "$out/classes/ledger"
cp -r "$root/system-under-test/target/classes" "$out/classes/main"
cp -r "$root/system-under-test/target/test-classes" "$out/classes/test"
mkdir -p "$out/native"
cp "$root"/system-under-test/target/native/*.so "$out/native/"
if [ -d "$root/system-under-test/target/native/ptx" ]; then
    cp -r "$root/system-under-test/target/native/ptx" "$out/native/ptx"
fi
cp "$here/run-cuda-lane.sh" "$out/run-cuda-lane.sh"
chmod +x "$out/run-cuda-lane.sh"

strip=(--strip-debug)
if command -v objcopy >/dev/null 2>&1; then
    # Also drops libjvm.so's native debug symbols (about half the runtime); jlink needs objcopy for it.
    strip=(--strip-java-debug-attributes --strip-native-debug-symbols=exclude-debuginfo-files)
fi
"$JAVA_HOME/bin/jlink" --add-modules "$modules" "${strip[@]}" --no-man-pages --no-header-files \
    --compress=zip-9 --output "$out/runtime"

if command -v strip >/dev/null 2>&1; then
    strip --strip-unneeded "$out/runtime/lib/server/libjvm.so"  # its symbol table: 5 MiB, only for crash reports
fi

bytes=$(du -sb "$out" | cut -f1)
mib=$(( (bytes + 1048575) / 1048576 ))
echo "build-cuda-bundle.sh: $out is $bytes bytes (${mib} MiB; limit ${limit_mib} MiB):"
du -sh "$out"/* | sed 's/^/  /'
if [ "$bytes" -gt $(( limit_mib * 1048576 )) ]; then
    echo "build-cuda-bundle.sh: the bundle exceeds ${limit_mib} MiB" >&2
    exit 1
fi
