package io.attnproof.attention.dsv4;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attnproof.attention.UnionRun;
import io.attnproof.fixtures.claim.Claim;
import io.attnproof.fixtures.evidence.Comparison;
import io.attnproof.fixtures.evidence.Evidence;
import io.attnproof.fixtures.gen.Theories;
import io.attnproof.fixtures.gen.UnionCase;
import io.attnproof.fixtures.gen.UnionInputs;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Properties over random {@code (t_q, t_k, W, R, t_c, rawPrefix, dtype)} with QuickTheories' shrinking and a
 * fixed seed ({@link Theories#SEED}): the output stays within the tolerance rule (U5), and a keep span that would
 * reach into the missing prefix is refused (bad input).
 */
class UnionProperties {
    static final int EXAMPLES = 400;

    static UnionRun.Spec spec(UnionCase c) {
        CompressRatio ratio = switch (c.ratio()) {
            case 0 -> CompressRatio.STANDARD;
            case 4 -> CompressRatio.CSA;
            default -> CompressRatio.HCA;
        };
        return new UnionRun.Spec(c.batch(), c.heads(), c.tq(), c.tk(), c.tc(), c.headDim(), c.window(), ratio,
                c.rawPrefix(), c.precision());
    }

    @Test
    @Claim("U5")
    void randomCasesMatchTheOracleWithinTheToleranceRule(Evidence ev) {
        ev.seed(Theories.SEED);
        AtomicReference<Double> worstRatio = new AtomicReference<>(0.0);
        AtomicReference<String> worstCase = new AtomicReference<>("");
        AtomicInteger withPrefix = new AtomicInteger();
        AtomicInteger withBlocks = new AtomicInteger();
        AtomicInteger windowCuts = new AtomicInteger();
        Theories.qt(EXAMPLES).forAll(Theories.unionCases()).checkAssert(c -> {
            long seed = c.toString().hashCode(); // String hashes are stable across JVMs; enum hashes are not
            UnionRun run = UnionRun.of(spec(c), seed);
            double ratio = run.diff().maxAbs() / run.limit();
            if (!(run.diff().maxAbs() <= run.limit())) {
                // Recorded, not thrown: the worst ratio below is the check (a NaN error counts as the worst).
                System.err.println("U5 property: seed " + seed + ": max_abs_err " + run.diff().maxAbs() + " > limit "
                        + run.limit() + " at " + run.diff().worst() + " for " + c);
                ratio = Double.isNaN(ratio) ? Double.POSITIVE_INFINITY : ratio;
            }
            if (ratio > worstRatio.get()) {
                worstRatio.set(ratio);
                worstCase.set(c + " seed " + seed + " worst " + run.diff().worst());
            }
            withPrefix.addAndGet(c.rawPrefix() > 0 ? 1 : 0);
            withBlocks.addAndGet(c.ratio() > 0 && c.tc() > 0 ? 1 : 0);
            windowCuts.addAndGet(c.tkFull() - c.keep() > c.rawPrefix() ? 1 : 0);
        });
        ev.degeneracy("cases_with_raw_prefix", withPrefix.get(), Comparison.GT, EXAMPLES / 10, "of " + EXAMPLES);
        ev.degeneracy("cases_with_compressed_blocks", withBlocks.get(), Comparison.GT, EXAMPLES / 10, "of " + EXAMPLES);
        ev.degeneracy("cases_where_narrowing_cuts", windowCuts.get(), Comparison.GT, EXAMPLES / 10, "of " + EXAMPLES);
        System.out.println("U5 property: worst err/limit " + worstRatio.get() + " for " + worstCase.get());
        ev.check("worst_err_over_limit", worstRatio.get(), 1.0, null);
    }

    @Test
    void aKeepSpanReachingIntoTheMissingPrefixIsRefused() {
        Theories.qt(200).forAll(Theories.invalidBasePrefixCases()).checkAssert(c -> {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> UnionGeometry.of(c.tq(), c.tk(), c.tc(), c.window(), c.rawPrefix()));
            assertTrue(e.getMessage().startsWith("base = " + c.base() + ": must be >= rawPrefix = " + c.rawPrefix()),
                    e.getMessage());
        });
    }

    /** U3 over random cases: the narrowed call equals the kernel over every passed key, bit for bit. */
    @Test
    @Claim("U3")
    void narrowingIsAnIdentityOnRandomCases(Evidence ev) {
        ev.seed(Theories.SEED);
        AtomicInteger cut = new AtomicInteger();
        java.util.concurrent.atomic.AtomicLong differing = new java.util.concurrent.atomic.AtomicLong();
        Theories.qt(EXAMPLES).forAll(Theories.unionCases()).checkAssert(c -> {
            UnionRun.Spec spec = spec(c);
            UnionInputs in = spec.inputs(c.toString().hashCode());
            UnionGeometry g = UnionGeometry.of(c.tq(), c.tk(), c.tc(), c.window(), c.rawPrefix());
            var narrowed = UnionRun.run(spec, in, in.sinks(), null).toFloatArray();
            var whole = KeepSpanTest.wholeCache(spec, in, g, c.rawPrefix());
            long bits = io.attnproof.fixtures.tolerance.Diff.bitsDiffering(narrowed, whole);
            if (bits != 0) {
                System.err.println("U3 property: " + bits + " elements differ for " + c);
            }
            differing.addAndGet(bits);
            cut.addAndGet(g.base() > c.rawPrefix() ? 1 : 0);
        });
        ev.degeneracy("cases_where_narrowing_cuts", cut.get(), Comparison.GT, EXAMPLES / 10, "of " + EXAMPLES);
        ev.checkBitIdentical("elements_differing_over_all_cases", differing.get());
    }
}
