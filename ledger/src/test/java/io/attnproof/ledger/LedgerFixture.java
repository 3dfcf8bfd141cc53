package io.attnproof.ledger;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Lays out a repository root from the test resources under {@code /ledger/}: evidence files in
 * {@code system-under-test/target/evidence}, and optionally the mutant results and PIT's report where the ledger
 * looks for them. (Resources cannot hold {@code target/} paths: git ignores them.)
 */
public final class LedgerFixture {
    private LedgerFixture() {
    }

    public static Path root(Path dir, boolean withMutants, boolean withPit) {
        Path evidence = dir.resolve("system-under-test").resolve("target").resolve("evidence");
        copy("evidence-UnionOracleTest.jsonl", evidence.resolve("UnionOracleTest.jsonl"));
        copy("evidence-RaggedCohortTest.jsonl", evidence.resolve("RaggedCohortTest.jsonl"));
        copy("R8-dead-prefix.csv", evidence.resolve(Ledger.R8_CSV));
        if (withMutants) {
            copy("mutants-results.json", dir.resolve(Ledger.MUTANTS));
        }
        if (withPit) {
            copy("pit-mutations.xml", dir.resolve(Ledger.PIT));
        }
        return dir;
    }

    static void copy(String resource, Path to) {
        try (InputStream in = LedgerFixture.class.getResourceAsStream("/ledger/" + resource)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource /ledger/" + resource);
            }
            Files.createDirectories(to.getParent());
            Files.write(to, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
