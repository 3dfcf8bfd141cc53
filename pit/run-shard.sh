#!/usr/bin/env bash
# Shard k of n of the full PIT run: pit/run-shard.sh k/n [mvn args...]
# The classes and tests come from `java pit/PitShards.java plan k/n` (pit/units.tsv, dealt longest-first); the
# results go to pit/target/runs/shard-k-of-n/ (mutations.xml, shard.txt, log, wall) for PitShards merge.
set -euo pipefail
cd "$(dirname "$0")/.."
shard=${1:?usage: pit/run-shard.sh k/n [mvn args...]}
shift
. bin/java25.sh
pick_java_home
export JAVA_HOME
plan=$("$JAVA_HOME/bin/java" pit/PitShards.java plan "$shard")
classes=$(sed -n 1p <<<"$plan")
tests=$(sed -n 2p <<<"$plan")
name="shard-${shard%/*}-of-${shard#*/}"
echo "pit shard $shard: classes $classes"
echo "pit shard $shard: tests   $tests"
pit/run-scope.sh "$name" "$classes" "$tests" "$@"
echo "$shard" >"pit/target/runs/$name/shard.txt"
