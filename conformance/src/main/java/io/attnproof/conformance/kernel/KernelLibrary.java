package io.attnproof.conformance.kernel;

import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.SinksCase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A user's CUDA source built unchanged through the emulator's front end ({@code native/emu/frontend/build-cu.sh}) into
 * one lane's library, checked (bounds, races, deadlocks, launch limits) or plain ({@code -DATTNPROOF_EMU_PLAIN}), and
 * a case called through the adapter's entry point as a host calls it: cudaMalloc and cudaMemcpy per argument, the
 * launcher, cudaDeviceSynchronize, cudaMemcpy back. The output buffer starts as NaN, so a launcher that returns without
 * writing it gives NaN where the oracle has numbers.
 */
public final class KernelLibrary implements KernelLane {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final AddressLayout A = ValueLayout.ADDRESS;
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT;
    private static final long BUILD_SECONDS = 600;

    private final String lane;
    private final SymbolLookup lookup;
    private final MethodHandle malloc;
    private final MethodHandle free;
    private final MethodHandle memcpy;
    private final MethodHandle sync;
    private final MethodHandle lastError;
    private final MethodHandle lastMessage;

    private KernelLibrary(String lane, Path lib) {
        this.lane = lane;
        this.lookup = SymbolLookup.libraryLookup(lib, Arena.global());
        malloc = fn("cudaMalloc", FunctionDescriptor.of(I, A, ValueLayout.JAVA_LONG));
        free = fn("cudaFree", FunctionDescriptor.of(I, A));
        memcpy = fn("cudaMemcpy", FunctionDescriptor.of(I, A, A, ValueLayout.JAVA_LONG, I));
        sync = fn("cudaDeviceSynchronize", FunctionDescriptor.of(I));
        lastError = fn("cudaGetLastError", FunctionDescriptor.of(I));
        lastMessage = fn("attnproof_cuda_last_message", FunctionDescriptor.of(A));
    }

    @Override
    public String lane() {
        return lane;
    }

    private MethodHandle fn(String name, FunctionDescriptor d) {
        MemorySegment s = lookup.find(name).orElseThrow(() -> new IllegalStateException("the " + lane + " library has"
                + " no symbol " + name));
        return LINKER.downcallHandle(s, d);
    }

    /**
     * Builds the adapter's source into {@code outDir/lib<name>[_plain].so} (rebuilt only when an input is newer) and
     * loads it.
     *
     * @param repoRoot the repository root (where native/emu lives)
     * @throws KernelBuildException with the front end's or compiler's last lines when the source does not build
     */
    public static KernelLibrary build(Path repoRoot, Adapter adapter, Path outDir, boolean plain) {
        String stem = adapter.name().replaceAll("[^A-Za-z0-9_]", "_") + (plain ? "_plain" : "");
        Path source = adapter.sources().getFirst();
        // One build per source text: a shrink's reproducing run and the run it came from share it.
        Path lib = buildWith(repoRoot, "build-cu.sh", source, outDir.resolve(digest(source)), stem, plain,
                source + ": the " + (plain ? "plain" : "checked") + " build");
        return new KernelLibrary(plain ? "plain" : "checked", lib);
    }

