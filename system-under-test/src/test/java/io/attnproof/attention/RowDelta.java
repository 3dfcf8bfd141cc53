package io.attnproof.attention;

import io.attnproof.fixtures.gen.UnionInputs;
import java.util.function.Consumer;

/**
 * Which output rows a change to one input moves: the system is run on seeded inputs, then on the same inputs
 * after {@code edit}; a row counts as moved if any of its elements differ in their bits.
 */
public final class RowDelta {
    private RowDelta() {
    }

    /** {@code moved[b][h][r]}: whether row {@code (b, h, r)} changed after {@code edit} was applied to the inputs. */
    public static boolean[][][] moved(UnionRun.Spec spec, long seed, Consumer<UnionInputs> edit) {
        UnionInputs in = spec.inputs(seed);
        double[][][][] before = Tensors.toArray4(UnionRun.run(spec, in, in.sinks(), null));
        edit.accept(in);
        double[][][][] after = Tensors.toArray4(UnionRun.run(spec, in, in.sinks(), null));
        boolean[][][] moved = new boolean[before.length][before[0].length][spec.tq()];
        for (int b = 0; b < before.length; b++) {
            for (int h = 0; h < before[b].length; h++) {
                for (int r = 0; r < spec.tq(); r++) {
                    for (int d = 0; d < spec.headDim(); d++) {
                        if (Float.floatToRawIntBits((float) before[b][h][r][d])
                                != Float.floatToRawIntBits((float) after[b][h][r][d])) {
                            moved[b][h][r] = true;
                        }
                    }
                }
            }
        }
        return moved;
    }
}
