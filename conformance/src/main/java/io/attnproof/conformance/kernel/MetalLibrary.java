package io.attnproof.conformance.kernel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.attnproof.attention.tensor.DType;
import io.attnproof.attention.tensor.Tensor;
import io.attnproof.conformance.cases.SinksCase;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A user's {@code .metal} source built unchanged through the MSL front end ({@code native/emu/frontend/build-metal.sh})
 * into one lane's library, checked or plain ({@code -DATTNPROOF_EMU_PLAIN}), and a case called as the adapter's Metal
 * host calls it: buffers allocated (the output and intermediates start as NaN, so a value never written shows), the
 * params struct bound with setBytes, then each dispatch in order through the metal-emu C API
 * ({@code attnproof_emu_launch}: kernel by [[host_name]], threadgroups, threads per threadgroup, buffers by
 * [[buffer(n)]] index, then the [[threadgroup(i)]] lengths). A dispatch that does not return LAUNCH_OK (a bounds
 * fault, race, deadlock, launch-limit refusal, a binding the kernel's signature refuses) is the call's fault.
 */
public final class MetalLibrary implements KernelLane {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final ObjectMapper JSON = new ObjectMapper();
    /** emu_host.h's argument kinds (all buffers bind as ARG_BYTES: any element type), msl_launch.h's threadgroup. */
    private static final int ARG_NULL = 4;
    private static final int ARG_BYTES = 5;
    private static final int ARG_THREADGROUP = 6;

    private final String lane;
    private final MethodHandle launch;

    private MetalLibrary(String lane, Path lib) {
        this.lane = lane;
        SymbolLookup l = SymbolLookup.libraryLookup(lib, Arena.global());
        launch = LINKER.downcallHandle(l.find("attnproof_emu_launch").orElseThrow(() -> new IllegalStateException(
                "the " + lane + " library " + lib + " has no symbol attnproof_emu_launch")),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    }

    @Override
    public String lane() {
        return lane;
    }

    /**
     * Builds the adapter's one {@code .metal} source (-O0 unless ATTNPROOF_FRONTEND_OPT says otherwise) into
     * {@code outDir/<source digest>/lib<name>[_plain].so}, rebuilt only when an input is newer, and loads it.
     *
     * @throws KernelBuildException with the front end's or compiler's last lines when the source does not build
     */
    public static MetalLibrary build(Path repoRoot, Adapter adapter, Path outDir, boolean plain) {
        Path source = adapter.sources().getFirst();
        String stem = adapter.name().replaceAll("[^A-Za-z0-9_]", "_") + (plain ? "_plain" : "");
        outDir = outDir.resolve("metal-" + KernelLibrary.digest(source));
        Path lib = KernelLibrary.buildWith(repoRoot, "build-metal.sh", source, outDir, stem, plain,
                source + ": the " + (plain ? "plain" : "checked") + " Metal build");
        return new MetalLibrary(plain ? "plain" : "checked", lib);
    }

    /** One binding: kind, value (an address for a buffer), length (bytes). */
    private record Bind(int kind, long value, long length) {
    }

    @Override
    public KernelLibrary.Call call(Adapter adapter, Adapter.Entry entry, SinksCase c) {
        String token = adapter.dtypes().get(c.dtype().name());
        boolean sinksLive = false;
        for (float x : c.sinks().toFloatArray()) {
            sinksLive |= x != Float.NEGATIVE_INFINITY;
        }
        Adapter.Arg sinksArg = entry.tensor("sinks");
        boolean passSinks = sinksArg != null && (sinksLive || !"null".equals(sinksArg.noSinks()));
        int[] outShape = c.outputShape();
        Adapter.Arg outArg = entry.tensor("out");
        boolean padded = outArg.layout().equals("padded");
        long outCount = padded ? (long) outShape[0] * outShape[1] * outShape[2] * outShape[3]
                : (long) (c.varlen() ? c.q().dim(0) : c.batch() * c.tq()) * c.queryHeads() * c.headDim();
        DType outType = outArg.dtype().equals("f32") ? DType.F32 : c.dtype();
        try (Arena arena = Arena.ofConfined()) {
            Map<String, Bind> tensors = new HashMap<>();
            MemorySegment out = null;
            for (Adapter.Arg a : entry.args()) {
                DType t = a.dtype().equals("f32") ? DType.F32 : c.dtype();
                MemorySegment seg = switch (a.what()) {
                    case "out" -> out = put(arena, t, KernelLibrary.nan(outCount));
                    case "sinks" -> passSinks ? put(arena, t, c.sinks().toFloatArray()) : null;
                    case "mask" -> put(arena, t, KernelLibrary.denseMask(c));
                    default -> {
                        Tensor x = switch (a.what()) {
                            case "q" -> c.q();
                            case "k" -> c.k();
                            default -> c.v();
                        };
                        yield put(arena, t, x.toFloatArray());
                    }
                };
                tensors.put(a.what(), seg == null ? new Bind(ARG_NULL, 0, 0) : bytes(seg));
            }
            Map<String, Bind> inter = new HashMap<>();
            for (var e : entry.intermediates().entrySet()) {
                long n = adapter.eval(e.getValue(), c);
                inter.put(e.getKey(), bytes(put(arena, DType.F32, KernelLibrary.nan(n))));
            }
            Bind params = entry.params().isEmpty() ? null : bytes(params(arena, adapter, entry, c, passSinks));
            for (Adapter.Dispatch d : entry.dispatches()) {
                String kernel = d.kernel().replace("{dtype}", token);
                List<Bind> binds = new ArrayList<>();
                for (Adapter.Arg a : d.buffers()) {
                    binds.add(switch (a.role()) {
                        case "tensor" -> tensors.get(a.what());
                        case "intermediate" -> inter.get(a.what());
                        case "params" -> params;
                        case "cu_seqlens" -> {
                            int[] cu = a.what().equals("q") ? c.cuSeqlensQ() : c.cuSeqlensK();
                            yield bytes(arena.allocateFrom(ValueLayout.JAVA_INT, cu));
                        }
                        default -> scalar(arena, adapter, a, c);
                    });
                }
                for (int i = 0; i < d.threadgroupMemory().size(); i++) {
                    binds.add(new Bind(ARG_THREADGROUP, i, adapter.eval(d.threadgroupMemory().get(i), c)));
                }
                long[] dims = new long[6];
                for (int i = 0; i < 3; i++) {
                    dims[i] = adapter.eval(d.grid().get(i), c);
                    dims[3 + i] = adapter.eval(d.threadgroup().get(i), c);
                }
                String fault = launch(arena, kernel, dims, binds);
                if (fault != null) {
                    return new KernelLibrary.Call(null, fault);
                }
            }
            double[] got = download(out, outType, outCount);
            if (c.varlen() && !padded) {
                got = KernelLibrary.padded(got, c.cuSeqlensQ(), outShape);
            }
            return new KernelLibrary.Call(got, null);
        }
    }

    private String launch(Arena arena, String kernel, long[] dims, List<Bind> binds) {
        int n = binds.size();
        MemorySegment kinds = arena.allocate(ValueLayout.JAVA_INT, Math.max(1, n));
        MemorySegment values = arena.allocate(ValueLayout.JAVA_LONG, Math.max(1, n));
        MemorySegment lengths = arena.allocate(ValueLayout.JAVA_LONG, Math.max(1, n));
        for (int i = 0; i < n; i++) {
            kinds.setAtIndex(ValueLayout.JAVA_INT, i, binds.get(i).kind());
            values.setAtIndex(ValueLayout.JAVA_LONG, i, binds.get(i).value());
            lengths.setAtIndex(ValueLayout.JAVA_LONG, i, binds.get(i).length());
        }
        MemorySegment err = arena.allocate(4096);
        int rc;
        try {
            rc = (int) launch.invokeExact(arena.allocateFrom(kernel), arena.allocateFrom(ValueLayout.JAVA_LONG, dims),
                    n, kinds, values, lengths, err, 4096L);
        } catch (Throwable t) {
            throw new IllegalStateException("attnproof_emu_launch " + kernel + ": " + t, t);
        }
        if (rc == 0) {
            return null;
        }
        return kernel + " (threadgroups " + dims[0] + "x" + dims[1] + "x" + dims[2] + ", threads " + dims[3] + "x"
                + dims[4] + "x" + dims[5] + ") launch result " + rc + ": " + err.getString(0).strip();
    }

    private static Bind bytes(MemorySegment s) {
        return new Bind(ARG_BYTES, s.address(), s.byteSize());
    }

    private static Bind scalar(Arena arena, Adapter adapter, Adapter.Arg a, SinksCase c) {
        return switch (a.dtype()) {
            case "i32" -> bytes(arena.allocateFrom(ValueLayout.JAVA_INT, (int) KernelLibrary.scalar(adapter, a.what(), c)));
            case "i64" -> bytes(arena.allocateFrom(ValueLayout.JAVA_LONG, KernelLibrary.scalar(adapter, a.what(), c)));
            default -> bytes(arena.allocateFrom(ValueLayout.JAVA_FLOAT, (float) (1.0 / Math.sqrt(c.headDim()))));
        };
    }

    /** The params struct: 4-byte fields in the adapter's order. */
    private static MemorySegment params(Arena arena, Adapter adapter, Adapter.Entry entry, SinksCase c,
            boolean passSinks) {
        MemorySegment s = arena.allocate(4L * entry.params().size(), 4);
        for (int i = 0; i < entry.params().size(); i++) {
            Adapter.Arg p = entry.params().get(i);
            if (p.role().equals("value")) {
                try {
                    JsonNode e = JSON.readTree(p.what());
                    s.setAtIndex(ValueLayout.JAVA_INT, i, Math.toIntExact(adapter.eval(e, c)));
                } catch (JsonProcessingException ex) {
                    throw new IllegalStateException(ex);
                }
            } else if (p.what().equals("scale")) {
                s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) (1.0 / Math.sqrt(c.headDim())));
            } else if (p.what().equals("has_sinks")) {
                s.setAtIndex(ValueLayout.JAVA_INT, i, passSinks ? 1 : 0);
            } else {
                s.setAtIndex(ValueLayout.JAVA_INT, i, Math.toIntExact(KernelLibrary.scalar(adapter, p.what(), c)));
            }
        }
        return s;
    }

    /** A buffer of {@code t} elements (float, half or bfloat bits) holding {@code values}. */
    private static MemorySegment put(Arena arena, DType t, float[] values) {
        int w = t == DType.F32 ? 4 : 2;
        MemorySegment s = arena.allocate(Math.max(w, (long) w * values.length), 16);
        for (int i = 0; i < values.length; i++) {
            switch (t) {
                case F32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT, i, values[i]);
                case F16 -> s.setAtIndex(ValueLayout.JAVA_SHORT, i, Float.floatToFloat16(values[i]));
                default -> s.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) KernelLibrary.bf16Bits(values[i]));
            }
        }
        return values.length == 0 ? s.asSlice(0, 0) : s.asSlice(0, (long) w * values.length);
    }

    private static double[] download(MemorySegment s, DType t, long count) {
        double[] out = new double[Math.toIntExact(count)];
        for (int i = 0; i < out.length; i++) {
            out[i] = t == DType.F32 ? s.getAtIndex(ValueLayout.JAVA_FLOAT, i)
                    : t == DType.F16 ? Float.float16ToFloat(s.getAtIndex(ValueLayout.JAVA_SHORT, i))
                    : Float.intBitsToFloat((s.getAtIndex(ValueLayout.JAVA_SHORT, i) & 0xffff) << 16);
        }
        return out;
    }
}
