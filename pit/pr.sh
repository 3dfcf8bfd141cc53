#!/usr/bin/env bash
# PIT for a pull request: mutates only the classes of system-under-test/src/main/java that changed against BASE
# (default origin/main), with only the tests that cover them (pit/test-scope.tsv, from a whole-module run's line
# coverage; a class not in it, e.g. a new one, gets every test of its package and of the packages that use it:
# all tests). Then fails on any surviving or uncovered mutation of those classes that pit/triage.csv does not hold,
# and on any row of those classes that names no mutation of the run (stale).
#   pit/pr.sh [BASE] [mvn args...]      results: pit/target/runs/pr/ (mutations.xml, log, wall)
# Incremental history is not used: pitest 1.23+ moved it into a separate plugin (pitest/pitest-history) that is not
# on Maven Central (checked 2026-11-30), and the class-level diff already bounds the work (pit/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-origin/main}
[ $# -gt 0 ] && shift
. bin/java25.sh
pick_java_home
export JAVA_HOME
src=system-under-test/src/main/java/
mapfile -t files < <(git diff --name-only --diff-filter=AMR "$(git merge-base "$base" HEAD)" -- "$src" | grep '\.java$' || true)
if [ ${#files[@]} -eq 0 ]; then
    echo "pit pr: no class of $src changed against $base; nothing to mutate"
    exit 0
fi
classes=()
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    c=${f#"$src"}
    c=${c%.java}
    c=${c//\//.}
    classes+=("$c")
done
if [ ${#classes[@]} -eq 0 ]; then
    echo "pit pr: only deletions under $src; nothing to mutate"
    exit 0
fi
targets=$(for c in "${classes[@]}"; do printf '%s,%s$*,' "$c" "$c"; done | sed 's/,$//')
tests=$("$JAVA_HOME/bin/java" pit/PitShards.java tests "${classes[@]}")
echo "pit pr: ${#classes[@]} changed class(es) against $base: ${classes[*]}"
echo "pit pr: tests $tests"
status=0
pit/run-scope.sh pr "$targets" "$tests" "$@" || status=$?
[ $status -eq 0 ] || { echo "pit pr: PIT failed (rc $status); see pit/target/runs/pr/log"; exit $status; }
# The triage check reads pit/triage.csv with Commons CSV: it runs from the reports module's classpath.
./mvnw -B -q -o -pl oracles,fixtures,system-under-test,reports -DskipTests package \
    || ./mvnw -B -q -pl oracles,fixtures,system-under-test,reports -DskipTests package
"$JAVA_HOME/bin/java" -cp "conformance/target/classes:$(cat conformance/target/classpath.txt)" \
    io.attnproof.ledger.PitTriage check pit/target/runs/pr/mutations.xml pit/triage.csv --partial
