package io.attnproof.conformance.cases;

import io.attnproof.attention.tensor.DType;
import io.attnproof.oracles.Precision;
import java.nio.file.Path;

/**
 * A validated case of either kind: {@link AttnCase} (union attention, {@code "kind": "union"} or no kind) or
 * {@link SinksCase} (GPT-OSS sinks attention, {@code "kind": "sinks"}).
 */
public sealed interface AnyCase permits AttnCase, SinksCase {
    /** The case file. */
    Path file();

    /** The dtype inputs were rounded to. */
    DType dtype();

    /** The output shape, {@code [B, H, tq, D]} (varlen sinks: {@code [sequences, Hq, max_q, D]}). */
    int[] outputShape();

    /** Shapes and config in one line, for reports. */
    String describe();

    /** The oracle's precision of the case's dtype. */
    default Precision precision() {
        return switch (dtype()) {
            case F32 -> Precision.F32;
            case F16 -> Precision.F16;
            case BF16 -> Precision.BF16;
        };
    }
}
