package io.attnproof.attention.backend;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs launches on an emulated lane: the kernel source built as a host shared library
 * ({@code native/emu/build.sh}), whose one entry point {@code attnproof_emu_launch} checks the argument list against
 * the kernel's signature, wraps every buffer in a bounds-checked pointer of the length given here, and runs the grid
 * block by block with a block's threads as fibers. Called through the Foreign Function &amp; Memory API.
 */
@SuppressWarnings("restricted") // FFM: loading the emulation library and binding its entry point
final class EmuRunner implements KernelRunner {
    /** Emulated blocks run one at a time: grid-stride kernels get few of them. */
    private static final int GRID_STRIDE_BLOCKS = 2;
    private static final int ERROR_CAPACITY = 2048;

    private final String lane;
    private final MethodHandle launch;
    private final MethodHandle races;
    private final int gridStrideBlocks;

    private EmuRunner(String lane, MethodHandle launch, MethodHandle races, int gridStrideBlocks) {
        this.lane = lane;
        this.launch = launch;
        this.races = races;
        this.gridStrideBlocks = gridStrideBlocks;
    }

    /**
     * This library with grid-stride kernels launched on up to {@code blocks} blocks (the real lanes launch up to
     * 1024): a test hook showing that the grid-stride loops give the same bits on the real grid as on the reduced one.
     */
    EmuRunner withGridStrideBlocks(int blocks) {
        if (blocks < 1) {
            throw new IllegalArgumentException("blocks = " + blocks + ": must be >= 1");
        }
        return new EmuRunner(lane, launch, races, blocks);
    }

    /** What the race checker (claim N1) found for one kernel since the library was loaded. */
    record RaceStats(String kernel, long races, long sharedAccesses, long launches, String firstReport) {
    }