    /**
     * {@code native/emu/frontend/<script> source outDir stem} (at -O0 unless ATTNPROOF_FRONTEND_OPT says otherwise;
     * {@code -DATTNPROOF_EMU_PLAIN} for the plain build) unless {@code outDir/lib<stem>.so} is newer than its inputs;
     * that library's absolute path.
     *
     * @throws KernelBuildException naming {@code what}, with the last lines of the build's log, when it fails or runs
     *         past {@link #BUILD_SECONDS}
     */
    static Path buildWith(Path repoRoot, String script, Path source, Path outDir, String stem, boolean plain,
            String what) {
        Path lib = outDir.resolve("lib" + stem + ".so").toAbsolutePath();
        try {
            if (!upToDate(lib, source, repoRoot)) {
                Files.createDirectories(outDir);
                List<String> cmd = new ArrayList<>(List.of("bash",
                        repoRoot.resolve("native/emu/frontend").resolve(script).toString(), source.toString(),
                        outDir.toAbsolutePath().toString(), stem));
                if (plain) {
                    cmd.add("-DATTNPROOF_EMU_PLAIN");
                }
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
                pb.environment().putIfAbsent("ATTNPROOF_FRONTEND_OPT", "0");
                Path log = outDir.resolve(stem + ".build.log");
                pb.redirectOutput(log.toFile());
                Process p = pb.start();
                if (!p.waitFor(BUILD_SECONDS, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new KernelBuildException(what + " ran past " + BUILD_SECONDS + " s");
                }
                if (p.exitValue() != 0) {
                    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                    throw new KernelBuildException(what + " failed (exit " + p.exitValue() + "):\n" + String.join(
                            "\n", lines.subList(Math.max(0, lines.size() - 15), lines.size())));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot build " + lib, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KernelBuildException("interrupted while building " + lib);
        }
        return lib;
    }

    static String digest(Path source) {
        try {
            byte[] h = java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(source));
            return java.util.HexFormat.of().formatHex(h, 0, 8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + source, e);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean upToDate(Path lib, Path source, Path repoRoot) throws IOException {
        if (!Files.exists(lib)) {
            return false;
        }
        var built = Files.getLastModifiedTime(lib);
        List<Path> inputs = new ArrayList<>(List.of(source));
        for (Path dir : List.of(repoRoot.resolve("native/emu"), repoRoot.resolve("native/emu/frontend"),
                repoRoot.resolve("native/emu/metal"))) {
            try (var s = Files.list(dir)) {
                s.filter(Files::isRegularFile).forEach(inputs::add);
            }
        }
        for (Path p : inputs) {
            if (Files.getLastModifiedTime(p).compareTo(built) > 0) {
                return false;
            }
        }
        return true;
    }

    /** What one call gave: an output in the case's output shape, or a fault (null output) with its message. */
    public record Call(double[] output, String fault) {
    }

    /**
     * Calls the adapter's entry for the case (already known to be inside the envelope).
     *
     * @throws IllegalStateException when the library lacks the entry's symbol (the adapter and source disagree)
     */
    @Override
    public Call call(Adapter adapter, Adapter.Entry entry, SinksCase c) {
        String symbol = entry.symbol().replace("{dtype}", adapter.dtypes().get(c.dtype().name()));
        boolean varlen = c.varlen();
        int[] outShape = c.outputShape();
        int totalQ = varlen ? c.q().dim(0) : c.batch() * c.tq();
        int hq = c.queryHeads();
        int d = c.headDim();
        long outCount = (long) totalQ * hq * d;
        Adapter.Arg outArg = entry.tensor("out");
        boolean padded = outArg.layout().equals("padded");
        if (padded) {
            outCount = (long) outShape[0] * outShape[1] * outShape[2] * outShape[3];
        }
        List<MemoryLayout> layouts = new ArrayList<>();
        List<Object> values = new ArrayList<>();
        List<MemorySegment> device = new ArrayList<>();
        MemorySegment out = null;
        try (Arena arena = Arena.ofConfined()) {
            for (Adapter.Arg a : entry.args()) {
                switch (a.role()) {
                    case "tensor" -> {
                        layouts.add(A);
                        MemorySegment seg;
                        if (a.what().equals("out")) {
                            seg = upload(arena, device, a, c.dtype(), nan(outCount));
                            out = seg;
                        } else if (a.what().equals("sinks")) {
                            float[] s = c.sinks().toFloatArray();
                            boolean none = true;
                            for (float x : s) {
                                none &= x == Float.NEGATIVE_INFINITY;
                            }
                            seg = none && "null".equals(a.noSinks()) ? MemorySegment.NULL
                                    : upload(arena, device, a, c.dtype(), s);
                        } else if (a.what().equals("mask")) {
                            seg = upload(arena, device, a, c.dtype(), denseMask(c));
                        } else {
                            Tensor t = switch (a.what()) {
                                case "q" -> c.q();
                                case "k" -> c.k();
                                default -> c.v();
                            };
                            seg = upload(arena, device, a, c.dtype(), t.toFloatArray());
                        }
                        values.add(seg);
                    }
                    case "cu_seqlens" -> {
                        layouts.add(A);
                        int[] cu = a.what().equals("q") ? c.cuSeqlensQ() : c.cuSeqlensK();
                        MemorySegment host = arena.allocate(4L * cu.length);
                        for (int i = 0; i < cu.length; i++) {
                            host.setAtIndex(I, i, cu[i]);
                        }
                        values.add(toDevice(arena, device, host, 4L * cu.length));
                    }
                    case "scalar" -> {
                        // Only the integer scalars are the case's (scalar() refuses "scale", the f32 one).
                        switch (a.dtype()) {
                            case "i32" -> {
                                layouts.add(I);
                                values.add((int) scalar(adapter, a.what(), c));
                            }
                            case "i64" -> {
                                layouts.add(ValueLayout.JAVA_LONG);
                                values.add(scalar(adapter, a.what(), c));
                            }
                            default -> {
                                layouts.add(ValueLayout.JAVA_FLOAT);
                                values.add((float) (1.0 / Math.sqrt(d)));
                            }
                        }
                    }
                    default -> {
                        layouts.add(A);
                        values.add(MemorySegment.NULL);
                    }
                }
            }
            MemorySegment sym = lookup.find(symbol).orElseThrow(() -> new IllegalStateException("the " + lane
                    + " build of " + adapter.sources().getFirst() + " has no symbol " + symbol + " (entry_points,"
                    + " dtype " + c.dtype() + "): is it extern \"C\"?"));
            MemoryLayout[] ls = layouts.toArray(MemoryLayout[]::new);
            boolean returnsError = entry.returns().equals("cudaError_t");
            MethodHandle h = LINKER.downcallHandle(sym, returnsError ? FunctionDescriptor.of(I, ls)
                    : FunctionDescriptor.ofVoid(ls));
            int rc = 0;
            try {
                Object r = h.invokeWithArguments(values);
                rc = returnsError ? (Integer) r : 0;
                int synced = (int) sync.invokeExact();
                int last = (int) lastError.invokeExact();
                if (rc == 0) {
                    rc = synced != 0 ? synced : last;
                }
                if (rc != 0) {
                    return new Call(null, symbol + " returned cudaError " + rc + ": " + message());
                }
            } catch (Throwable t) {
                throw new IllegalStateException("calling " + symbol + ": " + t, t);
            }
            double[] got = download(out, outArg.dtype().equals("f32") ? DType.F32 : c.dtype(), outCount);
            if (varlen && !padded) {
                got = padded(got, c.cuSeqlensQ(), outShape);
            }
            return new Call(got, null);
        } finally {
            for (MemorySegment m : device) {
                try {
                    int ignored = (int) free.invokeExact(m);
                } catch (Throwable t) {
                    // a failed cudaFree after the call has no bearing on its verdict
                }
            }
        }
    }

    private String message() {
        try {
            MemorySegment m = (MemorySegment) lastMessage.invokeExact();
            return m.equals(MemorySegment.NULL) ? "(no message)" : m.reinterpret(1 << 16).getString(0).strip();
        } catch (Throwable t) {
            return "(no message: " + t + ")";
        }
    }

    static long scalar(Adapter adapter, String name, SinksCase c) {
        int[] cq = c.cuSeqlensQ();
        int[] ck = c.cuSeqlensK();
        return switch (name) {
            case "batch", "sequences" -> c.batch();
            case "q_heads" -> c.queryHeads();
            case "kv_heads" -> c.kvHeads();
            case "q_len", "max_q" -> c.tq();
            case "kv_len" -> c.k().dim(2);
            case "max_k" -> {
                int m = 0;
                for (int i = 0; i + 1 < ck.length; i++) {
                    m = Math.max(m, ck[i + 1] - ck[i]);
                }
                yield m;
            }
            case "total_q" -> cq[cq.length - 1];
            case "total_k" -> ck[ck.length - 1];
            case "head_dim" -> c.headDim();
            case "window" -> c.window() == 0 ? adapter.noWindow() : c.window();
            default -> throw new IllegalArgumentException("scalar = " + name + " is not an integer scalar");
        };
    }

    static float[] nan(long n) {
        float[] f = new float[Math.toIntExact(n)];
        Arrays.fill(f, Float.NaN);
        return f;
    }

    /** The case's mask broadcast to [B, Hq, tq, tk] (masks are dense cases only). */
    static float[] denseMask(SinksCase c) {
        Tensor m = c.mask();
        int b = c.batch(), h = c.queryHeads(), tq = c.tq(), tk = c.k().dim(2);
        int[] s = m.rank() == 2 ? new int[] {1, 1, m.dim(0), m.dim(1)} : m.shape();
        float[] flat = m.toFloatArray();
        float[] out = new float[b * h * tq * tk];
        int i = 0;
        for (int x = 0; x < b; x++) {
            for (int y = 0; y < h; y++) {
                for (int r = 0; r < tq; r++) {
                    for (int j = 0; j < tk; j++) {
                        int at = (((s[0] == 1 ? 0 : x) * s[1] + (s[1] == 1 ? 0 : y)) * s[2] + (s[2] == 1 ? 0 : r))
                                * s[3] + j;
                        out[i++] = flat[at];
                    }
                }
            }
        }
        return out;
    }

    private MemorySegment upload(Arena arena, List<MemorySegment> device, Adapter.Arg a, DType dtype, float[] v)
            throws UncheckedIOException {
        boolean f32 = a.dtype().equals("f32") || dtype == DType.F32;
        long n = (long) v.length * (f32 ? 4 : 2);
        MemorySegment host = arena.allocate(Math.max(n, 1));
        for (int i = 0; i < v.length; i++) {
            if (f32) {
                host.setAtIndex(ValueLayout.JAVA_FLOAT, i, v[i]);
            } else if (dtype == DType.F16) {
                host.setAtIndex(ValueLayout.JAVA_SHORT, i, Float.floatToFloat16(v[i]));
            } else {
                host.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) bf16Bits(v[i]));
            }
        }
        return toDevice(arena, device, host, n);
    }

    /** Round to nearest even, NaN kept quiet (the kernel's own conversions round the same way). */
    static int bf16Bits(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7fffffff) > 0x7f800000) {
            return ((u >>> 16) | 0x40) & 0xffff;
        }
        return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
    }

