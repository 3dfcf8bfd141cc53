package io.attnproof.attention.backend;

import java.util.Arrays;
import java.util.List;

/**
 * One launch: the kernel's entry-point name, the grid (CUDA blocks / Metal threadgroups per axis), the block (threads
 * per block / threadgroup per axis) and the arguments. Both emulated and real lanes take this same description.
 */
public record KernelLaunch(String kernel, int[] grid, int[] block, List<KernelArg> args) {

    public KernelLaunch {
        grid = grid.clone();
        block = block.clone();
        args = List.copyOf(args);
        if (grid.length != 3 || block.length != 3) {
            throw new IllegalArgumentException("grid = " + Arrays.toString(grid) + ", block = " + Arrays.toString(block)
                    + ": must have three axes each");
        }
    }

    /** A one-dimensional launch of {@code blocks} blocks of {@code threads} threads. */
    static KernelLaunch linear(String kernel, int blocks, int threads, KernelArg... args) {
        return new KernelLaunch(kernel, new int[] {blocks, 1, 1}, new int[] {threads, 1, 1}, List.of(args));
    }

    @Override
    public String toString() {
        return kernel + "<<<" + Arrays.toString(grid) + ", " + Arrays.toString(block) + ">>>";
    }
}
