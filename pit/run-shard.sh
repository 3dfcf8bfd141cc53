#!/usr/bin/env bash
# Shard k of n of one module's full PIT run: pit/run-shard.sh k/n [MODULE] [mvn args...]
# MODULE: sut (the default, the system under test) or conformance. The classes and tests come from
# `java pit/PitShards.java plan k/n MODULE` (that module's units of pit/units.tsv, dealt longest-first); the results
# go to pit/target/runs/shard-k-of-n/ (sut) or shard-MODULE-k-of-n/ (mutations.xml, shard.txt, module, log, wall)
# for PitShards merge.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: pit/run-shard.sh k/n [sut|conformance] [mvn args...]"
shard=${1:?$usage}
shift
module=sut
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
    module=$1
    shift
fi
. bin/java25.sh
pick_java_home
export JAVA_HOME
plan=$("$JAVA_HOME/bin/java" pit/PitShards.java plan "$shard" "$module")
classes=$(sed -n 1p <<<"$plan")
tests=$(sed -n 2p <<<"$plan")
name="shard-${shard%/*}-of-${shard#*/}"
[ "$module" = sut ] || name="shard-$module-${shard%/*}-of-${shard#*/}"
echo "pit shard $shard ($module): classes $classes"
echo "pit shard $shard ($module): tests   $tests"
pit/run-scope.sh "$name" "$classes" "$tests" "$@"
echo "$shard" >"pit/target/runs/$name/shard.txt"
