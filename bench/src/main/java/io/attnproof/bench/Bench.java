package io.attnproof.bench;

/** The name bench/run's evidence is recorded under: {@code bench/target/evidence/Bench.jsonl}, test {@code Bench#run}. */
final class Bench {
    private Bench() {
    }
}
