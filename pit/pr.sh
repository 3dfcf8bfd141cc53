#!/usr/bin/env bash
# PIT for a pull request: mutates only the classes that changed against BASE (default origin/main) under
# src/main/java of every module under PIT (system-under-test, oracles, fixtures, mutants, ledger, conformance), one
# scoped run per module. The system under test's classes run only the tests that cover them (pit/test-scope.tsv,
# from a whole-module run's line coverage; a class not in it, e.g. a new one, gets all tests); the other modules'
# run their pom's default tests. Then fails on any surviving or uncovered mutation of those classes that
# pit/triage.csv does not hold, and on any row of those classes that names no mutation of the run (stale).
#   pit/pr.sh [BASE] [mvn args...]      results: pit/target/runs/pr-<module>/ (mutations.xml, log, wall)
# Incremental history is not used: pitest 1.23+ moved it into a separate plugin (pitest/pitest-history) that is not
# on Maven Central (checked 2026-11-30), and the class-level diff already bounds the work (pit/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-origin/main}
[ $# -gt 0 ] && shift
. bin/java25.sh
pick_java_home
export JAVA_HOME
# The modules under PIT and the package each one mutates (pit/run-scope.sh maps a package to its module's run).
srcs=(system-under-test/src/main/java/ oracles/src/main/java/ fixtures/src/main/java/ mutants/src/main/java/
      ledger/src/main/java/ conformance/src/main/java/)
mapfile -t files < <(git diff --name-only --diff-filter=AMR "$(git merge-base "$base" HEAD)" -- "${srcs[@]}" \
    | grep '\.java$' || true)
if [ ${#files[@]} -eq 0 ]; then
    echo "pit pr: no class of ${srcs[*]} changed against $base; nothing to mutate"
    exit 0
fi
# Changed classes per module (its source root), in the order of srcs.
declare -A changed=()
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    for src in "${srcs[@]}"; do
        if [[ $f == "$src"* ]]; then
            c=${f#"$src"}
            c=${c%.java}
            c=${c//\//.}
            changed[$src]+="$c "
        fi
    done
done
if [ ${#changed[@]} -eq 0 ]; then
    echo "pit pr: only deletions under ${srcs[*]}; nothing to mutate"
    exit 0
fi
reports=()
for src in "${srcs[@]}"; do
    [ -n "${changed[$src]:-}" ] || continue
    read -ra classes <<<"${changed[$src]}"
    module=${src%%/*}
    targets=$(for c in "${classes[@]}"; do printf '%s,%s$*,' "$c" "$c"; done | sed 's/,$//')
    # The system under test's classes run only the test classes that cover them (pit/test-scope.tsv); every other
    # module runs its pom's default tests (its own, or for oracles and fixtures the claim tests with their own).
    tests=
    if [ "$module" = system-under-test ]; then
        tests=$("$JAVA_HOME/bin/java" pit/PitShards.java tests "${classes[@]}")
    fi
    echo "pit pr: ${#classes[@]} changed class(es) of $module against $base: ${classes[*]}"
    echo "pit pr: tests ${tests:-(the module default)}"
    status=0
    pit/run-scope.sh "pr-$module" "$targets" "$tests" "$@" || status=$?
    [ $status -eq 0 ] || { echo "pit pr: PIT failed (rc $status); see pit/target/runs/pr-$module/log"; exit $status; }
    reports+=("pit/target/runs/pr-$module/mutations.xml")
done
# The triage check reads pit/triage.csv with Commons CSV: it runs from the conformance module's classpath.
./mvnw -B -q -o -pl conformance -am -DskipTests package || ./mvnw -B -q -pl conformance -am -DskipTests package
status=0
for r in "${reports[@]}"; do
    "$JAVA_HOME/bin/java" -cp "conformance/target/classes:$(cat conformance/target/classpath.txt)" \
        io.attnproof.ledger.PitTriage check "$r" pit/triage.csv --partial || status=1
done
exit $status
