#!/usr/bin/env bash
# One scoped PIT run of the system under test: pit/run-scope.sh NAME TARGET_CLASSES [TARGET_TESTS] [mvn args...]
#   NAME            where the results go: pit/target/runs/NAME/ (mutations.xml, linecoverage.xml, index.html, log, wall)
#   TARGET_CLASSES  comma-separated class globs to mutate, e.g. 'io.attnproof.attention.mask.*'
#   TARGET_TESTS    comma-separated test globs that may kill them (default: every test of the system under test)
# Thresholds are lifted (a scope's numbers are not the whole run's); the caller judges the merged result.
# Runs niced (shared machines) unless PIT_NICE=0. JAVA_HOME must be a JDK 25 (bin/java25.sh picks one).
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: pit/run-scope.sh NAME TARGET_CLASSES [TARGET_TESTS] [mvn args...]}
classes=${2:?usage: pit/run-scope.sh NAME TARGET_CLASSES [TARGET_TESTS] [mvn args...]}
tests=${3:-io.attnproof.attention.*}
shift $(( $# < 3 ? $# : 3 ))
. bin/java25.sh
pick_java_home
export JAVA_HOME
out=pit/target/runs/$name
rm -rf "$out" system-under-test/target/pit-reports
mkdir -p "$out"
nice_cmd=(nice -n 19)
[ "${PIT_NICE:-1}" = 0 ] && nice_cmd=()
start=$(date +%s)
set +e
"${nice_cmd[@]}" mvn -B -Ppit verify -pl system-under-test -am -Dmaven.test.skip.exec=true \
    -Dpit.targetClasses="$classes" -Dpit.targetTests="$tests" -Dpit.exportLineCoverage=true \
    -Dpit.mutationThreshold=0 -Dpit.testStrengthThreshold=0 "$@" >"$out/log" 2>&1
rc=$?
set -e
end=$(date +%s)
echo "$((end - start))" >"$out/wall"
cp system-under-test/target/pit-reports/mutations.xml "$out/" 2>/dev/null || true
cp system-under-test/target/pit-reports/linecoverage.xml "$out/" 2>/dev/null || true
echo "pit scope $name: rc $rc, $((end - start)) s wall, $(grep -c '<mutation ' "$out/mutations.xml" 2>/dev/null || echo 0) mutations -> $out"
grep -E '^>> (Generated|Mutations with no coverage)' "$out/log" || true
exit $rc