    private MemorySegment toDevice(Arena arena, List<MemorySegment> device, MemorySegment host, long n) {
        try {
            MemorySegment slot = arena.allocate(A);
            int rc = (int) malloc.invokeExact(slot, Math.max(n, 1L));
            if (rc != 0) {
                throw new IllegalStateException("cudaMalloc(" + n + ") returned " + rc + ": " + message());
            }
            MemorySegment dev = slot.get(A, 0).reinterpret(Math.max(n, 1L));
            device.add(dev);
            if (n > 0) {
                int c = (int) memcpy.invokeExact(dev, host, n, 1);
                if (c != 0) {
                    throw new IllegalStateException("cudaMemcpy host to device returned " + c + ": " + message());
                }
            }
            return dev;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cudaMalloc/cudaMemcpy: " + t, t);
        }
    }

    private double[] download(MemorySegment dev, DType dtype, long count) {
        boolean f32 = dtype == DType.F32;
        long n = count * (f32 ? 4 : 2);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(Math.max(n, 1));
            int c = (int) memcpy.invokeExact(host, dev, n, 2);
            if (c != 0) {
                throw new IllegalStateException("cudaMemcpy device to host returned " + c + ": " + message());
            }
            double[] out = new double[Math.toIntExact(count)];
            for (int i = 0; i < out.length; i++) {
                out[i] = f32 ? host.getAtIndex(ValueLayout.JAVA_FLOAT, i)
                        : dtype == DType.F16 ? Float.float16ToFloat(host.getAtIndex(ValueLayout.JAVA_SHORT, i))
                        : Float.intBitsToFloat((host.getAtIndex(ValueLayout.JAVA_SHORT, i) & 0xffff) << 16);
            }
            return out;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cudaMemcpy: " + t, t);
        }
    }

    /** Packed [total_q, H, D] rows to [sequences, H, max_q, D], rows past a sequence's q_len zero. */
    static double[] padded(double[] packed, int[] cuQ, int[] shape) {
        int n = shape[0], h = shape[1], maxQ = shape[2], d = shape[3];
        double[] out = new double[n * h * maxQ * d];
        for (int s = 0; s < n; s++) {
            for (int r = 0; r < cuQ[s + 1] - cuQ[s]; r++) {
                for (int y = 0; y < h; y++) {
                    System.arraycopy(packed, ((cuQ[s] + r) * h + y) * d, out, ((s * h + y) * maxQ + r) * d, d);
                }
            }
        }
        return out;
    }
}