    /** The race checker's totals for {@code kernel} (all zero when it never ran in this library). */
    RaceStats races(String kernel) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 3);
            MemorySegment first = arena.allocate(ERROR_CAPACITY);
            int rc = (int) races.invokeExact(arena.allocateFrom(kernel), out, first, (long) ERROR_CAPACITY);
            return new RaceStats(kernel, out.getAtIndex(JAVA_LONG, 0), out.getAtIndex(JAVA_LONG, 1),
                    out.getAtIndex(JAVA_LONG, 2), rc == 0 ? first.getString(0) : "");
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new NativeKernelException(lane, kernel, "EMU_CALL_FAILED", t.toString());
        }
    }

    /**
     * Loads {@code library}, checks that it is {@code lane}'s, and binds its entry point.
     *
     * @throws IllegalStateException naming the library and what is wrong with it
     */
    static EmuRunner load(String lane, Path library) {
        if (!Files.isRegularFile(library)) {
            throw new IllegalStateException("the " + lane + " library " + library + " does not exist (the Maven build"
                    + " compiles it with g++ through native/emu/build.sh)");
        }
        Linker linker = Linker.nativeLinker();
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        MemorySegment entry = lookup.find("attnproof_emu_launch").orElseThrow(() -> new IllegalStateException(
                library + " has no attnproof_emu_launch: not an attnproof emulation library"));
        MemorySegment laneFn = lookup.find("attnproof_emu_lane").orElseThrow(() -> new IllegalStateException(
                library + " has no attnproof_emu_lane: not an attnproof emulation library"));
        try {
            MethodHandle laneName = linker.downcallHandle(laneFn, FunctionDescriptor.of(ADDRESS));
            String built = ((MemorySegment) laneName.invokeExact()).reinterpret(64).getString(0);
            if (!built.equals(lane)) {
                throw new IllegalStateException(library + " is the " + built + " library, not " + lane + "'s");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cannot query " + library + ": " + t, t);
        }
        MethodHandle handle = linker.downcallHandle(entry, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
        MemorySegment racesFn = lookup.find("attnproof_emu_races").orElseThrow(() -> new IllegalStateException(
                library + " has no attnproof_emu_races: built without the race checker (rebuild it)"));
        MethodHandle races = linker.downcallHandle(racesFn, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
                JAVA_LONG));
        return new EmuRunner(lane, handle, races, GRID_STRIDE_BLOCKS);
    }

    @Override
    public String lane() {
        return lane;
    }

    @Override
    public int gridStrideBlocks() {
        return gridStrideBlocks;
    }

    @Override
    public void run(List<KernelLaunch> launches) {
        try (Arena arena = Arena.ofConfined()) {
            Map<DeviceBuffer, MemorySegment> device = new IdentityHashMap<>();
            for (KernelLaunch l : launches) {
                for (KernelArg a : l.args()) {
                    if (a instanceof KernelArg.Buffer(DeviceBuffer b) && !device.containsKey(b)) {
                        device.put(b, upload(arena, b));
                    }
                }
            }
            for (KernelLaunch l : launches) {
                launchOne(arena, l, device, Map.of());
            }
            for (Map.Entry<DeviceBuffer, MemorySegment> e : device.entrySet()) {
                DeviceBuffer b = e.getKey();
                if (b.readBack()) {
                    if (b.isFloat()) {
                        MemorySegment.copy(e.getValue(), JAVA_FLOAT, 0, b.floats(), 0, b.length());
                    } else {
                        MemorySegment.copy(e.getValue(), JAVA_INT, 0, b.ints(), 0, b.length());
                    }
                }
            }
        }
    }

    /**
     * One launch exactly as described, with buffers whose device lengths may be overridden ({@code lengths} maps a
     * buffer to the element count the kernel is told): a test hook for deliberately bad launches.
     */
    void runWithLengths(KernelLaunch l, Map<DeviceBuffer, Integer> lengths) {
        try (Arena arena = Arena.ofConfined()) {
            Map<DeviceBuffer, MemorySegment> device = new IdentityHashMap<>();
            for (KernelArg a : l.args()) {
                if (a instanceof KernelArg.Buffer(DeviceBuffer b) && !device.containsKey(b)) {
                    device.put(b, upload(arena, b));
                }
            }
            launchOne(arena, l, device, lengths);
        }
    }

    private static MemorySegment upload(Arena arena, DeviceBuffer b) {
        MemorySegment seg = arena.allocate(b.deviceBytes(), 16);
        if (b.isFloat()) {
            MemorySegment.copy(b.floats(), 0, seg, JAVA_FLOAT, 0, b.length());
        } else {
            MemorySegment.copy(b.ints(), 0, seg, JAVA_INT, 0, b.length());
        }
        return seg;
    }

    private void launchOne(Arena arena, KernelLaunch l, Map<DeviceBuffer, MemorySegment> device,
            Map<DeviceBuffer, Integer> lengthOverrides) {
        int n = l.args().size();
        MemorySegment kinds = arena.allocate(JAVA_INT, Math.max(1, n));
        MemorySegment values = arena.allocate(JAVA_LONG, Math.max(1, n));
        MemorySegment lengths = arena.allocate(JAVA_LONG, Math.max(1, n));
        for (int i = 0; i < n; i++) {
            KernelArg a = l.args().get(i);
            int kind;
            long value;
            long length = 0;
            switch (a) {
                case KernelArg.I32(int v) -> {
                    kind = 0;
                    value = v;
                }
                case KernelArg.F32(float v) -> {
                    kind = 1;
                    value = Float.floatToRawIntBits(v);
                }
                case KernelArg.Buffer(DeviceBuffer b) -> {
                    kind = b.isFloat() ? 2 : 3;
                    value = device.get(b).address();
                    length = lengthOverrides.getOrDefault(b, b.length());
                }
                case KernelArg.Null() -> {
                    kind = 4;
                    value = 0;
                }
                case KernelArg.Params(int[] words) -> {
                    MemorySegment seg = arena.allocate(JAVA_INT, words.length);
                    MemorySegment.copy(words, 0, seg, JAVA_INT, 0, words.length);
                    kind = 5;
                    value = seg.address();
                    length = 4L * words.length;
                }
            }
            kinds.setAtIndex(JAVA_INT, i, kind);
            values.setAtIndex(JAVA_LONG, i, value);
            lengths.setAtIndex(JAVA_LONG, i, length);
        }
        MemorySegment dims = arena.allocate(JAVA_LONG, 6);
        for (int i = 0; i < 3; i++) {
            dims.setAtIndex(JAVA_LONG, i, l.grid()[i]);
            dims.setAtIndex(JAVA_LONG, 3 + i, l.block()[i]);
        }
        MemorySegment error = arena.allocate(ERROR_CAPACITY);
        int rc;
        try {
            rc = (int) launch.invokeExact(arena.allocateFrom(l.kernel()), dims, n, kinds, values, lengths, error,
                    (long) ERROR_CAPACITY);
        } catch (Throwable t) {
            throw new NativeKernelException(lane, l.toString(), "EMU_CALL_FAILED", t.toString());
        }
        if (rc != 0) {
            throw new NativeKernelException(lane, l.toString(), errorName(rc), error.getString(0));
        }
    }

    /** The names of attnproof_emu_launch's result codes (native/emu/emu_state.h, LaunchResult). */
    static String errorName(int rc) {
        return switch (rc) {
            case 10 -> "EMU_UNKNOWN_KERNEL";
            case 11 -> "EMU_BAD_SIGNATURE";
            case 12 -> "EMU_OUT_OF_BOUNDS";
            case 13 -> "EMU_HOST_EXCEPTION";
            case 14 -> "EMU_INVALID_LAUNCH_CONFIG";
            case 15 -> "EMU_SHARED_MEMORY_RACE";
            case 16 -> "EMU_DEADLOCK";
            case 17 -> "EMU_WARP_MISUSE";
            default -> "EMU_ERROR_" + rc;
        };
    }
}
