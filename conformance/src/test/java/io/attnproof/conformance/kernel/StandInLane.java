package io.attnproof.conformance.kernel;

import io.attnproof.conformance.cases.SinksCase;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** A kernel lane that runs no kernel: it answers each case as {@code rule} says and records every case it was called on. */
record StandInLane(String lane, Function<SinksCase, KernelLibrary.Call> rule, List<SinksCase> seen)
        implements KernelLane {
    /** The checked lane, recording into a list of its own. */
    StandInLane(Function<SinksCase, KernelLibrary.Call> rule) {
        this("checked", rule, new ArrayList<>());
    }

    @Override
    public KernelLibrary.Call call(Adapter adapter, Adapter.Entry entry, SinksCase c) {
        seen.add(c);
        return rule.apply(c);
    }
}
