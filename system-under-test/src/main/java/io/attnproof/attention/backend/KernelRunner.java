package io.attnproof.attention.backend;

import java.util.List;

/**
 * Runs a sequence of launches on one device: allocates every distinct {@link DeviceBuffer} once, copies the inputs
 * in, launches in order (each launch sees the previous ones' writes), waits, copies the read-back buffers out and
 * frees everything. A failure is a {@link NativeKernelException} naming the device API's error; it never hangs.
 */
interface KernelRunner {
    /** The lane this runner serves, for messages. */
    String lane();

    /** The most blocks a grid-stride kernel is launched with on this device. */
    int gridStrideBlocks();

    void run(List<KernelLaunch> launches);
}
