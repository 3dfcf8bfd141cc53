package io.attnproof.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the ledger names a claim's tests on both sides (an evidence line's {@code Class#method}, PIT's killing test)
 * and reads the test scope, at the edges: a name with nothing before or after its separator names no test; a JUnit 5
 * name at the very start is still parsed; a scope line without a class is refused with its line number.
 */
class TestNamesTest {

    @TempDir
    Path dir;

    @Test
    void anEvidenceTestNeedsAClassAndAMethod() {
        assertEquals("A#m", ClaimMutants.claimTest(" A#m(int)[1] "));
        assertNull(ClaimMutants.claimTest("#m"), "no class");
        assertNull(ClaimMutants.claimTest("A#"), "no method");
    }

    @Test
    void aPitTestNeedsAClassAndAMethodInEitherForm() {
        assertEquals("a.B#m", ClaimMutants.pitTest("[engine:junit-jupiter]/[class:a.B]/[method:m()]"),
                "a JUnit 5 name at the start of the string");
        assertEquals("a.B#", ClaimMutants.pitTest("a.B.[engine:j]/[class:a.B]/[method:()]"),
                "a method value starting with its parameter list names the empty method, not the list");
        assertEquals("a.B#m", ClaimMutants.pitTest("a.B.m(a.B)"));
        assertNull(ClaimMutants.pitTest("(a.b)"), "only a parameter list");
        assertNull(ClaimMutants.pitTest(".m"), "no class");
        assertNull(ClaimMutants.pitTest("a."), "no method");
    }

    @Test
    void theTestScopeIsReadClassByClassAndALineWithoutAClassIsRefused() throws IOException {
        assertNull(ClaimMutants.readTestScope(dir.resolve("absent.tsv")), "no file: no scope, not an empty one");
        Path tsv = dir.resolve("scope.tsv");
        Files.writeString(tsv, "# scope\na.B\tT1, T2,\n\na.C\tT3\n");
        assertEquals(Map.of("a.B", List.of("T1", "T2"), "a.C", List.of("T3")), ClaimMutants.readTestScope(tsv));
        Files.writeString(tsv, "a.B\tT1\n\tT2\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClaimMutants.readTestScope(tsv));
        assertTrue(e.getMessage().startsWith(tsv + ":2: a line is class<TAB>test classes"), e.getMessage());
    }
}
