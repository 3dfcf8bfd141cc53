#!/usr/bin/env bash
# One scoped PIT run: pit/run-scope.sh NAME TARGET_CLASSES [TARGET_TESTS] [mvn args...]
#   NAME            where the results go: pit/target/runs/NAME/ (mutations.xml, linecoverage.xml, index.html, log, wall)
#   TARGET_CLASSES  comma-separated class globs to mutate, all of one module, e.g. 'io.attnproof.attention.mask.*'
#                   or 'io.attnproof.ledger.PitTriage,io.attnproof.ledger.PitTriage$*'
#   TARGET_TESTS    comma-separated test globs that may kill them (empty or absent: the module's own default, its pom)
# The module comes from the classes' package: io.attnproof.attention (system-under-test), .oracles and .fixtures
# (mutated from system-under-test, where the claim tests run: executions pit-oracles, pit-fixtures), .mutants,
# .ledger, .conformance. Every other PIT run of the reactor is skipped (-Dpit.skip.*).
# Thresholds are lifted (a scope's numbers are not the whole run's); the caller judges the merged result.
# Runs niced (shared machines) unless PIT_NICE=0. JAVA_HOME must be a JDK 25 (bin/java25.sh picks one).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: pit/run-scope.sh NAME TARGET_CLASSES [TARGET_TESTS] [mvn args...]"
name=${1:?$usage}
classes=${2:?$usage}
tests=${3:-}
shift $(( $# < 3 ? $# : 3 ))
. bin/java25.sh
pick_java_home
export JAVA_HOME
# module of one glob: "unit module-dir property-prefix reports-dir"
module_of() {
    case "$1" in
        io.attnproof.attention.*) echo "sut system-under-test pit pit-reports" ;;
        io.attnproof.oracles.*) echo "oracles system-under-test pit.oracles pit-reports-oracles" ;;
        io.attnproof.fixtures.*) echo "fixtures system-under-test pit.fixtures pit-reports-fixtures" ;;
        io.attnproof.mutants.*) echo "mutants mutants pit pit-reports" ;;
        io.attnproof.ledger.*) echo "ledger ledger pit pit-reports" ;;
        io.attnproof.conformance.*) echo "conformance conformance pit pit-reports" ;;
        *) echo "pit run-scope: TARGET_CLASSES = '$1': every glob must start with io.attnproof.{attention,oracles,fixtures,mutants,ledger,conformance}." >&2
           return 1 ;;
    esac
}
unit=
IFS=, read -ra globs <<<"$classes"
for g in "${globs[@]}"; do
    m=$(module_of "$g")
    if [ -n "$unit" ] && [ "$m" != "$unit" ]; then
        echo "pit run-scope: TARGET_CLASSES = '$classes': globs of two modules ('${unit%% *}' and '${m%% *}'); run one scope per module." >&2
        exit 2
    fi
    unit=$m
done
read -r key dir prefix reports <<<"$unit"
skips=()
for u in sut oracles fixtures mutants ledger conformance; do
    [ "$u" = "$key" ] || skips+=("-Dpit.skip.$u=true")
done
props=("-D$prefix.targetClasses=$classes" "-D$prefix.mutationThreshold=0" "-D$prefix.testStrengthThreshold=0")
[ -n "$tests" ] && props+=("-D$prefix.targetTests=$tests")
out=pit/target/runs/$name
rm -rf "$out" "$dir/target/$reports"
mkdir -p "$out"
nice_cmd=(nice -n 19)
[ "${PIT_NICE:-1}" = 0 ] && nice_cmd=()
start=$(date +%s)
set +e
"${nice_cmd[@]}" mvn -B -Ppit verify -pl "$dir" -am -Dmaven.test.skip.exec=true "${skips[@]}" "${props[@]}" \
    -Dpit.exportLineCoverage=true "$@" >"$out/log" 2>&1
rc=$?
set -e
end=$(date +%s)
echo "$((end - start))" >"$out/wall"
cp "$dir/target/$reports/mutations.xml" "$out/" 2>/dev/null || true
cp "$dir/target/$reports/linecoverage.xml" "$out/" 2>/dev/null || true
echo "$key" >"$out/module"
echo "pit scope $name ($key): rc $rc, $((end - start)) s wall, $(grep -c '<mutation ' "$out/mutations.xml" 2>/dev/null || echo 0) mutations -> $out"
grep -E '^>> (Generated|Mutations with no coverage)' "$out/log" || true
exit $rc
