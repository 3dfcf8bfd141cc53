package io.attnproof.ledger;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The ledger's summary lines for evidence outside a repository (a device runner's output): {@code ROOT [DIR...]}
 * reads {@code ROOT}'s evidence and each {@code DIR}, and prints the claims, mutants and PIT lines the ledger states.
 */
public final class Summary {
    private Summary() {
    }

    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: Summary ROOT [EVIDENCE_DIR...]: args = [] must name the root");
            System.exit(2);
        }
        List<Path> dirs = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            dirs.add(Path.of(args[i]));
        }
        Ledger l = Ledger.build(Path.of(args[0]), dirs);
        System.out.println(l.summaryLine());
        System.out.println(l.mutantsNote());
        System.out.println(l.pitNote());
    }
}
