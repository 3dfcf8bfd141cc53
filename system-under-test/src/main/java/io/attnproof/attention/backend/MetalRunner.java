package io.attnproof.attention.backend;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs launches on the default Metal device through Metal.framework, called over the Foreign Function &amp; Memory
 * API ({@link ObjC}; no JNI build): {@code native/metal/sinks_attn.metal} is compiled at run time with fast math off
 * (the kernels' -inf logic needs IEEE semantics), buffers use shared storage, each launch is one compute encoder in
 * one command buffer, and a command buffer that ends in error is reported with its {@code NSError}.
 */
@SuppressWarnings("restricted") // FFM: reading the contents of shared-storage buffers
final class MetalRunner implements KernelRunner {
    private static final String LANE = "metal";
    /** {@code MTLResourceStorageModeShared}. */
    private static final long STORAGE_SHARED = 0;
    /** {@code MTLCommandBufferStatusCompleted}, {@code MTLCommandBufferStatusError}. */
    private static final long STATUS_COMPLETED = 4;

    private static final FunctionDescriptor ID_ID_SEL = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor VOID_ID_SEL = FunctionDescriptor.ofVoid(ADDRESS, ADDRESS);
    private static final FunctionDescriptor LONG_ID_SEL = FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS);
    private static final FunctionDescriptor ID_ID_SEL_ID = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor VOID_ID_SEL_ID = FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor VOID_ID_SEL_BOOL = FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_BYTE);
    private static final FunctionDescriptor ID_ID_SEL_ID_ID_ERR = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS,
            ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor ID_ID_SEL_ID_ERR = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS,
            ADDRESS, ADDRESS);
    private static final FunctionDescriptor ID_ID_SEL_PTR_LONG_LONG = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS,
            ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor VOID_ID_SEL_ID_LONG_LONG = FunctionDescriptor.ofVoid(ADDRESS, ADDRESS,
            ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor VOID_ID_SEL_PTR_LONG_LONG = FunctionDescriptor.ofVoid(ADDRESS, ADDRESS,
            ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor VOID_ID_SEL_SIZE_SIZE = FunctionDescriptor.ofVoid(ADDRESS, ADDRESS,
            ObjC.MTL_SIZE, ObjC.MTL_SIZE);

    private final ObjC objc;
    private final MemorySegment device;
    private final MemorySegment queue;
    private final MemorySegment library;
    private final String deviceName;
    private final Map<String, MemorySegment> pipelines = new HashMap<>();

    private MetalRunner(ObjC objc, MemorySegment device, MemorySegment queue, MemorySegment library, String name) {
        this.objc = objc;
        this.device = device;
        this.queue = queue;
        this.library = library;
        this.deviceName = name;
    }

    /**
     * The probe: macOS only ("not macOS" elsewhere, before anything is loaded), then libobjc and Metal.framework,
     * {@code MTLCreateSystemDefaultDevice} (nil: no Metal device), a command queue, and the MSL compiled.
     */
    static MetalRunner probe() {
        String os = System.getProperty("os.name", "?");
        if (!os.toLowerCase(Locale.ROOT).startsWith("mac")) {
            throw new LaneUnavailableException(LANE, "not macOS (os.name = " + os + "): Metal.framework exists only on"
                    + " Apple platforms");
        }
        ObjC objc = ObjC.load();
        try {
            MethodHandle create = objc.metalFunction("MTLCreateSystemDefaultDevice", FunctionDescriptor.of(ADDRESS));
            MemorySegment device = (MemorySegment) create.invokeExact();
            if (device.equals(MemorySegment.NULL)) {
                throw new LaneUnavailableException(LANE, "MTLCreateSystemDefaultDevice returned nil: no Metal device");
            }
            String name = objc.string((MemorySegment) objc.send(ID_ID_SEL).invokeExact(device, objc.sel("name")));
            MemorySegment queue = (MemorySegment) objc.send(ID_ID_SEL).invokeExact(device, objc.sel("newCommandQueue"));
            if (queue.equals(MemorySegment.NULL)) {
                throw new LaneUnavailableException(LANE, "newCommandQueue returned nil on " + name);
            }
            String source = new String(NativeFiles.resource(NativeFiles.METAL_SOURCE_RESOURCE), StandardCharsets.UTF_8);
            MemorySegment library = compile(objc, device, source);
            return new MetalRunner(objc, device, queue, library, name);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("Metal setup failed: " + t, t);
        }
    }

    /** {@code [device newLibraryWithSource:options:error:]} with fast math off; a compile error names the NSError. */
    static MemorySegment compile(ObjC objc, MemorySegment device, String source) throws Throwable {
        MemorySegment pool = objc.pushPool();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment options = (MemorySegment) objc.send(ID_ID_SEL).invokeExact(
                    (MemorySegment) objc.send(ID_ID_SEL).invokeExact(objc.cls("MTLCompileOptions"), objc.sel("alloc")),
                    objc.sel("init"));
            objc.send(VOID_ID_SEL_BOOL).invokeExact(options, objc.sel("setFastMathEnabled:"), (byte) 0);
            MemorySegment error = arena.allocate(ADDRESS);
            MemorySegment library = (MemorySegment) objc.send(ID_ID_SEL_ID_ID_ERR).invokeExact(device,
                    objc.sel("newLibraryWithSource:options:error:"), objc.nsString(source, arena), options, error);
            objc.send(VOID_ID_SEL).invokeExact(options, objc.sel("release"));
            if (library.equals(MemorySegment.NULL)) {
                throw new NativeKernelException(LANE, "newLibraryWithSource(sinks_attn.metal)",
                        "MTLLibraryErrorCompileFailure", objc.error(error.get(ADDRESS, 0)));
            }
            return library;
        } finally {
            objc.popPool(pool);
        }
    }

    @Override
    public String lane() {
        return LANE;
    }

    @Override
    public int gridStrideBlocks() {
        return 1024;
    }

    /** The Metal device's name. */
    String describe() {
        return deviceName;
    }

    /** Compiles {@code source} on this device and releases the library (test hook: bad MSL must fail clearly). */
    synchronized void compileAndRelease(String source) {
        try {
            release(compile(objc, device, source));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new NativeKernelException(LANE, "newLibraryWithSource", t.getClass().getSimpleName(), t.toString());
        }
    }

    @Override
    public synchronized void run(List<KernelLaunch> launches) {
        MemorySegment pool = objc.pushPool();
        Map<DeviceBuffer, MemorySegment> buffers = new IdentityHashMap<>();
        try (Arena arena = Arena.ofConfined()) {
            for (KernelLaunch l : launches) {
                for (KernelArg a : l.args()) {
                    if (a instanceof KernelArg.Buffer(DeviceBuffer b) && !buffers.containsKey(b)) {
                        buffers.put(b, newBuffer(arena, b));
                    }
                }
            }
            MemorySegment commands = (MemorySegment) objc.send(ID_ID_SEL).invokeExact(queue, objc.sel("commandBuffer"));
            for (KernelLaunch l : launches) {
                MemorySegment encoder = (MemorySegment) objc.send(ID_ID_SEL).invokeExact(commands,
                        objc.sel("computeCommandEncoder"));
                MemorySegment pipeline = pipeline(l.kernel());
                long maxThreads = (long) objc.send(LONG_ID_SEL).invokeExact(pipeline,
                        objc.sel("maxTotalThreadsPerThreadgroup"));
                long threads = (long) l.block()[0] * l.block()[1] * l.block()[2];
                if (threads > maxThreads) {
                    throw new NativeKernelException(LANE, l.toString(), "MTLInvalidThreadgroupSize", threads
                            + " threads per threadgroup > maxTotalThreadsPerThreadgroup " + maxThreads);
                }
                objc.send(VOID_ID_SEL_ID).invokeExact(encoder, objc.sel("setComputePipelineState:"), pipeline);
                for (int i = 0; i < l.args().size(); i++) {
                    switch (l.args().get(i)) {
                        case KernelArg.Buffer(DeviceBuffer b) -> objc.send(VOID_ID_SEL_ID_LONG_LONG).invokeExact(
                                encoder, objc.sel("setBuffer:offset:atIndex:"), buffers.get(b), 0L, (long) i);
                        case KernelArg.Params(int[] words) -> {
                            MemorySegment bytes = arena.allocate(JAVA_INT, words.length);
                            MemorySegment.copy(words, 0, bytes, JAVA_INT, 0, words.length);
                            objc.send(VOID_ID_SEL_PTR_LONG_LONG).invokeExact(encoder,
                                    objc.sel("setBytes:length:atIndex:"), bytes, 4L * words.length, (long) i);
                        }
                        default -> throw new IllegalArgumentException("argument " + i + " of " + l + " = "
                                + l.args().get(i) + ": must be a buffer or a params block on Metal");
                    }
                }
                objc.send(VOID_ID_SEL_SIZE_SIZE).invokeExact(encoder, objc.sel("dispatchThreadgroups:threadsPerThreadgroup:"),
                        size(arena, l.grid()), size(arena, l.block()));
                objc.send(VOID_ID_SEL).invokeExact(encoder, objc.sel("endEncoding"));
            }
            objc.send(VOID_ID_SEL).invokeExact(commands, objc.sel("commit"));
            objc.send(VOID_ID_SEL).invokeExact(commands, objc.sel("waitUntilCompleted"));
            long status = (long) objc.send(LONG_ID_SEL).invokeExact(commands, objc.sel("status"));
            if (status != STATUS_COMPLETED) {
                MemorySegment error = (MemorySegment) objc.send(ID_ID_SEL).invokeExact(commands, objc.sel("error"));
                throw new NativeKernelException(LANE, "command buffer " + launches, "MTLCommandBufferStatus" + status,
                        objc.error(error));
            }
            for (Map.Entry<DeviceBuffer, MemorySegment> e : buffers.entrySet()) {
                DeviceBuffer b = e.getKey();
                if (b.readBack() && b.length() > 0) {
                    MemorySegment contents = ((MemorySegment) objc.send(ID_ID_SEL).invokeExact(e.getValue(),
                            objc.sel("contents"))).reinterpret(b.deviceBytes());
                    if (b.isFloat()) {
                        MemorySegment.copy(contents, JAVA_FLOAT, 0, b.floats(), 0, b.length());
                    } else {
                        MemorySegment.copy(contents, JAVA_INT, 0, b.ints(), 0, b.length());
                    }
                }
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new NativeKernelException(LANE, "Metal call", t.getClass().getSimpleName(), String.valueOf(t));
        } finally {
            for (MemorySegment buffer : buffers.values()) {
                release(buffer);
            }
            objc.popPool(pool);
        }
    }

    private MemorySegment newBuffer(Arena arena, DeviceBuffer b) throws Throwable {
        MemorySegment host = arena.allocate(b.deviceBytes(), 16);
        if (b.isFloat()) {
            MemorySegment.copy(b.floats(), 0, host, JAVA_FLOAT, 0, b.length());
        } else {
            MemorySegment.copy(b.ints(), 0, host, JAVA_INT, 0, b.length());
        }
        MemorySegment buffer = (MemorySegment) objc.send(ID_ID_SEL_PTR_LONG_LONG).invokeExact(device,
                objc.sel("newBufferWithBytes:length:options:"), host, b.deviceBytes(), STORAGE_SHARED);
        if (buffer.equals(MemorySegment.NULL)) {
            throw new NativeKernelException(LANE, "newBufferWithBytes(" + b + ", " + b.deviceBytes() + " bytes)",
                    "MTLBufferAllocationFailed", "the device could not allocate the buffer (out of memory?)");
        }
        return buffer;
    }

    private MemorySegment pipeline(String kernel) throws Throwable {
        MemorySegment p = pipelines.get(kernel);
        if (p != null) {
            return p;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment function = (MemorySegment) objc.send(ID_ID_SEL_ID).invokeExact(library,
                    objc.sel("newFunctionWithName:"), objc.nsString(kernel, arena));
            if (function.equals(MemorySegment.NULL)) {
                throw new NativeKernelException(LANE, "newFunctionWithName(" + kernel + ")", "MTLFunctionNotFound",
                        "sinks_attn.metal has no kernel " + kernel);
            }
            MemorySegment error = arena.allocate(ADDRESS);
            p = (MemorySegment) objc.send(ID_ID_SEL_ID_ERR).invokeExact(device,
                    objc.sel("newComputePipelineStateWithFunction:error:"), function, error);
            release(function);
            if (p.equals(MemorySegment.NULL)) {
                throw new NativeKernelException(LANE, "newComputePipelineStateWithFunction(" + kernel + ")",
                        "MTLPipelineCreationFailed", objc.error(error.get(ADDRESS, 0)));
            }
        }
        pipelines.put(kernel, p);
        return p;
    }

    private static MemorySegment size(Arena arena, int[] xyz) {
        MemorySegment s = arena.allocate(ObjC.MTL_SIZE);
        for (int i = 0; i < 3; i++) {
            s.setAtIndex(JAVA_LONG, i, xyz[i]);
        }
        return s;
    }

    private void release(MemorySegment object) {
        try {
            objc.send(VOID_ID_SEL).invokeExact(object, objc.sel("release"));
        } catch (Throwable t) {
            throw new IllegalStateException("release: " + t, t);
        }
    }
}
